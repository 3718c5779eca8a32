"""Engine speed: complete random rounds per second, ours against OpenSpiel's Hearts.

A round is a deal, the passes and 13 tricks, played through each engine's public Python API
with a seeded ``random.Random`` choosing uniformly among the legal moves, so both sides pay the
same kind of driver cost (one Python-level choice per decision):

* ours: ``Deal(deck)`` with the deck shuffled by ``rng.shuffle``; each seat passes
  ``rng.sample(legal_passes(...), 3)``; each play is ``rng.choice(legal_plays(...))``.
* OpenSpiel (``pyspiel``, game ``hearts`` with ``qs_breaks_hearts=False`` to match our default
  rules): chance nodes take ``rng.choice`` over ``chance_outcomes()`` (the pass direction, then
  the 52 cards one at a time); player nodes take ``rng.choice(legal_actions())`` (three single-card
  pass actions per seat, then the plays).

The two are measured in alternating repetitions (the order flips each repetition, so slow drift of
the machine hits both alike) and the median and spread of each are reported.

Run it with OpenSpiel available (``uv run --with`` installs it into a throwaway environment)::

    uv run --with open_spiel==2.0.2 python bench/engine_speed.py

Without OpenSpiel it reports our figure only. If :mod:`hearts_engine.bots` exists it also times
bot decisions over a seeded set of decision points.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from hearts_engine import (
    DECK,
    Deal,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    State,
    apply,
    legal_passes,
    legal_plays,
    new_game,
    seats_to_act,
)

OPENSPIEL_PARAMS = {"qs_breaks_hearts": False}
INSTALL_HINT = (
    "pyspiel is not importable; for the comparison run\n"
    "    uv run --with open_spiel==2.0.2 python bench/engine_speed.py\n"
    "or install it into the environment: pip install open_spiel"
)


# --------------------------------------------------------------------------- the two drivers


def our_round(rng: random.Random, start: State) -> State:
    """Play one random round from ``start`` (a state waiting for a deal); return the end state."""
    deck = list(DECK)
    rng.shuffle(deck)
    state = apply(start, Deal(tuple(deck)))
    for seat in seats_to_act(state):
        state = apply(state, PassCards(seat, tuple(rng.sample(legal_passes(state, seat), 3))))
    while to_act := seats_to_act(state):
        seat = to_act[0]
        state = apply(state, PlayCard(seat, rng.choice(legal_plays(state, seat))))
    return state


def openspiel_round(rng: random.Random, game: Any) -> Any:
    """Play one random OpenSpiel Hearts round (one OpenSpiel game); return the terminal state."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            action = rng.choice(state.chance_outcomes())[0]
        else:
            action = rng.choice(state.legal_actions())
        state.apply_action(action)
    return state


def check_drivers(start: State, game: Any | None) -> None:
    """Make sure each driver plays a whole round before timing it."""
    end = our_round(random.Random(0), start)
    assert end.phase in (Phase.DEALING, Phase.GAME_OVER) and end.rounds, "round did not finish"
    assert sum(end.rounds[-1].points) in (26, 78), end.rounds[-1].points
    if game is not None:
        assert openspiel_round(random.Random(0), game).is_terminal()


def rounds_per_second(play: Callable[[], object], seconds: float) -> float:
    """Play rounds for about ``seconds``; the number played per second."""
    clock = time.perf_counter
    count = 0
    begin = clock()
    deadline = begin + seconds
    while True:
        for _ in range(20):  # look at the clock every 20 rounds, not every round
            play()
        count += 20
        now = clock()
        if now >= deadline:
            return count / (now - begin)


# --------------------------------------------------------------------------- reporting


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cpu}, {os.cpu_count()} cores ({usable} usable), {platform.system()} {platform.release()}"


def summary(rates: list[float]) -> str:
    median = statistics.median(rates)
    spread = (max(rates) - min(rates)) / median * 100
    return f"median {median:8,.0f}  min {min(rates):8,.0f}  max {max(rates):8,.0f}  spread {spread:4.1f}%"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# --------------------------------------------------------------------------- bots


def decision_points(count: int, seed: int) -> list[tuple[State, int]]:
    """Seeded (state, seat) pairs where the seat owes a card, spread over the round."""
    rng = random.Random(seed)
    start = new_game(Rules())
    points: list[tuple[State, int]] = []
    while len(points) < count:
        deck = list(DECK)
        rng.shuffle(deck)
        state = apply(start, Deal(tuple(deck)))
        for seat in seats_to_act(state):
            state = apply(state, PassCards(seat, tuple(rng.sample(legal_passes(state, seat), 3))))
        stop = rng.randrange(52)  # one decision point per round, at a random trick position
        for _ in range(stop):
            seat = state.turn
            state = apply(state, PlayCard(seat, rng.choice(legal_plays(state, seat))))
        points.append((state, state.turn))
    return points


def bench_bots(count: int, seed: int) -> None:
    try:
        from hearts_engine import bots  # noqa: PLC0415 -- optional: written separately
    except ImportError as error:
        print(f"bots: skipped, hearts_engine.bots is not importable ({error})")
        return
    try:
        from hearts_engine.views import view  # noqa: PLC0415

        choose: Callable[..., object] = bots.choose_play  # type: ignore[attr-defined]
        levels = {level.name: level for level in bots.BotLevel}  # type: ignore[attr-defined]
    except AttributeError as error:
        print(f"bots: skipped, hearts_engine.bots has no API this bench knows ({error})")
        return
    points = decision_points(count, seed)
    for name in ("HEURISTIC", "MONTE_CARLO"):
        if name not in levels:
            continue
        rng = random.Random(seed)
        times = []
        for state, seat in points:
            seat_view = view(state, seat)
            begin = time.perf_counter()
            choose(seat_view, levels[name], rng)
            times.append(time.perf_counter() - begin)
        print(
            f"bot {name.lower():12s} {len(times)} decisions: mean {statistics.fmean(times) * 1e3:8.3f} ms"
            f"  p99 {percentile(times, 0.99) * 1e3:8.3f} ms"
        )


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reps", type=int, default=5, help="repetitions per engine (default 5)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds per repetition")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--no-openspiel", action="store_true", help="time our engine only")
    parser.add_argument("--bot-decisions", type=int, default=200, help="0 skips the bots")
    args = parser.parse_args(argv)

    print(f"Python {sys.version.split()[0]} ({platform.python_implementation()})")
    print(f"machine: {machine()}")

    start = new_game()
    game = None
    if not args.no_openspiel:
        try:
            import pyspiel  # noqa: PLC0415 -- optional dependency
        except ImportError:
            print(INSTALL_HINT)
        else:
            game = pyspiel.load_game("hearts", OPENSPIEL_PARAMS)
            version = getattr(pyspiel, "__version__", None)
            if version is None:
                from importlib.metadata import version as dist_version  # noqa: PLC0415

                version = dist_version("open_spiel")
            print(f"OpenSpiel {version}: {game}")
    check_drivers(start, game)

    ours_rng = random.Random(args.seed)
    theirs_rng = random.Random(args.seed)
    engines: dict[str, Callable[[], object]] = {"ours": lambda: our_round(ours_rng, start)}
    if game is not None:
        engines["OpenSpiel"] = lambda: openspiel_round(theirs_rng, game)
    for play in engines.values():  # warm up: let the interpreter specialise the hot loops
        rounds_per_second(play, min(0.5, args.seconds))

    rates: dict[str, list[float]] = {name: [] for name in engines}
    names = list(engines)
    print(f"{args.reps} alternating repetitions of {args.seconds:g} s each")
    for rep in range(args.reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            rates[name].append(rounds_per_second(engines[name], args.seconds))
        line = "  ".join(f"{name} {rates[name][-1]:8,.0f}" for name in names)
        print(f"  rep {rep + 1}: {line}  rounds/s")
    for name in names:
        print(f"{name:9s} rounds/s: {summary(rates[name])}")
    if game is not None:
        ratios = [a / b for a, b in zip(rates["ours"], rates["OpenSpiel"], strict=True)]
        ratio = statistics.median(rates["ours"]) / statistics.median(rates["OpenSpiel"])
        print(
            f"ratio ours/OpenSpiel: {ratio:.2f}x "
            f"(per repetition {min(ratios):.2f}x..{max(ratios):.2f}x)"
        )
    if args.bot_decisions:
        bench_bots(args.bot_decisions, args.seed)


if __name__ == "__main__":
    main()
