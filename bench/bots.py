"""How strong and how fast the bots are: paired comparisons on seeded deals, and decision times.

Run ``uv run python bench/bots.py`` (``--help`` for options). Everything is seeded: the same
command prints the same points on any machine (times differ, of course).

A comparison puts the tested bot in one seat against three fixed opponents and plays every deal
twice, once with the tested bot and once with the baseline bot in that same seat, same opponents,
same deck. The difference of the two scores of a deal cancels most of the luck of the cards, so
far fewer rounds give a tight confidence interval. Deals come in blocks of four rounds (pass
left, across, right, hold) and the tested seat moves one place each block.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor

from hearts_engine import Deal, Phase, Rules, State, apply, new_game, seats_to_act, seeded_deck, view
from hearts_engine.bots import DEFAULT_PLAYOUTS, Bot, make_bot

RULES = Rules(target_score=10_000)  # never ends a block early; the bots ignore the totals
BLOCK = 4


def play_block(bots: Sequence[Bot], seed: int, block: int) -> list[tuple[int, ...]]:
    """Play rounds ``4 * block .. 4 * block + 3`` of deck seed ``seed``; points per round."""
    state: State = new_game(RULES)
    points: list[tuple[int, ...]] = []
    for offset in range(BLOCK):
        state = apply(state, Deal(seeded_deck(seed, block * BLOCK + offset)))
        while state.phase in (Phase.PASSING, Phase.PLAYING):
            for seat in seats_to_act(state):
                state = apply(state, bots[seat].decide(view(state, seat)))
        points.append(state.rounds[-1].points)
    return points


def _bot(spec: str, seed: int, playouts: int) -> Bot:
    """A bot from ``level`` or ``level:option=value,...`` (e.g. ``monte_carlo:playouts=400``)."""
    level, _, rest = spec.partition(":")
    options: dict[str, object] = {}
    if level == "monte_carlo":
        options["playouts"] = playouts
    for item in filter(None, rest.split(",")):
        key, _, value = item.partition("=")
        options[key] = int(value) if value.isdigit() else value
    return make_bot(level, seed=seed, **options)


def paired_block(job: tuple[str, str, str, int, int, int]) -> list[tuple[int, int]]:
    """One block played twice: (tested bot's points, baseline bot's points) per round."""
    tested, baseline, opponent, seed, block, playouts = job
    seat = block % 4
    results = []
    for spec in (tested, baseline):
        bots = [_bot(opponent, seed + 1 + s, playouts) for s in range(4)]
        bots[seat] = _bot(spec, seed, playouts)
        results.append([points[seat] for points in play_block(bots, seed, block)])
    return list(zip(results[0], results[1], strict=True))


def _interval(values: Sequence[float]) -> tuple[float, float]:
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return mean, half


def compare(
    tested: str, baseline: str, opponent: str, rounds: int, seed: int, playouts: int, workers: int
) -> None:
    """Print the paired comparison of ``tested`` against ``baseline`` over ``rounds`` rounds."""
    blocks = math.ceil(rounds / BLOCK)
    jobs = [(tested, baseline, opponent, seed, block, playouts) for block in range(blocks)]
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
    a = [float(x) for x, _ in pairs]
    b = [float(y) for _, y in pairs]
    diff = [x - y for x, y in zip(a, b, strict=True)]
    print(f"{tested} vs {baseline}, opponents 3x {opponent}, {len(pairs)} paired rounds")
    for name, values in ((tested, a), (baseline, b), ("difference", diff)):
        mean, half = _interval(values)
        print(f"  {name:<12} {mean:6.2f} ± {half:4.2f} points per round (95% CI)")
    wins = sum(d < 0 for d in diff)
    losses = sum(d > 0 for d in diff)
    print(f"  {tested} better on {wins} deals, worse on {losses}, same on {len(diff) - wins - losses}")
    print(f"  ({elapsed:.1f} s)")


def _views_to_time(rounds: int, seed: int) -> list[object]:
    """Views of every non-trivial play decision in ``rounds`` rounds of heuristic play."""
    bots = [make_bot("heuristic", seed=seed) for _ in range(4)]
    views = []
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


def time_decisions(name: str, decide: Callable[[object], object], views: Sequence[object]) -> None:
    """Print the mean and 99th percentile of ``decide`` over ``views``."""
    times = []
    for seat_view in views:
        started = time.perf_counter()
        decide(seat_view)
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    p99 = times[min(len(times) - 1, math.ceil(0.99 * len(times)) - 1)]
    print(
        f"  {name:<28} mean {statistics.fmean(times):7.3f} ms   p99 {p99:7.3f} ms   "
        f"max {times[-1]:7.3f} ms   ({len(times)} decisions with a choice)"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000, help="rounds, heuristic vs random")
    parser.add_argument("--mc-rounds", type=int, default=400, help="rounds, Monte Carlo vs heuristic")
    parser.add_argument("--timing-rounds", type=int, default=40, help="rounds whose decisions are timed")
    parser.add_argument("--seed", type=int, default=2024, help="seed of the deals and the bots")
    parser.add_argument("--playouts", type=int, default=DEFAULT_PLAYOUTS, help="Monte Carlo budget")
    parser.add_argument("--workers", type=int, default=2, help="processes for the comparisons")
    args = parser.parse_args(argv)
    print(f"python {sys.version.split()[0]}, seed {args.seed}, Monte Carlo playouts {args.playouts}")
    print()
    print("(a) heuristic vs random")
    compare("heuristic", "random", "heuristic", args.rounds, args.seed, args.playouts, args.workers)
    compare("heuristic", "random", "random", args.rounds, args.seed, args.playouts, args.workers)
    print()
    print("(b) Monte Carlo vs heuristic")
    compare(
        "monte_carlo", "heuristic", "heuristic", args.mc_rounds, args.seed, args.playouts, args.workers
    )
    print()
    print("(c) decision times, one process, decisions with more than one legal card")
    views = _views_to_time(args.timing_rounds, args.seed)
    heuristic = make_bot("heuristic", seed=args.seed)
    monte_carlo = make_bot("monte_carlo", seed=args.seed, playouts=args.playouts)
    time_decisions("heuristic", heuristic.choose_play, views)  # type: ignore[arg-type]
    time_decisions(
        f"monte_carlo ({args.playouts} playouts)", monte_carlo.choose_play, views  # type: ignore[arg-type]
    )


if __name__ == "__main__":
    main()
