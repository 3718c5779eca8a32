"""A JSON Web Key Set served over loopback HTTP, as an identity provider publishes its keys.

The server and client identity tests check tokens against it; it counts its fetches and can be
made to fail (503): all of them while ``up`` is false, and the first ``failures``; to answer
``body`` instead of the keys (garbage, say); or to take ``delay`` seconds to answer.
"""

from __future__ import annotations

import http.server
import json
import threading
import time
from typing import Any

import jwt

__all__ = ["KeySet"]


class KeySet:
    """Publishes the public halves of the keys given to :meth:`publish`, at :attr:`url`."""

    def __init__(self, *, failures: int = 0) -> None:
        self.keys: list[dict[str, Any]] = []
        self.fetches = 0
        self.up = True
        self.body: bytes | None = None
        self.delay = 0.0
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.fetches += 1
                time.sleep(owner.delay)
                if not owner.up or owner.fetches <= failures:
                    self.send_error(503)
                    return
                body = owner.body or json.dumps({"keys": owner.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def publish(self, kid: str, private_key: Any, alg: str, *, state_alg: bool = True) -> None:
        """Publish ``private_key``'s public key as ``kid``, for tokens signed with ``alg``;
        without its ``alg`` member unless ``state_alg`` (RFC 7517 makes it optional)."""
        jwk = json.loads(jwt.get_algorithm_by_name(alg).to_jwk(private_key.public_key()))
        stated = {"alg": alg} if state_alg else {}
        self.keys.append({**jwk, "kid": kid, **stated, "use": "sig"})

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
