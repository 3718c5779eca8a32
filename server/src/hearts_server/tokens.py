"""Seat and creator tokens: signed, self-contained, verifiable by any replica without Redis.

A token is ``v1.<claims>.<signature>``: base64url JSON claims and an HMAC-SHA256 over them with the
server's secret. Claims bind the token to one table and one seat (or to the table's creator), carry
the seat's *epoch* (bumped when the seat is left, so old tokens stop working once the record is
read) and an expiry. Replicas that share the secret accept each other's tokens.

A codec also accepts tokens signed with its *extra* secrets, which it never signs with: that is
how the secret is rotated while replicas roll one by one (see docs/operations.md), without any
replica refusing tokens another one issued.
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import hmac
import json
import math
import time
from collections.abc import Callable, Sequence

__all__ = ["CREATOR", "MIN_SECRET_BYTES", "Claims", "TokenCodec", "TokenError"]

_VERIFIED_SIZE = 16384
MIN_SECRET_BYTES = 16
"""The shortest secret the HMAC of the tokens accepts."""

CREATOR = -1
"""The seat number in a creator token's claims."""


class TokenError(Exception):
    """A token was refused; ``reason`` is TOKEN_INVALID or TOKEN_EXPIRED."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclasses.dataclass(frozen=True, slots=True)
class Claims:
    """What a valid token says: the table, the seat (CREATOR for the creator), the seat epoch."""

    table_id: str
    seat: int
    epoch: int
    expires: int


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, body: str) -> str:
    return _b64(hmac.new(secret, body.encode(), hashlib.sha256).digest())


class TokenCodec:
    """Issues tokens with one secret; verifies them with it or with any of ``extra_secrets``."""

    def __init__(
        self,
        secret: bytes,
        *,
        extra_secrets: Sequence[bytes] = (),
        ttl_seconds: int = 7 * 24 * 3600,
        clock: Callable[[], float] = time.time,
    ) -> None:
        for key in (secret, *extra_secrets):
            if len(key) < MIN_SECRET_BYTES:
                raise ValueError(f"a token secret must be at least {MIN_SECRET_BYTES} bytes")
        self._secret = secret
        self._secrets = (secret, *extra_secrets)
        self._ttl = ttl_seconds
        self._clock = clock
        # Verified tokens: a client sends the same token with every call, and checking the HMAC
        # and decoding the claims again each time is most of the cost of a verification.
        self._verified: dict[str, Claims] = {}

    def issue(self, table_id: str, seat: int, epoch: int) -> str:
        """A token for ``seat`` (or CREATOR) of ``table_id`` at ``epoch``."""
        # Whole seconds, rounded up: a token lives at least the configured time.
        claims = {"t": table_id, "s": seat, "e": epoch, "x": math.ceil(self._clock()) + self._ttl}
        body = _b64(json.dumps(claims, separators=(",", ":")).encode())
        return f"v1.{body}.{_sign(self._secret, body)}"

    def verify(self, token: str) -> Claims:
        """The token's claims; raises :class:`TokenError` if forged, malformed or expired."""
        claims = self.authentic(token)
        if claims.expires <= self._clock():
            if claims.seat == CREATOR:
                raise TokenError("TOKEN_EXPIRED", "the creator token has expired")
            raise TokenError(
                "TOKEN_EXPIRED",
                "the seat token has expired; JoinTable with it as authorization renews it",
            )
        return claims

    def authentic(self, token: str) -> Claims:
        """The claims of a token this server issued, expired or not; raises if forged."""
        claims = self._verified.get(token)
        if claims is None:
            claims = self._check(token)
            if len(self._verified) >= _VERIFIED_SIZE:
                self._verified.clear()  # a plain bound: re-verifying is cheap
            self._verified[token] = claims
        return claims

    def _check(self, token: str) -> Claims:
        """The claims of a genuine, well-formed token (expired or not)."""
        parts = token.split(".")
        if len(parts) != 3 or parts[0] != "v1":
            raise TokenError("TOKEN_INVALID", "the token is malformed")
        body, signature = parts[1], parts[2]
        if not any(hmac.compare_digest(_sign(key, body), signature) for key in self._secrets):
            raise TokenError("TOKEN_INVALID", "the token's signature does not match")
        try:
            raw = json.loads(_unb64(body))
            claims = Claims(str(raw["t"]), int(raw["s"]), int(raw["e"]), int(raw["x"]))
        except (ValueError, KeyError, TypeError, binascii.Error):
            raise TokenError("TOKEN_INVALID", "the token's claims are malformed") from None
        if claims.seat != CREATOR and not 0 <= claims.seat < 4:
            # Signed with the server's own secret but by something else (a tool's bug): refused
            # like any malformed claim rather than failing the call as an internal error.
            raise TokenError("TOKEN_INVALID", "the token's claims are malformed")
        return claims
