"""Table.fill_with_bots_after: a table that waited long enough for players starts with bots.

Each test runs a real server on both stores (the replica test: two servers on one real Redis).
The shortest wait the API allows is one second, so each test waits a second or two.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.server import HeartsServer

from .conftest import Hearts, ServerFactory, bearer, event_kind, failure, read_until
from .test_api_quick_join import IDENTITY_SECRET, quick, signed

WAIT_MS = 1000
HEURISTIC = pb.BOT_LEVEL_HEURISTIC


async def create(
    hearts: Hearts, fill_after_ms: int = WAIT_MS, turn_timeout_ms: int = 0, **rules: Any
) -> str:
    message = pb.Table(display_name="filled table", rules=pb.Rules(**rules))
    message.fill_with_bots_after.FromMilliseconds(fill_after_ms)
    if turn_timeout_ms:
        message.turn_timeout.FromMilliseconds(turn_timeout_ms)
    created = await hearts.stub.CreateTable(api.CreateTableRequest(table=message))
    return created.view.table.name


async def replicas(
    make_server: ServerFactory, connect: Any
) -> tuple[HeartsServer, Hearts, HeartsServer, Hearts]:
    """Two servers on one Redis: the one a test stops, with its client, and the other."""
    doomed_server = await make_server(store="redis")
    other_server = await make_server(store="redis")
    return doomed_server, connect(doomed_server), other_server, connect(other_server)


async def until_started(hearts: Hearts, name: str, seconds: float = 5) -> pb.Table:
    """The table once its game has started (it fails after ``seconds``)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        table = (await hearts.view(name)).table
        if table.phase != pb.PHASE_WAITING_FOR_PLAYERS:
            return table
        await asyncio.sleep(0.05)
    raise AssertionError(f"{name} did not start within {seconds} s")


async def test_bots_take_the_empty_seats_after_the_wait_and_the_game_starts(
    hearts: Hearts,
) -> None:
    name = await create(hearts, target_score=1)
    created = (await hearts.view(name)).table
    assert created.fill_with_bots_after.ToMilliseconds() == WAIT_MS
    watcher = hearts.watch(name)
    await read_until(watcher, lambda message: event_kind(message) == "snapshot")
    joined = await hearts.join(name, 1, player="ann")
    started = time.monotonic()

    table = await until_started(hearts, name)

    assert time.monotonic() - started >= 0.9  # not before the wait ran out
    assert table.phase == pb.PHASE_PASSING
    assert [seat.occupant for seat in table.seats] == [
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_HUMAN,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_BOT,
    ]
    assert [seat.bot_level for seat in table.seats] == [HEURISTIC, 0, HEURISTIC, HEURISTIC]
    assert table.seats[0].player_display_name == "Heuristic bot"
    assert not any(seat.stand_in for seat in table.seats)
    # Watchers see the bots arrive, marked as bots, before the deal.
    received = await read_until(watcher, lambda message: event_kind(message) == "round_started")
    joins = [m.event.player_joined for m in received if event_kind(m) == "player_joined"]
    assert [(join.seat, join.bot_level) for join in joins] == [
        (1, 0),
        (0, HEURISTIC),
        (2, HEURISTIC),
        (3, HEURISTIC),
    ]
    assert not joins[0].HasField("bot_level")  # ann's join
    watcher.cancel()
    # The player plays the game out against the bots.
    assert len((await hearts.view(name, joined.seat_token)).hand) == 13
    final = await hearts.play_out(name, {1: joined.seat_token})
    assert final.phase == pb.PHASE_GAME_OVER
    assert name not in [
        t.name
        for t in (await hearts.stub.ListTables(api.ListTablesRequest(has_free_seat=True))).tables
    ]


async def test_a_table_nobody_joined_is_never_filled(hearts: Hearts) -> None:
    name = await create(hearts)
    await asyncio.sleep(1.5)
    table = (await hearts.view(name)).table
    assert table.phase == pb.PHASE_WAITING_FOR_PLAYERS
    assert all(seat.occupant == pb.SEAT_OCCUPANT_EMPTY for seat in table.seats)


async def test_the_wait_starts_again_with_each_change_of_seating(hearts: Hearts) -> None:
    name = await create(hearts, fill_after_ms=1500)
    await hearts.join(name, player="ann")
    await asyncio.sleep(1.0)
    second = await hearts.join(name, player="bob")
    joined_at = time.monotonic()
    await asyncio.sleep(1.0)  # 2 s after the first join, 1 s after the second
    assert (await hearts.view(name)).table.phase == pb.PHASE_WAITING_FOR_PLAYERS
    await hearts.leave(name, second.seat_token)  # a leave counts too
    left_at = time.monotonic()
    table = await until_started(hearts, name)
    assert time.monotonic() - left_at >= 1.4
    assert time.monotonic() - joined_at >= 2.4
    assert [seat.occupant for seat in table.seats].count(pb.SEAT_OCCUPANT_BOT) == 3


async def test_a_table_that_fills_up_with_players_has_no_bots(hearts: Hearts) -> None:
    name = await create(hearts)
    tokens = [(await hearts.join(name, player=f"p{index}")).seat_token for index in range(4)]
    await asyncio.sleep(1.3)
    table = (await hearts.view(name)).table
    assert all(seat.occupant == pb.SEAT_OCCUPANT_HUMAN for seat in table.seats)
    assert table.phase == pb.PHASE_PASSING
    assert len(tokens) == 4


async def test_quick_join_asks_for_the_wait_and_only_such_callers_sit_together(
    hearts: Hearts,
) -> None:
    wait = api.QuickJoinRequest().fill_with_bots_after
    wait.FromMilliseconds(WAIT_MS)
    request = api.QuickJoinRequest(player_display_name="ann", fill_with_bots_after=wait)
    first = await hearts.stub.QuickJoin(request)
    plain = await quick(hearts, "bob")  # no bots asked for: another table
    assert plain.view.table.name != first.view.table.name
    table = await until_started(hearts, first.view.table.name)
    assert [seat.occupant for seat in table.seats] == [pb.SEAT_OCCUPANT_HUMAN] + [
        pb.SEAT_OCCUPANT_BOT
    ] * 3
    assert table.fill_with_bots_after.ToMilliseconds() == WAIT_MS
    # The filled table is full: the next caller gets a new one.
    request.player_display_name = "cy"
    after = await hearts.stub.QuickJoin(request)
    assert after.view.table.name not in (first.view.table.name, plain.view.table.name)
    assert (await hearts.view(plain.view.table.name)).table.phase == (pb.PHASE_WAITING_FOR_PLAYERS)


async def test_a_wait_out_of_bounds_is_refused(hearts: Hearts) -> None:
    for milliseconds in (10, 100 * 86_400_000):
        refusal = await failure(create(hearts, fill_after_ms=milliseconds))
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        )
        assert "fill_with_bots_after" in refusal.message
    assert not (await hearts.stub.ListTables(api.ListTablesRequest())).tables


async def test_a_rematch_keeps_the_wait(hearts: Hearts) -> None:
    name = await create(hearts, target_score=1)
    joined = await hearts.join(name, player="ann")
    await until_started(hearts, name)
    await hearts.play_out(name, {joined.seat: joined.seat_token})
    rematch = await hearts.rematch(name, joined.seat_token)
    new = rematch.view.table
    assert new.fill_with_bots_after.ToMilliseconds() == WAIT_MS
    # Its bots are those that filled the first table: the seats are taken at once.
    assert new.phase == pb.PHASE_PASSING


@pytest.mark.redis
async def test_another_replica_fills_the_table_when_the_one_that_seated_the_player_stops(
    make_server: ServerFactory, connect: Any
) -> None:
    doomed_server, doomed, _, other = await replicas(make_server, connect)
    name = await create(doomed, fill_after_ms=1500)
    await doomed.join(name, player="ann")
    watcher = other.watch(name)  # the other replica knows of the table through its watcher
    await read_until(watcher, lambda message: event_kind(message) == "snapshot")
    await doomed_server.stop(0.2)
    table = await until_started(other, name)
    assert [seat.occupant for seat in table.seats].count(pb.SEAT_OCCUPANT_BOT) == 3
    watcher.cancel()


async def test_a_signed_in_players_quick_join_after_a_filled_game_gets_a_new_table(
    make_server: ServerFactory, connect: Any, store_kind: str
) -> None:
    hearts = connect(await make_server(store=store_kind, identity_secret=IDENTITY_SECRET))
    request = api.QuickJoinRequest(player_display_name="ann", identity_token=signed("ann-1"))
    request.fill_with_bots_after.FromMilliseconds(WAIT_MS)
    request.rules.target_score = 1
    first = await hearts.stub.QuickJoin(request)
    name = first.view.table.name
    await until_started(hearts, name)  # the bots filled it; the lobby still names it
    assert (await hearts.play_out(name, {first.seat: first.seat_token})).phase == (
        pb.PHASE_GAME_OVER
    )
    again = await hearts.stub.QuickJoin(request)
    assert again.view.table.name != name  # not the finished game's seat again
    assert again.view.table.phase == pb.PHASE_WAITING_FOR_PLAYERS


@pytest.mark.redis
async def test_a_watching_replica_fills_after_the_wait_though_turns_take_longer(
    make_server: ServerFactory, connect: Any
) -> None:
    doomed_server, doomed, _, other = await replicas(make_server, connect)
    name = await create(doomed, turn_timeout_ms=30_000)
    watcher = other.watch(name)
    await read_until(watcher, lambda message: event_kind(message) == "snapshot")
    await doomed.join(name, player="ann")
    await read_until(watcher, lambda message: event_kind(message) == "player_joined")
    await doomed_server.stop(0.2)  # the replica that seated ann, with the exact timer
    # The watcher's replica knows the table only from the join it saw: its timer must be the
    # wait's, not the 30 s of a turn.
    await read_until(watcher, lambda message: event_kind(message) == "round_started", seconds=8)
    watcher.cancel()


@pytest.mark.redis
async def test_a_token_renewal_on_another_replica_starts_the_wait(
    make_server: ServerFactory, connect: Any
) -> None:
    doomed_server, doomed, other_server, other = await replicas(make_server, connect)
    name = await create(doomed)
    ann = await doomed.join(name, player="ann")
    await doomed_server.stop(0.2)
    await other.stub.JoinTable(api.JoinTableRequest(name=name), metadata=bearer(ann.seat_token))
    # Nobody reads or watches the table after the renewal (the store is read directly): only
    # the renewing replica's own timer can start the game.
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        await asyncio.sleep(0.2)
        loaded = await other_server.app.store.load(name.removeprefix("tables/"))
        if b'"game":null' not in loaded.data:
            return
    raise AssertionError("the table was not filled within 5 s of the wait running out")
