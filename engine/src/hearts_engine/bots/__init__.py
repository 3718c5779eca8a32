"""Bots that play a seat from its view alone: random, heuristic and Monte Carlo.

>>> from hearts_engine import Deal, apply, new_game, seeded_deck, view
>>> from hearts_engine.bots import make_bot
>>> state = apply(new_game(), Deal(seeded_deck(42)))
>>> bot = make_bot("heuristic", seed=1)
>>> action = bot.decide(view(state, 0))
>>> action.seat, len(action.cards)
(0, 3)

A bot must never be handed a full :class:`~hearts_engine.game.State`; it reads only what the
seat may know. Every bot is deterministic for its seed (the Monte Carlo bot unless it is given
a time budget).
"""

from __future__ import annotations

from typing import Any

from hearts_engine.bots.base import Bot, BotLevel, decision_rng
from hearts_engine.bots.heuristic import HeuristicBot
from hearts_engine.bots.monte_carlo import DEFAULT_PLAYOUTS, MonteCarloBot, Objective
from hearts_engine.bots.random_bot import RandomBot

__all__ = [
    "DEFAULT_PLAYOUTS",
    "Bot",
    "BotLevel",
    "HeuristicBot",
    "MonteCarloBot",
    "Objective",
    "RandomBot",
    "decision_rng",
    "make_bot",
]

_CLASSES: dict[BotLevel, type[Bot]] = {
    BotLevel.RANDOM: RandomBot,
    BotLevel.HEURISTIC: HeuristicBot,
    BotLevel.MONTE_CARLO: MonteCarloBot,
}


def make_bot(level: BotLevel | str, *, seed: int, **options: Any) -> Bot:
    """A bot of ``level`` (a :class:`BotLevel` or its name in any case, e.g. ``"monte_carlo"``).

    ``options`` go to the bot's constructor; only the Monte Carlo bot takes any
    (``playouts``, ``time_budget_ms``, ``objective``). An unknown level or option raises
    ``ValueError``.

    >>> make_bot("MONTE_CARLO", seed=7, playouts=100)
    MonteCarloBot(seed=7, playouts=100, objective=POINTS)
    """
    try:
        key = BotLevel(str(level).upper())
    except ValueError:
        names = ", ".join(member.value for member in BotLevel)
        raise ValueError(f"unknown bot level {level!r}; expected one of {names}") from None
    try:
        return _CLASSES[key](seed=seed, **options)
    except TypeError as error:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise
        raise ValueError(f"bad options for a {key.value} bot: {error}") from None
