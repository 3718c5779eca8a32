"""Identity tokens through the client: the signed-in user's JWT goes with every CreateTable and
JoinTable (and nowhere else), the seat shows its ``sub`` as ``player_id``, the same player gets
the same seat again, and refusals raise the client's error classes with the server's reasons.

The tokens are signed here as an app's backend would sign them, with the server's identity
secret; one test signs them as an identity provider, whose key set a local HTTP server publishes.
"""

from __future__ import annotations

import asyncio
import io
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from hearts.v1 import table_pb2 as pb
from hearts_client import (
    AuthError,
    HeartsClient,
    InvalidRequestError,
    SeatTakenError,
    SyncHeartsClient,
    UnavailableError,
)
from hearts_client.cli import main
from hearts_server.identity import _KeySet as ServerKeySet
from hearts_server.server import HeartsServer

from ..key_sets import KeySet
from .client_helpers import (
    IDENTITY_SECRET,
    THREE_BOTS,
    LoseFirstAnswer,
    Record,
    identity,
    start_server,
)


@pytest.fixture
async def required_server() -> AsyncIterator[HeartsServer]:
    """A server that admits signed-in players only."""
    running = await start_server(identity_secret=IDENTITY_SECRET, identity_required=True)
    yield running
    await running.stop(0)


def _player_ids(view: pb.TableView) -> list[str]:
    return [seat.player_id for seat in sorted(view.table.seats, key=lambda s: s.seat)]


# --------------------------------------------------------------------------- the asyncio client


async def test_a_player_who_joins_with_an_identity_token_shows_its_id_on_the_seat(
    identity_server: HeartsServer,
) -> None:
    address = identity_server.address
    async with HeartsClient(address, identity_token=identity("google-oauth2|1234")) as ann:
        created = await ann.create_table("signed in", bots={1: "random"})
        joined = await ann.join_table(created.name, "Ann", seat=2)
    assert joined.seat == 2
    assert joined.player_id == "google-oauth2|1234"
    async with HeartsClient(address) as guest:  # no identity token: a seat without an id
        spectator = await guest.get_table(created.name)
        assert _player_ids(spectator) == ["", "", "google-oauth2|1234", ""]
        plain = await guest.join_table(created.name, "Guest")
    assert plain.seat == 0
    assert plain.player_id == ""


async def test_the_same_player_joining_again_gets_the_same_seat(
    identity_server: HeartsServer,
) -> None:
    address = identity_server.address
    async with HeartsClient(address, identity_token=identity("user-1")) as laptop:
        created = await laptop.create_table("t")
        first = await laptop.join_table(created.name, "Ann")
    # Another device of the same user, with a fresh token and another display name.
    phone_token = identity("user-1", iat=int(time.time()))
    async with HeartsClient(address, identity_token=phone_token) as phone:
        again = await phone.join_table(created.name, "Ann's phone")
        assert again.seat == first.seat
        assert again.view.table.etag == first.view.table.etag  # the table did not change
        assert (await phone.get_table(created.name)).viewer_seat == first.seat  # its token works
        assert (await phone.join_table(created.name, "Ann", seat=first.seat)).seat == first.seat
        with pytest.raises(SeatTakenError) as caught:
            await phone.join_table(created.name, "Ann", seat=(first.seat + 1) % 4)
    assert caught.value.code == grpc.StatusCode.ALREADY_EXISTS
    assert caught.value.reason == "ALREADY_SEATED"
    humans = [s.seat for s in again.view.table.seats if s.occupant == pb.SEAT_OCCUPANT_HUMAN]
    assert humans == [first.seat]


async def test_the_identity_token_can_be_replaced_and_overridden_per_call(
    identity_server: HeartsServer,
) -> None:
    async with HeartsClient(identity_server.address, identity_token=identity("user-1")) as client:
        tables = [(await client.create_table(f"t{i}")).name for i in range(4)]
        assert client.identity_token == identity("user-1")
        client.identity_token = identity("user-2")  # the app refreshed its sign-in
        assert (await client.join_table(tables[0], "Ann")).player_id == "user-2"
        override = await client.join_table(tables[1], "Ann", identity_token=identity("user-3"))
        assert override.player_id == "user-3"
        assert client.identity_token == identity("user-2")  # an override is for its call only
        anonymous = await client.join_table(tables[2], "Ann", identity_token="")  # none at all
        assert anonymous.player_id == ""
        client.identity_token = ""
        assert client.identity_token is None
        assert (await client.join_table(tables[3], "Ann")).player_id == ""


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda: "not-a-jwt", "IDENTITY_INVALID"),
        (lambda: identity(key="somebody-elses-secret-of-32-bytes-or-more"), "IDENTITY_INVALID"),
        (lambda: identity(exp=int(time.time()) - 3600), "IDENTITY_EXPIRED"),
    ],
)
async def test_a_bad_identity_token_raises_an_auth_error_and_is_not_retried(
    identity_server: HeartsServer, token: Any, reason: str
) -> None:
    record = Record()
    async with HeartsClient(
        identity_server.address, identity_token=token(), interceptors=[record], backoff=0.01
    ) as client:
        with pytest.raises(AuthError) as refused_create:
            await client.create_table("t")
        created = await client.create_table("t", identity_token="")
        with pytest.raises(AuthError) as refused_join:
            await client.join_table(created.name, "Ann")
        view = await client.get_table(created.name)
    for caught in (refused_create, refused_join):
        assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
        assert caught.value.reason == reason
    assert [method for method, _, _ in record.calls] == [
        "CreateTable",
        "CreateTable",
        "JoinTable",
        "GetTable",
    ]
    assert all(seat.occupant != pb.SEAT_OCCUPANT_HUMAN for seat in view.table.seats)


async def test_a_server_that_requires_identity_refuses_the_client_without_one(
    required_server: HeartsServer,
) -> None:
    async with HeartsClient(required_server.address, backoff=0.01) as client:
        with pytest.raises(AuthError) as caught:
            await client.create_table("t")
        assert (caught.value.code, caught.value.reason) == (
            grpc.StatusCode.UNAUTHENTICATED,
            "IDENTITY_REQUIRED",
        )
        client.identity_token = identity("user-7")  # signed in now
        created = await client.create_table("t", bots=THREE_BOTS)
        async with HeartsClient(required_server.address) as guest:
            with pytest.raises(AuthError) as refused:
                await guest.join_table(created.name, "Guest")
            assert refused.value.reason == "IDENTITY_REQUIRED"
        joined = await client.join_table(created.name, "Ann")
        assert joined.player_id == "user-7"

    # The seat token alone renews itself and plays: it carries no identity token, and needs none.
    async with HeartsClient(required_server.address) as resumed:
        resumed.set_seat_token(created.name, joined.seat_token)
        renewed = await resumed.renew_seat_token(created.name)
        assert renewed.seat == joined.seat
        view = await resumed.get_table(created.name)
        if view.cards_to_pass:
            view = await resumed.pass_cards(created.name, view.hand[:3])
        assert view.viewer_seat == joined.seat


async def test_the_identity_token_goes_in_create_and_join_requests_only(
    identity_server: HeartsServer,
) -> None:
    token = identity("user-1")
    record = Record()
    async with HeartsClient(
        identity_server.address, identity_token=token, interceptors=[record]
    ) as client:
        created = await client.create_table("t", bots=THREE_BOTS)
        joined = await client.join_table(created.name, "Ann")
        await client.renew_seat_token(created.name)
        view = await client.pass_cards(created.name, joined.view.hand[:3])
        await client.play_card(created.name, view.legal_cards[0])
        await client.get_table(created.name)
        await client.list_tables()
        await client.leave_table(created.name)
        await client.delete_table(created.name)
    methods = [method for method, _, _ in record.calls]
    assert methods == [
        "CreateTable",
        "JoinTable",
        "JoinTable",
        "PassCards",
        "PlayCard",
        "GetTable",
        "ListTables",
        "LeaveTable",
        "DeleteTable",
    ]
    create, join, renew = (request for _, request, _ in record.calls[:3])
    assert create.identity_token == token
    assert join.identity_token == token
    assert renew.identity_token == ""  # a renewal proves the seat with its seat token
    for _, request, metadata in record.calls:
        assert all(token not in value for _, value in metadata)  # never as metadata
        if "identity_token" not in request.DESCRIPTOR.fields_by_name:
            assert token.encode() not in request.SerializeToString()


async def test_a_server_that_checks_no_identity_refuses_a_client_with_one(
    server: HeartsServer,
) -> None:
    async with HeartsClient(server.address, identity_token=identity()) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.create_table("t")
        assert (caught.value.code, caught.value.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "IDENTITY_NOT_ACCEPTED",
        )
        created = await client.create_table("t", identity_token="")
        with pytest.raises(InvalidRequestError):
            await client.join_table(created.name, "Ann")
        assert (await client.list_tables()).tables  # calls without the field work as ever


async def test_a_join_with_identity_whose_answer_was_lost_takes_one_seat(
    identity_server: HeartsServer,
) -> None:
    token = identity("user-1")
    lose = LoseFirstAnswer("JoinTable")
    async with HeartsClient(
        identity_server.address, identity_token=token, interceptors=[lose], backoff=0.01
    ) as client:
        created = await client.create_table("t")
        joined = await client.join_table(created.name, "Ann")
        view = await client.get_table(created.name)
    assert [request.identity_token for request in lose.requests] == [token, token]
    assert lose.request_ids[0] == lose.request_ids[1]
    humans = [s.seat for s in view.table.seats if s.occupant == pb.SEAT_OCCUPANT_HUMAN]
    assert humans == [joined.seat]
    assert joined.player_id == "user-1"
    assert view.viewer_seat == joined.seat


async def test_a_create_with_identity_whose_answer_was_lost_creates_one_table(
    required_server: HeartsServer,
) -> None:
    lose = LoseFirstAnswer("CreateTable")
    async with HeartsClient(
        required_server.address, identity_token=identity(), interceptors=[lose], backoff=0.01
    ) as client:
        created = await client.create_table("once")
        names = [t.name async for t in client.iter_tables()]
    assert names == [created.name]
    assert [request.identity_token for request in lose.requests] == [identity()] * 2


# --------------------------------------------------------------------------- a provider's key set

ISSUER = "https://idp.test/"
AUDIENCE = "hearts-app"


@pytest.fixture
def provider_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _provider_token(key: ec.EllipticCurvePrivateKey) -> str:
    claims = {"sub": "uid-42", "iss": ISSUER, "aud": AUDIENCE, "exp": int(time.time()) + 3600}
    return jwt.encode(claims, key, "ES256", headers={"kid": "k1"})


@pytest.mark.parametrize(("failures", "retries"), [(1, 3), (100, 1)])
async def test_identity_unavailable_is_retried_like_unavailable(
    provider_key: ec.EllipticCurvePrivateKey,
    failures: int,
    retries: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The server answers a failed fetch for 5 s without fetching again; here every retry
    # fetches, so that the first one after the provider is back succeeds.
    monkeypatch.setattr(ServerKeySet, "FAILURE_SECONDS", 0.0)
    key_set = KeySet(failures=failures)
    key_set.publish("k1", provider_key, "ES256")
    server = await start_server(
        identity_jwks_url=key_set.url, identity_issuer=ISSUER, identity_audience=AUDIENCE
    )
    record = Record()
    try:
        async with HeartsClient(
            server.address,
            identity_token=_provider_token(provider_key),
            interceptors=[record],
            max_retries=retries,
            backoff=0.01,
        ) as client:
            created = await client.create_table("t", identity_token="")
            if failures <= retries:
                joined = await client.join_table(created.name, "Ann")
                assert joined.player_id == "uid-42"
            else:
                with pytest.raises(UnavailableError) as caught:
                    await client.join_table(created.name, "Ann")
                assert caught.value.code == grpc.StatusCode.UNAVAILABLE
                assert caught.value.reason == "IDENTITY_UNAVAILABLE"
    finally:
        await server.stop(0)
        key_set.close()
    joins = [request for method, request, _ in record.calls if method == "JoinTable"]
    assert len(joins) == min(failures, retries) + 1
    assert len({request.request_id for request in joins}) == 1


# --------------------------------------------------------------------------- the sync client


def test_the_sync_client_takes_an_identity_token_too(identity_server_in_thread: str) -> None:
    with SyncHeartsClient(identity_server_in_thread, identity_token=identity("user-1")) as client:
        created = client.create_table("sync")
        assert client.join_table(created.name, "Ann").player_id == "user-1"
        assert client.join_table(created.name, "Ann").seat == 0  # the same seat again
        client.identity_token = identity("user-2")
        assert client.client.identity_token == identity("user-2")
        assert client.join_table(created.name, "Bob").player_id == "user-2"
        other = client.join_table(created.name, "Cy", identity_token=identity("user-3"))
        assert other.player_id == "user-3"
        with pytest.raises(AuthError) as caught:
            client.join_table(created.name, "Dee", identity_token="forged")
        assert caught.value.reason == "IDENTITY_INVALID"
        assert _player_ids(client.get_table(created.name)) == ["user-1", "user-2", "user-3", ""]


# --------------------------------------------------------------------------- the hearts command


async def _run(argv: list[str], typed: str = "") -> tuple[int, str]:
    out = io.StringIO()
    code = await asyncio.to_thread(main, argv, stdin=io.StringIO(typed), stdout=out)
    return code, out.getvalue()


async def test_the_commands_identity_token_reaches_the_server(
    identity_server: HeartsServer,
) -> None:
    address = identity_server.address
    argv = ["play", "--server", address, "--auto", "--target-score", "1"]
    code, out = await _run([*argv, "--identity-token", identity("cli-user")])
    assert code == 0, out
    async with HeartsClient(address) as client:
        [table] = [t async for t in client.iter_tables()]
    assert table.phase == pb.PHASE_GAME_OVER
    assert [s.player_id for s in sorted(table.seats, key=lambda s: s.seat)] == [
        "cli-user",
        "",
        "",
        "",
    ]
    code, out = await _run(["tables", "--server", address])
    assert code == 0
    assert "Player <cli-user>" in out


async def test_the_command_reads_the_identity_token_from_the_environment(
    identity_server: HeartsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with HeartsClient(identity_server.address) as client:
        created = await client.create_table(
            "friends", rules={"target_score": 1}, bots={1: "random", 2: "random", 3: "random"}
        )
        monkeypatch.setenv("HEARTS_IDENTITY_TOKEN", identity("env-user"))
        argv = ["play", "--server", identity_server.address, "--table", created.name, "--auto"]
        code, out = await _run(argv)
        assert code == 0, out
        view = await client.get_table(created.name)
    assert view.table.phase == pb.PHASE_GAME_OVER
    assert _player_ids(view)[0] == "env-user"


async def test_the_command_without_an_identity_token_is_refused_where_one_is_required(
    required_server: HeartsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _ = await _run(["play", "--server", required_server.address, "--auto"])
    assert code == 2
    err = capsys.readouterr().err
    assert "IDENTITY_REQUIRED" in err
    assert "--identity-token" in err  # what to do about it
