"""ListPlayerTables: the tables where a signed-in player holds a seat ("my games"), and how an
app finds its player's games again after losing its seat tokens.
"""

from __future__ import annotations

import hashlib
from typing import Any

import grpc
import pytest
import redis.asyncio as aioredis

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.store import keys
from hearts_server.store import redis as redis_store

from .conftest import Hearts, ServerFactory, bearer, failure
from .test_api_identity_tokens import SECRET, join, signed

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


async def my_tables(hearts: Hearts, token: str, page_size: int = 0) -> list[tuple[str, int]]:
    response = await hearts.stub.ListPlayerTables(
        api.ListPlayerTablesRequest(identity_token=token, page_size=page_size)
    )
    return [(entry.table.name, entry.seat) for entry in response.tables]


@pytest.fixture
async def hearts(make_server: ServerFactory, connect, store_kind: str) -> Hearts:  # type: ignore[no-untyped-def]
    return connect(await make_server(store=store_kind, identity_secret=SECRET))


async def test_a_player_finds_the_tables_where_it_holds_a_seat_newest_first(
    hearts: Hearts,
) -> None:
    first = (await hearts.create()).view.table.name
    unlisted = (await hearts.create(unlisted=True)).view.table.name
    others = (await hearts.create()).view.table.name
    await join(hearts, first, signed("user-1"), seat=2)
    await join(hearts, unlisted, signed("user-1"), seat=0)  # a game among friends: listed here
    await join(hearts, others, signed("user-2"), seat=1)
    await hearts.join(others, 3)  # a guest: no identity, no list
    assert await my_tables(hearts, signed("user-1")) == [(unlisted, 0), (first, 2)]
    assert await my_tables(hearts, signed("user-2")) == [(others, 1)]
    assert await my_tables(hearts, signed("user-3")) == []
    assert await my_tables(hearts, signed("user-1"), page_size=1) == [(unlisted, 0)]
    # The entries are tables as ListTables shows them: no cards, the seats' names and ids.
    response = await hearts.stub.ListPlayerTables(
        api.ListPlayerTablesRequest(identity_token=signed("user-1"))
    )
    table = response.tables[1].table
    assert table.seats[2].player_id == "user-1"
    assert table.etag == await hearts.etag(first)


async def test_a_new_device_finds_its_game_and_plays_on(hearts: Hearts) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC})
    table = created.view.table.name
    await join(hearts, table, signed("user-1"), seat=0)  # the first device's token is lost
    [(name, seat)] = await my_tables(hearts, signed("user-1"))
    assert (name, seat) == (table, 0)
    renewed = await join(hearts, name, signed("user-1"))  # the same seat, a new token
    assert renewed.seat == seat
    view = await hearts.view(name, renewed.seat_token)
    assert view.viewer_seat == 0
    assert len(view.hand) == 13


async def test_taking_the_seats_tokens_again_keeps_the_order(hearts: Hearts) -> None:
    # A new device lists the tables, then takes each seat's token again (JoinTable with the
    # identity token): that takes no seat, so the list stays most recently joined first.
    names = [(await hearts.create()).view.table.name for _ in range(3)]
    for name in names:
        await join(hearts, name, signed("user-1"))
    before = await my_tables(hearts, signed("user-1"))
    assert [name for name, _ in before] == names[::-1]
    for name, _ in before:
        await join(hearts, name, signed("user-1"))
    assert await my_tables(hearts, signed("user-1")) == before


@pytest.mark.redis
async def test_a_rematch_table_made_again_under_its_name_stays_listed(
    make_server: ServerFactory,
    connect: Any,
    redis_url: str,
) -> None:
    # A rematch table that expired is made again under its name when a player asks for it. A
    # list read that found it gone must not drop the entry the player's seat there adds in the
    # meantime (on another replica): forced here by asking for the rematch just before the read
    # drops the gone tables.
    server = await make_server(store="redis", identity_secret=SECRET)
    hearts = connect(server)
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1)
    finished = created.view.table.name
    played = await join(hearts, finished, signed("user-1"), seat=0)
    await hearts.play_out(finished, {0: played.seat_token})
    rematch = (await hearts.rematch(finished, played.seat_token)).view.table.name
    assert [name for name, _ in await my_tables(hearts, signed("user-1"))] == [rematch, finished]
    client = aioredis.Redis.from_url(redis_url)
    rematch_id = rematch.removeprefix("tables/")
    await client.delete(keys.table(rematch_id), keys.events(rematch_id), keys.requests(rematch_id))
    store = server.app.store
    original = store._run_one  # type: ignore[attr-defined]
    raced: list[api.RematchTableResponse] = []

    async def run_one(command: Any) -> Any:
        if command[:2] == ("EVALSHA", redis_store._PLAYER.sha) and not raced:
            raced.append(await hearts.rematch(finished, played.seat_token))
        return await original(command)

    store._run_one = run_one  # type: ignore[attr-defined]
    try:
        assert await my_tables(hearts, signed("user-1")) == [(finished, 0)]  # read before
    finally:
        del store._run_one  # type: ignore[attr-defined]
    assert [(entry.view.table.name, entry.seat) for entry in raced] == [(rematch, 0)]
    assert await my_tables(hearts, signed("user-1")) == [(rematch, 0), (finished, 0)]
    digest = hashlib.blake2b(b"user-1", digest_size=16).hexdigest()
    assert await client.zcard(f"hearts:player:{digest}") == 2
    await client.aclose()


async def test_a_seat_given_up_leaves_the_list(hearts: Hearts) -> None:
    waiting = (await hearts.create()).view.table.name
    deleted = await hearts.create()
    finished = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1)
    left = await join(hearts, waiting, signed("user-1"))
    await join(hearts, deleted.view.table.name, signed("user-1"))
    played = await join(hearts, finished.view.table.name, signed("user-1"), seat=0)
    await hearts.play_out(finished.view.table.name, {0: played.seat_token})
    # A finished game stays until the player leaves it (or it expires): for its rematch.
    assert [name for name, _ in await my_tables(hearts, signed("user-1"))] == [
        finished.view.table.name,
        deleted.view.table.name,
        waiting,
    ]
    await hearts.leave(waiting, left.seat_token)
    await hearts.delete(deleted.view.table.name, deleted.creator_token)
    assert await my_tables(hearts, signed("user-1")) == [(finished.view.table.name, 0)]
    await hearts.leave(finished.view.table.name, played.seat_token)
    assert await my_tables(hearts, signed("user-1")) == []
    # Taken again (another seat of the table it left before the game): listed again.
    again = await join(hearts, waiting, signed("user-1"), seat=3)
    assert await my_tables(hearts, signed("user-1")) == [(waiting, again.seat)]


async def test_quick_games_and_rematches_are_listed(hearts: Hearts) -> None:
    quick = await hearts.stub.QuickJoin(
        api.QuickJoinRequest(player_display_name="Ann", identity_token=signed("user-1"))
    )
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1)
    table = created.view.table.name
    played = await join(hearts, table, signed("user-1"), seat=0)
    await hearts.play_out(table, {0: played.seat_token})
    rematch = await hearts.rematch(table, played.seat_token)
    assert await my_tables(hearts, signed("user-1")) == [
        (rematch.view.table.name, 0),
        (table, 0),
        (quick.view.table.name, quick.seat),
    ]


async def test_the_seat_token_of_a_seat_does_not_list_tables(hearts: Hearts) -> None:
    # Only an identity token names a player; a seat token names one seat of one table.
    table = (await hearts.create()).view.table.name
    joined = await join(hearts, table, signed("user-1"))
    refusal = await failure(
        hearts.stub.ListPlayerTables(
            api.ListPlayerTablesRequest(), metadata=bearer(joined.seat_token)
        )
    )
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, "IDENTITY_REQUIRED")


@pytest.mark.parametrize(
    ("request_fields", "code", "reason"),
    [
        ({"identity_token": "not-a-jwt"}, grpc.StatusCode.UNAUTHENTICATED, "IDENTITY_INVALID"),
        (
            {"identity_token": signed(key="another-secret-of-the-same-length-0123456789abc")},
            grpc.StatusCode.UNAUTHENTICATED,
            "IDENTITY_INVALID",
        ),
        (
            {"identity_token": "", "page_size": 5},
            grpc.StatusCode.UNAUTHENTICATED,
            "IDENTITY_REQUIRED",
        ),
        (
            {"identity_token": signed("user-1"), "page_size": -1},
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        ),
    ],
)
async def test_a_bad_request_is_refused_with_its_reason(
    hearts: Hearts, request_fields: dict[str, object], code: grpc.StatusCode, reason: str
) -> None:
    table = (await hearts.create()).view.table.name
    await join(hearts, table, signed("user-1"))
    refusal = await failure(
        hearts.stub.ListPlayerTables(api.ListPlayerTablesRequest(**request_fields))  # type: ignore[arg-type]
    )
    assert (refusal.code, refusal.reason) == (code, reason)


async def test_a_server_that_checks_no_identity_keeps_no_lists(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    hearts = connect(await make_server())
    for token in (signed("user-1"), ""):
        refusal = await failure(
            hearts.stub.ListPlayerTables(api.ListPlayerTablesRequest(identity_token=token))
        )
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "IDENTITY_NOT_ACCEPTED",
        )
