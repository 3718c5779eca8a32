"""The server benchmark's load generator: one process of asyncio and grpc.aio, loopback only.

``run.py`` starts this once per workload and reads one JSON document from ``--out``. It never
starts or stops a server: it only calls the one it is given and samples the server process
(``/proc/<pid>``) and Redis (``INFO``) at the edges of each measured phase. Every loop is bounded
in time and in count.

Workloads:

* ``play``: tables of four client-driven seats. The tables are created with a ``deck_seed``, so
  the generator knows every hand: it plans each whole game with the engine when it makes the
  table (a random legal card, or three random cards to pass, for whichever seat owes one), then
  sends those moves. Phases: a closed-loop sweep
  over concurrency levels, each level run against the baseline right before it (the best of ours
  is the saturating rate), an open loop at half of it (and the baseline at the same rate), and an
  overload open loop at twice it with a client deadline.
* ``bots``: tables of one client seat and three heuristic bots, played from the client's own view.
* ``watch``: idle spectator streams on idle tables (server memory per stream), then four seat
  streams on each of the active tables, whose writes are paced open-loop; event delivery latency is
  the watcher's receive time minus the event's ``event_time``.

The baseline (``baseline.py``: ``Baseline.Write``, one EVALSHA) is driven by the same runner,
through :class:`BaselineTable`, one key per call in flight.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import gc
import ipaddress
import json
import os
import random
import subprocess
import sys
import time
import urllib.parse
import uuid
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import grpc
import redis

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_engine import (
    PASS_COUNT,
    Card,
    Deal,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    apply,
    legal_passes,
    legal_plays,
    new_game,
    seats_to_act,
    seeded_deck,
)
from hearts_server.store import keys

SHED = {"RESOURCE_EXHAUSTED", "UNAVAILABLE"}
"""Codes by which a server refuses work it cannot take now (a client backs off and retries).

gRPC's own limit on calls waiting to be picked up (``grpc.server.max_pending_requests``) ends the
calls it refuses with CANCELLED; the report counts those separately.
"""

_CARDS = tuple(
    pb.Card(suit=Card.from_index(i).suit + 1, rank=Card.from_index(i).rank)  # type: ignore[arg-type]
    for i in range(52)
)


def percentile(values: Sequence[float], q: float) -> float | None:
    """The ``q``-quantile (0..1) of ``values`` by the nearest-rank method; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(q * len(ordered) + 0.999999) - 1))
    return ordered[rank]


def summary_ms(values: Sequence[float]) -> dict[str, Any]:
    """Count and p50/p95/p99/max of latencies given in seconds, as milliseconds."""
    out: dict[str, Any] = {"n": len(values)}
    for name, q in (("p50", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0)):
        value = percentile(values, q)
        out[name] = None if value is None else round(value * 1000, 3)
    return out


# --------------------------------------------------------------------------- sampling


class Sampler:
    """CPU and memory of the server process, and Redis's own counters, at phase edges."""

    def __init__(self, pid: int, redis_url: str) -> None:
        self.pid = pid
        self.redis = redis.Redis.from_url(redis_url, socket_timeout=10)
        self._ticks = 100.0
        with contextlib.suppress(ValueError, OSError, AttributeError):
            self._ticks = float(os.sysconf("SC_CLK_TCK"))

    def cpu_seconds(self) -> float:
        """User + system CPU seconds of the server process (all its threads)."""
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self._ticks

    def loop_thread_cpu_seconds(self) -> float:
        """User + system CPU seconds of the server's main thread, which runs its event loop
        (and with it every handler); the rest of :meth:`cpu_seconds` is gRPC's own threads."""
        path = Path(f"/proc/{self.pid}/task/{self.pid}/stat")
        fields = path.read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / self._ticks

    def rss_bytes(self) -> int:
        """Resident set size of the server process."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def sample(self) -> dict[str, Any]:
        info = self.redis.info("all")
        commands = {
            key[len("cmdstat_") :]: value["calls"]
            for key, value in info.items()
            if key.startswith("cmdstat_")
        }
        return {
            "t": time.perf_counter(),
            "cpu": self.cpu_seconds(),
            "loop_cpu": self.loop_thread_cpu_seconds(),
            "rss": self.rss_bytes(),
            "redis_reads": info["total_reads_processed"],
            "redis_bytes_in": info["total_net_input_bytes"],
            "redis_commands": info["total_commands_processed"],
            "redis_cmdstats": commands,
            "redis_memory": info["used_memory"],
            "redis_cpu": info["used_cpu_user"] + info["used_cpu_sys"],
            "redis_keys": sum(
                v["keys"] for k, v in info.items() if k.startswith("db") and isinstance(v, dict)
            ),
        }


def delta(before: dict[str, Any], after: dict[str, Any], commands: int) -> dict[str, Any]:
    """Per-phase server and Redis costs, per successful command where that makes sense."""
    # Each sample is one INFO call: one read and one command for Redis. Take the first one out.
    reads = after["redis_reads"] - before["redis_reads"] - 1
    top = after["redis_commands"] - before["redis_commands"] - 1
    cmdstats = {
        name: after["redis_cmdstats"].get(name, 0) - before["redis_cmdstats"].get(name, 0)
        for name in after["redis_cmdstats"]
    }
    cmdstats = {k: v for k, v in cmdstats.items() if v and k != "info"}
    per = max(commands, 1)
    return {
        "seconds": after["t"] - before["t"],
        "server_cpu_s": after["cpu"] - before["cpu"],
        "server_cpu_ms_per_command": (after["cpu"] - before["cpu"]) * 1000 / per,
        # Of which the event loop's thread (handlers, asyncio, gRPC's Cython layer, redis-py);
        # the rest is gRPC's own threads (its poller and I/O threads).
        "server_loop_cpu_ms_per_command": (after["loop_cpu"] - before["loop_cpu"]) * 1000 / per,
        "redis_cpu_ms_per_command": (after["redis_cpu"] - before["redis_cpu"]) * 1000 / per,
        "redis_reads_per_command": reads / per,
        # What clients sent Redis (the commands and their arguments, the records written; and
        # the one INFO of 23 bytes): what Redis's AOF or a replica receives grows with it.
        "redis_bytes_in_per_command": (after["redis_bytes_in"] - before["redis_bytes_in"]) / per,
        "redis_commands_per_command": top / per,
        "evalsha_per_command": cmdstats.get("evalsha", 0) / per,
        "redis_cmdstats": cmdstats,
        "redis_memory_delta": after["redis_memory"] - before["redis_memory"],
        "server_rss_before": before["rss"],
        "server_rss_after": after["rss"],
    }


# --------------------------------------------------------------------------- recording


class Recorder:
    """Latencies by method and outcome for one phase."""

    def __init__(self) -> None:
        self.ok: dict[str, list[float]] = collections.defaultdict(list)
        self.failed: dict[str, list[float]] = collections.defaultdict(list)
        self.codes: collections.Counter[str] = collections.Counter()
        self.completed = 0
        self.starved = 0
        self.offered = 0

    def success(self, method: str, seconds: float) -> None:
        self.ok[method].append(seconds)
        self.completed += 1

    def failure(self, method: str, code: str, seconds: float) -> None:
        self.failed[code].append(seconds)
        self.codes[f"{method}:{code}"] += 1

    def result(self, seconds: float) -> dict[str, Any]:
        shed = [s for code in SHED for s in self.failed.get(code, ())]
        return {
            "seconds": seconds,
            "completed": self.completed,
            "commands_per_s": self.completed / seconds if seconds else 0.0,
            "per_method_per_s": {m: len(v) / seconds for m, v in self.ok.items()},
            "latency_ms": {m: summary_ms(v) for m, v in sorted(self.ok.items())},
            "failures": dict(self.codes),
            "failure_latency_ms": {c: summary_ms(v) for c, v in sorted(self.failed.items())},
            "shed_latency_ms": summary_ms(shed),
            "offered": self.offered,
            "starved": self.starved,
        }


class Channels:
    """A few client channels, each its own connection, used round-robin."""

    def __init__(self, target: str, count: int) -> None:
        options = [
            ("grpc.use_local_subchannel_pool", 1),  # one connection per channel, not shared
            ("grpc.max_receive_message_length", 1 << 22),
        ]
        self.channels = [grpc.aio.insecure_channel(target, options=options) for _ in range(count)]
        self.stubs = [api_grpc.TableServiceStub(c) for c in self.channels]
        self._next = 0

    def stub(self) -> Any:
        self._next = (self._next + 1) % len(self.stubs)
        return self.stubs[self._next]

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


# --------------------------------------------------------------------------- tables


def _request_id() -> str:
    return uuid.uuid4().hex


class Call:
    """One pending command: retried with the same request id until it is answered."""

    __slots__ = ("metadata", "method", "request")

    def __init__(self, method: str, request: Any, metadata: Any) -> None:
        self.method = method
        self.request = request
        self.metadata = metadata


class Table:
    """A table the generator plays; ``next_call`` is its next command, ``done`` when over."""

    name = ""
    pending: Call | None = None

    def next_call(self) -> Call | None:
        raise NotImplementedError

    def answered(self, call: Call, response: Any) -> None:
        raise NotImplementedError


class MirroredTable(Table):
    """Four client seats whose whole game is planned when the table is made.

    The deck is seeded, so the generator knows every hand: it plays the game through with the
    engine up front (a random legal card, or three random cards to pass, for whichever seat owes
    one) and keeps the list of moves. During a measured phase a call is then only a request
    built from the plan, so the generator, which shares the machine's cores with the server,
    spends no more per call than it must.
    """

    def __init__(self, name: str, tokens: Sequence[str], seed: int, rng: random.Random) -> None:
        self.name = name
        self.metadata = [(("authorization", f"Bearer {t}"),) for t in tokens]
        self.plan = _plan_game(seed, rng)
        self.step = 0
        self.pending = None
        self._request_prefix = uuid.uuid4().hex[:16]

    def next_call(self) -> Call | None:
        if self.pending is not None:
            return self.pending
        if self.step >= len(self.plan):
            return None
        method, seat, cards, _ = self.plan[self.step]
        request_id = f"{self._request_prefix}-{self.step}"
        if method == "PlayCard":
            request: Any = api.PlayCardRequest(
                name=self.name, card=_CARDS[cards[0]], request_id=request_id
            )
        else:
            request = api.PassCardsRequest(
                name=self.name, cards=[_CARDS[c] for c in cards], request_id=request_id
            )
        self.pending = Call(method, request, self.metadata[seat])
        return self.pending

    def answered(self, call: Call, response: Any) -> None:
        hand_size = self.plan[self.step][3]
        self.step += 1
        self.pending = None
        if call.method == "PlayCard" and len(response.view.hand) != hand_size:
            raise RuntimeError(f"{self.name}: the plan disagrees with the server's view")


def _plan_game(seed: int, rng: random.Random) -> list[tuple[str, int, tuple[Card, ...], int]]:
    """A whole game of random legal moves on the decks of ``seed``, as the server deals them.

    Each move: the method, the seat, its cards, and the seat's hand size after it.
    """
    plan: list[tuple[str, int, tuple[Card, ...], int]] = []
    state = new_game(Rules(), first_dealer=0)
    while True:
        # The server deals the next round in the same command as the round's last card.
        if state.phase is Phase.DEALING:
            state = apply(state, Deal(seeded_deck(seed, state.round_index)))
            continue
        if state.phase is Phase.PLAYING:
            seat = state.turn
            move: tuple[str, int, tuple[Card, ...]] = (
                "PlayCard",
                seat,
                (rng.choice(legal_plays(state, seat)),),
            )
            state = apply(state, PlayCard(seat, move[2][0]))
        elif state.phase is Phase.PASSING:
            seat = seats_to_act(state)[0]
            move = ("PassCards", seat, tuple(rng.sample(legal_passes(state, seat), PASS_COUNT)))
            state = apply(state, PassCards(seat, move[2]))
        else:
            return plan
        if state.phase is Phase.DEALING:
            state = apply(state, Deal(seeded_deck(seed, state.round_index)))
        plan.append((*move, len(state.hand(seat))))


class BotTable(Table):
    """One client seat against three server bots, played from the client's own view."""

    def __init__(self, name: str, token: str, view: pb.TableView, rng: random.Random) -> None:
        self.name = name
        self.metadata = (("authorization", f"Bearer {token}"),)
        self.view = view
        self.rng = rng
        self.pending = None

    def next_call(self) -> Call | None:
        if self.pending is not None:
            return self.pending
        view = self.view
        if view.table.phase == pb.PHASE_GAME_OVER:
            return None
        if view.cards_to_pass:
            chosen = self.rng.sample(list(view.hand), view.cards_to_pass)
            request = api.PassCardsRequest(name=self.name, cards=chosen, request_id=_request_id())
            self.pending = Call("PassCards", request, self.metadata)
        elif view.legal_cards:
            card = self.rng.choice(list(view.legal_cards))
            request = api.PlayCardRequest(name=self.name, card=card, request_id=_request_id())
            self.pending = Call("PlayCard", request, self.metadata)
        else:
            raise RuntimeError(f"{self.name}: nothing to do in {view}")
        return self.pending

    def answered(self, call: Call, response: Any) -> None:
        self.view = response.view
        self.pending = None


# --------------------------------------------------------------------------- the pool


class Pool:
    """Tables ready for their next command; a finished game is replaced by a new table."""

    def __init__(
        self,
        channels: Channels,
        kind: str,
        rng: random.Random,
        timeout: float,
    ) -> None:
        self.channels = channels
        self.kind = kind
        self.rng = rng
        self.timeout = timeout
        self.ready: collections.deque[Table] = collections.deque()
        self.available = asyncio.Event()
        self.recorder = Recorder()
        self.tables_created = 0
        self.broken = 0

    async def _unary(self, method: str, request: Any, metadata: Any = ()) -> Any:
        started = time.perf_counter()
        try:
            response = await getattr(self.channels.stub(), method)(
                request, metadata=metadata, timeout=self.timeout
            )
        except grpc.aio.AioRpcError as error:
            code = error.code().name
            self.recorder.failure(method, code, time.perf_counter() - started)
            if self.recorder.codes[f"{method}:{code}"] == 1:
                print(f"  first {method} {code}: {error.details()}", file=sys.stderr)
            raise
        self.recorder.success(method, time.perf_counter() - started)
        return response

    async def _retrying(self, method: str, request: Any, metadata: Any = ()) -> Any:
        """Set-up calls: retried (same request id) until they succeed, at most 50 times."""
        for attempt in range(50):
            try:
                return await self._unary(method, request, metadata)
            except grpc.aio.AioRpcError as error:
                if error.code().name not in SHED | {"DEADLINE_EXCEEDED", "ABORTED"}:
                    raise
                await asyncio.sleep(min(1.0, 0.01 * 2**attempt) * self.rng.random())
        raise RuntimeError(f"{method} kept failing")

    async def new_table(self) -> Table:
        seed = self.rng.getrandbits(40)
        if self.kind == "mirrored":
            created = await self._retrying(
                "CreateTable",
                api.CreateTableRequest(
                    table=pb.Table(display_name="bench", deck_seed=seed), request_id=_request_id()
                ),
            )
            name = created.view.table.name
            tokens = []
            for seat in range(4):
                joined = await self._retrying(
                    "JoinTable",
                    api.JoinTableRequest(
                        name=name,
                        seat=seat,
                        player_display_name=f"p{seat}",
                        request_id=_request_id(),
                    ),
                )
                tokens.append(joined.seat_token)
            self.tables_created += 1
            return MirroredTable(name, tokens, seed, random.Random(seed))
        bots = [
            pb.Seat(seat=s, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_HEURISTIC)
            for s in (1, 2, 3)
        ]
        created = await self._retrying(
            "CreateTable",
            api.CreateTableRequest(
                table=pb.Table(display_name="bench", seats=bots), request_id=_request_id()
            ),
        )
        name = created.view.table.name
        joined = await self._retrying(
            "JoinTable",
            api.JoinTableRequest(
                name=name, seat=0, player_display_name="p0", request_id=_request_id()
            ),
        )
        self.tables_created += 1
        return BotTable(name, joined.seat_token, joined.view, random.Random(seed))

    async def fill(self, count: int, concurrency: int = 32) -> None:
        """Create ``count`` tables (not part of any measured phase)."""
        todo = iter(range(count))

        async def worker() -> None:
            for _ in todo:
                self.give(await self.new_table())

        await asyncio.gather(*(worker() for _ in range(concurrency)))

    async def stagger(self, concurrency: int = 64, seconds: float = 900.0) -> int:
        """Play every table on to a random point of its game (not part of any measured phase).

        Tables made at once all start at their first pass: measured from there, every phase
        would see one stage of the same games (round 0's passes, then its first tricks) and no
        game would end. Each table instead plays on to a move drawn uniformly from its plan, so
        that the phases see what a whole game sends: the passes and plays of every round, and
        games ending, replaced by new tables (CreateTable, JoinTable). Returns the moves made.
        """
        tables = [table for table in self.ready if isinstance(table, MirroredTable)]
        if len(tables) != len(self.ready):
            raise TypeError("only tables with a planned game can be staggered")
        self.ready.clear()
        todo = collections.deque((table, self.rng.randrange(len(table.plan))) for table in tables)
        moved = 0
        deadline = time.monotonic() + seconds

        async def worker() -> None:
            nonlocal moved
            while todo and time.monotonic() < deadline:
                table, goal = todo.popleft()
                if table.step >= goal:
                    continue
                call = table.next_call()
                assert call is not None
                try:
                    response = await self._unary(call.method, call.request, call.metadata)
                except grpc.aio.AioRpcError as error:
                    if error.code().name not in SHED | {
                        "DEADLINE_EXCEEDED",
                        "CANCELLED",
                        "ABORTED",
                    }:
                        raise  # an error the plan cannot explain: the run is broken
                else:
                    table.answered(call, response)
                    moved += 1
                todo.append((table, goal))

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        if todo:
            raise RuntimeError(f"staggering the tables took more than {seconds:.0f} s")
        self.rng.shuffle(tables)
        for table in tables:
            self.give(table)
        return moved

    def give(self, table: Table) -> None:
        self.ready.append(table)
        self.available.set()

    def try_take(self) -> Table | None:
        if not self.ready:
            self.available.clear()
            return None
        return self.ready.popleft()

    async def take(self) -> Table:
        while True:
            table = self.try_take()
            if table is not None:
                return table
            await self.available.wait()

    async def step(self, table: Table) -> None:
        """Run the table's next command (or replace a finished table), then make it ready again."""
        try:
            call = table.next_call()
            if call is None:
                table = await self.new_table()
                call = table.next_call()
                assert call is not None
            try:
                response = await self._unary(call.method, call.request, call.metadata)
            except grpc.aio.AioRpcError as error:
                if error.code().name in SHED | {"DEADLINE_EXCEEDED", "CANCELLED"}:
                    return  # unknown or not applied: the same request (id) goes again next time
                if error.code().name == "ABORTED":
                    return
                # The mirror lost track (should not happen): drop this table, start another.
                self.broken += 1
                print(
                    f"dropping {table.name}: {error.code().name} {error.details()}", file=sys.stderr
                )
                table = await self.new_table()
                return
            table.answered(call, response)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.05)  # a failed set-up call under overload: try again later
        finally:
            self.give(table)


# --------------------------------------------------------------------------- phases


async def measured(
    sampler: Sampler, pool_or_recorder: Any, body: Callable[[], Awaitable[None]]
) -> dict[str, Any]:
    """Run ``body`` as one phase: fresh recorder, samples before and after."""
    pool_or_recorder.recorder = Recorder()
    gc.collect()
    before = sampler.sample()
    started = time.perf_counter()
    cpu_started = time.process_time()
    await body()
    cpu = time.process_time() - cpu_started
    seconds = time.perf_counter() - started
    after = sampler.sample()
    result = pool_or_recorder.recorder.result(seconds)
    result["cost"] = delta(before, after, result["completed"])
    # The generator shares the machine's cores with the servers: what it costs per command is
    # CPU the server under test did not get.
    result["cost"]["load_generator_cpu_ms_per_command"] = cpu * 1000 / max(result["completed"], 1)
    return result


async def closed_loop(pool: Pool, concurrency: int, seconds: float, max_commands: int) -> None:
    """``concurrency`` workers, each sending its next command as soon as the last one returns."""
    deadline = time.perf_counter() + seconds

    async def worker() -> None:
        while time.perf_counter() < deadline and pool.recorder.offered < max_commands:
            table = await pool.take()
            pool.recorder.offered += 1
            await pool.step(table)

    await asyncio.gather(*(worker() for _ in range(concurrency)))


async def open_loop(pool: Pool, rate: float, seconds: float, max_commands: int) -> None:
    """Commands at a fixed arrival rate, whatever the answers' latency (each to a ready table)."""
    started = time.perf_counter()
    sent = 0
    tasks: set[asyncio.Task[None]] = set()
    total = min(max_commands, int(rate * seconds))
    while sent < total:
        elapsed = time.perf_counter() - started
        due = min(total, int(elapsed * rate) + 1) - sent
        for _ in range(due):
            sent += 1
            pool.recorder.offered += 1
            table = pool.try_take()
            if table is None:
                pool.recorder.starved += 1  # every table has a call in flight: not sent
                continue
            task = asyncio.get_running_loop().create_task(pool.step(table))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await asyncio.sleep(max(0.0, (sent + 1) / rate - (time.perf_counter() - started)))
    if tasks:
        await asyncio.wait(tasks, timeout=pool.timeout + 5)


class PhaseProfile:
    """py-spy sampling one server's Python stacks (all threads) during one phase: ``--profile-dir``.

    It starts with the phase and stops a second before its end, so that setting up and the
    other phases (the overload phase's refusals, say) stay out of it; the file is py-spy's
    ``raw`` format (one line per stack and its sample count), split by ``run.py``.
    """

    def __init__(self, directory: str, name: str, pid: int, seconds: float) -> None:
        self.path = Path(directory) / f"{name}.txt"
        self.process = subprocess.Popen(
            [
                "py-spy", "record", "--pid", str(pid), "--duration", str(max(1, int(seconds) - 1)),
                "--rate", "400", "--format", "raw", "--threads", "--nonblocking",
                "--output", str(self.path),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip

    async def wait(self) -> None:
        await asyncio.to_thread(self.process.wait, 30)


async def sweep_level(
    sampler: Sampler,
    pool: Pool,
    level: int,
    *,
    seconds: float,
    max_commands: int,
    label: str,
    profile_dir: str = "",
    rep: int = 0,
) -> dict[str, Any]:
    profile: PhaseProfile | None = None

    async def body() -> None:
        nonlocal profile
        if profile_dir:
            name = f"{label}-{level}-{rep}"
            profile = PhaseProfile(profile_dir, name, sampler.pid, seconds)
        await closed_loop(pool, level, seconds, max_commands)

    result = await measured(sampler, pool, body)
    if profile is not None:
        await profile.wait()  # after the phase: its figures never include waiting for py-spy
    result["concurrency"] = level
    print(
        f"  {label:8s} closed loop, {level:4d} in flight: {result['commands_per_s']:8.0f} /s",
        file=sys.stderr,
    )
    return result


def table_memory(sampler: Sampler, names: Sequence[str]) -> float:
    """Mean bytes Redis holds for a table (record, event log, remembered requests)."""
    total = 0
    pipe = sampler.redis.pipeline(transaction=False)
    for name in names:
        table_id = name.removeprefix("tables/")
        for key in (keys.table(table_id), keys.events(table_id), keys.requests(table_id)):
            pipe.execute_command("MEMORY USAGE", key, "SAMPLES", "0")
    for value in pipe.execute():
        total += value or 0
    return total / max(1, len(names))


async def workload_play(args: argparse.Namespace, sampler: Sampler) -> dict[str, Any]:
    """(a) or (b); for (a), the baseline's phases alternate with ours, level by level."""
    rng = random.Random(args.seed)
    channels = Channels(args.target, args.channels)
    pool = Pool(channels, "mirrored" if args.workload == "play" else "bots", rng, args.timeout)
    base_pool: Pool | None = None
    base_sampler: Sampler | None = None
    if args.baseline_target:
        sys.path.insert(0, args.gen_dir)
        import baseline_pb2  # noqa: PLC0415 - generated by run.py
        import baseline_pb2_grpc  # noqa: PLC0415

        base_channels = Channels(args.baseline_target, args.channels)
        base_channels.stubs = [baseline_pb2_grpc.BaselineStub(c) for c in base_channels.channels]
        base_pool = Pool(base_channels, "baseline", random.Random(args.seed), args.timeout)
        payload = random.Random(args.seed).randbytes(args.payload_bytes)
        for index in range(max(args.levels)):
            base_pool.give(BaselineTable(f"k{index}", payload, baseline_pb2))
        base_sampler = Sampler(args.baseline_pid, args.redis_url)
    out: dict[str, Any] = {"workload": args.workload}
    try:
        await pool.fill(args.tables)
        if base_pool is not None:
            # The baseline's calls carry a header as long as a seat token's: gRPC parses it for
            # the baseline too (the Hearts server also verifies it, which is its own work).
            sample = pool.ready[0].metadata
            ((_, value),) = sample[0] if isinstance(sample, list) else sample
            for table in base_pool.ready:
                table.metadata = (("authorization", "Bearer " + "x" * (len(value) - 7)),)
        if pool.kind == "mirrored":
            moved = await pool.stagger()
            print(f"  staggered {args.tables} tables: {moved} moves", file=sys.stderr)
        created_before = pool.tables_created
        ours: list[dict[str, Any]] = []
        base: list[dict[str, Any]] = []
        for rep in range(args.reps):
            for level in args.levels:
                if base_pool is not None and base_sampler is not None:
                    result = await sweep_level(
                        base_sampler,
                        base_pool,
                        level,
                        seconds=args.seconds,
                        max_commands=args.max_commands,
                        label="baseline",
                        profile_dir=args.profile_dir,
                        rep=rep,
                    )
                    result["rep"] = rep
                    base.append(result)
                result = await sweep_level(
                    sampler,
                    pool,
                    level,
                    seconds=args.seconds,
                    max_commands=args.max_commands,
                    label=args.workload,
                    profile_dir=args.profile_dir if args.workload == "play" else "",
                    rep=rep,
                )
                result["rep"] = rep
                ours.append(result)
        out["sweep"] = _best_per_level(ours)
        out["saturated"] = max(out["sweep"], key=lambda r: r["commands_per_s"])
        if base:
            out["baseline_sweep"] = _best_per_level(base)
            out["baseline_saturated"] = max(
                out["baseline_sweep"], key=lambda r: r["commands_per_s"]
            )
        if args.workload == "play":
            rate = out["saturated"]["commands_per_s"]
            phases: list[tuple[str, Pool, Sampler, float, float]] = [
                ("half", pool, sampler, 0.5 * rate, args.open_seconds)
            ]
            if base_pool is not None and base_sampler is not None:
                # The baseline at the very same rate: CPU per command and latency side by side.
                phases.append(
                    ("baseline_half", base_pool, base_sampler, 0.5 * rate, args.open_seconds)
                )
            phases.append(("overload", pool, sampler, 2.0 * rate, args.overload_seconds))
            for name, target, target_sampler, offered, seconds in phases:

                async def body(
                    target: Pool = target, offered: float = offered, seconds: float = seconds
                ) -> None:
                    await open_loop(target, offered, seconds, args.max_commands)

                result = await measured(target_sampler, target, body)
                result["offered_per_s"] = offered
                out[name] = result
                print(
                    f"  {name}: open loop at {offered:.0f}/s: {result['commands_per_s']:.0f} ok/s, "
                    f"failures {result['failures']}",
                    file=sys.stderr,
                )
        names = [t.name for t in list(pool.ready)[:200]]
        out["tables_total"] = args.tables + pool.tables_created - created_before
        out["redis_bytes_per_table_in_play"] = table_memory(sampler, names)
        out["broken_tables"] = pool.broken
    finally:
        await channels.close()
        if base_pool is not None:
            await base_pool.channels.close()
    return out


def _best_per_level(results: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Of repeated phases at one level, the fastest (the machine is shared: noise only slows)."""
    best: dict[int, dict[str, Any]] = {}
    for result in results:
        level = result["concurrency"]
        if level not in best or result["commands_per_s"] > best[level]["commands_per_s"]:
            best[level] = result
    return [best[level] for level in sorted(best)]


# --------------------------------------------------------------------------- watching


async def _watch(  # noqa: PLR0917 - one stream's whole context
    stub: Any,
    name: str,
    metadata: Any,
    ready: asyncio.Event,
    sink: list[float] | None,
    counter: list[int],
    stop: asyncio.Event,
) -> None:
    for attempt in range(20):
        call = stub.WatchTable(api.WatchTableRequest(name=name), metadata=metadata)
        try:
            async for message in call:
                if message.HasField("snapshot"):
                    ready.set()
                    counter[0] += 1
                elif (
                    sink is not None
                    and not stop.is_set()
                    # Each stream's opening presence is made for it, not delivered from a write.
                    and not message.event.HasField("presence_changed")
                ):
                    ms = message.event.event_time.ToMilliseconds()
                    sink.append(time.time() - ms / 1000.0)
            return
        except grpc.aio.AioRpcError as error:
            if not ready.is_set() and error.code().name in SHED | {"CANCELLED"}:
                # Refused while the server was busy opening others: back off, as clients do.
                counter[2] += 1
                await asyncio.sleep(min(2.0, 0.05 * 2**attempt) * random.random())
                continue
            if error.code() != grpc.StatusCode.CANCELLED:
                counter[1] += 1
                if counter[1] <= 3:
                    print(
                        f"  stream failed: {error.code().name} {error.details()}", file=sys.stderr
                    )
            ready.set()
            return
        finally:
            call.cancel()


async def open_streams(
    channels: Channels, targets: Sequence[tuple[str, Any]], sink: list[float] | None, stop: Any
) -> tuple[list[asyncio.Task[None]], list[int]]:
    """One stream per (table, metadata); returns the tasks once every snapshot has arrived."""
    counter = [0, 0, 0]  # snapshots received, streams failed, refusals retried
    tasks = []
    events = []
    for index, (name, metadata) in enumerate(targets):
        ready = asyncio.Event()
        stub = channels.stubs[index % len(channels.stubs)]
        tasks.append(asyncio.create_task(_watch(stub, name, metadata, ready, sink, counter, stop)))
        events.append(ready)
        if index % 50 == 49:
            await asyncio.sleep(0.02)  # a steady stream of new watchers, not one burst
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 120)
    return tasks, counter


async def workload_watch(args: argparse.Namespace, sampler: Sampler) -> dict[str, Any]:
    rng = random.Random(args.seed)
    out: dict[str, Any] = {"workload": "watch"}
    writers = Channels(args.target, args.channels)
    # HTTP/2 allows the server's max_concurrent_streams (1000) per connection: several channels.
    per_channel = 800
    idle_channels = Channels(args.target, max(1, -(-args.idle_streams // per_channel)))
    active_channels = Channels(args.target, max(1, -(-args.active_tables * 4 // per_channel)))
    pool = Pool(writers, "mirrored", rng, args.timeout)
    stop = asyncio.Event()
    tasks: list[asyncio.Task[None]] = []
    try:
        # Idle tables and their spectator streams: memory per open stream.
        idle_tables = max(1, args.idle_streams // 4)
        names: list[str] = []

        async def create_idle(count: int) -> None:
            for _ in range(count):
                created = await pool._retrying(
                    "CreateTable",
                    api.CreateTableRequest(
                        table=pb.Table(display_name="idle"), request_id=_request_id()
                    ),
                )
                names.append(created.view.table.name)

        share = -(-idle_tables // 16)
        await asyncio.gather(*(create_idle(min(share, idle_tables - i * share)) for i in range(16)))
        out["redis_bytes_per_new_table"] = table_memory(sampler, names[:200])
        await asyncio.sleep(1.0)
        rss_before = sampler.rss_bytes()
        targets = [(names[i % len(names)], ()) for i in range(args.idle_streams)]
        started = time.perf_counter()
        idle_tasks, idle_counter = await open_streams(idle_channels, targets, None, stop)
        tasks += idle_tasks
        opened_in = time.perf_counter() - started
        await asyncio.sleep(2.0)
        rss_after = sampler.rss_bytes()
        out["idle"] = {
            "streams": args.idle_streams,
            "snapshots": idle_counter[0],
            "failed": idle_counter[1],
            "refusals_retried": idle_counter[2],
            "open_seconds": opened_in,
            "server_rss_before": rss_before,
            "server_rss_after": rss_after,
            "bytes_per_stream": (rss_after - rss_before) / max(1, idle_counter[0]),
        }
        print(
            f"  {idle_counter[0]} idle streams: "
            f"{(rss_after - rss_before) / max(1, idle_counter[0]) / 1024:.1f} KiB each",
            file=sys.stderr,
        )
        # Active tables, four seat streams each, writes paced open-loop.
        await pool.fill(args.active_tables)
        active = list(pool.ready)
        targets = [
            (table.name, table.metadata[seat])  # type: ignore[attr-defined]
            for table in active
            for seat in range(4)
        ]
        delivery: list[float] = []
        stop.set()  # no recording while the snapshots arrive
        active_tasks, active_counter = await open_streams(active_channels, targets, delivery, stop)
        tasks += active_tasks
        await asyncio.sleep(0.5)
        delivery.clear()
        stop.clear()
        out["more"] = []
        for index, rate in enumerate(args.watch_rate):
            delivery.clear()
            stop.clear()

            async def body(rate: float = rate) -> None:
                await open_loop(pool, rate, args.seconds, args.max_commands)

            result = await measured(sampler, pool, body)
            stop.set()
            result["offered_per_s"] = rate
            result["active_streams"] = active_counter[0]
            result["failed_streams"] = active_counter[1] + idle_counter[1]
            result["open_streams_total"] = active_counter[0] + idle_counter[0]
            result["delivery_ms"] = summary_ms(delivery)
            if index == 0:
                out["active"] = result
            else:
                out["more"].append(result)
            print(
                f"  {active_counter[0]} active + {idle_counter[0]} idle streams, "
                f"{rate:.0f} writes/s: delivery p50 {result['delivery_ms']['p50']} ms, "
                f"p99 {result['delivery_ms']['p99']} ms",
                file=sys.stderr,
            )
            await asyncio.sleep(1.0)  # let the last deliveries drain
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channels in (writers, idle_channels, active_channels):
            await channels.close()
    return out


# --------------------------------------------------------------------------- baseline


class BaselineTable(Table):
    """A key of the baseline server: a versioned value plus its stream."""

    def __init__(self, key: str, payload: bytes, modules: Any) -> None:
        self.name = key
        self.payload = payload
        self.version = 0
        self.modules = modules
        self.pending = None
        self.metadata: tuple[tuple[str, str], ...] = ()  # see workload_play

    def next_call(self) -> Call | None:
        request = self.modules.WriteRequest(
            key=self.name, version=self.version, payload=self.payload
        )
        return Call("Write", request, self.metadata)

    def answered(self, call: Call, response: Any) -> None:
        # A negative version is a refused write (the key is at -version): an earlier call that
        # timed out had applied. Carry on from the current version.
        self.version = abs(response.version)


# --------------------------------------------------------------------------- main


def parse(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("play", "bots", "watch"), required=True)
    parser.add_argument("--target", required=True, help="host:port of the server (loopback)")
    parser.add_argument("--server-pid", type=int, required=True)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--out", required=True, help="where to write the JSON result")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--channels", type=int, default=4)
    parser.add_argument("--tables", type=int, default=256)
    parser.add_argument("--levels", type=lambda s: [int(x) for x in s.split(",")], default=[64])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--open-seconds", type=float, default=10.0)
    parser.add_argument("--overload-seconds", type=float, default=10.0)
    parser.add_argument("--max-commands", type=int, default=200_000)
    parser.add_argument("--timeout", type=float, default=1.0, help="client deadline per call")
    parser.add_argument("--idle-streams", type=int, default=5000)
    parser.add_argument("--active-tables", type=int, default=250)
    parser.add_argument(
        "--watch-rate",
        type=lambda text: [float(x) for x in text.split(",")],
        default=[250.0],
        help="writes/s to the watched tables, one phase per rate",
    )
    parser.add_argument(
        "--profile-dir",
        default="",
        help="py-spy each server during each closed-loop level of (a) into this directory",
    )
    parser.add_argument("--gen-dir", default="", help="where run.py generated baseline_pb2")
    parser.add_argument("--baseline-target", default="", help="host:port of baseline.py")
    parser.add_argument("--baseline-pid", type=int, default=0)
    parser.add_argument("--reps", type=int, default=1, help="sweeps (best of them per level)")
    parser.add_argument(
        "--payload-bytes",
        type=int,
        default=48,
        help="baseline request payload (48: a request the size of a PlayCardRequest)",
    )
    args = parser.parse_args(argv)
    hosts = [
        urllib.parse.urlsplit(f"//{args.target}").hostname,
        urllib.parse.urlsplit(args.redis_url).hostname,
    ]
    if args.baseline_target:
        hosts.append(urllib.parse.urlsplit(f"//{args.baseline_target}").hostname)
    for host in hosts:
        if not _loopback(host):
            parser.error(f"the benchmark only drives the loopback interface, not {host!r}")
    return args


def _loopback(host: str | None) -> bool:
    """Whether ``host`` is a loopback address (127.0.0.0/8, ::1) or ``localhost``."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host or "").is_loopback
    except ValueError:
        return False


async def amain(args: argparse.Namespace) -> dict[str, Any]:
    sampler = Sampler(args.server_pid, args.redis_url)
    if args.workload in ("play", "bots"):
        return await workload_play(args, sampler)
    return await workload_watch(args, sampler)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse(sys.argv[1:] if argv is None else argv)
    started = time.process_time()
    profile = os.environ.get("HEARTS_BENCH_LOAD_PROFILE")
    if profile:  # to see what the generator itself costs: python -m pstats FILE
        import cProfile  # noqa: PLC0415

        with cProfile.Profile() as profiler:
            result = asyncio.run(amain(args))
        profiler.dump_stats(profile)
    else:
        result = asyncio.run(amain(args))
    result["load_generator_cpu_s"] = time.process_time() - started
    Path(args.out).write_text(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
