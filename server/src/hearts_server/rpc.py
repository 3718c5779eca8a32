"""The gRPC adapter: decode a request, call the application layer, encode the answer.

Nothing here knows the rules. It reads the seat token from ``authorization: Bearer`` metadata,
turns :class:`~hearts_server.errors.ServiceError` into a rich status (``google.rpc.ErrorInfo``
with the stable reason, plus ``hearts.v1.MoveRejection`` for a refused move), and turns any other
exception into INTERNAL with a generic message, the detail going to the log only. It also counts
requests, latency and open streams for Prometheus.
"""

from __future__ import annotations

import asyncio
import collections
import functools
import inspect
import ipaddress
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeAlias, TypeVar

import grpc
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status
from prometheus_client import Counter, Gauge, Histogram

from hearts.v1 import error_details_pb2 as hearts_errors_pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_server import convert
from hearts_server.errors import ERROR_DOMAIN, Code, ServiceError
from hearts_server.service import TableApp, caller_network, serialize_response

__all__ = [
    "METRICS",
    "Backlog",
    "Metrics",
    "TableServicer",
    "Undecodable",
    "add_lenient",
    "add_servicer",
    "bearer_token",
]

log = logging.getLogger(__name__)

R = TypeVar("R")


class Metrics:
    """The server's Prometheus metrics (one set per process)."""

    def __init__(self) -> None:
        self.requests = Counter(
            "hearts_requests", "RPCs handled, by method and status code", ["method", "code"]
        )
        self.latency = Histogram(
            "hearts_request_seconds",
            "RPC latency in seconds, by method (streams: time to the first message)",
            ["method"],
            buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
        )
        self.open_streams = Gauge("hearts_open_streams", "WatchTable streams open now")
        self.loop_lag = Gauge(
            "hearts_event_loop_lag_seconds",
            "How late the event loop ran a timer in the last sample: the time one pass over "
            "the ready work takes, which grows when the process is saturated",
        )
        self.loop_busy = Gauge(
            "hearts_event_loop_busy_ratio",
            "Share of wall time the event loop's thread was running or waiting for a CPU "
            "(smoothed over ~30 ms); near 1 the process cannot keep up",
        )
        self.active_tables = Gauge("hearts_active_tables", "Tables held by the store")
        self.bot_thinking = Gauge(
            "hearts_bot_decisions_thinking",
            "Monte Carlo bot decisions queued for or running in the bot workers (sampled every "
            "5 s); at its limit the heuristic decides instead",
        )
        self.bot_fallbacks = Counter(
            "hearts_bot_fallbacks",
            "Monte Carlo bot decisions the heuristic made instead: the workers were saturated "
            "(or one failed); a steady rate asks for more --bot-workers or replicas",
        )
        self.turn_timeouts = Counter(
            "hearts_turn_timeouts",
            "Moves the server made for players whose time ran out (Table.turn_timeout), "
            "counted where they were made (sampled every 5 s)",
        )
        self.webhooks = Counter(
            "hearts_webhooks",
            "Webhook posts by outcome: delivered (2xx), retried (another answer, a timeout or "
            "no connection; tried again later), dropped (the last attempt failed: 12 for a "
            "result, 4 for a turn); "
            "sampled every 5 s",
            ["outcome"],
        )
        self.shed = Counter(
            "hearts_shed",
            "Calls the server refused to protect itself, by reason: OVERLOADED (too many calls "
            "in flight or waiting in gRPC), TOO_MANY_STREAMS (--max-streams); not the callers' "
            "own limits (TOO_MANY_TABLES, TOO_MANY_REACTIONS), which are RESOURCE_EXHAUSTED too",
            ["reason"],
        )
        self.shed_overloaded = self.shed.labels("OVERLOADED")
        self.shed_streams = self.shed.labels("TOO_MANY_STREAMS")
        self.pending_calls = Gauge(
            "hearts_pending_calls",
            "Calls that reached gRPC but that the process has not picked up yet, at the last "
            "read (every 20 ms near --max-pending-rpcs, every 100 ms while the event loop is "
            "busy, else every second); they wait there unseen by the request latency metric",
        )


METRICS = Metrics()

_GRPC_CODES = {code: getattr(grpc.StatusCode, code.value) for code in Code}


# The longest name a table can have (``tables/`` and a 64-character id). A longer one is
# refused as INVALID_TABLE_NAME and not echoed in the ErrorInfo: gRPC caps the size of a
# status's trailers (8 KiB), and a name near that would turn the refusal into a bare
# RESOURCE_EXHAUSTED whose details the client cannot read.
_MAX_TABLE_NAME = len("tables/") + 64


def _status_for(error: ServiceError, table: str = "") -> grpc.Status:
    info = error_details_pb2.ErrorInfo(reason=error.reason, domain=ERROR_DOMAIN)
    if table and len(table) <= _MAX_TABLE_NAME:
        info.metadata["table"] = table
    details = [any_pb2.Any()]
    details[0].Pack(info)
    if error.legal_cards is not None:
        rejection = hearts_errors_pb.MoveRejection(
            reason=error.reason,
            legal_cards=[convert.card_to_pb(card) for card in error.legal_cards],
            cards_to_pass=error.cards_to_pass,
        )
        packed = any_pb2.Any()
        packed.Pack(rejection)
        details.append(packed)
    status = status_pb2.Status(
        code=_GRPC_CODES[error.code].value[0], message=error.message, details=details
    )
    return rpc_status.to_status(status)


_OVERLOADED: grpc.Status | None = None


def _overloaded() -> grpc.Status:
    """The refusal of a call the server cannot take now, built once: shedding must be cheap."""
    global _OVERLOADED  # noqa: PLW0603 - a lazily built constant
    if _OVERLOADED is None:
        _OVERLOADED = _status_for(
            ServiceError(
                "OVERLOADED", "the server is saturated; retry with backoff or another replica"
            )
        )
    return _OVERLOADED


class Backlog:
    """How many calls wait inside gRPC for the process, and whether to refuse the next one.

    A saturated process picks calls up one at a time, slower than they come: the rest wait in
    gRPC's queue, where no handler sees them. ``HeartsServer`` reads gRPC's count of calls
    started and ended (channelz) into :meth:`sample`: every 20 ms while the queue is near the
    limit, less often otherwise. In between, :meth:`over` counts down the calls picked up since;
    it does not guess at arrivals, which a client waiting for its answers (a closed loop) stops
    sending while the process stalls. So the servicer refuses calls with
    ``RESOURCE_EXHAUSTED`` / ``OVERLOADED`` while more than ``limit`` wait (up to every other
    call), and the queue stays short instead of growing until calls time out. gRPC's own
    pending-call limit, set higher, is the backstop (it answers ``CANCELLED``).

    Two counts bound the queue from above, and the smaller is taken, never more than gRPC's
    own hard limit on pending calls (``cap``), which no queue outgrows:

    * the calls started less those the process has picked up (:attr:`picked`, which the
      servicer counts), less an offset measured while the loop was idle, when nothing can
      wait. It drifts up with calls the process never sees (gRPC's own refusals, other
      services' calls) until the next idle sample;
    * the calls alive in gRPC (started less ended) less those the servicer is running, less
      an offset measured the same way: channelz counts a call that gRPC's pending limit refused
      as started but never as ended, so this count too drifts up with gRPC's refusals until the
      next idle sample. It also counts calls between the servicer and their end in gRPC, which
      grow with the rate: at 4,000 refusals a second, about a hundred.
    """

    __slots__ = (
        "alive_offset",
        "cap",
        "limit",
        "offset",
        "picked",
        "picked_at_sample",
        "refused",
        "waiting",
    )

    def __init__(self, limit: int, cap: int | None = None) -> None:
        self.limit = limit
        self.cap = 4 * limit if cap is None else cap  # gRPC's hard limit (see HeartsServer)
        self.waiting = 0  # calls waiting at the last sample
        self.picked = 0  # calls the process has picked up, ever
        self.picked_at_sample = 0
        self.offset = 0  # started less picked while idle: calls the servicer never sees
        self.alive_offset = 0  # alive less running while idle: refusals channelz never ends
        self.refused = False  # whether the last call picked up was refused

    def sample(self, started: int, ended: int, running: int, *, idle: bool) -> None:
        """Record gRPC's counts of calls started and ended.

        ``running``: the calls the servicer is in; ``idle``: whether the loop was idle for a
        while just before, so that no call can have been waiting.
        """
        if idle:
            self.offset = started - self.picked
            self.alive_offset = started - ended - running
        by_pickups = started - self.picked - self.offset
        by_alive = started - ended - running - self.alive_offset
        self.waiting = max(0, min(by_pickups, by_alive, self.cap))
        self.picked_at_sample = self.picked

    def over(self) -> bool:
        """Count one call picked up; whether to refuse it.

        It is refused when ``limit`` or more calls still wait, but never two in a row: a
        refusal costs the process about half of what a served call costs (gRPC's own work for
        a call), so refusing every call would leave a process at twice its capacity serving
        almost nothing. With at most every other call refused, a process at twice its capacity
        served about half of it in the benchmark; whatever it cannot pick up fast enough, gRPC's
        limit refuses.
        """
        self.picked += 1
        # Nothing waited at the last sample: the common case, answered without arithmetic.
        if not self.waiting or self.refused:
            self.refused = False
            return False
        self.refused = self.waiting - (self.picked - self.picked_at_sample) >= self.limit
        return self.refused


Network: TypeAlias = ipaddress.IPv4Network | ipaddress.IPv6Network


def client_address(context: grpc.aio.ServicerContext, trusted: Sequence[Network]) -> str:
    """The caller's IP address: the connection's peer, or, when the peer is a trusted proxy
    (the web gateway), the address it names in ``x-forwarded-for``. Empty when there is none
    (a Unix socket).

    The header's addresses run from the first client to the last proxy, each proxy adding the
    address it was called from; read from the right, the first one that is no trusted proxy is
    the caller. What the caller itself put at the left is never believed.
    """
    address = _ip(_peer_host(context.peer() or ""))
    if address is None:
        return ""
    forwarded: list[str] = []
    for key, value in context.invocation_metadata() or ():
        if key == "x-forwarded-for":
            forwarded.extend(part.strip() for part in str(value).split(","))
    while any(address in network for network in trusted) and forwarded:
        named = _ip(_host(forwarded.pop()))
        if named is None:
            break  # not an address: the proxy's own, the last one known, stands
        address = named
    return str(address)


def _peer_host(peer: str) -> str:
    """The host of a gRPC peer string: ``ipv4:10.0.0.7:5000``, ``ipv6:[::1]:5000``."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return ""
    host = rest.rpartition(":")[0]
    return host.removeprefix("[").removesuffix("]")


def _host(entry: str) -> str:
    """The address of an ``x-forwarded-for`` entry, which some proxies write with a port:
    ``203.0.113.7``, ``203.0.113.7:5000``, ``2001:db8::7``, ``[2001:db8::7]:5000``."""
    if entry.startswith("["):
        return entry[1:].partition("]")[0]
    if entry.count(":") == 1:
        return entry.partition(":")[0]
    return entry


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def bearer_token(context: grpc.aio.ServicerContext) -> str | None:
    """The token of ``authorization: Bearer <token>``, None when absent.

    More than one ``authorization`` header is refused rather than one of them picked.
    """
    found: str | None = None
    for key, value in context.invocation_metadata() or ():
        if key == "authorization":
            if found is not None:
                raise ServiceError("TOKEN_INVALID", "send one authorization header, not several")
            scheme, _, token = str(value).partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise ServiceError("TOKEN_INVALID", "authorization must be 'Bearer <token>'")
            found = token.strip()
    return found


def _unary(method: str) -> Callable[[Callable[..., Awaitable[R]]], Callable[..., Awaitable[R]]]:
    def wrap(handler: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
        # The metric children of this method, looked up once instead of per call.
        latency = METRICS.latency.labels(method)
        counters: dict[str, Any] = {}

        @functools.wraps(handler)
        async def run(self: TableServicer, request: Any, context: grpc.aio.ServicerContext) -> R:
            started = time.perf_counter()
            # Shed at once what the server cannot take now: queued behind a full event loop, the
            # call would only time out later, after costing as much as one that succeeds.
            if self.backlog.over() or self.calls_in_flight >= self.max_calls:
                counter = counters.get("RESOURCE_EXHAUSTED")
                if counter is None:
                    counter = counters["RESOURCE_EXHAUSTED"] = METRICS.requests.labels(
                        method, "RESOURCE_EXHAUSTED"
                    )
                counter.inc()
                METRICS.shed_overloaded.inc()
                # The refusal set on the context, not raised: a raised abort costs an exception
                # through gRPC's handler, and shedding must be cheap.
                status = _overloaded()
                context.set_code(status.code)
                context.set_details(status.details)
                context.set_trailing_metadata(status.trailing_metadata)
                return None  # type: ignore[return-value]  # gRPC sends no message after an error
            code = "OK"
            self.calls_in_flight += 1
            try:
                if request.__class__ is Undecodable:
                    raise request.refusal()
                return await handler(self, request, context)
            except ServiceError as error:
                code = error.code.value
                await context.abort_with_status(_status_for(error, getattr(request, "name", "")))
                raise  # unreachable: abort raises
            except asyncio.CancelledError:
                code = "CANCELLED"  # the client went away or its deadline passed
                raise
            except Exception as error:
                if isinstance(error, grpc.aio.AbortError):
                    raise
                code = "INTERNAL"
                log.exception("%s failed for %s", method, getattr(request, "name", "") or "-")
                await context.abort_with_status(
                    _status_for(ServiceError("INTERNAL", "internal error"))
                )
                raise
            finally:
                self.calls_in_flight -= 1
                counter = counters.get(code)
                if counter is None:
                    counter = counters[code] = METRICS.requests.labels(method, code)
                counter.inc()
                latency.observe(time.perf_counter() - started)

        return run

    return wrap


class TableServicer(api_grpc.TableServiceServicer):
    """``hearts.v1.TableService`` over a :class:`~hearts_server.service.TableApp`."""

    def __init__(
        self,
        app: TableApp,
        *,
        max_streams: int = 10_000,
        max_streams_per_client: int = 0,
        max_calls: int = 128,
        max_waiting: int = 64,
        trusted_proxies: Sequence[Network] = (),
    ) -> None:
        self.app = app
        self.trusted_proxies = tuple(trusted_proxies)
        self.max_streams = max_streams
        self.max_streams_per_client = max_streams_per_client
        self.streams_of: collections.Counter[str] = collections.Counter()  # per caller, if capped
        self.max_calls = max_calls
        self.backlog = Backlog(max_waiting)
        self.calls_in_flight = 0
        self.open_streams = 0
        self.shutting_down = False

    def _stream_caller(self, context: grpc.aio.ServicerContext) -> str | None:
        """Who a new stream counts against (``--max-streams-per-client``): its caller's address
        (an IPv6 caller's /64, as for the table quota), or None when there is no such limit or
        no address (a Unix socket)."""
        if not self.max_streams_per_client:
            return None
        return caller_network(client_address(context, self.trusted_proxies)) or None

    def _creator_address(self, context: grpc.aio.ServicerContext) -> str:
        """The caller's address for the table quota (--max-tables-per-hour), which alone asks
        who the caller is; empty without that limit."""
        return client_address(context, self.trusted_proxies) if self.app.counts_creates else ""

    @_unary("GetTable")
    async def GetTable(
        self, request: api.GetTableRequest, context: grpc.aio.ServicerContext
    ) -> api.GetTableResponse:
        return await self.app.get_table(request.name, bearer_token(context))

    @_unary("SuggestMove")
    async def SuggestMove(
        self, request: api.SuggestMoveRequest, context: grpc.aio.ServicerContext
    ) -> api.SuggestMoveResponse:
        return await self.app.suggest_move(request.name, bearer_token(context))

    @_unary("SendReaction")
    async def SendReaction(
        self, request: api.SendReactionRequest, context: grpc.aio.ServicerContext
    ) -> api.SendReactionResponse:
        return await self.app.send_reaction(request.name, bearer_token(context), request.reaction)

    @_unary("ListTables")
    async def ListTables(
        self, request: api.ListTablesRequest, context: grpc.aio.ServicerContext
    ) -> api.ListTablesResponse:
        return await self.app.list_tables(
            request.page_size, request.page_token, has_free_seat=request.has_free_seat
        )

    @_unary("CreateTable")
    async def CreateTable(
        self, request: api.CreateTableRequest, context: grpc.aio.ServicerContext
    ) -> api.CreateTableResponse:
        if not request.HasField("table"):  # REQUIRED (AIP-203); an empty Table is a default one
            raise ServiceError("INVALID_REQUEST", "table is required")
        return await self.app.create_table(
            request.table,
            request.request_id,
            identity_token=request.identity_token,
            client=self._creator_address(context),
        )

    @_unary("DeleteTable")
    async def DeleteTable(
        self, request: api.DeleteTableRequest, context: grpc.aio.ServicerContext
    ) -> api.DeleteTableResponse:
        return await self.app.delete_table(
            request.name, bearer_token(context), etag=request.etag, request_id=request.request_id
        )

    @_unary("JoinTable")
    async def JoinTable(
        self, request: api.JoinTableRequest, context: grpc.aio.ServicerContext
    ) -> api.JoinTableResponse:
        seat = request.seat if request.HasField("seat") else None
        return await self.app.join_table(
            request.name,
            seat,
            request.player_display_name,
            etag=request.etag,
            request_id=request.request_id,
            token=bearer_token(context),
            identity_token=request.identity_token,
        )

    @_unary("LeaveTable")
    async def LeaveTable(
        self, request: api.LeaveTableRequest, context: grpc.aio.ServicerContext
    ) -> api.LeaveTableResponse:
        return await self.app.leave_table(
            request.name, bearer_token(context), etag=request.etag, request_id=request.request_id
        )

    @_unary("RematchTable")
    async def RematchTable(
        self, request: api.RematchTableRequest, context: grpc.aio.ServicerContext
    ) -> api.RematchTableResponse:
        return await self.app.rematch_table(
            request.name,
            bearer_token(context),
            request_id=request.request_id,
            client=self._creator_address(context),
        )

    # A move's response may come serialized (add_servicer sends it as it is): wider than the
    # generated base class says.
    @_unary("PassCards")
    async def PassCards(  # type: ignore[override]
        self, request: api.PassCardsRequest, context: grpc.aio.ServicerContext
    ) -> api.PassCardsResponse | bytes:
        return await self.app.pass_cards(
            request.name,
            bearer_token(context),
            request.cards,
            etag=request.etag,
            request_id=request.request_id,
        )

    @_unary("PlayCard")
    async def PlayCard(  # type: ignore[override]
        self, request: api.PlayCardRequest, context: grpc.aio.ServicerContext
    ) -> api.PlayCardResponse | bytes:
        if not request.HasField("card"):
            raise ServiceError("INVALID_REQUEST", "card is required")
        return await self.app.play_card(
            request.name,
            bearer_token(context),
            request.card,
            etag=request.etag,
            request_id=request.request_id,
        )

    @_unary("QuickJoin")
    async def QuickJoin(
        self, request: api.QuickJoinRequest, context: grpc.aio.ServicerContext
    ) -> api.QuickJoinResponse:
        return await self.app.quick_join(
            request.rules if request.HasField("rules") else None,
            request.turn_timeout if request.HasField("turn_timeout") else None,
            request.player_display_name,
            fill_with_bots_after=(
                request.fill_with_bots_after if request.HasField("fill_with_bots_after") else None
            ),
            request_id=request.request_id,
            identity_token=request.identity_token,
            # It may make a table: the table quota's caller, as for CreateTable.
            client=self._creator_address(context),
        )

    @_unary("ListPlayerTables")
    async def ListPlayerTables(
        self, request: api.ListPlayerTablesRequest, context: grpc.aio.ServicerContext
    ) -> api.ListPlayerTablesResponse:
        return await self.app.list_player_tables(request.identity_token, request.page_size)

    async def WatchTable(
        self, request: api.WatchTableRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[api.WatchTableResponse]:
        started = time.perf_counter()
        code = "OK"
        first = True
        self.backlog.picked += 1  # counted as picked up, never refused for the queue's length
        self.open_streams += 1
        METRICS.open_streams.inc()
        caller: str | None = None
        try:
            caller = self._stream_caller(context)
            if caller is not None:
                self.streams_of[caller] += 1
            _refuse_undecodable(request)
            if self.shutting_down:
                raise ServiceError("SHUTTING_DOWN", "the server is stopping; reconnect")
            if self.open_streams > self.max_streams:
                METRICS.shed_streams.inc()
                raise ServiceError("TOO_MANY_STREAMS", "this server has too many open streams")
            if caller is not None and self.streams_of[caller] > self.max_streams_per_client:
                raise ServiceError(
                    "TOO_MANY_STREAMS_FROM_ADDRESS",
                    f"at most {self.max_streams_per_client} open streams from one address",
                )
            after = request.after_sequence if request.HasField("after_sequence") else None
            # Headers now, not with the first message, which a resume on a quiet table may not
            # send for minutes: clients that wait for them to hand out the stream (tonic) would
            # wait as long.
            await context.send_initial_metadata(())
            beat = request.heartbeat_interval if request.HasField("heartbeat_interval") else None
            watch = self.app.watch(request.name, bearer_token(context), after, beat)
            async for response in watch:
                yield response
                if first:
                    first = False
                    METRICS.latency.labels("WatchTable").observe(time.perf_counter() - started)
        except ServiceError as error:
            if error.reason == "STREAM_LAGGED" and self.shutting_down:
                error = ServiceError("SHUTTING_DOWN", "the server is stopping; reconnect")
            code = error.code.value
            await context.abort_with_status(_status_for(error, request.name))
        except asyncio.CancelledError:
            code = "CANCELLED"  # the client went away (the usual end of a stream)
            raise
        except Exception as error:
            if isinstance(error, grpc.aio.AbortError):
                raise
            code = "INTERNAL"
            log.exception("WatchTable failed for %s", request.name or "-")
            await context.abort_with_status(_status_for(ServiceError("INTERNAL", "internal error")))
        finally:
            self.open_streams -= 1
            METRICS.open_streams.dec()
            if caller is not None:
                self.streams_of[caller] -= 1
                if not self.streams_of[caller]:
                    del self.streams_of[caller]
            METRICS.requests.labels("WatchTable", code).inc()


def add_lenient(add_to_server: Callable[[Any, Any], None], servicer: Any, server: Any) -> None:
    """Register a generated service (``add_*_to_server``) whose unparseable requests are refused.

    As :func:`add_servicer` does for ``hearts.v1``: a request that does not parse is answered
    ``INVALID_ARGUMENT`` / ``INVALID_REQUEST``, not gRPC's ``UNKNOWN`` with a traceback in the
    log. For unary requests (gRPC's health service).
    """
    registrations = _Registrations()
    add_to_server(servicer, registrations)
    handlers = {name: _lenient(handler) for name, handler in registrations.handlers.items()}
    service = registrations.service
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)


async def _abort_undecodable(request: object, context: grpc.aio.ServicerContext) -> None:
    if isinstance(request, Undecodable):
        await context.abort_with_status(_status_for(request.refusal()))


def _lenient(handler: Any) -> Any:
    """``handler`` with a parser that cannot raise, and a refusal of what it could not parse."""
    if handler.request_streaming:
        return handler
    parse = _parser(handler.request_deserializer.__self__)  # a generated Message.FromString
    if handler.unary_unary is not None:
        unary = handler.unary_unary

        async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await _abort_undecodable(request, context)
            return await unary(request, context)

        return handler._replace(request_deserializer=parse, unary_unary=unary_unary)
    stream = handler.unary_stream
    if inspect.isasyncgenfunction(stream):  # answers by yielding

        async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await _abort_undecodable(request, context)
            async for response in stream(request, context):
                yield response

        return handler._replace(request_deserializer=parse, unary_stream=unary_stream)

    async def unary_write(request: Any, context: grpc.aio.ServicerContext) -> Any:
        await _abort_undecodable(request, context)  # answers by context.write, as Watch
        return await stream(request, context)

    return handler._replace(request_deserializer=parse, unary_stream=unary_write)


class _Registrations:
    """Stands in for a server to collect what a generated ``add_*_to_server`` registers."""

    def __init__(self) -> None:
        self.service = ""
        self.handlers: dict[str, Any] = {}

    def add_generic_rpc_handlers(self, handlers: object) -> None:
        pass  # built again from add_registered_method_handlers

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self.service = service
        self.handlers = handlers


class Undecodable:
    """A request whose bytes are not a message of its type (invalid UTF-8 in a string, a bad
    wire format): what :func:`add_servicer`'s request parsers return instead of raising.

    A parser that raises makes gRPC answer ``UNKNOWN`` without details, and log a traceback,
    before any handler runs; this way the handler refuses the call like any other malformed
    request, ``INVALID_ARGUMENT`` / ``INVALID_REQUEST``.
    """

    __slots__ = ("problem", "type_name")
    name = ""  # what the error path reads of a request

    def __init__(self, type_name: str, problem: str) -> None:
        self.type_name = type_name
        self.problem = problem

    def refusal(self) -> ServiceError:
        return ServiceError(
            "INVALID_REQUEST", f"the request is not a valid {self.type_name}: {self.problem}"
        )


def _refuse_undecodable(request: object) -> None:
    if isinstance(request, Undecodable):
        raise request.refusal()


def _parser(message_type: Any) -> Callable[[bytes], Any]:
    """``message_type.FromString``, returning an :class:`Undecodable` where it would raise."""
    parse = message_type.FromString
    type_name = message_type.DESCRIPTOR.full_name

    def deserialize(data: bytes) -> Any:
        try:
            return parse(data)
        except DecodeError as error:
            return Undecodable(type_name, str(error).rsplit(": ", 1)[-1])

    return deserialize


def add_servicer(servicer: TableServicer, server: grpc.aio.Server) -> None:
    """Register ``servicer`` as the generated ``add_TableServiceServicer_to_server`` does, except:

    * a response may also come already serialized (``bytes``), and gRPC then sends it as it is:
      a move answers that way (see ``service._move_response``) instead of parsing its view into
      a message that gRPC would serialize again;
    * a request that does not parse reaches the handler as an :class:`Undecodable`, which
      refuses it with a reason (gRPC would answer ``UNKNOWN``).
    """
    registrations = _Registrations()
    api_grpc.add_TableServiceServicer_to_server(servicer, registrations)
    methods = api.DESCRIPTOR.services_by_name["TableService"].methods_by_name
    handlers = {
        name: handler._replace(
            response_serializer=serialize_response,
            request_deserializer=_parser(getattr(api, methods[name].input_type.name)),
        )
        for name, handler in registrations.handlers.items()
    }
    service = registrations.service
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(service, handlers),))
    server.add_registered_method_handlers(service, handlers)
