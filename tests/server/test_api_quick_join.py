"""QuickJoin: "play now". Callers asking for the same game are seated together, four to a table.

Each test runs against a real server on both stores; the replica test runs two servers on one
real Redis, as a scaled deployment does.
"""

from __future__ import annotations

import asyncio
import collections
import time
import uuid
from typing import Any

import grpc
import jwt
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.server import HeartsServer
from hearts_server.store.base import StoreUnavailableError

from .conftest import Hearts, ServerFactory, event_kind, failure, read_until, rejected

IDENTITY_SECRET = "the-apps-backend-signs-with-this-secret-0123456789"


async def quick(
    hearts: Hearts,
    player: str = "player",
    *,
    request_id: str = "",
    turn_timeout_ms: int | None = None,
    identity_token: str = "",
    metadata: Any = (),
    **rules: Any,
) -> api.QuickJoinResponse:
    request = api.QuickJoinRequest(
        player_display_name=player, request_id=request_id, identity_token=identity_token
    )
    if rules:
        request.rules.CopyFrom(pb.Rules(**rules))
    if turn_timeout_ms is not None:
        request.turn_timeout.FromMilliseconds(turn_timeout_ms)
    return await hearts.stub.QuickJoin(request, metadata=metadata)


async def listed(hearts: Hearts) -> list[pb.Table]:
    return list((await hearts.stub.ListTables(api.ListTablesRequest())).tables)


def occupants(table: pb.Table) -> list[str]:
    return [seat.player_display_name for seat in table.seats]


async def test_four_quick_joins_fill_one_table_and_its_game_starts(hearts: Hearts) -> None:
    first = await quick(hearts, "ann", target_score=1, turn_timeout_ms=30_000)
    table = first.view.table
    assert (first.seat, first.view.viewer_seat, first.etag) == (0, 0, table.etag)
    assert table.display_name == "Quick game"
    assert table.phase == pb.PHASE_WAITING_FOR_PLAYERS
    assert table.rules.target_score == 1
    assert table.turn_timeout.ToMilliseconds() == 30_000
    assert not table.unlisted
    assert [seat.occupant for seat in table.seats] == [
        pb.SEAT_OCCUPANT_HUMAN,
        pb.SEAT_OCCUPANT_EMPTY,
        pb.SEAT_OCCUPANT_EMPTY,
        pb.SEAT_OCCUPANT_EMPTY,
    ]
    # The waiting table is listed with its free seats, as any table.
    assert [t.name for t in await listed(hearts)] == [table.name]
    watcher = hearts.watch(table.name)
    await read_until(watcher, lambda message: event_kind(message) == "snapshot")

    others = [
        await quick(hearts, name, target_score=1, turn_timeout_ms=30_000)
        for name in ("bob", "cy", "di")
    ]

    assert [joined.view.table.name for joined in others] == [table.name] * 3
    assert [joined.seat for joined in others] == [1, 2, 3]
    last = others[-1].view.table
    assert occupants(last) == ["ann", "bob", "cy", "di"]
    assert last.phase == pb.PHASE_PASSING
    assert len(others[-1].view.hand) == 13
    joined = await read_until(
        watcher,
        lambda message: (
            event_kind(message) == "player_joined" and message.event.player_joined.seat == 3
        ),
    )
    assert [m.event.player_joined.player_display_name for m in joined[-3:]] == ["bob", "cy", "di"]
    watcher.cancel()
    # The seat tokens play the game through.
    tokens = {0: first.seat_token} | {j.seat: j.seat_token for j in others}
    assert (await hearts.play_out(table.name, tokens)).phase == pb.PHASE_GAME_OVER
    # The next caller starts the next table.
    fifth = await quick(hearts, "ed", target_score=1, turn_timeout_ms=30_000)
    assert fifth.view.table.name != table.name
    assert fifth.seat == 0


async def test_only_callers_asking_for_the_same_game_sit_together(hearts: Hearts) -> None:
    default = await quick(hearts, "ann")
    other_rules = await quick(hearts, "bob", target_score=50)
    timed = await quick(hearts, "cy", turn_timeout_ms=20_000)
    other_time = await quick(hearts, "di", turn_timeout_ms=30_000)
    # Unset fields are the defaults: asking for them by value is the same game.
    same = await quick(hearts, "ed", target_score=100, queen_breaks_hearts=False)

    names = [r.view.table.name for r in (default, other_rules, timed, other_time)]
    assert len(set(names)) == 4
    assert same.view.table.name == default.view.table.name
    assert same.seat == 1
    assert default.view.table.rules.target_score == 100


async def test_a_retried_quick_join_gets_the_same_seat(hearts: Hearts) -> None:
    request_id = str(uuid.uuid4())
    first = await quick(hearts, "ann", request_id=request_id)
    again = await quick(hearts, "ann", request_id=request_id)
    assert (again.view.table.name, again.seat) == (first.view.table.name, first.seat)
    assert again.seat_token == first.seat_token
    table = (await hearts.view(first.view.table.name)).table
    assert occupants(table) == ["ann", "", "", ""]
    # Still so once the table has filled up and the lobby moved on to the next one.
    for name in ("bob", "cy", "di"):
        await quick(hearts, name)
    late = await quick(hearts, "ann", request_id=request_id)
    assert (late.view.table.name, late.seat) == (first.view.table.name, first.seat)
    nxt = await quick(hearts, "ed")
    assert nxt.view.table.name != first.view.table.name
    # The same id with another name is another request: refused, as for JoinTable.
    refusal = await failure(quick(hearts, "someone else", request_id=request_id))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )


async def test_a_retry_after_the_table_filled_leaves_the_lobby_to_the_next_table(
    server: HeartsServer, hearts: Hearts
) -> None:
    lobby = server.app.lobby_name(pb.Rules(), None)
    request_ids = [str(uuid.uuid4()) for _ in range(4)]
    joined = [await quick(hearts, f"p{i}", request_id=r) for i, r in enumerate(request_ids)]
    assert await server.app.store.lobby_get(lobby) is None  # the fourth emptied the slot
    # The first call's answer, remembered, still shows free seats: the slot stays empty.
    again = await quick(hearts, "p0", request_id=request_ids[0])
    assert (again.view.table.name, again.seat) == (joined[0].view.table.name, 0)
    assert await server.app.store.lobby_get(lobby) is None


async def test_a_request_id_sent_again_for_another_game_is_refused(hearts: Hearts) -> None:
    request_id = str(uuid.uuid4())
    first = await quick(hearts, "ann", request_id=request_id)
    for other in (
        quick(hearts, "ann", request_id=request_id, target_score=50),
        quick(hearts, "ann", request_id=request_id, turn_timeout_ms=30_000),
    ):
        refusal = await failure(other)
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )
    assert [t.name for t in await listed(hearts)] == [first.view.table.name]
    assert occupants((await hearts.view(first.view.table.name)).table) == ["ann", "", "", ""]


async def test_a_table_filled_by_join_table_is_passed_over(hearts: Hearts) -> None:
    first = await quick(hearts, "ann")
    name = first.view.table.name
    for player in ("bob", "cy", "di"):
        await hearts.join(name, player=player)  # not through the lobby, which still names it
    second = await quick(hearts, "ed")
    assert second.view.table.name != name
    assert second.seat == 0
    assert occupants(second.view.table) == ["ed", "", "", ""]


async def test_a_seat_left_at_a_waiting_table_is_taken_by_the_next_caller(hearts: Hearts) -> None:
    first = await quick(hearts, "ann")
    second = await quick(hearts, "bob")
    await hearts.leave(first.view.table.name, first.seat_token)
    third = await quick(hearts, "cy")
    assert third.view.table.name == first.view.table.name
    assert third.seat == 0
    assert occupants(third.view.table) == ["cy", "bob", "", ""]
    assert second.seat == 1


async def test_a_named_table_that_is_missing_is_made_under_its_name(
    server: HeartsServer, hearts: Hearts
) -> None:
    # A caller named a table in the lobby and failed before it made it (or it expired).
    first = await quick(hearts, "ann")
    lobby = server.app.lobby_name(pb.Rules(), None)
    missing = first.view.table.name.removeprefix("tables/") + "x"
    await server.app.store.lobby_put(lobby, missing, ttl_ms=60_000)
    second = await quick(hearts, "bob")
    assert second.view.table.name == f"tables/{missing}"
    assert (second.seat, second.view.table.display_name) == (0, "Quick game")
    third = await quick(hearts, "cy")
    assert third.view.table.name == f"tables/{missing}"


async def test_concurrent_quick_joins_fill_tables_four_at_a_time(hearts: Hearts) -> None:
    joined = await asyncio.gather(*(quick(hearts, f"p{index}") for index in range(12)))
    by_table: dict[str, list[int]] = {}
    for response in joined:
        by_table.setdefault(response.view.table.name, []).append(response.seat)
    assert sorted(sorted(seats) for seats in by_table.values()) == [[0, 1, 2, 3]] * 3
    for name in by_table:
        table = (await hearts.view(name)).table
        assert table.phase == pb.PHASE_PASSING
        assert all(seat.occupant == pb.SEAT_OCCUPANT_HUMAN for seat in table.seats)
    assert len(await listed(hearts)) == 3  # no table left behind by a lost race


def seated_by_table(results: list[Any]) -> dict[str, set[int]]:
    """Each table's seats given out in ``results``; fails on any refusal among them."""
    errors = collections.Counter(
        rejected(r).reason for r in results if isinstance(r, grpc.aio.AioRpcError)
    )
    assert not errors
    by_table: dict[str, set[int]] = {}
    for response in results:
        by_table.setdefault(response.view.table.name, set()).add(response.seat)
    return by_table


@pytest.mark.redis
async def test_a_burst_of_a_hundred_callers_on_two_replicas_is_seated(
    make_server: ServerFactory, connect: Any
) -> None:
    # Each round of a burst seats four: the last callers try many tables before theirs.
    replicas = [connect(await make_server(store="redis")) for _ in range(2)]
    results = await asyncio.gather(
        *(quick(replicas[index % 2], f"p{index}") for index in range(100)),
        return_exceptions=True,
    )
    assert list(seated_by_table(results).values()) == [{0, 1, 2, 3}] * 25


@pytest.mark.redis
async def test_the_quota_counts_only_the_tables_a_caller_made(
    make_server: ServerFactory, connect: Any
) -> None:
    # Many callers find the lobby empty at once; only the one whose table is offered first
    # makes a table, and only that one is counted.
    replicas = [
        connect(
            await make_server(store="redis", max_tables_per_hour=1, identity_secret=IDENTITY_SECRET)
        )
        for _ in range(2)
    ]
    results = await asyncio.gather(
        *(
            quick(replicas[index % 2], f"p{index}", identity_token=signed(f"user-{index}"))
            for index in range(40)
        ),
        return_exceptions=True,
    )
    assert list(seated_by_table(results).values()) == [{0, 1, 2, 3}] * 10


@pytest.mark.redis
async def test_quick_joins_on_two_replicas_fill_the_same_tables(
    make_server: ServerFactory, connect: Any
) -> None:
    replicas = [connect(await make_server(store="redis")) for _ in range(2)]
    joined = await asyncio.gather(*(quick(replicas[index % 2], f"p{index}") for index in range(16)))
    by_table: dict[str, set[int]] = {}
    for response in joined:
        by_table.setdefault(response.view.table.name, set()).add(response.seat)
    assert list(by_table.values()) == [{0, 1, 2, 3}] * 4
    assert len(await listed(replicas[0])) == 4


async def test_bad_quick_joins_are_refused_and_change_nothing(hearts: Hearts) -> None:
    for call, reason in (
        (quick(hearts, ""), "INVALID_REQUEST"),
        (quick(hearts, "x" * 41), "INVALID_REQUEST"),
        (quick(hearts, "a\nb"), "INVALID_REQUEST"),
        (quick(hearts, "ann", turn_timeout_ms=10), "INVALID_REQUEST"),
        (quick(hearts, "ann", target_score=0), "INVALID_RULES"),
        (quick(hearts, "ann", request_id="r" * 200), "INVALID_REQUEST"),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, reason)
    assert await listed(hearts) == []


def signed(sub: str) -> str:
    """An identity token of player ``sub``, as the app's backend signs it."""
    claims = {"sub": sub, "exp": int(time.time()) + 3600}
    return jwt.encode(claims, IDENTITY_SECRET, "HS256")


async def test_a_signed_in_player_gets_the_same_seat_again(
    make_server: ServerFactory, connect: Any, store_kind: str
) -> None:
    hearts = connect(await make_server(store=store_kind, identity_secret=IDENTITY_SECRET))
    first = await quick(hearts, "ann", identity_token=signed("ann-1"))
    again = await quick(hearts, "ann on her phone", identity_token=signed("ann-1"))
    assert (again.view.table.name, again.seat) == (first.view.table.name, first.seat)
    assert again.view.table.seats[0].player_id == "ann-1"
    other = await quick(hearts, "bob", identity_token=signed("bob-7"))
    assert (other.view.table.name, other.seat) == (first.view.table.name, 1)


async def test_a_table_made_by_quick_join_counts_against_the_table_quota(
    make_server: ServerFactory, connect: Any, store_kind: str
) -> None:
    hearts = connect(await make_server(store=store_kind, max_tables_per_hour=1))
    # One address (loopback) makes the first table; joining it makes none.
    for name in ("ann", "bob", "cy", "di"):
        await quick(hearts, name)
    refusal = await failure(quick(hearts, "ed"))  # a fifth needs a second table
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_TABLES",
    )
    assert len(await listed(hearts)) == 1


async def test_the_seat_is_kept_when_the_lobby_cannot_be_updated_after_the_join(
    server: HeartsServer, hearts: Hearts, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = [await quick(hearts, name) for name in ("ann", "bob", "cy")]

    async def unavailable(*args: Any, **kwargs: Any) -> None:
        raise StoreUnavailableError("Redis went away")

    monkeypatch.setattr(server.app.store, "lobby_release", unavailable)
    fourth = await quick(hearts, "di")  # the fourth: its join took the seat, then no release
    assert (fourth.view.table.name, fourth.seat) == (first[0].view.table.name, 3)
    assert fourth.view.table.phase == pb.PHASE_PASSING
    monkeypatch.undo()
    # The slot still names the full table: the next caller passes it over.
    fifth = await quick(hearts, "ed")
    assert fifth.view.table.name != first[0].view.table.name
