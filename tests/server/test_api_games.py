"""Whole games through the API: each human moves only as its own view allows, until GAME_OVER."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_engine.bots import BotLevel, make_bot
from hearts_server import service

from .conftest import failure, owing

pytestmark = pytest.mark.timeout(60)


def assert_finished(table: pb.Table, target_score: int) -> None:
    """A finished game: result, totals, and at least one seat at or over the target."""
    assert table.phase == pb.PHASE_GAME_OVER
    assert len(table.total_scores) == 4
    assert max(table.total_scores) >= target_score
    assert table.result.winners, table
    assert table.result.losers, table
    low = min(table.total_scores)
    assert sorted(table.result.winners) == [s for s in range(4) if table.total_scores[s] == low]
    assert not table.HasField("turn_seat")


async def test_one_human_and_three_bots_play_a_short_game_to_the_end(hearts) -> None:
    seated = await hearts.seated(
        [0],
        bots={1: pb.BOT_LEVEL_HEURISTIC, 2: pb.BOT_LEVEL_RANDOM, 3: pb.BOT_LEVEL_HEURISTIC},
        target_score=30,
        deck_seed=7,
    )
    # Seeded, for everyone to see from the start: the seed's chooser knows every hand.
    assert (await hearts.view(seated.name)).table.seeded
    table = await hearts.play_out(seated.name, seated.tokens, rng=random.Random(7))
    assert_finished(table, 30)
    assert table.seeded
    final = await hearts.view(seated.name, seated.tokens[0])
    assert final.game_history, "game_history is revealed at game over"
    assert sum(len(r.tricks) for r in final.game_history) == 13 * len(final.game_history)
    assert final.table.deck_seed == 7
    assert not final.legal_cards


async def test_one_human_and_three_bots_play_a_full_default_game(hearts) -> None:
    seated = await hearts.seated(
        [2], bots={0: pb.BOT_LEVEL_RANDOM, 1: pb.BOT_LEVEL_HEURISTIC, 3: pb.BOT_LEVEL_RANDOM}
    )
    table = await hearts.play_out(seated.name, seated.tokens, rng=random.Random(11))
    assert not table.seeded  # the server's own shuffles
    assert table.rules.target_score == 100
    assert_finished(table, 100)
    history = (await hearts.view(seated.name)).game_history
    assert len(history) == table.round_number
    assert list(history[-1].score.total_scores) == list(table.total_scores)


async def test_four_human_clients_each_act_when_their_view_says_so(hearts) -> None:
    seated = await hearts.seated(target_score=30, deck_seed=3)
    rng = random.Random(3)
    moves = {seat: 0 for seat in range(4)}
    table = (await hearts.view(seated.name)).table
    while table.phase != pb.PHASE_GAME_OVER:
        views = {
            seat: await hearts.view(seated.name, token) for seat, token in seated.tokens.items()
        }
        # Exactly the seats that the public table says owe a move see legal cards.
        acting = [seat for seat, view in views.items() if view.legal_cards]
        assert acting == owing(table)
        for seat, view in views.items():
            assert view.viewer_seat == seat
            if seat not in acting:
                assert view.cards_to_pass == 0
        seat = acting[0]
        response = await hearts.move(seated.name, seated.tokens[seat], views[seat], rng)
        assert response.view.viewer_seat == seat
        assert response.etag == response.view.table.etag
        moves[seat] += 1
        table = response.view.table
    assert_finished(table, 30)
    rounds = table.round_number
    for seat in range(4):
        passes = sum(1 for r in range(rounds) if r % 4 != 3)
        assert moves[seat] == 13 * rounds + passes


async def test_a_table_of_four_bots_plays_itself_out_and_is_kept_as_a_finished_one(
    store_kind, make_server, connect
) -> None:
    server = await make_server(
        store=store_kind, table_ttl_seconds=3600, finished_table_ttl_seconds=1
    )
    hearts = connect(server)
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_RANDOM)
    created = await hearts.create(bots=bots, deck_seed=3)
    name = created.view.table.name
    await hearts.until_game_over(name)
    await asyncio.sleep(1.5)  # past the finished-table TTL, far from the idle one
    refusal = await failure(hearts.view(name))
    assert refusal.reason == "TABLE_NOT_FOUND"


async def test_bots_alone_play_a_round_per_commit_and_let_other_calls_in(
    make_server, connect
) -> None:
    # Four bots to a high target is a game of a hundred rounds and more; played inside
    # CreateTable it held the event loop, and every other caller, for seconds. The command plays
    # one round; the driver commits the rest round by round, and other calls get in between.
    hearts = connect(await make_server())
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_HEURISTIC)
    created = await hearts.create(bots=bots, deck_seed=5, target_score=1000)
    assert created.view.table.round_number <= 2
    name = created.view.table.name
    seen = []
    for _ in range(1000):  # 10 s at most
        table = (await hearts.view(name)).table
        seen.append(table.round_number)
        if table.phase == pb.PHASE_GAME_OVER:
            break
        await asyncio.sleep(0.01)
    assert table.phase == pb.PHASE_GAME_OVER
    assert seen == sorted(seen)
    assert len(set(seen)) >= 3  # answered at several points of the game, not only at its end


_MONTE_CARLO = dict.fromkeys(range(4), pb.BOT_LEVEL_MONTE_CARLO)


async def _server_of_quick_slow_bots(make_server, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A server whose Monte Carlo bots decide as random bots (quick; the driver is the same)
    and are never overdue (a huge grace period), so nothing restarts a stopped driver."""

    def decide(level: str, seed: int, seat_view: Any) -> Any:
        return make_bot(BotLevel.RANDOM, seed=seed).decide(seat_view)

    monkeypatch.setattr(service, "_decide_in_worker", decide)
    server = await make_server()
    server.app._slow_bot_grace_ms = 10**9
    return server


async def test_slow_bots_play_on_past_a_whole_game_of_turns(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four Monte Carlo bots to a high target: far more than 64 rounds' worth of bot turns,
    # which is where the driver used to stop. The bots decide as random bots here, to keep the
    # test short; the driver is the same. Nothing may restart a stopped driver: the table is
    # never overdue (a huge grace period) and nobody watches it, so only the first driver plays.
    server = await _server_of_quick_slow_bots(make_server, monkeypatch)
    hearts = connect(server)
    created = await hearts.create(bots=_MONTE_CARLO, deck_seed=8, target_score=1000)
    name = created.view.table.name
    for _ in range(250):  # 50 s at most
        table = (await hearts.view(name)).table
        if table.round_number > 66:
            break
        await asyncio.sleep(0.2)
    assert table.phase != pb.PHASE_GAME_OVER
    assert table.round_number > 66  # more than 66 rounds of 52 bot plays: past 64 * 52 + 52


async def test_the_bot_driver_reads_again_when_its_cached_record_is_evicted(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The driver loads with the cached version, so the store leaves the record's bytes out; if
    # other tables' reads evict the entry meanwhile, the driver must read the table whole
    # instead of stopping (nothing else restarts it here: the bots are never overdue).
    server = await _server_of_quick_slow_bots(make_server, monkeypatch)
    store, evicted = server.app.store, []
    load = store.load

    async def load_then_evict(table_id: str, **options: Any) -> Any:
        loaded = await load(table_id, **options)
        task = asyncio.current_task()
        driving = task is not None and task.get_name().startswith("bot-driver-")
        if driving and not loaded.data and len(evicted) < 5:
            evicted.append(loaded.version)
            server.app.records.drop(table_id)  # another table took its cache slot
        return loaded

    monkeypatch.setattr(store, "load", load_then_evict)
    hearts = connect(server)
    created = await hearts.create(bots=_MONTE_CARLO, deck_seed=9)
    await hearts.until_game_over(created.view.table.name)
    assert len(evicted) == 5
