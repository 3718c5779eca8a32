"""How strong and how fast the bots are: paired comparisons on seeded deals, and decision times.

Run ``uv run python bench/bots.py`` (``--help`` lists the options). Everything is seeded: the
same command prints the same points on any machine; only the times differ.

A comparison puts the tested bot in one seat against three fixed opponents and plays every deal
twice, once with the tested bot and once with the baseline bot in that same seat, with the same
opponents and the same deck. The difference between the two scores of a deal cancels most of the
luck of the cards, so few rounds give a tight confidence interval. Deals come in blocks of four
rounds (pass left, across, right, then hold), and the tested seat moves one place each block.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from hearts_engine import (
    Card,
    Deal,
    Phase,
    Rules,
    SeatView,
    State,
    apply,
    new_game,
    seats_to_act,
    seeded_deck,
    view,
)
from hearts_engine.bots import DEFAULT_PLAYOUTS, Bot, HeuristicBot, make_bot

RULES = Rules(target_score=10_000)  # a block never ends the game early; the bots ignore totals
BLOCK = 4


@dataclass(frozen=True)
class Job:
    """One block of deals to play twice: the tested bot's spec, then the baseline's."""

    tested: str
    baseline: str
    opponent: str
    seed: int
    block: int
    playouts: int
    rules: Rules = RULES


class JackBlindHeuristic(HeuristicBot):
    """The heuristic playing as if the jack of diamonds were worth nothing (its play before
    it learnt the bonus): the baseline that measures what the jack play is worth."""

    def choose_play(self, seat_view: SeatView) -> Card:
        blind = dataclasses.replace(seat_view.rules, jack_of_diamonds_bonus=False)
        return super().choose_play(dataclasses.replace(seat_view, rules=blind))


def make(spec: str, seed: int, playouts: int) -> Bot:
    """A bot from ``level`` or ``level:option=value,...`` (``monte_carlo:objective=difference``)."""
    if spec == "heuristic:jack=blind":
        return JackBlindHeuristic(seed=seed)
    level, _, rest = spec.partition(":")
    options: dict[str, object] = {"playouts": playouts} if level == "monte_carlo" else {}
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        options[key] = int(value) if value.isdigit() else value
    return make_bot(level, seed=seed, **options)


def play_block(
    bots: Sequence[Bot], seed: int, block: int, rules: Rules = RULES
) -> list[tuple[int, ...]]:
    """Play rounds ``4 * block`` to ``4 * block + 3`` of the seeded decks; points per round."""
    state: State = new_game(rules)
    points: list[tuple[int, ...]] = []
    for offset in range(BLOCK):
        state = apply(state, Deal(seeded_deck(seed, block * BLOCK + offset)))
        while state.phase in (Phase.PASSING, Phase.PLAYING):
            for seat in seats_to_act(state):
                state = apply(state, bots[seat].decide(view(state, seat)))
        points.append(state.rounds[-1].points)
    return points


def paired_block(job: Job) -> list[tuple[int, int]]:
    """(tested bot's points, baseline bot's points) for each round of the block."""
    seat = job.block % 4
    scores = []
    for spec in (job.tested, job.baseline):
        bots = [make(job.opponent, job.seed + 1 + other, job.playouts) for other in range(4)]
        bots[seat] = make(spec, job.seed, job.playouts)
        scores.append([points[seat] for points in play_block(bots, job.seed, job.block, job.rules)])
    return list(zip(scores[0], scores[1], strict=True))


def interval(values: Sequence[float]) -> tuple[float, float]:
    """The mean and the half-width of its 95% confidence interval (normal approximation)."""
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, math.nan
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def compare(
    tested: str,
    baseline: str,
    *,
    opponent: str,
    rounds: int,
    seed: int,
    playouts: int,
    workers: int,
    rules: Rules = RULES,
) -> None:
    """Print the paired comparison of ``tested`` against ``baseline`` over ``rounds`` rounds."""
    if rounds <= 0:
        print(f"  {tested} vs {baseline}: skipped (0 rounds)")
        return
    jobs = [
        Job(tested, baseline, opponent, seed, block, playouts, rules)
        for block in range(math.ceil(rounds / BLOCK))
    ]
    started = time.perf_counter()
    pairs: list[tuple[int, int]] = []
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            for chunk in pool.map(paired_block, jobs):
                pairs.extend(chunk)
    else:
        for job in jobs:
            pairs.extend(paired_block(job))
    elapsed = time.perf_counter() - started
    ours = [float(a) for a, _ in pairs]
    theirs = [float(b) for _, b in pairs]
    diff = [a - b for a, b in zip(ours, theirs, strict=True)]
    print(f"  {tested} vs {baseline} in the same seat, opponents 3x {opponent}, {len(pairs)} deals")
    for name, values in ((tested, ours), (baseline, theirs), ("difference", diff)):
        mean, half = interval(values)
        print(f"    {name:<12} {mean:6.2f} ± {half:4.2f} points per round (95% CI)")
    better = sum(d < 0 for d in diff)
    worse = sum(d > 0 for d in diff)
    print(
        f"    {tested} scored less on {better} deals, more on {worse}, "
        f"the same on {len(diff) - better - worse} ({elapsed:.0f} s)"
    )


def decision_views(rounds: int, seed: int) -> list[SeatView]:
    """The views of every play with more than one legal card in ``rounds`` heuristic rounds."""
    bots = [make_bot("heuristic", seed=seed) for _ in range(4)]
    views: list[SeatView] = []
    for block in range(math.ceil(rounds / BLOCK)):
        state: State = new_game(RULES)
        for offset in range(BLOCK):
            state = apply(state, Deal(seeded_deck(seed + 1, block * BLOCK + offset)))
            while state.phase in (Phase.PASSING, Phase.PLAYING):
                for seat in seats_to_act(state):
                    seat_view = view(state, seat)
                    if state.phase == Phase.PLAYING and len(seat_view.legal) > 1:
                        views.append(seat_view)
                    state = apply(state, bots[seat].decide(seat_view))
    return views


def _percentile(sorted_values: Sequence[float], fraction: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, math.ceil(fraction * len(sorted_values)) - 1)]


def time_decisions(
    name: str, choose: Callable[[SeatView], object], views: Sequence[SeatView]
) -> None:
    """Print the wall-clock and CPU time of ``choose`` over ``views``: mean, p99 and max."""
    wall: list[float] = []
    cpu: list[float] = []
    for seat_view in views:
        wall_start, cpu_start = time.perf_counter(), time.thread_time()
        choose(seat_view)
        cpu.append((time.thread_time() - cpu_start) * 1000)
        wall.append((time.perf_counter() - wall_start) * 1000)
    for label, values in (("wall", sorted(wall)), ("cpu", sorted(cpu))):
        print(
            f"    {name:<26} {label:<4} mean {statistics.fmean(values):8.3f} ms   "
            f"p99 {_percentile(values, 0.99):8.3f} ms   max {values[-1]:8.3f} ms"
        )


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options and print the four parts of the benchmark."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="deals, heuristic vs random")
    parser.add_argument(
        "--mc-rounds", type=int, default=400, help="deals, Monte Carlo vs heuristic"
    )
    parser.add_argument(
        "--jack-rounds", type=int, default=2000, help="deals, the jack of diamonds play (0: skip)"
    )
    parser.add_argument(
        "--timing-rounds", type=int, default=40, help="rounds of timed decisions (0: skip)"
    )
    parser.add_argument("--seed", type=int, default=2024, help="seed of the decks and the bots")
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS, help="Monte Carlo budget")
    parser.add_argument("--workers", type=int, default=2, help="processes for the comparisons")
    args = parser.parse_args(argv)
    common = {"seed": args.seed, "playouts": args.playouts, "workers": args.workers}
    print(
        f"Python {sys.version.split()[0]}, seed {args.seed}, Monte Carlo {args.playouts} playouts"
    )
    print("\n(a) heuristic vs random")
    compare("heuristic", "random", opponent="heuristic", rounds=args.rounds, **common)
    compare("heuristic", "random", opponent="random", rounds=args.rounds, **common)
    print("\n(b) Monte Carlo vs heuristic")
    compare("monte_carlo", "heuristic", opponent="heuristic", rounds=args.mc_rounds, **common)
    if args.jack_rounds:
        print("\n(c) the heuristic's jack of diamonds play, with the jack's -10 on")
        jack = dataclasses.replace(RULES, jack_of_diamonds_bonus=True)
        compare(
            "heuristic",
            "heuristic:jack=blind",
            opponent="heuristic",
            rounds=args.jack_rounds,
            rules=jack,
            **common,
        )
    if not args.timing_rounds:
        return
    views = decision_views(args.timing_rounds, args.seed)
    print(f"\n(d) decision times, one process, {len(views)} plays with more than one legal card")
    time_decisions("heuristic", make_bot("heuristic", seed=args.seed).choose_play, views)
    monte_carlo = make_bot("monte_carlo", seed=args.seed, playouts=args.playouts)
    time_decisions(f"monte_carlo ({args.playouts} playouts)", monte_carlo.choose_play, views)


if __name__ == "__main__":
    main()
