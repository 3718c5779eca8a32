"""Identity tokens: players who join with their app's sign-in (a JWT) show its ``sub`` as their
seat's ``player_id``, never hold two seats of a table, and may be required.

The tokens are signed here as an app's backend (a shared secret) or an identity provider (a key
pair whose public half a local HTTP server publishes as a JSON Web Key Set) would sign them.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.identity import _KeySet as _KeySetCache

from ..key_sets import KeySet
from .conftest import Hearts, ServerFactory, failure

SECRET = "the-apps-backend-signs-with-this-secret-0123456789"
ISSUER = "https://idp.test/"
AUDIENCE = "hearts-app"
HEURISTIC = pb.BOT_LEVEL_HEURISTIC


def signed(sub: object = "user-1", *, key: Any = SECRET, alg: str = "HS256", **claims: Any) -> str:
    """A token for ``sub`` that expires in an hour, with ``claims`` added (None drops one)."""
    payload = {"sub": sub, "exp": int(time.time()) + 3600, "name": "Ann", **claims}
    return jwt.encode({k: v for k, v in payload.items() if v is not None}, key, alg)


async def join(
    hearts: Hearts, name: str, token: str, seat: int | None = None, player: str = "Ann"
) -> api.JoinTableResponse:
    request = api.JoinTableRequest(name=name, player_display_name=player, identity_token=token)
    if seat is not None:
        request.seat = seat
    return await hearts.stub.JoinTable(request)


@pytest.fixture
async def hearts(make_server: ServerFactory, connect, store_kind: str) -> Hearts:  # type: ignore[no-untyped-def]
    return connect(await make_server(store=store_kind, identity_secret=SECRET))


async def test_a_verified_player_shows_its_id_on_its_seat(hearts: Hearts) -> None:
    table = (await hearts.create()).view.table.name
    joined = await join(hearts, table, signed("google-oauth2|1234"), seat=2)
    assert joined.seat == 2
    assert joined.view.table.seats[2].player_id == "google-oauth2|1234"
    # Everyone sees it (it is the app's id of the user), and it stays on the record.
    spectator = await hearts.view(table)
    assert [seat.player_id for seat in spectator.table.seats] == ["", "", "google-oauth2|1234", ""]
    plain = await hearts.join(table, 0, player="Guest")  # no token: no id
    assert plain.view.table.seats[0].player_id == ""


async def test_the_same_player_gets_its_seat_again_never_a_second_one(hearts: Hearts) -> None:
    table = (await hearts.create()).view.table.name
    first = await join(hearts, table, signed("user-1"))
    etag = await hearts.etag(table)
    # Another device of the same user (a fresh token, another display name): the same seat.
    again = await join(hearts, table, signed("user-1", iat=int(time.time())), player="Ann 2")
    assert (again.seat, again.etag) == (first.seat, first.etag)
    assert await hearts.etag(table) == etag
    assert (await hearts.view(table, again.seat_token)).viewer_seat == first.seat
    named = await join(hearts, table, signed("user-1"), seat=first.seat)
    assert named.seat == first.seat
    refusal = await failure(join(hearts, table, signed("user-1"), seat=3))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.ALREADY_EXISTS, "ALREADY_SEATED")
    assert await hearts.etag(table) == etag
    other = await join(hearts, table, signed("user-2"))
    assert other.seat != first.seat
    # Once the player leaves, the player may join again (a new seat).
    await hearts.leave(table, first.seat_token)
    back = await join(hearts, table, signed("user-1"), seat=3)
    assert back.view.table.seats[3].player_id == "user-1"


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda: "not-a-jwt", "IDENTITY_INVALID"),
        (lambda: signed(key="another-secret-of-the-same-length-0123456789abc"), "IDENTITY_INVALID"),
        (lambda: signed(exp=int(time.time()) - 3600), "IDENTITY_EXPIRED"),
        (lambda: signed(exp=None), "IDENTITY_INVALID"),  # no expiry: refused
        (lambda: signed(sub=None), "IDENTITY_INVALID"),
        (lambda: signed(sub=""), "IDENTITY_INVALID"),
        (lambda: signed(sub="x" * 129), "IDENTITY_INVALID"),
        (lambda: signed(nbf=int(time.time()) + 3600), "IDENTITY_INVALID"),
        (
            lambda: jwt.encode({"sub": "u", "exp": int(time.time()) + 60}, None, "none"),
            "IDENTITY_INVALID",
        ),
        # Asymmetric algorithms need a key set, which this server has none of.
        (lambda: signed(key=_rsa_key(), alg="RS256"), "IDENTITY_INVALID"),
    ],
)
async def test_a_bad_identity_token_is_refused_and_changes_nothing(
    hearts: Hearts, token: Callable[[], str], reason: str
) -> None:
    table = (await hearts.create()).view.table.name
    etag = await hearts.etag(table)
    refusal = await failure(join(hearts, table, token()))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, reason)
    assert await hearts.etag(table) == etag


async def test_a_server_may_require_identity(make_server: ServerFactory, connect) -> None:  # type: ignore[no-untyped-def]
    hearts = connect(await make_server(identity_secret=SECRET, identity_required=True))
    refusal = await failure(hearts.create())
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, "IDENTITY_REQUIRED")
    created = await hearts.stub.CreateTable(
        api.CreateTableRequest(table=pb.Table(display_name="signed in"), identity_token=signed())
    )
    table = created.view.table.name
    assert (await failure(hearts.join(table, 0))).reason == "IDENTITY_REQUIRED"
    joined = await join(hearts, table, signed("user-7"), seat=0)
    # A seat token renews itself without an identity token.
    renewed = await hearts.stub.JoinTable(
        api.JoinTableRequest(name=table),
        metadata=(("authorization", f"Bearer {joined.seat_token}"),),
    )
    assert renewed.seat == 0


async def test_a_server_that_checks_no_identity_refuses_identity_tokens(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    hearts = connect(await make_server())
    table = (await hearts.create()).view.table.name
    refusal = await failure(join(hearts, table, signed()))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "IDENTITY_NOT_ACCEPTED",
    )


async def test_a_rematch_keeps_the_players_ids(hearts: Hearts) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1)
    table = created.view.table.name
    joined = await join(hearts, table, signed("user-9"), seat=0)
    await hearts.play_out(table, {0: joined.seat_token})
    rematch = await hearts.rematch(table, joined.seat_token)
    assert rematch.view.table.seats[0].player_id == "user-9"
    # The player's identity finds the seat at the new table too.
    again = await join(hearts, rematch.view.table.name, signed("user-9"))
    assert again.seat == 0


# --------------------------------------------------------------------------- a key set


def _rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture
def key_set() -> Iterator[KeySet]:
    published = KeySet()
    yield published
    published.close()


def provider_token(key: Any, kid: str, alg: str = "RS256", **claims: Any) -> str:
    """A provider's token for ``sub``, signed with ``key`` as ``kid``; None drops a claim."""
    payload = {
        "sub": "firebase-uid-42",
        "iss": ISSUER,
        "aud": AUDIENCE,
        "exp": int(time.time()) + 3600,
        **claims,
    }
    payload = {name: value for name, value in payload.items() if value is not None}
    return jwt.encode(payload, key, alg, headers={"kid": kid})


async def test_tokens_of_an_identity_provider_are_checked_with_its_key_set(
    make_server: ServerFactory,
    connect,
    key_set: KeySet,  # type: ignore[no-untyped-def]
) -> None:
    rsa_key, ec_key = _rsa_key(), ec.generate_private_key(ec.SECP256R1())
    key_set.publish("rsa-1", rsa_key, "RS256")
    key_set.publish("ec-1", ec_key, "ES256")
    hearts = connect(
        await make_server(
            identity_jwks_url=key_set.url, identity_issuer=ISSUER, identity_audience=AUDIENCE
        )
    )
    table = (await hearts.create()).view.table.name
    joined = await join(hearts, table, provider_token(rsa_key, "rsa-1"), seat=0)
    assert joined.view.table.seats[0].player_id == "firebase-uid-42"
    second = await join(hearts, table, provider_token(ec_key, "ec-1", "ES256", sub="uid-43"))
    assert second.view.table.seats[second.seat].player_id == "uid-43"
    assert key_set.fetches == 1  # the key set is cached

    public_pem = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for token in [
        provider_token(rsa_key, "rsa-1", iss="https://someone-else.test/"),
        provider_token(rsa_key, "rsa-1", aud="another-app"),
        provider_token(rsa_key, "rsa-1", aud=None),
        provider_token(_rsa_key(), "rsa-1"),  # signed by a key the set does not hold
        # The public key taken for an HMAC secret (the classic confusion): never.
        _hs256_with_public_key(public_pem),
    ]:
        refusal = await failure(join(hearts, table, token))
        assert refusal.reason == "IDENTITY_INVALID", refusal
    assert key_set.fetches == 1


async def test_a_key_the_provider_just_published_is_fetched_once_the_wait_is_up(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_KeySetCache, "REFETCH_SECONDS", 0.5)
    old_key, new_key = _rsa_key(), _rsa_key()
    key_set.publish("old", old_key, "RS256")
    hearts = await _provider_server(make_server, connect, key_set)
    table = (await hearts.create()).view.table.name
    await join(hearts, table, provider_token(old_key, "old", sub="a"))
    key_set.publish("new", new_key, "RS256")  # rotated, and signing with it at once
    # Too soon after the last fetch: retryable, and no fetch (random key ids cannot force one).
    for _ in range(3):
        refusal = await failure(join(hearts, table, provider_token(new_key, "new", sub="b")))
        assert refusal.reason == "IDENTITY_UNAVAILABLE"
    assert key_set.fetches == 1
    await asyncio.sleep(0.6)
    joined = await join(hearts, table, provider_token(new_key, "new", sub="b"))
    assert joined.view.table.seats[joined.seat].player_id == "b"
    assert key_set.fetches == 2
    # A key id the set does not have, right after a fetch that found none: invalid.
    await asyncio.sleep(0.6)
    refusal = await failure(join(hearts, table, provider_token(new_key, "no-such-kid")))
    assert refusal.reason == "IDENTITY_INVALID"
    assert key_set.fetches == 3


def _hs256_with_public_key(public_pem: bytes) -> str:
    """An HS256 token whose HMAC key is the provider's public key, by hand (PyJWT refuses to
    sign with a PEM as an HMAC secret, for this very reason)."""
    import base64
    import hashlib
    import hmac

    def part(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    header = part(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}).encode())
    claims = {"sub": "x", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 60}
    body = part(json.dumps(claims).encode())
    signature = part(hmac.new(public_pem, header + b"." + body, hashlib.sha256).digest())
    return (header + b"." + body + b"." + signature).decode()


async def test_an_unreachable_key_set_is_identity_unavailable(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_KeySetCache, "FAILURE_SECONDS", 0.3)
    rsa_key = _rsa_key()
    key_set.publish("rsa-1", rsa_key, "RS256")
    key_set.up = False
    hearts = await _provider_server(make_server, connect, key_set)
    table = (await hearts.create()).view.table.name
    for _ in range(5):  # the failure is remembered a while: one fetch answers them all
        refusal = await failure(join(hearts, table, provider_token(rsa_key, "rsa-1")))
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.UNAVAILABLE,
            "IDENTITY_UNAVAILABLE",
        )
    assert key_set.fetches == 1
    key_set.up = True
    await asyncio.sleep(0.4)
    joined = await join(hearts, table, provider_token(rsa_key, "rsa-1"))
    assert joined.view.table.seats[joined.seat].player_id == "firebase-uid-42"


async def _provider_server(make_server: ServerFactory, connect, key_set: KeySet) -> Hearts:  # type: ignore[no-untyped-def]
    return connect(  # type: ignore[no-any-return]
        await make_server(
            identity_jwks_url=key_set.url, identity_issuer=ISSUER, identity_audience=AUDIENCE
        )
    )


@pytest.mark.parametrize(
    "body",
    [
        b"<html>not json</html>",
        b'{"keys": []}',
        b"[1, 2]",
        b'{"keys": [{"kty": "??"}]}',
        b'{"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": ["a list"]}]}',  # was INTERNAL
    ],
)
async def test_a_key_set_that_cannot_be_read_is_identity_unavailable(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
    body: bytes,
) -> None:
    rsa_key = _rsa_key()
    key_set.body = body
    hearts = await _provider_server(make_server, connect, key_set)
    table = (await hearts.create()).view.table.name
    refusal = await failure(join(hearts, table, provider_token(rsa_key, "rsa-1")))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "IDENTITY_UNAVAILABLE")


async def test_joins_waiting_for_a_slow_key_set_share_one_fetch(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
) -> None:
    rsa_key = _rsa_key()
    key_set.publish("rsa-1", rsa_key, "RS256")
    key_set.delay = 1.0
    hearts = await _provider_server(make_server, connect, key_set)
    tables = [(await hearts.create()).view.table.name for _ in range(8)]
    # One caller gives up early; its fetch goes on for the others.
    impatient = hearts.stub.JoinTable(
        api.JoinTableRequest(
            name=tables[0],
            player_display_name="Ann",
            identity_token=provider_token(rsa_key, "rsa-1"),
        ),
        timeout=0.2,
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await impatient
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    joined = await asyncio.gather(
        *(join(hearts, table, provider_token(rsa_key, "rsa-1")) for table in tables[1:])
    )
    assert all(j.view.table.seats[j.seat].player_id == "firebase-uid-42" for j in joined)
    assert key_set.fetches == 1  # one fetch, shared: not one after another


async def test_a_token_that_does_not_fit_its_key_is_invalid_not_an_internal_error(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
) -> None:
    rsa_key = _rsa_key()
    key_set.publish("rsa-1", rsa_key, "RS256")
    hearts = await _provider_server(make_server, connect, key_set)
    table = (await hearts.create()).view.table.name
    ec_key = ec.generate_private_key(ec.SECP256R1())
    for token in [
        provider_token(ec_key, "rsa-1", "ES256"),  # the kid of an RSA key, signed as ES256
        provider_token(rsa_key, "rsa-1", "PS256"),  # the right key, another algorithm
        _unsigned({"alg": ["RS256"], "kid": "rsa-1"}),
        _unsigned({"alg": {"x": 1}}),
    ]:
        refusal = await failure(join(hearts, table, token))
        assert refusal.reason == "IDENTITY_INVALID", refusal


async def test_an_rsa_key_published_without_its_alg_verifies_every_rsa_algorithm(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
) -> None:
    # RFC 7517 makes a key's alg optional; PyJWT then takes an RSA key for RS256 only, and the
    # tokens of a provider that signs with PS256 or RS512 were all IDENTITY_INVALID.
    rsa_key, stated_key, ec_key = _rsa_key(), _rsa_key(), ec.generate_private_key(ec.SECP256R1())
    key_set.publish("rsa-open", rsa_key, "RS256", state_alg=False)
    key_set.publish("rsa-stated", stated_key, "RS256")
    key_set.publish("ec-open", ec_key, "ES256", state_alg=False)
    hearts = await _provider_server(make_server, connect, key_set)
    for alg in ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512"):
        table = (await hearts.create()).view.table.name
        joined = await join(hearts, table, provider_token(rsa_key, "rsa-open", alg, sub=alg))
        assert joined.view.table.seats[joined.seat].player_id == alg
    table = (await hearts.create()).view.table.name
    assert (await join(hearts, table, provider_token(ec_key, "ec-open", "ES256"))).seat_token
    public_pem = rsa_key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    for token in [
        provider_token(stated_key, "rsa-stated", "PS256"),  # a stated alg is kept to
        provider_token(ec_key, "rsa-open", "ES256"),  # an RSA key's kid, signed as ES256
        provider_token(_rsa_key(), "rsa-open", "PS256"),  # a key the set does not hold
        _hs256_with_public_key(public_pem),  # never an HMAC secret
    ]:
        refusal = await failure(join(hearts, table, token))
        assert refusal.reason == "IDENTITY_INVALID", refusal


def _unsigned(header: dict[str, Any]) -> str:
    """A token with this header, any claims and a signature of nothing."""

    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    claims = {"sub": "x", "exp": int(time.time()) + 60}
    return f"{part(json.dumps(header).encode())}.{part(json.dumps(claims).encode())}.{part(b'x')}"


async def test_a_player_who_left_the_finished_game_gets_neither_seat_nor_rematch_back(
    hearts: Hearts,
) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1)
    table = created.view.table.name
    joined = await join(hearts, table, signed("alice"), seat=0)
    await hearts.play_out(table, {0: joined.seat_token})
    await hearts.leave(table, joined.seat_token)
    etag = await hearts.etag(table)
    view = await hearts.view(table)
    assert view.table.seats[0].player_id == "alice"  # the results keep who played
    refusal = await failure(join(hearts, table, signed("alice")))
    assert refusal.reason == "TABLE_FULL"
    assert await hearts.etag(table) == etag


async def test_another_caller_reusing_a_request_id_never_gets_anothers_token(
    hearts: Hearts,
) -> None:
    table = (await hearts.create()).view.table.name
    request = api.JoinTableRequest(
        name=table, player_display_name="Ann", request_id="join-1", identity_token=signed("user-1")
    )
    await hearts.stub.JoinTable(request)
    # The same id without the identity, its id smuggled into a field: never the replay.
    for etag, reason in [("\x1fuser-1", "ETAG_MISMATCH"), ("", "REQUEST_ID_REUSED")]:
        sneaky = api.JoinTableRequest(
            name=table, player_display_name="Ann", request_id="join-1", etag=etag
        )
        assert (await failure(hearts.stub.JoinTable(sneaky))).reason == reason
    other = api.JoinTableRequest(
        name=table, player_display_name="Ann", request_id="join-1", identity_token=signed("eve")
    )
    assert (await failure(hearts.stub.JoinTable(other))).reason == "REQUEST_ID_REUSED"
    named = api.JoinTableRequest(name=table, player_display_name="An\x1fn")
    assert (await failure(hearts.stub.JoinTable(named))).reason == "INVALID_REQUEST"
    # CreateTable too: another signed-in caller repeating a create gets no creator token.
    create = api.CreateTableRequest(
        table=pb.Table(display_name="mine"), request_id="create-1", identity_token=signed("alice")
    )
    await hearts.stub.CreateTable(create)
    create.identity_token = signed("eve")
    assert (await failure(hearts.stub.CreateTable(create))).reason == "REQUEST_ID_REUSED"


async def test_a_rematch_for_a_player_who_joined_it_already_renews_that_seat(
    hearts: Hearts,
) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC}, target_score=1)
    table = created.view.table.name
    alice = await join(hearts, table, signed("alice"), seat=0)
    bob = await join(hearts, table, signed("bob"), seat=3)
    await hearts.play_out(table, {0: alice.seat_token, 3: bob.seat_token})
    started = await hearts.rematch(table, bob.seat_token)
    new = started.view.table.name
    joined = await join(hearts, new, signed("alice"))
    assert joined.seat == 0
    rematch = await hearts.rematch(table, alice.seat_token)
    assert (rematch.seat, rematch.etag) == (0, joined.etag)


@pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")  # signing it here
async def test_an_hmac_secret_shorter_than_the_hash_is_refused_for_it(hearts: Hearts) -> None:
    table = (await hearts.create()).view.table.name
    # SECRET has 50 bytes: enough for HS256 and HS384, short of HS512's 64.
    assert (await join(hearts, table, signed("u", alg="HS384"))).view.table.seats[0].player_id
    refusal = await failure(join(hearts, table, signed("v", alg="HS512")))
    assert refusal.reason == "IDENTITY_INVALID"


async def test_names_with_control_characters_are_refused(hearts: Hearts) -> None:
    for table in [
        pb.Table(display_name="Friday\x07"),
        pb.Table(
            seats=[
                pb.Seat(
                    seat=1,
                    occupant=pb.SEAT_OCCUPANT_BOT,
                    bot_level=HEURISTIC,
                    player_display_name="B\x9bot",
                )
            ]
        ),
    ]:
        refusal = await failure(hearts.stub.CreateTable(api.CreateTableRequest(table=table)))
        assert refusal.reason == "INVALID_REQUEST"


async def test_a_known_key_serves_while_an_old_set_is_fetched_again(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    key_set: KeySet,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_KeySetCache, "LIFESPAN_SECONDS", 0.3)
    rsa_key = _rsa_key()
    key_set.publish("rsa-1", rsa_key, "RS256")
    hearts = await _provider_server(make_server, connect, key_set)
    table = (await hearts.create()).view.table.name
    await join(hearts, table, provider_token(rsa_key, "rsa-1", sub="a"))
    key_set.delay = 3.0  # the provider answers slowly from now on
    await asyncio.sleep(0.4)  # the set is old
    # The join does not wait for the fetch (3 s) it starts.
    joined = await asyncio.wait_for(join(hearts, table, provider_token(rsa_key, "rsa-1")), 2.0)
    assert joined.view.table.seats[joined.seat].player_id == "firebase-uid-42"
    for _ in range(100):  # and the fetch it started in the background reaches the provider
        if key_set.fetches == 2:
            break
        await asyncio.sleep(0.02)
    assert key_set.fetches == 2


async def test_an_identity_token_sent_with_a_renewal_is_checked_too(
    hearts: Hearts,
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    table = (await hearts.create()).view.table.name
    joined = await join(hearts, table, signed("alice"), seat=0)
    bearer = (("authorization", f"Bearer {joined.seat_token}"),)
    renewal = api.JoinTableRequest(name=table, identity_token="garbage")
    refusal = await failure(hearts.stub.JoinTable(renewal, metadata=bearer))
    assert refusal.reason == "IDENTITY_INVALID"
    renewal.identity_token = signed("alice")
    assert (await hearts.stub.JoinTable(renewal, metadata=bearer)).seat == 0
    # A server that checks no identity tokens refuses one there too.
    plain = connect(await make_server())
    other = (await plain.create()).view.table.name
    seated = await plain.join(other, 0)
    request = api.JoinTableRequest(name=other, identity_token=signed("alice"))
    bearer = (("authorization", f"Bearer {seated.seat_token}"),)
    refusal = await failure(plain.stub.JoinTable(request, metadata=bearer))
    assert refusal.reason == "IDENTITY_NOT_ACCEPTED"
