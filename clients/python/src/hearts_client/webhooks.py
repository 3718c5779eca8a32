"""Checking the server's webhooks in an app's backend (see docs/api.md, Webhooks).

The server signs each post with ``Hearts-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
"<t>.<body>">``, keyed with ``--webhook-secret``. :func:`verify_webhook` checks that header
against the raw body, in constant time, refuses a post older (or newer) than ``tolerance``
seconds, which a replay would be, and returns the parsed document::

    from hearts_client.webhooks import WebhookError, verify_webhook

    def handle(headers, body: bytes) -> int:  # in any web framework
        try:
            event = verify_webhook(SECRET, headers["Hearts-Signature"], body)
        except WebhookError:
            return 400
        if event["type"] == "game.over":
            store_result(event["id"], event)  # delivery is at least once: keyed by id
        elif event["type"] == "turn.started":  # tables created with turn_notifications
            for seat in event["seats"]:
                notify(seat["player_id"], event["table"], event["deadline"])
        return 200
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from typing import Any

__all__ = ["WebhookError", "verify_webhook"]


class WebhookError(ValueError):
    """A post whose signature does not check out, or is too old; refuse it (4xx)."""


def verify_webhook(
    secret: bytes | str,
    header: str,
    body: bytes,
    *,
    tolerance: float = 300.0,
    now: float | None = None,
) -> dict[str, Any]:
    """The webhook's JSON document, once ``header`` (``Hearts-Signature``) proves ``body`` is
    the server's, sent within ``tolerance`` seconds of ``now`` (the clock's time by default).

    Raises :class:`WebhookError` otherwise. ``body`` must be the raw bytes received, not a
    re-encoding of the parsed JSON.
    """
    key = secret.encode() if isinstance(secret, str) else secret
    try:
        parts = dict(part.strip().split("=", 1) for part in header.split(","))
        timestamp = int(parts["t"])
        given = parts["v1"]
    except (KeyError, ValueError):
        raise WebhookError("not a Hearts-Signature header") from None
    expected = hmac.new(key, b"%d." % timestamp + body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(expected, given.encode("utf-8", "replace")):
        raise WebhookError("the signature does not match the body")
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        raise WebhookError("the post is too old (or from the future): a replay?")
    try:
        document = json.loads(body)
    except ValueError:
        raise WebhookError("the body is not JSON") from None
    if not isinstance(document, dict):
        raise WebhookError("the body is not a JSON object")
    return document
