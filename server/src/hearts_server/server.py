"""Assembling and running the server: store, app, gRPC services, health, reflection, metrics.

:class:`HeartsServer` is what both ``hearts-server`` and the tests start: a real grpc.aio server
on a real port. On stop (SIGTERM in production) health turns NOT_SERVING first, so load
balancers drain the replica, then in-flight calls get the grace period, and open streams end with
UNAVAILABLE / SHUTTING_DOWN, which tells clients to reconnect (to another replica) and resume.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import ctypes
import json
import logging
import multiprocessing
import os
import secrets
import signal
import threading
import time
from collections.abc import Callable, Iterator

import grpc
from grpc._cython import cygrpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from prometheus_client import REGISTRY
from prometheus_client.core import CounterMetricFamily

from hearts.v1 import table_service_pb2 as api
from hearts_server.clock import StoreClock
from hearts_server.config import Settings, host_port, networks
from hearts_server.identity import IdentityVerifier
from hearts_server.rpc import METRICS, TableServicer, add_lenient, add_servicer
from hearts_server.service import TableApp
from hearts_server.store.base import Store, StoreUnavailableError, StoreUnsupportedError
from hearts_server.store.memory import MemoryStore
from hearts_server.tokens import TokenCodec
from hearts_server.webhooks import WebhookSender

__all__ = ["SERVICE_NAME", "WEBHOOK_OUTCOMES", "HeartsServer", "make_store"]

log = logging.getLogger(__name__)

# The outcome label values of hearts_webhooks_total: the WebhookSender counters of those names.
WEBHOOK_OUTCOMES = ("delivered", "retried", "dropped")

_PR_SET_PDEATHSIG = 1  # prctl(2): a signal for this process when its parent dies
# Monte Carlo decisions queued or running per bot worker before the heuristic decides instead:
# a decision takes about 15-40 ms, so the last in the queue waits about a second.
_THINKING_PER_WORKER = 32
_STORE_RETRY_FIRST = 0.5
_STORE_RETRY_CAP = 5.0
"""Backoff between tries of a store that did not answer at start-up (seconds)."""
_LOAD_INTERVAL = 0.01
"""Seconds between two samples of the event loop's lag and busy share."""
_LOAD_SMOOTHING = 0.3
"""Weight of the newest sample of the busy share (an average over about 30 ms)."""
_QUEUE_INTERVAL = 0.02
"""Seconds between two reads of gRPC's call queue while it is near its limit."""
_BUSY_QUEUE_INTERVAL = 0.1
"""Seconds between two reads of gRPC's call queue while the loop is busy."""
_IDLE_QUEUE_INTERVAL = 1.0
"""Seconds between two reads of gRPC's call queue otherwise."""

SERVICE_NAME = api.DESCRIPTOR.services_by_name["TableService"].full_name


def make_store(settings: Settings) -> Store:
    """The Redis store when a URL is configured, else the embedded memory store."""
    if settings.redis_url:
        from hearts_server.store.redis import RedisStore  # noqa: PLC0415 - optional at start

        return RedisStore.from_url(
            settings.redis_url,
            idle_ttl_seconds=settings.table_ttl_seconds,
            finished_ttl_seconds=settings.finished_table_ttl_seconds,
            max_events=settings.max_events,
        )
    return MemoryStore(
        idle_ttl_seconds=settings.table_ttl_seconds,
        finished_ttl_seconds=settings.finished_table_ttl_seconds,
        max_events=settings.max_events,
    )


class _HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]  # untyped package
    """gRPC's health service, except that its Watch streams end when the server drains.

    gRPC's own Watch waits for the next change for as long as the stream is open, so every open
    watch outlived the drain and was cancelled at the end of the grace period, which gRPC logs
    as an unhandled error. This Watch (the same loop, over statuses it keeps beside gRPC's)
    sends NOT_SERVING and ends as soon as the drain starts. Check is gRPC's; List, which
    gRPC's leaves unimplemented, answers every status.
    """

    def __init__(self) -> None:
        super().__init__()
        serving = health_pb2.HealthCheckResponse.SERVING
        self._statuses: dict[str, health_pb2.HealthCheckResponse.ServingStatus] = {"": serving}
        self._changed = asyncio.Condition()
        self._draining = False

    async def set(self, service: str, status: health_pb2.HealthCheckResponse.ServingStatus) -> None:
        await super().set(service, status)
        if not self._draining:  # as gRPC's: no change once draining
            await self._change({service: status})

    async def enter_graceful_shutdown(self) -> None:
        await super().enter_graceful_shutdown()
        not_serving = health_pb2.HealthCheckResponse.NOT_SERVING
        await self._change(dict.fromkeys(self._statuses, not_serving), draining=True)

    async def _change(
        self,
        statuses: dict[str, health_pb2.HealthCheckResponse.ServingStatus],
        *,
        draining: bool = False,
    ) -> None:
        # Statuses and the drain change together, under the lock: a watch that sees the drain
        # has seen its NOT_SERVING too.
        async with self._changed:
            self._statuses.update(statuses)
            self._draining = self._draining or draining
            self._changed.notify_all()

    async def List(
        self, request: health_pb2.HealthListRequest, context: grpc.aio.ServicerContext
    ) -> health_pb2.HealthListResponse:
        """Every service's status (gRPC's own servicer leaves it unimplemented)."""
        async with self._changed:
            statuses = dict(self._statuses)
        return health_pb2.HealthListResponse(
            statuses={
                service: health_pb2.HealthCheckResponse(status=status)
                for service, status in statuses.items()
            }
        )

    async def Watch(
        self, request: health_pb2.HealthCheckRequest, context: grpc.aio.ServicerContext
    ) -> None:
        unknown = health_pb2.HealthCheckResponse.SERVICE_UNKNOWN
        last = None
        async with self._changed:
            while True:
                status = self._statuses.get(request.service, unknown)
                if status != last:
                    await context.write(health_pb2.HealthCheckResponse(status=status))
                    last = status
                if self._draining:
                    return
                await self._changed.wait()


class _ThreadClock:
    """Seconds the calling thread was not idle: running, or runnable and waiting for a CPU.

    Linux keeps both per thread in ``/proc/self/task/<tid>/schedstat``; the wait counts because
    a loop starved of CPU (other processes on its cores) falls behind just like a busy one.
    Elsewhere, the thread's CPU time alone.
    """

    def __init__(self) -> None:
        self._fd: int | None = None
        try:
            self._fd = os.open(
                f"/proc/self/task/{threading.get_native_id()}/schedstat", os.O_RDONLY
            )
            self.busy_seconds()
        except (OSError, ValueError):
            self.close()

    def busy_seconds(self) -> float:
        if self._fd is None:
            return time.thread_time()
        running, waiting = os.pread(self._fd, 128, 0).split()[:2]
        return (int(running) + int(waiting)) / 1e9

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


class _CallCounts:
    """gRPC's own count of one server's calls (channelz): how many arrived, and how many ended.

    A call counts as started when gRPC accepts its stream, before the process picks it up, so
    the calls alive (started less ended) less those the process is running are the calls still
    waiting in gRPC's queue, which grpc.aio does not expose otherwise. channelz is on by
    default; it is read through grpcio's own binding (``cygrpc.channelz_get_server``, what the
    channelz service answers from): 0.05 ms a read on an idle process, about 0.4 ms on a
    saturated one, so the server reads it no more often than it needs (see ``_watch_load``).
    """

    def __init__(self, server_id: int) -> None:
        self.server_id = server_id

    @staticmethod
    def server_ids() -> set[int]:
        """The ids of the gRPC servers this process holds now; empty if channelz is off."""
        ids: set[int] = set()
        start = 0
        try:
            while True:
                page = json.loads(cygrpc.channelz_get_servers(start))
                found = [int(server["ref"]["serverId"]) for server in page.get("server", ())]
                ids.update(found)
                if page.get("end") or not found:
                    return ids
                start = max(found) + 1
        except Exception:  # channelz off, or its shape changed: no queue sampling
            log.debug("channelz is not readable", exc_info=True)
            return set()

    def read(self) -> tuple[int, int]:
        """(calls started, calls ended) so far."""
        started, succeeded, failed = self.outcomes()
        return started, succeeded + failed

    def outcomes(self) -> tuple[int, int, int]:
        """(calls started, succeeded, failed) so far."""
        data = json.loads(cygrpc.channelz_get_server(self.server_id))["server"]["data"]
        return (
            int(data.get("callsStarted", 0)),
            int(data.get("callsSucceeded", 0)),
            int(data.get("callsFailed", 0)),
        )


class _GrpcCalls:
    """``hearts_grpc_calls_total{outcome}``: gRPC's own count of the process's calls (every
    service's, health checks and reflection included), read from channelz when Prometheus
    scrapes (on the metrics server's thread).

    ``hearts_requests_total`` counts the calls the servicer ran. A call that gRPC refuses before
    the process picks it up (past its pending-call limit, ``grpc.server.max_pending_requests``:
    the client sees ``CANCELLED``) reaches no handler, and channelz counts it as started but
    never as ended; so the rate of started less those of succeeded and failed is the rate of
    such refusals (give or take the change in calls in flight). The counts of a server that
    stopped stay in the totals, so they only grow.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._servers: dict[int, _CallCounts] = {}
        self._stopped = (0, 0, 0)

    def add(self, counts: _CallCounts) -> None:
        with self._lock:
            self._servers[id(counts)] = counts

    def remove(self, counts: _CallCounts) -> None:
        with self._lock:
            if self._servers.pop(id(counts), None) is not None:
                with contextlib.suppress(Exception):  # unreadable: its counts are lost
                    self._stopped = _plus(self._stopped, counts.outcomes())

    def collect(self) -> Iterator[CounterMetricFamily]:
        with self._lock:
            totals, servers = self._stopped, list(self._servers.values())
        for counts in servers:
            with contextlib.suppress(Exception):  # unreadable (a new grpcio): left out
                totals = _plus(totals, counts.outcomes())
        family = CounterMetricFamily(
            "hearts_grpc_calls",
            "Calls gRPC took in, every service's, by outcome (started, succeeded, failed), as "
            "gRPC counts them: a call its pending-call limit refused (the client sees CANCELLED) "
            "is started and never ended, and never reaches hearts_requests_total",
            labels=["outcome"],
        )
        for outcome, value in zip(("started", "succeeded", "failed"), totals, strict=True):
            family.add_metric([outcome], value)
        yield family


def _plus(a: tuple[int, int, int], b: tuple[int, int, int]) -> tuple[int, int, int]:
    return a[0] + b[0], a[1] + b[1], a[2] + b[2]


GRPC_CALLS = _GrpcCalls()
REGISTRY.register(GRPC_CALLS)


def _start_worker(server_pid: int) -> None:
    """In a bot worker: leave Ctrl-C to the server, and die with it.

    A terminal's Ctrl-C reaches the whole process group; a worker that took it would print a
    KeyboardInterrupt traceback (plain text, also under --log-format json). The server drains
    and then stops its workers; killed outright (SIGKILL, the OOM killer), it cannot, and outside
    a container nothing else would end them (each holds some 50 MB).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(OSError, AttributeError):  # Linux only: elsewhere they outlive it
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != server_pid:  # the server died before the request took effect
        os._exit(1)


class HeartsServer:
    """One server process's gRPC server and everything it owns."""

    def __init__(
        self,
        settings: Settings,
        *,
        store: Store | None = None,
        host_clock: Callable[[], float] = time.time,
    ) -> None:
        """``host_clock`` is this host's wall clock (tests set one that is off)."""
        self.settings = settings
        secret = settings.token_secret
        if not secret:
            secret = secrets.token_urlsafe(32)
            log.warning(
                "no token secret configured (HEARTS_TOKEN_SECRET): made a random one; "
                "replicas cannot accept each other's seat tokens, and tokens die on restart"
            )
        for name in ("token_secret", "token_extra_secret", "identity_secret", "webhook_secret"):
            value = getattr(settings, name)
            if value and value != value.strip():
                # A secret file written with echo ends in a newline, which the signer on the
                # other side (an app's backend, a webhook receiver) usually does not have: every
                # identity token or webhook signature then fails, on a server that looks healthy.
                log.warning(
                    "%s begins or ends with whitespace (a newline?), used as it is; if the "
                    "other side signs or checks without it, write the file with printf %%s",
                    f"HEARTS_{name.upper()}",
                )
        self.store = store if store is not None else make_store(settings)
        # Every replica stamps moves and enforces deadlines by the store's clock (clock.py); the
        # embedded store's one process is its own reference.
        self.clock = StoreClock(
            None if isinstance(self.store, MemoryStore) else self.store.time, wall=host_clock
        )
        self._executor: concurrent.futures.Executor | None = None
        factory = None
        if settings.bot_workers > 0:

            def factory() -> concurrent.futures.Executor:
                self._executor = concurrent.futures.ProcessPoolExecutor(
                    max_workers=settings.bot_workers,
                    mp_context=multiprocessing.get_context("spawn"),
                    initializer=_start_worker,
                    initargs=(os.getpid(),),
                )
                return self._executor

            factory()
        self.webhooks = (
            WebhookSender(
                self.store,
                url=settings.webhook_url,
                secret=settings.webhook_secret.encode(),
                clock=self.clock,
            )
            if settings.webhook_url
            else None
        )
        self.app = TableApp(
            self.store,
            TokenCodec(
                secret.encode(),
                # Exactly as the secret is read: in step 2 of a rotation it is the old secret.
                extra_secrets=[settings.token_extra_secret.encode()]
                if settings.token_extra_secret
                else [],
                ttl_seconds=settings.token_ttl_seconds,
                clock=self.clock,
            ),
            bot_executor=self._executor,
            executor_factory=factory,
            record_cache_size=settings.record_cache_size,
            record_schema=settings.record_schema,
            max_thinking=_THINKING_PER_WORKER * max(1, settings.bot_workers),
            # A turn timeout must run out while the table still exists: an idle table expires
            # (no commit refreshes it while a player is away), so leave a minute for the move.
            max_turn_timeout_seconds=max(1.0, min(86_400.0, settings.table_ttl_seconds - 60)),
            identity=IdentityVerifier(
                secret=settings.identity_secret,
                jwks_url=settings.identity_jwks_url,
                issuer=settings.identity_issuer,
                audience=settings.identity_audience,
                required=settings.identity_required,
            )
            if settings.identity_secret or settings.identity_jwks_url
            else None,
            webhooks=self.webhooks,
            clock=self.clock,
            max_tables_per_hour=settings.max_tables_per_hour,
            # How long a table lives idle: a lobby slot and a player's list of tables as long.
            table_ttl_seconds=settings.table_ttl_seconds,
            finished_table_ttl_seconds=settings.finished_table_ttl_seconds,
        )
        self.servicer = TableServicer(
            self.app,
            max_streams=settings.max_streams,
            max_streams_per_client=settings.max_streams_per_client,
            max_calls=settings.max_concurrent_rpcs,
            max_waiting=settings.max_pending_rpcs,
            trusted_proxies=networks(settings.trusted_proxies),
        )
        self.health = _HealthServicer()
        keepalive_ms = round(settings.keepalive_seconds * 1000)
        timeout_ms = round(settings.keepalive_timeout_seconds * 1000)
        options = [
            ("grpc.max_send_message_length", settings.max_message_bytes),
            ("grpc.max_receive_message_length", settings.max_message_bytes),
            ("grpc.max_concurrent_streams", 1000),
            # Calls that arrived but that the event loop has not picked up yet: where calls queue
            # when the server is saturated (gRPC hands Python one call at a time). The servicer
            # refuses up to every other call with RESOURCE_EXHAUSTED while more than
            # max_pending_rpcs wait (see Backlog); gRPC's own limit takes what the process
            # cannot pick up fast enough, and bursts between two reads of the queue: past twice
            # the setting it refuses some new calls, past four times all, at once and without
            # running any Python (the client sees CANCELLED: gRPC's way).
            ("grpc.server.max_pending_requests", 2 * settings.max_pending_rpcs),
            ("grpc.server.max_pending_requests_hard_limit", 4 * settings.max_pending_rpcs),
            # A connection silent this long gets a ping; one whose answer does not come in time
            # is closed, and with it the streams of a client whose network vanished without a
            # word (presence then shows its player as not connected).
            ("grpc.keepalive_time_ms", keepalive_ms),
            ("grpc.keepalive_timeout_ms", timeout_ms),
            # grpcio waits for a keepalive ping's answer as long as for any ping (60 s by
            # default), whatever keepalive_timeout_ms says: a client that vanished without
            # closing would be found out after 90 s instead of 40.
            ("grpc.http2.ping_timeout_ms", timeout_ms),
            # The clients' keepalive pings: one every 10 s is accepted (gRPC's receiving side;
            # by default a client pinging more often than every 5 minutes is sent away).
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
            # A second process started on a port in use must fail, not share it unnoticed.
            ("grpc.so_reuseport", 0),
        ]
        if settings.max_connection_age_seconds > 0:
            # A client keeps one connection, to the replica it first reached: replicas added
            # later would get only new clients. After this age (give or take 10 %) the server
            # sends GOAWAY: calls and streams in flight go on (no grace limit), and the client's
            # next call opens a new connection, which the Service (or the gateway's resolver)
            # may send to any replica.
            age_ms = int(settings.max_connection_age_seconds * 1000)
            options.append(("grpc.max_connection_age_ms", age_ms))
        # The servicer sheds calls past max_concurrent_rpcs and streams past max_streams, each
        # with its own reason, and the pending-call limit above bounds what waits in front of
        # it. gRPC's maximum_concurrent_rpcs is left unset: it would only repeat those limits,
        # at the price of an asyncio Condition on every accept and a task after every call
        # (grpc.aio's _ConcurrentRpcLimiter), paid on the hot path of every command.
        servers_before = _CallCounts.server_ids()
        self.grpc_server = grpc.aio.server(options=options)
        # This server's channelz id: the one that was not there before (made in the line above).
        created = _CallCounts.server_ids() - servers_before
        self._calls = _CallCounts(max(created)) if len(created) == 1 else None
        if self._calls is None:
            log.info("cannot see gRPC's call queue (channelz): only gRPC's limit sheds load")
        else:
            GRPC_CALLS.add(self._calls)
        self._call_counts = self._calls  # kept for stop: the load watch drops an unreadable one
        add_servicer(self.servicer, self.grpc_server)
        add_lenient(health_pb2_grpc.add_HealthServicer_to_server, self.health, self.grpc_server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name,
             reflection.SERVICE_NAME),
            self.grpc_server,
        )  # fmt: skip
        self.port = self.grpc_server.add_insecure_port(host_port(settings.host, settings.port))
        if self.port == 0:
            raise OSError("the address is in use or not on this host")
        self._gauge_task: asyncio.Task[None] | None = None
        self._lag_task: asyncio.Task[None] | None = None
        self._store_task: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        """``host:port`` that clients can dial."""
        return host_port(self.settings.host, self.port)

    async def start(self) -> None:
        """Start serving and report SERVING.

        When the store cannot be reached (Redis not up yet, say), the process serves anyway:
        health reports the process itself SERVING and ``hearts.v1.TableService`` NOT_SERVING,
        calls fail with STORE_UNAVAILABLE, and the store is tried again with backoff until it
        answers. So a replica started before its Redis waits instead of crash-looping, and a
        readiness probe on the service keeps traffic away until then.
        """
        ready = await self._connect_store()
        await self.grpc_server.start()
        serving, not_serving = (
            health_pb2.HealthCheckResponse.SERVING,
            health_pb2.HealthCheckResponse.NOT_SERVING,
        )
        await self.health.set("", serving)
        await self.health.set(SERVICE_NAME, serving if ready else not_serving)
        loop = asyncio.get_running_loop()
        self._gauge_task = loop.create_task(self._sample_gauges())
        self._lag_task = loop.create_task(self._watch_load())
        if self.webhooks is not None:
            self.webhooks.start()  # it waits out a store that does not answer yet
        self.app.start()  # the due tables' watch, which also waits out the store
        self.clock.start()  # read again every minute, and until a first reading succeeds
        if not ready:
            self._store_task = loop.create_task(self._until_store_answers())
        if ready:
            log.info("serving hearts.v1 on %s", self.address)
        else:
            log.warning(
                "listening on %s; hearts.v1 is NOT_SERVING until the table store answers",
                self.address,
            )

    async def _connect_store(self) -> bool:
        """Whether the store answers (and its background work started); logs why not.

        Raises :class:`StoreUnsupportedError` when it answers but cannot be used.
        """
        try:
            await self.store.ping()
            await self._read_store_clock()
            await self.store.start()
        except StoreUnavailableError as error:
            log.warning("the table store cannot be reached: %s", error)
            return False
        return True

    async def _read_store_clock(self) -> None:
        """Read the store's time; if the store refuses (a Redis user without ``TIME``), keep
        the host's clock and say so, rather than not serving at all."""
        try:
            await self.clock.sync()
        except StoreUnavailableError:
            raise
        except Exception as error:
            log.warning(
                "cannot read the table store's time (%s); using this host's clock, so keep "
                "every replica's clock synchronised",
                error,
            )

    async def _until_store_answers(self) -> None:
        """Try the store with backoff until it answers, then report the service SERVING."""
        delay = _STORE_RETRY_FIRST
        while True:
            await asyncio.sleep(delay)
            try:
                if await self._connect_store():
                    break
            except StoreUnsupportedError as error:
                # Retrying cannot help; the service stays NOT_SERVING and the log says why.
                log.error("cannot use the table store: %s", error)
                return
            delay = min(delay * 2, _STORE_RETRY_CAP)
        if not self.servicer.shutting_down:
            await self.health.set(SERVICE_NAME, health_pb2.HealthCheckResponse.SERVING)
            log.info("the table store answers: serving hearts.v1")

    async def _sample_gauges(self) -> None:
        fallbacks = timeouts = 0
        sent = dict.fromkeys(WEBHOOK_OUTCOMES, 0)
        while True:
            METRICS.bot_thinking.set(self.app.thinking)
            METRICS.bot_fallbacks.inc(self.app.bot_fallbacks - fallbacks)
            fallbacks = self.app.bot_fallbacks
            METRICS.turn_timeouts.inc(self.app.timed_out_moves - timeouts)
            timeouts = self.app.timed_out_moves
            if self.webhooks is not None:
                for outcome in WEBHOOK_OUTCOMES:
                    count = getattr(self.webhooks, outcome)
                    METRICS.webhooks.labels(outcome).inc(count - sent[outcome])
                    sent[outcome] = count
            try:
                METRICS.active_tables.set(await self.store.table_count())
            except Exception:  # a metrics sample must never take the server down
                log.debug("could not sample the table count", exc_info=True)
            await asyncio.sleep(5)

    async def _watch_load(self) -> None:
        """Keep the gauges of the event loop's busy share and lag up to date.

        The busy share is the part of wall time the loop's thread was not idle: on the CPU, or
        ready to run and waiting for one (smoothed over a few samples). Near 1 the process
        cannot keep up: calls then wait inside gRPC before any handler runs, where neither the
        handlers nor the request latency metric see them, so this is the gauge to alert and
        scale on. The lag is how late a timer runs: about one pass over the ready work.
        """
        loop = asyncio.get_running_loop()
        clock = _ThreadClock()
        wall, used = time.perf_counter(), clock.busy_seconds()
        busy = 0.0
        backlog = self.servicer.backlog
        polled_at = 0.0
        try:
            while True:
                started = loop.time()
                await asyncio.sleep(_LOAD_INTERVAL)
                lag = max(0.0, loop.time() - started - _LOAD_INTERVAL)
                now, now_used = time.perf_counter(), clock.busy_seconds()
                sample = min(1.0, (now_used - used) / max(now - wall, 1e-6))
                busy += (sample - busy) * _LOAD_SMOOTHING
                # Calls only pile up in gRPC while the loop is busy. A read of its counters costs
                # 0.05 ms idle but about 0.4 ms on a saturated two-core machine, so the queue is
                # read every 20 ms only while it is near the limit, every 100 ms while the loop
                # is busy, and once a second otherwise (when nothing can wait: the baseline).
                idle = sample < 0.5
                if 2 * backlog.waiting >= backlog.limit:
                    interval = _QUEUE_INTERVAL
                elif sample >= 0.9 or busy >= 0.8 or backlog.waiting:
                    interval = _BUSY_QUEUE_INTERVAL
                else:
                    interval = _IDLE_QUEUE_INTERVAL
                if self._calls is not None and now - polled_at >= interval:
                    polled_at = now
                    try:
                        calls_started, calls_ended = self._calls.read()
                    except Exception:  # its shape changed under a new grpcio: stop reading
                        log.warning("cannot read gRPC's call queue (channelz)", exc_info=True)
                        self._calls = None
                        calls_started = calls_ended = backlog.picked + backlog.offset
                    running = self.servicer.calls_in_flight + self.servicer.open_streams
                    backlog.sample(calls_started, calls_ended, running, idle=idle)
                    METRICS.pending_calls.set(backlog.waiting)
                wall, used = now, now_used
                METRICS.loop_lag.set(lag)
                METRICS.loop_busy.set(busy)
        finally:
            clock.close()

    async def stop(self, grace: float | None = None) -> None:
        """Drain: NOT_SERVING, end streams with SHUTTING_DOWN, finish calls, close the store."""
        grace = self.settings.grace_seconds if grace is None else grace
        deadline = asyncio.get_running_loop().time() + grace
        await self.health.enter_graceful_shutdown()
        self.servicer.shutting_down = True
        self.app.keep_presence()  # the players reconnect elsewhere: no "gone" flicker
        self.store.end_all_watchers()
        if self._call_counts is not None:
            # Read now: channelz forgets a server once it stopped. The drain's calls go uncounted
            # (the process ends after them anyway, and its counters with it).
            GRPC_CALLS.remove(self._call_counts)
            self._call_counts = None
        await self.grpc_server.stop(grace)
        for task in (self._gauge_task, self._lag_task, self._store_task):
            if task is not None:
                task.cancel()
        # What is left of the grace lets bots answer the moves players made before the stop.
        await self.app.aclose(max(0.0, deadline - asyncio.get_running_loop().time()))
        if self.webhooks is not None:
            await (
                self.webhooks.aclose()
            )  # what it did not send, another replica (or a restart) sends
        await self.clock.close()
        await self.store.close()
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        log.info("stopped")

    async def wait(self) -> None:
        """Until the server terminates."""
        await self.grpc_server.wait_for_termination()
