"""Monte Carlo bots think in a process pool; a pool whose worker died is replaced, once."""

from __future__ import annotations

import asyncio
import concurrent.futures
import multiprocessing
import os

import pytest

from hearts_engine import Deal, PlayCard, Rules, apply, legal_actions, new_game, view
from hearts_engine.bots import BotLevel, HeuristicBot
from hearts_engine.cards import seeded_deck
from hearts_server.service import TableApp
from hearts_server.store.memory import MemoryStore
from hearts_server.tokens import TokenCodec

pytestmark = pytest.mark.timeout(60)


async def test_a_broken_worker_pool_is_replaced_once_and_every_decision_still_comes() -> None:
    pools: list[concurrent.futures.ProcessPoolExecutor] = []

    def new_pool() -> concurrent.futures.Executor:
        pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=1, mp_context=multiprocessing.get_context("spawn")
        )
        pools.append(pool)
        return pool

    app = TableApp(
        MemoryStore(),
        TokenCodec(b"bot-worker-tests-secret-0123456789"),
        bot_executor=new_pool(),
        executor_factory=new_pool,
    )
    state = apply(new_game(Rules(pass_cards=False)), Deal(seeded_deck(5)))
    seat = state.turn
    seat_view = view(state, seat)
    try:
        worker = pools[0].submit(os.getpid).result(timeout=30)
        os.kill(worker, 9)  # what the kernel's OOM killer does
        # Decisions in flight when it broke: each falls back to the heuristic, one new pool.
        decisions = await asyncio.gather(
            *(app._think(BotLevel.MONTE_CARLO, seed, seat_view) for seed in range(4))
        )
        assert len(pools) == 2
        assert pools[0]._broken  # type: ignore[attr-defined]
        legal = set(legal_actions(state))
        assert all(isinstance(d, PlayCard) and d in legal for d in decisions)
        # The new pool thinks again.
        assert await app._think(BotLevel.MONTE_CARLO, 9, seat_view) in legal
        assert len(pools) == 2
    finally:
        for pool in pools:
            pool.shutdown(cancel_futures=True)


async def test_past_its_limit_of_decisions_in_flight_the_heuristic_decides_at_once() -> None:
    # Saturated workers would leave bots waiting until other replicas took them for dead; past
    # the limit the heuristic plays instead, and the count says how often.
    app = TableApp(MemoryStore(), TokenCodec(b"bot-worker-tests-secret-0123456789"), max_thinking=2)
    state = apply(new_game(Rules(pass_cards=False)), Deal(seeded_deck(5)))
    seat_view = view(state, state.turn)
    thinking = [
        asyncio.ensure_future(app._think(BotLevel.MONTE_CARLO, seed, seat_view)) for seed in (1, 2)
    ]
    await asyncio.sleep(0)  # both are in a worker thread now
    assert app.thinking == 2
    heuristic = HeuristicBot(seed=3).decide(seat_view)
    assert await app._think(BotLevel.MONTE_CARLO, 3, seat_view) == heuristic
    assert app.bot_fallbacks == 1
    await asyncio.gather(*thinking)
    assert (app.thinking, app.bot_fallbacks) == (0, 1)
