"""In-process cost of the service's commands by kind, and the size of finished games' views.

No gRPC and no Redis: the application layer (``TableApp``) on the in-memory store, so these are
the server's own costs per command, which the full benchmark (``run.py``) cannot separate from
gRPC's and redis-py's. Two measurements:

* whole games of four client seats, played from the same plans as ``run.py``'s workload (a):
  time per command by kind (create, join, pass, play, and a game's last move, whose answer
  carries the whole game's history) and each kind's share of the total;
* the view of finished four-bot games at the highest target score, with the rules that make
  games longest: its size against the message limit (``convert.MAX_TARGET_SCORE``).

With ``--redis-url redis://127.0.0.1:PORT/0`` (a loopback Redis the caller started, whose
data it may overwrite) it also compares, one command at a time, the process's CPU per command
of the same games on the Redis store, on the memory store, and the benchmark baseline's
``EVALSHA`` through the same client: what the application layer adds to a Redis round trip,
without gRPC; and the same games' moves sent to two replicas in turn, each reading the record
the other wrote, as at a table whose players are connected to different replicas.

With ``--interleave N`` it also times the first moves of N games sent a table at a time against
the same moves sent to the N tables in turn, as a loaded server gets them: what it costs that
every command finds a different table's state in the caches.

Run it with ``uv run python bench/server/commands.py [--games 30] [--views 3]
[--redis-url URL] [--interleave 1000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import ipaddress
import random
import socket
import statistics
import sys
import time
import urllib.parse
from pathlib import Path
from typing import NamedTuple

from redis.asyncio import BlockingConnectionPool, Redis

from hearts.v1 import table_pb2 as pb
from hearts_server.convert import MAX_TARGET_SCORE
from hearts_server.service import TableApp
from hearts_server.store.base import Store
from hearts_server.store.memory import MemoryStore
from hearts_server.store.redis import RedisStore
from hearts_server.tokens import TokenCodec

sys.path.insert(0, str(Path(__file__).parent))
import baseline  # the baseline's script
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
            joined = await timed(
                "join", app.join_table(name, seat, f"p{seat}", etag="", request_id=f"j{seat}")
            )
            tokens.append(joined.seat_token)  # type: ignore[attr-defined]
        plan = _plan_game(seed, random.Random(seed))
        for number, (method, seat, cards, _) in enumerate(plan):
            request_id = f"r{number}"
            if method == "PlayCard":
                kind = "last move" if number == len(plan) - 1 else "play"
                call = app.play_card(
                    name, tokens[seat], _CARDS[cards[0]], etag="", request_id=request_id
                )
            else:
                kind = "pass"
                call = app.pass_cards(
                    name, tokens[seat], [_CARDS[c] for c in cards], etag="", request_id=request_id
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


class _Game(NamedTuple):
    """A table of four seated players and the moves its game will be played with."""

    name: str
    tokens: list[str]
    plan: list[tuple[str, int, tuple[int, ...], int]]


async def _seated_game(app: TableApp, seed: int, request_id: str) -> _Game:
    created = await app.create_table(pb.Table(deck_seed=seed), request_id)
    name = created.view.table.name  # type: ignore[attr-defined]
    tokens = [
        (await app.join_table(name, s, f"p{s}", etag="", request_id="")).seat_token  # type: ignore[attr-defined]
        for s in range(4)
    ]
    return _Game(name, tokens, _plan_game(seed, random.Random(seed)))


async def _move(app: TableApp, game: _Game, number: int) -> None:
    """The game's move ``number``, as the load generator sends it."""
    method, seat, cards, _ = game.plan[number]
    if method == "PlayCard":
        await app.play_card(
            game.name, game.tokens[seat], _CARDS[cards[0]], etag="", request_id=f"r{number}"
        )
    else:
        played = [_CARDS[c] for c in cards]
        await app.pass_cards(game.name, game.tokens[seat], played, etag="", request_id=f"r{number}")


async def _cpu_per_command(store: Store, games: int, tag: str) -> float:
    """CPU µs per move of ``games`` whole games on ``store``, one command at a time."""
    app = TableApp(store, TokenCodec(b"x" * 32, ttl_seconds=86_400))
    count, cpu = 0, 0.0
    for index in range(games):
        game = await _seated_game(app, 2000 + index, f"{tag}{index}")
        started = time.process_time()
        for number in range(len(game.plan)):
            await _move(app, game, number)
        cpu += time.process_time() - started
        count += len(game.plan)
    await app.aclose()
    return cpu / count * 1e6


async def _cpu_per_command_on_replicas(url: str, games: int, tag: str) -> float:
    """CPU µs per move of ``games`` whole games sent to two replicas in turn (two
    ``TableApp``s, each with a store of its own, on one Redis), one command at a time: each
    finds the table moved on by the other, so every command loads and decodes the record, as a
    table whose players are connected to different replicas does."""
    stores = [RedisStore.from_url(url), RedisStore.from_url(url)]
    apps = [TableApp(store, TokenCodec(b"x" * 32, ttl_seconds=86_400)) for store in stores]
    for store in stores:
        await store.start()
    count, cpu = 0, 0.0
    for index in range(games):
        game = await _seated_game(apps[0], 2000 + index, f"{tag}{index}")
        started = time.process_time()
        for number in range(len(game.plan)):
            await _move(apps[number % 2], game, number)
        cpu += time.process_time() - started
        count += len(game.plan)
    for app in apps:
        await app.aclose()
    for store in stores:
        await store.close()
    return cpu / count * 1e6


async def interleaved_costs(tables: int, moves: int = 40) -> None:
    """CPU µs per move of the first ``moves`` moves of ``tables`` games (memory store), played
    a table at a time, then one move per table in turn, as a loaded server gets them: the same
    commands, with the caches of the process (and of the CPU) holding a different table's state
    from one command to the next."""
    print(f"the first {moves} moves of {tables} games, CPU µs per move:")
    for interleave in (False, True, False, True):
        app = TableApp(MemoryStore(), TokenCodec(b"x" * 32, ttl_seconds=86_400))
        games = [await _seated_game(app, 3000 + index, f"i{index}") for index in range(tables)]
        if interleave:
            schedule = [(game, number) for number in range(moves) for game in games]
        else:
            schedule = [(game, number) for game in games for number in range(moves)]
        started = time.process_time()
        for game, number in schedule:
            await _move(app, game, number)
        cpu = time.process_time() - started
        order = f"{tables} tables in turn" if interleave else "one table at a time"
        print(f"  {order:24s} {cpu / len(schedule) * 1e6:6.1f}")
        await app.aclose()


async def _baseline_cpu_per_call(url: str, calls: int) -> float:
    """CPU µs per call of the baseline's EVALSHA (see baseline.py), one call at a time, on the
    store's own client (its multiplexed connection)."""
    pool = BlockingConnectionPool.from_url(url, max_connections=16, timeout=5.0, socket_timeout=5.0)
    client = Redis.from_pool(pool)
    await client.script_load(baseline.SCRIPT)
    await client.aclose()
    execute_command, lane = baseline.lane_client(url, {})
    versions: dict[str, int] = {}
    value = bytes(60) + baseline._STORED[60:]
    started = time.process_time()
    for index in range(calls):
        key = f"bench-commands-{index % 1000}"
        table, log = f"b:{{{key}}}:t", f"b:{{{key}}}:e"
        versions[key] = await execute_command(
            "EVALSHA", baseline.SHA, 2, table, log, versions.get(key, 0), value
        )
    cpu = time.process_time() - started
    await lane.aclose()
    return cpu / calls * 1e6


async def redis_comparison(url: str, games: int, repetitions: int = 3) -> None:
    print(f"one command at a time, CPU µs per command ({games} games; {repetitions} repetitions):")
    for repetition in range(repetitions):
        tag = f"bench-{time.time_ns()}-"
        store = RedisStore.from_url(url)
        await store.start()
        on_redis = await _cpu_per_command(store, games, tag)
        await store.close()
        on_memory = await _cpu_per_command(MemoryStore(), games, tag)
        floor = await _baseline_cpu_per_call(url, 5000)
        in_turn = await _cpu_per_command_on_replicas(url, games, f"{tag}r")
        print(
            f"  {repetition + 1}: Redis store {on_redis:6.1f}   memory store {on_memory:6.1f}"
            f"   baseline EVALSHA {floor:6.1f}   two replicas in turn {in_turn:6.1f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="whole games timed")
    parser.add_argument("--views", type=int, default=3, help="finished games sized, per level")
    parser.add_argument("--redis-url", default="", help="also compare with Redis (loopback)")
    parser.add_argument(
        "--interleave",
        type=int,
        default=0,
        help="also time moves sent to this many tables in turn against a table at a time",
    )
    args = parser.parse_args()
    if args.redis_url:
        host = urllib.parse.urlsplit(args.redis_url).hostname or ""
        if not ipaddress.ip_address(socket.gethostbyname(host)).is_loopback:
            parser.error("--redis-url must be a loopback address")
    if args.games:
        asyncio.run(command_costs(args.games))
    if args.interleave:
        asyncio.run(interleaved_costs(args.interleave))
    if args.redis_url:
        asyncio.run(redis_comparison(args.redis_url, max(1, args.games // 3)))
    asyncio.run(view_sizes(args.views))


if __name__ == "__main__":
    main()
