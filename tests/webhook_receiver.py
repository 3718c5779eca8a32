"""A webhook receiver on loopback: an HTTP server in a thread that records what it is posted
and answers with the status codes (and delays) a test gives it."""

from __future__ import annotations

import asyncio
import http.server
import threading
import time

import pytest

__all__ = ["Receiver"]


class Receiver:
    """Records each POST (headers and body); answers ``statuses`` in turn, then 200. A status
    of 302 comes with a broken Location; ``delays`` are seconds to wait before answering, in
    turn."""

    def __init__(self, statuses: tuple[int, ...] = (), delays: tuple[float, ...] = ()) -> None:
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self.statuses = list(statuses)
        self.delays = list(delays)
        owner = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["Content-Length"]))
                owner.posts.append(({k.lower(): v for k, v in self.headers.items()}, body))
                status = owner.statuses.pop(0) if owner.statuses else 200
                time.sleep(owner.delays.pop(0) if owner.delays else 0)
                self.send_response(status)
                if status == 302:
                    self.send_header("Location", "http://[bad")
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hooks/hearts"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    async def until(self, count: int) -> None:
        """Wait (15 s at most) until ``count`` posts came in; the thread's list is polled."""
        for _ in range(750):
            if len(self.posts) >= count:
                return
            await asyncio.sleep(0.02)
        pytest.fail(f"{len(self.posts)} posts, not {count}")

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
