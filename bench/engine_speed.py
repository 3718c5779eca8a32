"""Engine speed: complete random rounds per second, ours against OpenSpiel's Hearts.

A round is a deal, the passes and 13 tricks, played through each engine's public Python API
with a seeded ``random.Random`` choosing uniformly among the legal moves, each engine driven the
fastest natural way its API offers, so both sides pay the same kind of driver cost (a Python-level
choice per decision):

* OpenSpiel (``pyspiel``, game ``hearts`` with ``qs_breaks_hearts=False`` to match our default
  rules; one OpenSpiel game is one round): ``state.apply_action(rng.choice(state.legal_actions()))``
  at every node until the game is terminal. At a chance node (the pass direction, then the 52
  cards one at a time) ``legal_actions()`` lists the outcomes, which are uniform, so this draws
  them correctly; player nodes are the three single-card passes per seat, then the plays. This is
  the headline comparison. A second line drives the chance nodes through
  ``rng.choice(state.chance_outcomes())[0]`` instead, as a reader of OpenSpiel's API might; that
  makes its rounds take about 1.5 times as long.
* ours: the round starts from a state waiting for the deal of round 0, 1, 2 or 3 (pass left,
  across, right, or hold), drawn with ``rng.choice`` like OpenSpiel's pass-direction chance node;
  ``apply(state, Deal(deck))`` with ``DECK`` shuffled by :func:`shuffled_deck`, which is
  ``rng.shuffle`` written out (the same uniform Fisher-Yates drawing the same bits, so the same
  permutation for the same seed, without a Python method call per card: about 2.6 µs a deck
  instead of 6); then ``apply(state, rng.choice(legal_actions(state)))`` until there is nothing
  left to do: a pass is one action of three cards chosen among the lazily listed
  ``PassChoices`` of the seats yet to pass, a play one of the ``PlayCard`` values.

The engines are timed in alternating repetitions (the order flips each repetition, so slow drift
of the machine hits all alike) and the median and spread of each are reported. Rates are per
second of this process's CPU time, which other load on the machine disturbs less than wall time.

Run it with OpenSpiel available (``uv run --with`` installs it into a throwaway environment)::

    uv run --with open_spiel==2.0.2 python bench/engine_speed.py

Without OpenSpiel it reports our figure only. If :mod:`hearts_engine.bots` is importable it also
times bot play decisions (heuristic, and Monte Carlo at its default budget) over a seeded set of
decision points, and heuristic playouts from those points to the end of the round, through
``apply`` and through :func:`hearts_engine.playout.play_out`.
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from hearts_engine import (
    DECK,
    Card,
    Deal,
    PassCards,
    PassDirection,
    PlayCard,
    State,
    apply,
    legal_actions,
    legal_passes,
    legal_plays,
    new_game,
    seats_to_act,
)

OPENSPIEL_PARAMS = {"qs_breaks_hearts": False}
OURS = "ours"
OPENSPIEL = "OpenSpiel"
OPENSPIEL_CHANCE = "OpenSpiel/chance_outcomes"
INSTALL_HINT = (
    "pyspiel is not importable; for the comparison run\n"
    "    uv run --with open_spiel==2.0.2 python bench/engine_speed.py\n"
    "or install it into the environment: pip install open_spiel"
)


# --------------------------------------------------------------------------- the two drivers


def our_round(rng: random.Random, starts: Sequence[State]) -> State:
    """Play one random round from one of ``starts`` (states waiting for a deal); the end state."""
    state = rng.choice(starts)  # the pass direction, like OpenSpiel's first chance node
    state = apply(state, Deal(shuffled_deck(rng)))
    # Passes (one per seat, in any order) and plays, each drawn from legal_actions like
    # OpenSpiel's rng.choice(legal_actions()).
    while actions := legal_actions(state):
        state = apply(state, rng.choice(actions))
    return state


# Fisher-Yates from the last position down: the position, the number of cards to choose among,
# and the bits to draw for it (what random.Random._randbelow draws for that number).
_SHUFFLE_STEPS = tuple((i, i + 1, (i + 1).bit_length()) for i in range(len(DECK) - 1, 0, -1))


def shuffled_deck(rng: random.Random) -> tuple[Card, ...]:
    """``DECK`` shuffled uniformly: exactly ``rng.shuffle``, written out.

    ``Random.shuffle`` draws each swap through ``Random._randbelow``, a Python method call per
    card; this loop draws the same bits the same way (``getrandbits`` with rejection), so it
    gives the same permutation for the same generator state, in less than half the time.
    """
    deck = list(DECK)
    getrandbits = rng.getrandbits
    for i, n, k in _SHUFFLE_STEPS:
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        deck[i], deck[j] = deck[j], deck[i]
    return tuple(deck)


def round_starts() -> list[State]:
    """States waiting for the deal of rounds 0..3: pass left, across, right, hold.

    OpenSpiel draws each game's pass direction at random (a chance node), so our rounds start
    from one of these, drawn the same way.
    """
    rng = random.Random(0)
    starts = [new_game()]
    while len(starts) < 4:
        starts.append(our_round(rng, starts[-1:]))
    directions = [start.pass_direction for start in starts]
    assert directions == [
        PassDirection.LEFT,
        PassDirection.ACROSS,
        PassDirection.RIGHT,
        PassDirection.HOLD,
    ]
    return starts


def openspiel_round(rng: random.Random, game: Any) -> Any:
    """Play one random OpenSpiel Hearts round (one OpenSpiel game); return the terminal state.

    ``legal_actions()`` at every node, chance nodes included (their outcomes are uniform).
    """
    state = game.new_initial_state()
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    return state


def openspiel_round_chance_outcomes(rng: random.Random, game: Any) -> Any:
    """Like :func:`openspiel_round`, with chance nodes drawn from ``chance_outcomes()``."""
    state = game.new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            action = rng.choice(state.chance_outcomes())[0]
        else:
            action = rng.choice(state.legal_actions())
        state.apply_action(action)
    return state


def check_drivers(starts: Sequence[State], game: Any | None) -> None:
    """Make sure each driver plays a whole round before timing it."""
    rng = random.Random(0)
    for start in starts:
        end = our_round(rng, [start])
        assert len(end.rounds) == len(start.rounds) + 1, "the round did not finish"
        assert sum(end.rounds[-1].points) in (26, 78), end.rounds[-1].points
    if game is not None:
        assert openspiel_round(random.Random(0), game).is_terminal()
        assert openspiel_round_chance_outcomes(random.Random(0), game).is_terminal()


def rounds_per_second(play: Callable[[], object], seconds: float) -> float:
    """Play rounds for about ``seconds`` of this process's CPU time; rounds per CPU second.

    The benchmark is single-threaded, so on an idle machine CPU time and wall time agree; on a
    busy one CPU time leaves out the time the process waited for a core.
    """
    clock = time.process_time
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
    return (
        f"{cpu}, {os.cpu_count()} cores ({usable} usable), {platform.system()} {platform.release()}"
    )


def summary(rates: list[float]) -> str:
    median = statistics.median(rates)
    spread = (max(rates) - min(rates)) / median * 100
    low, high = min(rates), max(rates)
    return f"median {median:8,.0f}  min {low:8,.0f}  max {high:8,.0f}  spread {spread:4.1f}%"


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


# --------------------------------------------------------------------------- bots


def decision_points(count: int, seed: int) -> list[tuple[State, int]]:
    """Seeded (state, seat) pairs where the seat owes a card: one per random round, at a random
    point of its play (the pass direction cycles as in a game)."""
    rng = random.Random(seed)
    starts = round_starts()
    points: list[tuple[State, int]] = []
    while len(points) < count:
        deck = list(DECK)
        rng.shuffle(deck)
        state = apply(starts[len(points) % 4], Deal(tuple(deck)))
        for seat in seats_to_act(state):
            if hand := legal_passes(state, seat):
                state = apply(state, PassCards(seat, tuple(rng.sample(hand, 3))))
        for _ in range(rng.randrange(52)):
            seat = seats_to_act(state)[0]
            state = apply(state, PlayCard(seat, rng.choice(legal_plays(state, seat))))
        points.append((state, seats_to_act(state)[0]))
    return points


def bench_bots(count: int, seed: int) -> None:
    """Time bot play decisions (the view is built outside the timing) at their defaults."""
    try:
        from hearts_engine.bots import DEFAULT_PLAYOUTS, make_bot  # noqa: PLC0415 -- optional
    except ImportError as error:
        print(f"bots: skipped, hearts_engine.bots is not importable yet ({error})")
        return
    from hearts_engine import view  # noqa: PLC0415

    views = [view(state, seat) for state, seat in decision_points(count, seed)]
    for level, label in (
        ("heuristic", "heuristic"),
        ("monte_carlo", f"Monte Carlo ({DEFAULT_PLAYOUTS} playouts)"),
    ):
        bot = make_bot(level, seed=seed)
        times = []
        for seat_view in views:
            begin = time.process_time()
            bot.choose_play(seat_view)
            times.append(time.process_time() - begin)
        mean_ms = statistics.fmean(times) * 1e3
        p99_ms = percentile(times, 0.99) * 1e3
        print(
            f"bot {label}: {len(times)} play decisions, mean {mean_ms:.3f} ms, p99 {p99_ms:.3f} ms"
        )


def played_mask(state: State) -> int:
    """The cards played so far in ``state``'s round, current trick included."""
    mask = 0
    for trick in state.tricks:
        for card in trick.cards:
            mask |= 1 << card
    for card in state.trick:
        mask |= 1 << card
    return mask


def bench_playouts(count: int, seed: int, seconds: float) -> None:
    """Heuristic playouts to the end of the round: through ``apply``, and through ``play_out``."""
    try:
        from hearts_engine.bots.heuristic import play_card  # noqa: PLC0415 -- optional
        from hearts_engine.playout import play_out  # noqa: PLC0415
    except ImportError as error:
        print(f"playouts: skipped ({error})")
        return

    def by_apply(state: State, played: int) -> tuple[int, ...]:
        # What a Monte Carlo bot does without play_out: the public API, one card at a time.
        while to_act := seats_to_act(state):
            seat = to_act[0]
            legal = legal_plays(state, seat)
            if len(legal) == 1:
                card = legal[0]
            else:
                mask = 0
                for option in legal:
                    mask |= 1 << option
                card = DECK[play_card(state.hands[seat], mask, state.trick, played)]
            played |= 1 << card
            state = apply(state, PlayCard(seat, card))
        return state.rounds[-1].points

    positions = [(state, played_mask(state)) for state, _ in decision_points(count, seed)]
    for state, played in positions:
        assert by_apply(state, played) == play_out(state, play_card, played)
    rates = {}
    for name, run in (
        ("apply", lambda: [by_apply(state, played) for state, played in positions]),
        ("play_out", lambda: [play_out(state, play_card, played) for state, played in positions]),
    ):
        clock = time.process_time
        done = 0
        begin = clock()
        while clock() - begin < seconds:
            run()
            done += len(positions)
        rates[name] = done / (clock() - begin)
    print(
        f"heuristic playouts/s from {len(positions)} positions: through apply "
        f"{rates['apply']:,.0f}, through play_out {rates['play_out']:,.0f} "
        f"({rates['play_out'] / rates['apply']:.2f}x)"
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

    starts = round_starts()
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
    check_drivers(starts, game)

    engines: dict[str, Callable[[], object]] = {}
    ours_rng = random.Random(args.seed)
    engines[OURS] = lambda: our_round(ours_rng, starts)
    if game is not None:
        theirs_rng = random.Random(args.seed)
        chance_rng = random.Random(args.seed)
        engines[OPENSPIEL] = lambda: openspiel_round(theirs_rng, game)
        engines[OPENSPIEL_CHANCE] = lambda: openspiel_round_chance_outcomes(chance_rng, game)
    for play in engines.values():  # warm up: let the interpreter specialise the hot loops
        rounds_per_second(play, min(0.5, args.seconds))

    rates: dict[str, list[float]] = {name: [] for name in engines}
    names = list(engines)
    width = max(map(len, names))
    print(f"{args.reps} alternating repetitions of {args.seconds:g} s each")
    for rep in range(args.reps):
        for name in names if rep % 2 == 0 else names[::-1]:
            rates[name].append(rounds_per_second(engines[name], args.seconds))
        line = "  ".join(f"{name} {rates[name][-1]:8,.0f}" for name in names)
        print(f"  rep {rep + 1}: {line}  rounds/s")
    for name in names:
        print(f"{name:{width}s} rounds/s: {summary(rates[name])}")
    for other, how in (
        (OPENSPIEL, "legal_actions everywhere"),
        (OPENSPIEL_CHANCE, "chance_outcomes"),
    ):
        if other in rates:
            ratios = [a / b for a, b in zip(rates[OURS], rates[other], strict=True)]
            ratio = statistics.median(rates[OURS]) / statistics.median(rates[other])
            print(
                f"ratio ours/OpenSpiel ({how}): {ratio:.2f}x "
                f"(per repetition {min(ratios):.2f}x..{max(ratios):.2f}x)"
            )
    if args.bot_decisions:
        bench_bots(args.bot_decisions, args.seed)
        bench_playouts(args.bot_decisions, args.seed, args.seconds)


if __name__ == "__main__":
    main()
