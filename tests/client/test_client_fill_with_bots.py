"""``fill_with_bots_after`` through the client: a table that waited long enough for players gets
heuristic bots in its empty seats, and the game starts.

The shortest wait the API allows is one second, so each test here waits a second or so.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time

import pytest

from hearts.v1 import table_event_pb2 as events_pb
from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, InvalidRequestError, SyncHeartsClient
from hearts_server.server import HeartsServer

from .client_helpers import play_to_the_end, run_hearts

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


async def _joins_until_dealt(client: HeartsClient, name: str) -> list[events_pb.PlayerJoinedEvent]:
    """The table's ``player_joined`` events, from its first, until its first deal."""
    joins: list[events_pb.PlayerJoinedEvent] = []
    stream = client.watch(name, after_sequence=0)
    async with contextlib.aclosing(stream), asyncio.timeout(10):
        async for update in stream:
            if update.event.HasField("player_joined"):
                joins.append(update.event.player_joined)
            if update.event.HasField("round_started"):
                return joins
    raise AssertionError(f"the stream of {name} ended before the deal")


def _bots(joins: list[events_pb.PlayerJoinedEvent]) -> list[tuple[int, int | None]]:
    """(seat, bot level) of each join; None for a player's (the field unset)."""
    return [(j.seat, j.bot_level if j.HasField("bot_level") else None) for j in joins]


async def test_bots_take_the_seats_nobody_came_for_and_the_player_plays_the_game_out(
    client: HeartsClient,
) -> None:
    created = await client.create_table(
        "Play now", rules={"target_score": 1}, fill_with_bots_after=datetime.timedelta(seconds=1)
    )
    assert created.view.table.fill_with_bots_after.ToMilliseconds() == 1000
    joined = await client.join_table(created.name, "Ada", seat=0)
    seated = time.monotonic()
    assert joined.view.table.phase == pb.PHASE_WAITING_FOR_PLAYERS

    joins = await _joins_until_dealt(client, created.name)

    assert time.monotonic() - seated >= 0.9  # not before the wait ran out
    assert _bots(joins) == [(0, None), (1, HEURISTIC), (2, HEURISTIC), (3, HEURISTIC)]
    view = await client.get_table(created.name)
    assert [seat.occupant for seat in view.table.seats] == [pb.SEAT_OCCUPANT_HUMAN] + [
        pb.SEAT_OCCUPANT_BOT
    ] * 3
    assert len(view.hand) == 13
    final = await play_to_the_end(client, created.name, view)
    assert final.table.phase == pb.PHASE_GAME_OVER


async def test_quick_join_with_the_wait_sits_apart_and_is_filled_with_bots(
    server: HeartsServer, client: HeartsClient
) -> None:
    first = await client.quick_join("Ann", fill_with_bots_after=1.0)
    assert first.view.table.fill_with_bots_after.ToMilliseconds() == 1000
    async with HeartsClient(server.address, backoff=0.02) as bob:
        plain = await bob.quick_join("Bob")  # asks for no bots: another game
        assert plain.name != first.name

        joins = await _joins_until_dealt(client, first.name)

        assert _bots(joins) == [(0, None), (1, HEURISTIC), (2, HEURISTIC), (3, HEURISTIC)]
        assert joins[1].player_display_name == "Heuristic bot"
        assert len((await client.get_table(first.name)).hand) == 13
        waiting = await bob.get_table(plain.name)
        assert waiting.table.phase == pb.PHASE_WAITING_FOR_PLAYERS


async def test_a_wait_under_a_second_is_refused(client: HeartsClient) -> None:
    with pytest.raises(InvalidRequestError) as created:
        await client.create_table(fill_with_bots_after=0.5)
    with pytest.raises(InvalidRequestError) as quick:
        await client.quick_join("Ann", fill_with_bots_after=datetime.timedelta(milliseconds=500))
    assert created.value.reason == quick.value.reason == "INVALID_REQUEST"
    assert "fill_with_bots_after" in created.value.message


def test_sync_client_asks_for_the_wait(threaded_server: str) -> None:
    with SyncHeartsClient(threaded_server, backoff=0.02) as client:
        created = client.create_table("Play now", fill_with_bots_after=1)
        client.join_table(created.name, "Ada")
        stream = client.watch(created.name, after_sequence=0)
        levels = []
        for update in stream:
            if update.event.HasField("player_joined"):
                levels.append(update.event.player_joined.bot_level)
            if update.event.HasField("round_started"):
                break
        stream.close()
        assert levels == [pb.BOT_LEVEL_UNSPECIFIED, HEURISTIC, HEURISTIC, HEURISTIC]
        quick = client.quick_join("Bea", fill_with_bots_after=datetime.timedelta(seconds=2))
        assert quick.view.table.fill_with_bots_after.ToMilliseconds() == 2000


async def test_play_quick_with_bots_after_plays_against_the_bots_that_fill_the_table(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--quick", "--bots-after", "1", "--auto"]
    argv += ["--target-score", "1", "--name", "Ada", "--ascii"]
    code, text = await run_hearts(argv)
    assert code == 0, text
    assert "you (Ada) sit in seat 0." in text
    assert "(West, North, East are still free)" in text
    assert "If nobody sits down or leaves for 1 s, bots take the free seats." in text
    filled = text.index("No more players came in time: bots take the free seats.")
    bots = [
        text.index(f"A heuristic bot sits down as {where}.") for where in ("West", "North", "East")
    ]
    assert filled < min(bots) < max(bots) < text.index("=== Round 1")
    assert "Final totals:" in text
    [table] = (await client.list_tables()).tables
    assert table.fill_with_bots_after.ToMilliseconds() == 1000
    assert [seat.bot_level for seat in table.seats][1:] == [HEURISTIC] * 3
