"""In-process cost of the service's commands by kind, and the size of finished games' views.

No gRPC and no Redis: the application layer (``TableApp``) on the in-memory store, so these are
the server's own costs per command, which the full benchmark (``run.py``) cannot separate from
gRPC's and redis-py's. Two measurements:

* whole games of four client seats, played from the same plans as ``run.py``'s workload (a):
  time per command by kind (create, join, pass, play, and a game's last move, whose answer
  carries the whole game's history) and each kind's share of the total;
* the view of finished four-bot games at the highest target score, with the rules that make
  games longest: its size against the message limit (``convert.MAX_TARGET_SCORE``).

Run it with ``uv run python bench/server/commands.py [--games 30] [--views 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import random
import statistics
import sys
import time
from pathlib import Path

from hearts.v1 import table_pb2 as pb
from hearts_server.convert import MAX_TARGET_SCORE
from hearts_server.service import TableApp
from hearts_server.store.memory import MemoryStore
from hearts_server.tokens import TokenCodec

sys.path.insert(0, str(Path(__file__).parent))
from load import _CARDS, _plan_game  # the load generator's game plans


async def command_costs(games: int) -> None:
    app = TableApp(MemoryStore(), TokenCodec(b"x" * 32, ttl_seconds=86_400))
    times: dict[str, list[float]] = collections.defaultdict(list)

    async def timed(kind: str, call: object) -> object:
        started = time.perf_counter()
        result = await call  # type: ignore[misc]
        times[kind].append(time.perf_counter() - started)
        return result

    for game in range(games):
        seed = 1000 + game
        table = pb.Table(display_name="bench", deck_seed=seed)
        created = await timed("create", app.create_table(table, f"c{game}"))
        name = created.view.table.name  # type: ignore[attr-defined]
        tokens = []
        for seat in range(4):
            joined = await timed("join", app.join_table(name, seat, f"p{seat}", "", f"j{seat}"))
            tokens.append(joined.seat_token)  # type: ignore[attr-defined]
        plan = _plan_game(seed, random.Random(seed))
        for number, (method, seat, cards, _) in enumerate(plan):
            request_id = f"r{number}"
            if method == "PlayCard":
                kind = "last move" if number == len(plan) - 1 else "play"
                call = app.play_card(name, tokens[seat], _CARDS[cards[0]], "", request_id)
            else:
                kind = "pass"
                call = app.pass_cards(
                    name, tokens[seat], [_CARDS[c] for c in cards], "", request_id
                )
            await timed(kind, call)
    total = sum(sum(values) for values in times.values())
    count = sum(len(values) for values in times.values())
    print(f"{games} whole games, {count} commands, mean {total / count * 1e6:.1f} µs a command")
    for kind, values in times.items():
        median, mean = statistics.median(values) * 1e6, statistics.mean(values) * 1e6
        print(
            f"  {kind:9s} n={len(values):6d}  median {median:7.1f} µs  mean {mean:7.1f} µs"
            f"  {sum(values) / total:6.1%} of the time"
        )


async def view_sizes(games: int) -> None:
    app = TableApp(MemoryStore(), TokenCodec(b"x" * 32, ttl_seconds=86_400))
    rules = pb.Rules(
        target_score=MAX_TARGET_SCORE,
        jack_of_diamonds_bonus=True,
        avoid_all_tricks_bonus=True,
        moon_scoring=pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER,
    )
    for level in (pb.BOT_LEVEL_RANDOM, pb.BOT_LEVEL_HEURISTIC):
        for seed in range(games):
            seats = [
                pb.Seat(seat=s, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=level) for s in range(4)
            ]
            table = pb.Table(display_name="bench", seats=seats, deck_seed=seed, rules=rules)
            name = (await app.create_table(table, "")).view.table.name
            for _ in range(100_000):  # the driver plays a round per commit
                view = (await app.get_table(name, None)).view
                if view.table.phase == pb.PHASE_GAME_OVER:
                    break
                await asyncio.sleep(0)
            print(
                f"finished view, target {MAX_TARGET_SCORE}, {pb.BotLevel.Name(level)}, seed {seed}:"
                f" {view.table.round_number} rounds, {view.ByteSize() / 1024:.0f} KiB"
            )
    await app.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="whole games timed")
    parser.add_argument("--views", type=int, default=3, help="finished games sized, per level")
    args = parser.parse_args()
    asyncio.run(command_costs(args.games))
    asyncio.run(view_sizes(args.views))


if __name__ == "__main__":
    main()
