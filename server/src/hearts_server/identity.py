"""Identity tokens: who a player is, in the words of the app's own sign-in.

Design notes.

* Apps sign their users in elsewhere (their own backend, Firebase, Auth0, Cognito ...). A player
  who joins a table may bring that sign-in's ID token, a JWT; when it checks out, the seat
  records the token's ``sub`` as ``player_id``, so the app can match seats and results to its
  accounts, and the same player never holds two seats of one table.
* Two ways to check a token, each optional: a shared secret (HS256/384/512, for tokens the
  app's backend signs itself), and an issuer's JSON Web Key Set fetched over HTTPS (RS*, PS*,
  ES* and EdDSA, for identity providers). The token's ``alg`` picks one of them, and only
  that: a public key is never taken for an HMAC secret, ``none`` is never accepted, and a key of
  the set verifies only tokens of its own algorithm (an RSA key published without an ``alg``:
  of any RSA algorithm, RS* and PS*). Keys shorter than their algorithm wants
  (an HS512 secret under 64 bytes, an RSA key under 2048 bits) are refused, not warned about.
* Claims: ``exp`` and ``sub`` are required; ``iss`` and ``aud`` are checked when configured
  (with a key set they must be: a provider's key set signs the tokens of all its customers), and
  a token that names an audience is refused where none is configured (RFC 7519); ``nbf`` and
  ``iat`` when present. Clocks may differ by up to a minute. PyJWT does the checking.
* The key set (see :class:`_KeySet`): fetched by PyJWT's client (no redirects, http(s) only) on
  a thread of its own, one fetch at a time, which every join waiting for it shares; fetched
  again after five minutes in the background (the keys it has serve meanwhile), and for a key
  id it lacks at most every 30 s (a token made up with random key ids cannot make the server
  hammer the provider; until then such a token is IDENTITY_UNAVAILABLE, retryable, since a
  provider may sign with a key it has just published). A failed fetch is remembered for 5 s
  (joins meanwhile answer at once), and the last good set keeps serving the keys it has.
* Refusals carry the API's reasons: ``IDENTITY_INVALID`` (signature, claims, issuer, audience,
  key id, format), ``IDENTITY_EXPIRED``, and ``IDENTITY_UNAVAILABLE`` when the key set cannot
  be fetched or read.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import logging
import time
from collections.abc import Callable
from typing import Any

import jwt

from hearts_server.errors import ServiceError

__all__ = ["MAX_PLAYER_ID", "Identity", "IdentityVerifier"]

log = logging.getLogger(__name__)

MAX_PLAYER_ID = 128
"""The longest ``sub`` taken as a player id."""

_LEEWAY_SECONDS = 60
_HMAC = frozenset({"HS256", "HS384", "HS512"})
_RSA = frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"})
_PUBLIC_KEY = _RSA | {"ES256", "ES384", "ES512", "EdDSA"}


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
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not secret and not jwks_url:
            raise ValueError("an identity verifier needs a secret or a key set URL")
        if jwks_url and not (issuer and audience):
            raise ValueError("a key set URL needs the issuer and the audience to check")
        self._secret = secret
        self._issuer = issuer or None
        self._audience = audience or None
        self.required = required
        self._key_set = _KeySet(jwks_url, clock) if jwks_url else None
        required_claims = ["exp", "sub"]
        if self._issuer:
            required_claims.append("iss")
        if self._audience:
            required_claims.append("aud")
        self._options: Any = {"require": required_claims, "enforce_minimum_key_length": True}

    async def verify(self, token: str) -> Identity:
        """The identity ``token`` proves; raises :class:`ServiceError` if it proves none."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise _invalid("not a JWT") from None
        algorithm = header.get("alg")
        key: Any
        if type(algorithm) is not str:
            raise _invalid("its alg is not a name")
        if algorithm in _HMAC and self._secret:
            key = self._secret
        elif algorithm in _PUBLIC_KEY and self._key_set is not None:
            kid = header.get("kid")
            key = await self._key_set.key(kid if type(kid) is str else None, algorithm)
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
        except (jwt.PyJWTError, TypeError, ValueError) as error:
            # TypeError/ValueError: a key that does not fit the algorithm, in PyJWT's words.
            raise _invalid(str(error) or type(error).__name__) from None
        subject = claims.get("sub")
        if (
            not isinstance(subject, str)
            or not 1 <= len(subject) <= MAX_PLAYER_ID
            or not subject.isprintable()
        ):
            raise _invalid(
                f"its sub must be 1 to {MAX_PLAYER_ID} printable characters, no control codes"
            )
        name = claims.get("name")
        return Identity(subject, name if isinstance(name, str) else "")

    def close(self) -> None:
        """Stop the key set's fetching thread."""
        if self._key_set is not None:
            self._key_set.close()


class _KeySet:
    """An identity provider's keys by key id, fetched as the design notes say."""

    LIFESPAN_SECONDS = 300.0
    REFETCH_SECONDS = 30.0  # the least time between two fetches for an unknown key id
    FAILURE_SECONDS = 5.0  # how long a failed fetch answers for the next ones
    TIMEOUT_SECONDS = 5.0

    def __init__(self, url: str, clock: Callable[[], float]) -> None:
        self._client = jwt.PyJWKClient(
            url,
            cache_jwk_set=False,  # kept here instead, with the rules above
            timeout=self.TIMEOUT_SECONDS,
            headers={"User-Agent": "hearts-server"},
        )
        self._clock = clock
        self._keys: dict[str | None, jwt.PyJWK] = {}
        # RSA keys the set publishes without an alg, by key id: their JWKs, and the key made
        # for each RSA algorithm a token asked for (see _for).
        self._open_rsa: dict[str | None, dict[str, Any]] = {}
        self._made: dict[tuple[str | None, str], jwt.PyJWK] = {}
        self._fetched_at: float | None = None
        self._failed_at: float | None = None
        self._fetch: asyncio.Task[None] | None = None
        # Fetches block: one thread of their own, so that a slow provider never holds the
        # threads that others (asyncio.to_thread, bots) share.
        self._thread = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="jwks")

    async def key(self, kid: str | None, algorithm: str) -> jwt.PyJWK:
        """The key for ``kid``, for a token signed with ``algorithm`` (see :meth:`_for`);
        raises IDENTITY_INVALID or IDENTITY_UNAVAILABLE."""
        return self._for(await self._key(kid), algorithm)

    def _for(self, key: jwt.PyJWK, algorithm: str) -> jwt.PyJWK:
        """``key``, or the same RSA key made for ``algorithm`` when the set gives it no alg.

        RFC 7517 makes a key's ``alg`` optional, and PyJWT then takes an RSA key for RS256
        only, so a provider that publishes none and signs with PS256 or RS512 would have all
        its tokens refused. Such a key verifies tokens of any RSA algorithm, and only those:
        an EC or Ed25519 key's curve names its one algorithm, and a key that states its alg
        keeps to it.
        """
        if algorithm == key.algorithm_name or algorithm not in _RSA:
            return key
        jwk = self._open_rsa.get(key.key_id)
        if jwk is None:
            return key  # PyJWT refuses the token: the key is for another algorithm
        made = self._made.get((key.key_id, algorithm))
        if made is None:
            made = self._made[key.key_id, algorithm] = jwt.PyJWK(jwk, algorithm)
        return made

    async def _key(self, kid: str | None) -> jwt.PyJWK:
        now = self._clock()
        fresh = self._fetched_at is not None and now - self._fetched_at < self.LIFESPAN_SECONDS
        recently = self._fetched_at is not None and now - self._fetched_at < self.REFETCH_SECONDS
        failed = self._failed_at is not None and now - self._failed_at < self.FAILURE_SECONDS
        found = self._lookup(kid)
        if found is not None:
            if not fresh and not failed and self._fetch is None:
                # Old but known: it serves at once while the set is fetched in the background.
                self._fetch = asyncio.create_task(self._refresh())
            return found
        if not recently and not failed:
            if self._fetch is None:
                self._fetch = asyncio.create_task(self._refresh())
            # Shielded: a caller that gives up (its deadline) leaves the fetch to the others.
            await asyncio.shield(self._fetch)
            found = self._lookup(kid)
            if found is not None:
                return found
            if self._fetched_at is not None and self._fetched_at >= self._clock() - 1:
                raise _invalid(f"no key {kid!r} in the identity provider's key set")
        # The provider fails, or it was asked moments ago (a key it started to sign with since
        # is fetched once the 30 s are up): the caller may retry.
        raise ServiceError(
            "IDENTITY_UNAVAILABLE",
            f"key {kid!r} of the identity provider cannot be fetched now; retry",
        )

    def _lookup(self, kid: str | None) -> jwt.PyJWK | None:
        if kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))  # a set of one key needs no key ids
        return self._keys.get(kid)

    async def _refresh(self) -> None:
        """Fetch the set once; on failure keep the old keys and remember when it failed."""
        try:
            loop = asyncio.get_running_loop()
            data = await loop.run_in_executor(self._thread, self._client.fetch_data)
            keys = {key.key_id: key for key in jwt.PyJWKSet.from_dict(data).keys}
            open_rsa = {
                jwk.get("kid"): jwk
                for jwk in data.get("keys", ())
                if isinstance(jwk, dict) and jwk.get("kty") == "RSA" and "alg" not in jwk
            }
        except Exception as error:  # whatever the provider sent (or not), the fetch failed
            self._failed_at = self._clock()
            log.warning("cannot fetch the identity key set: %s", error)
        else:
            self._keys, self._open_rsa, self._made = keys, open_rsa, {}
            self._fetched_at = self._clock()
            self._failed_at = None
        finally:
            self._fetch = None

    def close(self) -> None:
        self._thread.shutdown(wait=False, cancel_futures=True)


def _invalid(why: str) -> ServiceError:
    return ServiceError("IDENTITY_INVALID", f"the identity token is not valid: {why}")
