"""Identity tokens: who a player is, in the words of the app's own sign-in.

Design notes.

* Apps sign their users in elsewhere (their own backend, Firebase, Auth0, Cognito ...). A player
  who joins a table may bring that sign-in's ID token, a JWT; when it checks out, the seat
  records the token's ``sub`` as ``player_id``, so the app can match seats and results to its
  accounts, and the same player never holds two seats of one table.
* Two ways to check a token, each optional: a shared secret (HS256/384/512, for tokens the
  app's backend signs itself), and an issuer's JSON Web Key Set fetched over HTTPS (RS*, PS*,
  ES* and EdDSA, for identity providers). The token's ``alg`` picks one of them, and only
  that: a public key is never taken for an HMAC secret, and ``none`` is never accepted.
* Claims: ``exp`` and ``sub`` are required; ``iss`` and ``aud`` are checked when configured
  (with a key set they must be: a provider's key set signs the tokens of all its customers);
  ``nbf`` and ``iat`` when present. Clocks may differ by up to a minute.
* PyJWT does the checking, and its ``PyJWKClient`` fetches the key set: cached for five minutes,
  fetched again at most every 30 s for a key id it does not know (a token made up with random
  key ids cannot make the server hammer the provider), never following redirects. A fetch
  blocks, so it runs in a thread.
* Refusals carry the API's reasons: ``IDENTITY_INVALID`` (signature, claims, issuer, audience,
  format), ``IDENTITY_EXPIRED``, and ``IDENTITY_UNAVAILABLE`` when the key set cannot be
  fetched.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import jwt

from hearts_server.errors import ServiceError

__all__ = ["MAX_PLAYER_ID", "Identity", "IdentityVerifier"]

log = logging.getLogger(__name__)

MAX_PLAYER_ID = 128
"""The longest ``sub`` taken as a player id."""

_LEEWAY_SECONDS = 60
_KEY_SET_LIFESPAN_SECONDS = 300
_FETCH_TIMEOUT_SECONDS = 5
_HMAC = frozenset({"HS256", "HS384", "HS512"})
_PUBLIC_KEY = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


@dataclasses.dataclass(frozen=True, slots=True)
class Identity:
    """A verified player: the token's ``sub``, and its ``name`` claim if it has one."""

    player_id: str
    name: str = ""


class IdentityVerifier:
    """Checks identity tokens with a shared secret, an issuer's key set, or both."""

    def __init__(
        self,
        *,
        secret: str = "",
        jwks_url: str = "",
        issuer: str = "",
        audience: str = "",
        required: bool = False,
    ) -> None:
        if not secret and not jwks_url:
            raise ValueError("an identity verifier needs a secret or a key set URL")
        if jwks_url and not (issuer and audience):
            raise ValueError("a key set URL needs the issuer and the audience to check")
        self._secret = secret
        self._issuer = issuer or None
        self._audience = audience or None
        self.required = required
        self._jwks = (
            jwt.PyJWKClient(
                jwks_url,
                lifespan=_KEY_SET_LIFESPAN_SECONDS,
                timeout=_FETCH_TIMEOUT_SECONDS,
                headers={"User-Agent": "hearts-server"},
            )
            if jwks_url
            else None
        )
        required_claims = ["exp", "sub"]
        if self._issuer:
            required_claims.append("iss")
        if self._audience:
            required_claims.append("aud")
        self._options: Any = {"require": required_claims}

    async def verify(self, token: str) -> Identity:
        """The identity ``token`` proves; raises :class:`ServiceError` if it proves none."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _invalid("not a JWT") from None
        algorithm = header.get("alg")
        key: Any
        if algorithm in _HMAC and self._secret:
            key = self._secret
        elif algorithm in _PUBLIC_KEY and self._jwks is not None:
            key = await self._public_key(token)
        else:
            raise _invalid(f"tokens signed with {algorithm!r} are not accepted here")
        try:
            claims = jwt.decode(
                token,
                key,
                algorithms=[algorithm],
                audience=self._audience,
                issuer=self._issuer,
                leeway=_LEEWAY_SECONDS,
                options=self._options,
            )
        except jwt.ExpiredSignatureError:
            raise ServiceError(
                "IDENTITY_EXPIRED", "the identity token has expired; sign in again"
            ) from None
        except jwt.PyJWTError as error:
            raise _invalid(str(error)) from None
        subject = claims.get("sub")
        if not isinstance(subject, str) or not 1 <= len(subject) <= MAX_PLAYER_ID:
            raise _invalid(f"its sub must be a string of 1 to {MAX_PLAYER_ID} characters")
        name = claims.get("name")
        return Identity(subject, name if isinstance(name, str) else "")

    async def _public_key(self, token: str) -> Any:
        """The key set's key for ``token`` (by its ``kid``), fetched in a thread if need be."""
        assert self._jwks is not None
        try:
            signing_key = await asyncio.to_thread(self._jwks.get_signing_key_from_jwt, token)
        except jwt.PyJWKClientConnectionError as error:
            log.warning("cannot fetch the identity key set: %s", error)
            raise ServiceError(
                "IDENTITY_UNAVAILABLE", "the identity provider's keys cannot be fetched; retry"
            ) from None
        except jwt.PyJWTError as error:
            raise _invalid(str(error)) from None
        return signing_key.key


def _invalid(why: str) -> ServiceError:
    return ServiceError("IDENTITY_INVALID", f"the identity token is not valid: {why}")
