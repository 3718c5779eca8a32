"""The application layer: tables, seats, moves and watching, independent of gRPC.

Every mutation is read-decide-write: load the record (one store round trip, which also finds a
remembered answer for a retried ``request_id``), decide with the pure engine, then commit the new
record and its events with a compare-and-set on the version (one more round trip). A lost race
re-reads and decides again, unless the client pinned an ``etag``: then it gets ABORTED. The
process keeps no game state between calls, so any replica can serve any table.

Bots: random and heuristic bots decide inside the request that gave them the turn, so their moves
are part of the same atomic commit (at a table with no human, one round of them: the driver
below commits the rest round by round). Monte Carlo bots think in a worker process, off the event
loop, and commit through the same compare-and-set, so a duplicate driver on another replica is
harmless. Any request that finds a Monte Carlo bot overdue restarts its driver (a refused move
included), and so does a sweep, once per grace period, of the tables watched on this replica.

Responses are ``hearts.v1`` messages built only from engine views (see :mod:`convert`); the
transport (status codes, metadata) belongs to :mod:`rpc`.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import collections
import concurrent.futures
import concurrent.futures.process
import contextlib
import dataclasses
import functools
import hashlib
import ipaddress
import logging
import re
import secrets
import time
import unicodedata
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any, NamedTuple, TypeVar

import orjson
from google.protobuf import duration_pb2
from google.protobuf.message import Message

from hearts.v1 import table_event_pb2 as events_pb
from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_engine import (
    DECK,
    Action,
    Card,
    Deal,
    Event,
    IllegalActionError,
    MalformedError,
    PassCards,
    Phase,
    PlayCard,
    Reason,
    Rules,
    SeatView,
    State,
    new_game,
    result,
    seats_to_act,
    seeded_deck,
    step,
    view,
)
from hearts_engine.bots import Bot, BotLevel, make_bot
from hearts_server import convert
from hearts_server import record as record_module
from hearts_server.errors import ServiceError, from_engine
from hearts_server.identity import Identity, IdentityVerifier
from hearts_server.record import (
    RECORD_SCHEMA,
    Occupant,
    SeatRecord,
    TableRecord,
    UnreadableRecordError,
    asked_anew,
)
from hearts_server.store.base import (
    EPHEMERAL_SEQUENCE,
    JOIN_CALLER_PREFIX,
    PLAYER_TABLES_KEPT,
    CommitOutcome,
    CreateResult,
    Loaded,
    OutboxItem,
    Published,
    Store,
    StoredEvent,
    StoreUnavailableError,
    SubscriptionLaggedError,
    SubscriptionLostError,
    TableGoneError,
)
from hearts_server.tokens import CREATOR, Claims, TokenCodec, TokenError
from hearts_server.webhooks import WebhookSender

__all__ = [
    "Caller",
    "RecordCache",
    "TableApp",
    "caller_network",
    "new_table_id",
    "parse_table_name",
    "serialize_response",
]

log = logging.getLogger(__name__)

M = TypeVar("M", bound=Message)

_MAX_NAME = 40  # player_display_name, as table.proto and table_service.proto document it
_MAX_NAME_GIVEN = 4 * _MAX_NAME  # a name as given, spaces to trim included
_MAX_TABLE_NAME = 200  # a table's display_name, as table.proto documents it
_MAX_REQUEST_ID = 128
_DEFAULT_PAGE = 50
_MAX_PAGE = 1000
_INLINE_LEVELS = frozenset({BotLevel.RANDOM, BotLevel.HEURISTIC})
_QUOTA_WINDOW_MS = 3_600_000  # --max-tables-per-hour's window
_QUICK_NAME = "Quick game"  # the display name of the tables QuickJoin makes
# How long a QuickJoin tries tables (each found full by then): well within a client's deadline
# (the Python client's is 10 s), so that a retry does not overlap the call it repeats ...
_QUICK_SECONDS = 5.0
_QUICK_ATTEMPTS = 1000  # ... and at most how many
# A seat may send this many reactions in a window that starts with the first of them.
REACTIONS_PER_WINDOW = 5
REACTION_WINDOW_MS = 10_000
_REACTIONS = frozenset(pb.Reaction.values()) - {pb.REACTION_UNSPECIFIED}
_DRIVER_STANDSTILL = 3
"""Bot turns in a row whose commit did not move the table before a driver gives up."""
# Table.turn_timeout's least value, as table.proto documents it (0: none); the greatest is the
# server's (see TableApp). A driver a turn timer started that could not finish tries again after
# _TIMER_RETRY_MS.
_MIN_TURN_TIMEOUT_MS = 1_000
# A watch's heartbeat_interval: a proxy's idle timeout is rarely under 30 s, and more than a
# few thousand streams beating every second would cost more than their events.
_MIN_HEARTBEAT_SECONDS = 5
_MAX_HEARTBEAT_SECONDS = 600
_TIMER_RETRY_MS = 2_000
_DUE_POLL_SECONDS = 1.0
"""How often a process asks the store for the tables due (see TableApp._watch_due)."""
_DUE_SLACK_MS = 1_000
"""How long after a deadline (a turn's, the wait for bots') its table is due to every process:
the one that wrote it runs its own timer and acts first, unless it died."""
_DUE_BATCH = 100
"""Tables claimed at most per poll; the rest wait for the next one."""
_SECURE = secrets.SystemRandom()


_STORE_LOG_EVERY = 5.0  # seconds between two log lines about the store being unavailable
_GONE_CHECK_SECONDS = 30.0  # how often each watched table is checked for having expired
# Presence (see watch): a player's open stream holds a lease this long, renewed this often by
# its process, which also ends the leases of other processes' streams that ran out unrenewed.
PRESENCE_LEASE_SECONDS = 30.0
PRESENCE_REFRESH_SECONDS = 10.0
# A stream that closes ends its lease this much later: a player who reconnects meanwhile (or
# opens and closes streams in a loop) is never told away, and stays one announcement.
PRESENCE_GRACE_SECONDS = 2.0
_PRESENCE_BATCH = 64  # tables whose presence a refresh updates at once


def _has_human(record: TableRecord) -> bool:
    """Whether a player (not a bot) holds a seat."""
    return any(seat.occupant is Occupant.HUMAN for seat in record.seats)


def _paused(record: TableRecord) -> bool:
    """Whether the game waits for a player to come back: the last one left mid-game.

    Its stand-in bots do not play on for nobody (a game to a high target is thousands of moves);
    a player who takes a stand-in's seat (JoinTable) starts it again. Tables made with bots
    only, which people watch, play on.
    """
    return (
        record.game is not None
        and not record.phase_over
        and not _has_human(record)
        and any(seat.stand_in for seat in record.seats)
    )


def _driven(record: TableRecord) -> bool:
    """Whether the bot driver may have moves to make at this table: a Monte Carlo bot's cards,
    or every bot's moves at a table made of bots only (see ``_advance``; a game whose last
    player left waits instead, see ``_paused``)."""
    if any(
        seat.occupant == Occupant.BOT and seat.bot_level not in _INLINE_LEVELS
        for seat in record.seats
    ):
        return True
    game = record.game
    return (
        game is not None
        and game.phase is not Phase.GAME_OVER
        and not _has_human(record)
        and not _paused(record)
    )


@dataclasses.dataclass(frozen=True, slots=True)
class Caller:
    """Who is calling, from a verified token: a seat, the creator, or a spectator."""

    claims: Claims | None

    @property
    def seat(self) -> int | None:
        """The caller's seat, if it holds a seat token."""
        if self.claims is None or self.claims.seat == CREATOR:
            return None
        return self.claims.seat

    @property
    def key(self) -> str:
        """The key the store remembers this caller's last request under.

        A seat's key carries its token's epoch: a seat is taken by another player after its
        player leaves, and a request id replayed with the old, revoked token must not be
        answered from the new player's memory (their view, hand included). The leaver's own
        retry of its ``LeaveTable`` still finds its answer under the old epoch.
        """
        claims = self.claims
        if claims is None:
            return "anon"
        if claims.seat == CREATOR:
            return f"creator:{claims.epoch}"
        return f"seat:{claims.seat}:{claims.epoch}"


@dataclasses.dataclass(slots=True)
class _Batch:
    """Events produced by one decision, each with its audience (None: everyone)."""

    now_ms: int
    items: list[tuple[int | None, bytes]] = dataclasses.field(default_factory=list)
    """Each event's audience and its serialized TableEvent."""

    def add(self, audience: int | None, event: events_pb.TableEvent | bytes) -> None:
        """Add an event, as a message or already serialized."""
        if not isinstance(event, bytes):
            event = event.SerializeToString()
        self.items.append((audience, event))

    def add_engine(self, events: Sequence[Event]) -> None:
        now_ms = self.now_ms
        for event in events:
            self.items.append((event.audience, convert.engine_event_bytes(event, now_ms)))

    def stored(self, first_sequence: int) -> list[StoredEvent]:
        return [
            StoredEvent(first_sequence + i, audience, payload)
            for i, (audience, payload) in enumerate(self.items)
        ]


@dataclasses.dataclass(frozen=True, slots=True)
class _Decision:
    """What a mutation decided: the new record, its events and how to answer."""

    record: TableRecord
    batch: _Batch
    respond: Callable[[TableRecord, int], Message | bytes]
    open_seats: bool | None = None
    game: State | None = None
    """A move's new game, when only the game changed: the record to commit is ``record`` with
    it (one copy of the record instead of two)."""
    write: bool = True
    """False for an answer that changes nothing (see :func:`_unwritten`)."""


def _unwritten(
    record: TableRecord, respond: Callable[[TableRecord, int], Message | bytes]
) -> _Decision:
    """A decision to answer without writing (a caller seated already gets a new token for its
    seat, say). ``_mutate`` believes it only of a record it read from the store, never of its
    cache alone: the answer is only as current as the record."""
    return _Decision(record, _Batch(0), respond, write=False)


def _decide_in_worker(level: str, seed: int, seat_view: SeatView) -> Action:
    """Run one bot decision (in a worker process: the argument and result are pickled)."""
    return make_bot(BotLevel(level), seed=seed).decide(seat_view)


def new_table_id(now_ms: int, last: str = "") -> str:
    """A table id that sorts by creation time: 12 hex digits of milliseconds, 10 random.

    Given the ``last`` id this process made, the new one sorts after it: within its millisecond
    (or if the clock stepped back) the random part is the last one plus one, as in ULID's
    monotonic mode, so the id's time stays the clock's.
    """
    last_ms = int(last[:12], 16) if last else -1
    if now_ms > last_ms:
        return f"{now_ms:012x}{secrets.token_hex(5)}"
    following = int(last[12:], 16) + 1
    if following >> 40:  # the random part ran out: the next millisecond
        return f"{last_ms + 1:012x}{secrets.token_hex(5)}"
    return f"{last_ms:012x}{following:010x}"


class _Cached:
    """The newest record this process has seen of one table, and whether to trust it unread."""

    __slots__ = ("record", "skip", "version")

    def __init__(self, version: int, record: TableRecord) -> None:
        self.version = version
        self.record = record
        self.skip = 0  # commands that read first before trying an unread commit again


class RecordCache:
    """Decoded records by table, newest version only, least recently used evicted.

    The compare-and-set lets exactly one commit make version ``v + 1``, and the Redis store
    also tells apart two records of one version (a Redis restored from older data can write a
    version again; see ``RedisStore._stamp_of``), so a record cached under its version never
    goes wrong; it only goes stale when another process commits (or Redis loses writes), which
    a read or a failed compare-and-set reveals.
    """

    FINISHED = 64
    """Finished games kept, apart from the rest (see :meth:`put`)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._entries: collections.OrderedDict[str, _Cached] = collections.OrderedDict()
        self._finished: collections.OrderedDict[str, _Cached] = collections.OrderedDict()

    def get(self, table_id: str) -> _Cached | None:
        entry = self._entries.get(table_id)
        if entry is not None:
            self._entries.move_to_end(table_id)
            return entry
        entry = self._finished.get(table_id)
        if entry is not None:
            self._finished.move_to_end(table_id)
        return entry

    def put(self, table_id: str, version: int, record: TableRecord) -> _Cached | None:
        if self._size <= 0:
            return None
        entries, size = self._entries, self._size
        if record.phase_over:
            # A finished game takes no more moves, and its record is the largest (every round
            # of the game: about 285 KB decoded at a target of 1,000): a cache of thousands
            # would outgrow a replica's memory limit. The newest few are kept apart, for the
            # reads of the results right after a game (decoding one again costs milliseconds).
            if self._entries.pop(table_id, None) is not None:
                _forget(table_id)
            entries, size = self._finished, min(size, self.FINISHED)
        else:
            self._finished.pop(table_id, None)  # a table made again under its name
        entry = entries.get(table_id)
        if entry is not None:
            if version < entry.version:
                return entry  # a slower reader must not put an older version back
            entry.version, entry.record = version, record
            entries.move_to_end(table_id)
            return entry
        entry = entries[table_id] = _Cached(version, record)
        if len(entries) > size:
            _forget(entries.popitem(last=False)[0])
        return entry

    def drop(self, table_id: str, *, forget: bool = True) -> None:
        """Drop the table's record, and (``forget``) its kept encodings with it."""
        self._finished.pop(table_id, None)
        if self._entries.pop(table_id, None) is not None and forget:
            _forget(table_id)

    def __len__(self) -> int:
        return len(self._entries) + len(self._finished)


def _forget(table_id: str) -> None:
    """Drop the encodings kept for a table whose record left the cache: they live as long."""
    record_module.forget(table_id)
    convert.forget(table_id)


_SPECULATION_BACKOFF = 8
"""After an unread commit lost its race, this many commands of the table read first."""


def _is_table_id(text: str) -> bool:
    """Whether ``text`` has the shape of a table id: 1 to 64 ASCII letters and digits."""
    return 0 < len(text) <= 64 and text.isalnum() and text.isascii()


def parse_table_name(name: str) -> str:
    """The table id of ``tables/{table}``; INVALID_ARGUMENT otherwise."""
    prefix = "tables/"
    table_id = name[len(prefix) :] if name.startswith(prefix) else ""
    if not _is_table_id(table_id):
        shown = repr(name[:80]) + (f" ({len(name)} characters)" if len(name) > 80 else "")
        raise ServiceError("INVALID_TABLE_NAME", f"not a table name: {shown} (want tables/ID)")
    return table_id


class TableApp:
    """The Hearts table service, over any :class:`~hearts_server.store.base.Store`."""

    def __init__(
        self,
        store: Store,
        tokens: TokenCodec,
        *,
        bot_executor: concurrent.futures.Executor | None = None,
        executor_factory: Callable[[], concurrent.futures.Executor] | None = None,
        clock: Callable[[], float] = time.time,
        max_retries: int = 16,
        slow_bot_grace_seconds: float = 5.0,
        record_cache_size: int = 4096,
        record_schema: int = RECORD_SCHEMA,
        max_thinking: int = 32,
        max_turn_timeout_seconds: float = 86_400.0,
        identity: IdentityVerifier | None = None,
        webhooks: WebhookSender | None = None,
        max_tables_per_hour: int = 0,
        table_ttl_seconds: float = 3600.0,
        finished_table_ttl_seconds: float = 600.0,
        presence_lease_seconds: float = PRESENCE_LEASE_SECONDS,
        presence_refresh_seconds: float = PRESENCE_REFRESH_SECONDS,
        presence_grace_seconds: float = PRESENCE_GRACE_SECONDS,
    ) -> None:
        self.store = store
        self._table_ttl_ms = int(table_ttl_seconds * 1000)
        # No table expires sooner after its creation than this (see _make_claimed_table).
        self._shortest_life_ms = int(min(table_ttl_seconds, finished_table_ttl_seconds) * 1000)
        # A player's list of tables outlives any one idle period of its tables (a game goes on
        # as long as moves come): it lives a month from its last write or read, or longer.
        self._player_list_ttl_ms = max(self._table_ttl_ms, _PLAYER_LIST_TTL_MS)
        self.identity = identity
        self.webhooks = webhooks
        self._max_tables_per_hour = max_tables_per_hour
        self.records = RecordCache(record_cache_size)
        self._record_schema = record_schema
        self._last_table_id = ""
        self.tokens = tokens
        self._executor = bot_executor
        self._executor_factory = executor_factory
        self._clock = clock
        self._max_retries = max_retries
        self._max_turn_timeout_ms = int(max_turn_timeout_seconds * 1000)
        self._slow_bot_grace_ms = int(slow_bot_grace_seconds * 1000)
        self._drivers: dict[str, asyncio.Task[None]] = {}
        # Tables whose running driver was started by a timer but should now play a slow bot at
        # once (see _start_driver).
        self._drive_now: set[str] = set()
        # Tables with a Monte Carlo bot that this process has watchers of, and how many; the
        # sweeper checks them for an overdue bot (see _sweep).
        self._slow_watched: collections.Counter[str] = collections.Counter()
        # Every table watched here, and how many watch it: the sweeper also ends the streams of
        # tables that expired (expiry publishes nothing). Checked every _GONE_CHECK_SECONDS.
        self._watched: collections.Counter[str] = collections.Counter()
        self._gone_check_seconds = _GONE_CHECK_SECONDS
        self._sweeper: asyncio.Task[None] | None = None
        self._due_watch: asyncio.Task[None] | None = None
        # Per table with a turn timeout whose deadline this process knows of: the deadline and
        # the timer that starts the driver then (see _arm_turn_timer).
        self._turn_timers: dict[str, tuple[int, asyncio.TimerHandle]] = {}
        self._draining = False  # see aclose
        # Presence: the leases this process holds, per table ((seat, lease id) -> how many of
        # its open streams hold it), how many times each was let go (see _end_lease), and
        # whether streams that end from now on leave theirs to run out (see keep_presence).
        # One lease per seat, token epoch and process, not per stream: a seat's streams all
        # say the same, and one token opening thousands of streams must not grow the set that
        # every presence update reads whole.
        self._lease_owner = secrets.token_hex(8)
        self._leases: dict[str, dict[tuple[int, str], int]] = {}
        self._lease_ended: dict[tuple[str, int, str], int] = {}
        self._presence_lease_ms = int(presence_lease_seconds * 1000)
        self._presence_refresh_seconds = presence_refresh_seconds
        self._presence_grace_seconds = presence_grace_seconds
        self._presence_kept = False
        self._presence_draining = asyncio.Event()  # set with _presence_kept: see _drop_lease
        self._lease_drops: set[asyncio.Task[None]] = set()
        # Monte Carlo decisions waiting for or in a worker, at most max_thinking (see _think),
        # and how many the heuristic made instead; the server samples both for its metrics.
        self.thinking = 0
        self._max_thinking = max_thinking
        self.bot_fallbacks = 0
        self.timed_out_moves = 0  # moves made for players whose time ran out
        self._store_logged_at = -_STORE_LOG_EVERY
        self._unreadable_logged_at = -_STORE_LOG_EVERY

    # ------------------------------------------------------------------ identity

    def caller(self, token: str | None, table_id: str | None = None) -> Caller:
        """The caller behind ``token`` (None: a spectator); checks the token is for this table."""
        if not token:
            return Caller(None)
        try:
            claims = self.tokens.verify(token)
        except TokenError as error:
            raise ServiceError(error.reason, str(error)) from None
        if table_id is not None and claims.table_id != table_id:
            raise ServiceError("WRONG_TABLE", "the token belongs to another table")
        return Caller(claims)

    @staticmethod
    def _check_epoch(record: TableRecord, caller: Caller) -> None:
        claims = caller.claims
        if claims is None:
            return
        if claims.seat == CREATOR:
            current = record.creator_epoch
        else:
            seat = record.seats[claims.seat]
            current = seat.epoch if seat.occupant == Occupant.HUMAN else -1
        if claims.epoch != current:
            raise ServiceError("TOKEN_REVOKED", "the token's seat was left; join again")

    def _player(self, record: TableRecord, caller: Caller) -> int:
        self._check_epoch(record, caller)
        if caller.seat is None:
            if caller.claims is None:
                raise ServiceError("TOKEN_MISSING", "send the seat token as authorization: Bearer")
            raise ServiceError("NOT_A_PLAYER", "a creator token holds no seat; join one")
        return caller.seat

    async def _identity(self, token: str) -> Identity | None:
        """The verified identity of an ``identity_token``; None for none, where allowed."""
        if not token:
            if self.identity is not None and self.identity.required:
                raise ServiceError(
                    "IDENTITY_REQUIRED",
                    "this server admits signed-in players only: send an identity_token",
                )
            return None
        if self.identity is None:
            raise ServiceError(
                "IDENTITY_NOT_ACCEPTED",
                "this server checks no identity tokens; leave identity_token empty",
            )
        return await self.identity.verify(token)

    # ------------------------------------------------------------------ reading

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _now_after(self, record: TableRecord) -> int:
        """The time of a table's next events: now, but never before its last update.

        Replicas' clocks differ a little (more if one is off): a table's event times and
        update time still never go backwards when another replica writes it next.
        """
        return max(int(self._clock() * 1000), record.update_ms)

    async def _load(
        self, table_id: str, *, caller: str | None = None, request_id: str | None = None
    ) -> Loaded:
        """The table as stored now; ``data`` is empty when the cached record is current."""
        cached = self.records.get(table_id)
        try:
            loaded = await self.store.load(
                table_id,
                caller=caller,
                request_id=request_id,
                known_version=0 if cached is None else cached.version,
            )
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        if loaded.data:
            # The store sent the record: the cached one is not known to be it (a Redis that lost
            # writes can hold another record of the same version). _record puts it back decoded;
            # a caller that returns early (a replay, a stale etag) leaves no stale entry behind.
            # The encodings stay: they are checked by identity and equality before any reuse,
            # and the record is put back at once.
            self.records.drop(table_id, forget=False)
        if not loaded.exists and loaded.replay is None:
            self.records.drop(table_id)
            raise ServiceError("TABLE_NOT_FOUND", f"no table tables/{table_id}")
        return loaded

    def _store_unavailable(self, error: StoreUnavailableError) -> ServiceError:
        """The API's STORE_UNAVAILABLE for ``error``, which is logged (at most every 5 s).

        The client hears only that the store is unavailable; the operator reads why (Redis down,
        a timeout, a read-only replica, OOM at maxmemory).
        """
        now = time.monotonic()
        if now - self._store_logged_at >= _STORE_LOG_EVERY:
            self._store_logged_at = now
            log.warning("the table store is unavailable: %s", error)
        return ServiceError("STORE_UNAVAILABLE", "the table store is unavailable")

    def _record(self, table_id: str, loaded: Loaded) -> TableRecord | None:
        """The record of a load, from the cache when the store left the bytes out.

        None when it did and the cached record went away meanwhile (other tables' reads evicted
        it while this one waited for the store): the caller loads again, and since nothing is
        cached now, the store sends the bytes.
        """
        if not loaded.data:
            cached = self.records.get(table_id)
            if cached is None or cached.version != loaded.version:
                self.records.drop(table_id, forget=False)  # its encodings are needed at once
                return None
            return cached.record
        try:
            record = TableRecord.from_json(loaded.data)
        except UnreadableRecordError as error:
            raise self._unreadable(table_id, error) from None
        self.records.put(table_id, loaded.version, record)
        return record

    def _unreadable(self, table_id: str, error: UnreadableRecordError) -> ServiceError:
        """The API's error for a stored record this version cannot read, which is logged.

        A newer schema is what a rolling upgrade shows an old replica: the caller retries, and a
        new replica answers. Anything else is a damaged record, for the operator to look at.
        """
        now = time.monotonic()
        if now - self._unreadable_logged_at >= _STORE_LOG_EVERY:
            self._unreadable_logged_at = now
            log.error("cannot read the record of table %s: %s", table_id, error)
        if error.newer:
            return ServiceError(
                "RECORD_UNSUPPORTED", "a newer server version wrote this table; retry"
            )
        return ServiceError("RECORD_UNREADABLE", "the stored table cannot be read")

    async def _read(self, table_id: str) -> tuple[int, TableRecord]:
        """The current version and record (a read of one round trip; the cache saves decoding)."""
        for _ in range(self._max_retries):
            loaded = await self._load(table_id)
            record = self._record(table_id, loaded)
            if record is not None:
                return loaded.version, record
        raise ServiceError("CONFLICT", "the table is too busy; try again")

    async def get_table(self, name: str, token: str | None) -> api.GetTableResponse:
        """The caller's view of a table."""
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)
        version, record = await self._read(table_id)
        self._check_epoch(record, caller)
        self._kick_overdue(record)
        response = api.GetTableResponse()
        response.view.MergeFromString(convert.view_bytes(record, version, caller.seat))
        return response

    async def suggest_move(self, name: str, token: str | None) -> api.SuggestMoveResponse:
        """The move a heuristic bot would make in the caller's seat, from its view only (the
        move the turn timer makes); it changes nothing."""
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)
        version, record = await self._read(table_id)
        seat = self._player(record, caller)
        self._kick_overdue(record)
        state = record.game
        if state is None:
            raise ServiceError("WRONG_PHASE", "the game starts when all four seats are taken")
        if state.phase is Phase.PLAYING:
            if state.turn != seat:
                raise ServiceError("NOT_YOUR_TURN", f"it is seat {state.turn}'s turn")
        elif state.phase is Phase.PASSING:
            if seat not in seats_to_act(state):
                raise ServiceError("ALREADY_PASSED", "this seat has passed its cards")
        elif state.phase is Phase.GAME_OVER:
            raise ServiceError("GAME_OVER", "the game is over")
        else:  # dealing: only while the last player is away from a bots' table
            raise ServiceError("WRONG_PHASE", "no move is owed while the round is dealt")
        action = self._bot(BotLevel.HEURISTIC, record.bot_seed + seat).decide(view(state, seat))
        if isinstance(action, PlayCard):
            cards: Sequence[Card] = (action.card,)
        else:
            assert isinstance(action, PassCards)  # a bot never deals
            cards = action.cards
        return api.SuggestMoveResponse(
            cards=[convert.card_to_pb(card) for card in cards], etag=str(version)
        )

    async def send_reaction(
        self, name: str, token: str | None, reaction: int
    ) -> api.SendReactionResponse:
        """Show a player's reaction to everyone watching the table (unstored; rate-limited)."""
        table_id = parse_table_name(name)
        if reaction not in _REACTIONS:
            raise ServiceError("INVALID_REQUEST", f"no reaction {reaction}")
        caller = self.caller(token, table_id)
        for _ in range(self._max_retries):
            version, record = await self._read(table_id)
            seat = self._player(record, caller)
            # Never before the table's last event: watchers read event times as a timeline.
            payload = convert.reaction_bytes(seat, reaction, self._now_after(record))
            try:
                # Sent only while the table is at the version that seated the caller: a
                # reaction never follows its sender's PlayerLeft, nor speaks for the next one
                # to sit there.
                published = await self.store.publish_ephemeral(
                    table_id,
                    payload,
                    expected_version=version,
                    sender=str(seat),
                    limit=REACTIONS_PER_WINDOW,
                    window_ms=REACTION_WINDOW_MS,
                )
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            if published is Published.SENT:
                return api.SendReactionResponse()
            if published is Published.LIMITED:
                raise ServiceError(
                    "TOO_MANY_REACTIONS",
                    f"at most {REACTIONS_PER_WINDOW} reactions per seat every "
                    f"{REACTION_WINDOW_MS // 1000} seconds",
                )
            # The table moved on meanwhile: read it again (the token may be revoked now).
        raise ServiceError("CONFLICT", "the table is too busy; try again")

    async def list_tables(
        self, page_size: int, page_token: str, *, has_free_seat: bool
    ) -> api.ListTablesResponse:
        """One page of tables, newest first (AIP-158)."""
        if page_size < 0:
            raise ServiceError("INVALID_REQUEST", "page_size must not be negative")
        size = min(page_size or _DEFAULT_PAGE, _MAX_PAGE)
        before = _decode_page_token(page_token, has_free_seat) if page_token else None
        response = api.ListTablesResponse()
        more = True
        while len(response.tables) < size and more:
            try:
                rows, more = await self.store.list_tables(
                    open_only=has_free_seat, before_id=before, limit=size - len(response.tables)
                )
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            for table_id, version, data in rows:
                before = table_id
                record = self._listed_record(table_id, version, data)
                if record is None or record.unlisted:
                    continue  # unreadable (logged), or in an index by mistake (an older replica)
                if has_free_seat and not record.has_free_seat:
                    continue  # the open-seat index is a hint; the record decides
                table = self._listed_table(record, version)
                if table is not None:
                    response.tables.append(table)
            if not rows:
                break
        if more and before is not None:
            response.next_page_token = _encode_page_token(before, has_free_seat)
        return response

    async def list_player_tables(
        self, identity_token: str, page_size: int
    ) -> api.ListPlayerTablesResponse:
        """The tables where the player of ``identity_token`` holds a seat, the most recently
        joined first (the store keeps a player's last ``PLAYER_TABLES_KEPT``)."""
        if page_size < 0:
            raise ServiceError("INVALID_REQUEST", "page_size must not be negative")
        if self.identity is None:
            raise ServiceError(
                "IDENTITY_NOT_ACCEPTED",
                "this server checks no identity tokens, so it keeps no player's tables",
            )
        if not identity_token:
            raise ServiceError(
                "IDENTITY_REQUIRED", "send the player's identity_token to list their tables"
            )
        identity = await self.identity.verify(identity_token)
        size = min(page_size or _DEFAULT_PAGE, PLAYER_TABLES_KEPT)
        try:
            rows = await self.store.player_tables(
                identity.player_id, ttl_ms=self._player_list_ttl_ms
            )
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        response = api.ListPlayerTablesResponse()
        for table_id, version, data in rows:
            record = self._listed_record(table_id, version, data)
            # The record decides: the player may have left the seat since.
            seat = None if record is None else self._held_by(record, identity.player_id)
            if record is None or seat is None:
                continue
            table = self._listed_table(record, version)
            if table is not None:
                response.tables.add(table=table, seat=seat)
                if len(response.tables) == size:
                    break
        return response

    def _listed_record(self, table_id: str, version: int, data: bytes) -> TableRecord | None:
        """A listing's record: the cached one when current, else decoded as a summary (its
        finished rounds not read; see ``Store.list_tables``); None (logged) when unreadable,
        so that one damaged table does not fail the whole list."""
        cached = self.records.get(table_id)
        if cached is not None and cached.version == version:
            return cached.record
        try:
            return TableRecord.from_json(data, summary=True)
        except UnreadableRecordError as error:
            self._unreadable(table_id, error)
            return None

    def _listed_table(self, record: TableRecord, version: int) -> pb.Table | None:
        try:
            return convert.table_to_pb(record, version)
        except Exception as error:  # damage from_json did not see: one table, not all
            self._unreadable(record.table_id, UnreadableRecordError(repr(error), newer=False))
            return None

    # ------------------------------------------------------------------ the mutation loop

    async def _mutate(
        self,
        table_id: str,
        *,
        caller_key: str,
        request_id: str,
        etag: str,
        decide: Callable[[TableRecord, int], _Decision],
        response_type: type[M],
        fingerprint: bytes,
    ) -> M | bytes:
        """Decide on the table's newest record and commit the result; the decision's response,
        which a move gives already serialized (see :func:`_move_response`).

        ``fingerprint`` identifies the request (see :func:`_fingerprint`): a retry must repeat it
        to be answered from the store's memory of ``request_id``."""
        _check_request_id(request_id)
        if etag and not (etag.isascii() and etag.isdigit()):
            # Never a table's etag (a version number), and it must not reach a fingerprint's
            # separators: refused before a remembered response could answer it.
            raise ServiceError("ETAG_MISMATCH", "the table changed since that etag; re-read it")
        # The common case needs no read: when this process made (or last read) the table's
        # newest version, decide on that record and commit against its version at once. The
        # compare-and-set refuses the commit if the table moved on meanwhile, and the commit
        # script answers a retried request id from its memory, as a read would. Only what the
        # store confirms is ever answered: a refusal decided on the unread record is decided
        # again on a fresh read, and so is a lost race (which also makes the next commands of
        # this table read first, for a while: another replica is writing it too).
        cached = self.records.get(table_id)
        unread = (
            cached is not None and cached.skip == 0 and (not etag or etag == str(cached.version))
        )
        for _ in range(self._max_retries):
            if unread:
                assert cached is not None
                version, record = cached.version, cached.record
            else:
                loaded = await self._load(
                    table_id, caller=caller_key, request_id=request_id or None
                )
                if loaded.replay is not None:
                    # A retry whose first answer was lost on the way (a Redis timeout, say),
                    # perhaps on another replica: the timer the write called for may be armed
                    # nowhere. A driver as a timer's reads the table and arms it, and takes over
                    # only a bot that is overdue (the first replica drives the others).
                    self._start_driver(table_id, by_timer=True)
                    return _replayed(response_type, loaded.replay, fingerprint)
                if etag and etag != str(loaded.version):
                    raise ServiceError(
                        "ETAG_MISMATCH", "the table changed since that etag; re-read it"
                    )
                version = loaded.version
                fresh = self._record(table_id, loaded)
                if fresh is None:
                    continue
                record = fresh
            try:
                decision = decide(record, version)
            except ServiceError:
                if unread:
                    unread = False
                    continue
                # A player refused because a Monte Carlo bot owes a move that nobody is making
                # (its driver's replica died) gets that bot going again.
                self._kick_overdue(record)
                raise
            if not decision.write:
                if unread:
                    unread = False
                    continue
                self._kick_overdue(record)  # as a read does (a seat held already, say)
                return decision.respond(record, version)  # type: ignore[return-value]
            stored = decision.batch.stored(record.sequence + 1)
            decided = decision.record
            new_record = decided.evolve(
                decided.game if decision.game is None else decision.game,
                record.sequence + len(stored),
                decision.batch.now_ms,
                started_from=record,
            )
            response = decision.respond(new_record, version + 1)
            outbox = self._outbox(record, new_record, decision.batch.now_ms)
            try:
                result = await self.store.commit(
                    table_id,
                    expected_version=version,
                    data=new_record.to_json(schema=self._record_schema),
                    events=stored,
                    caller=caller_key,
                    request_id=request_id or None,
                    response=(
                        _remembered(fingerprint, serialize_response(response))
                        if request_id
                        else None
                    ),
                    # An unlisted table is in no listing index to keep up to date.
                    open_seats=None if decided.unlisted else decision.open_seats,
                    finished=new_record.phase_over,
                    outbox=outbox,
                    due_ms=self._due_ms(new_record),
                )
            except StoreUnavailableError as error:
                # The write may have applied with its answer lost (a timeout), and then no one
                # would start the bots or the timer it called for until the table is read.
                self._drive_after_cancel(new_record)
                raise self._store_unavailable(error) from None
            except asyncio.CancelledError:
                # The caller went away (its deadline) with the commit sent: it may have applied,
                # and then a bot or a turn timer would wait for a kick that nobody gives (a
                # table of bots has no one to read it).
                self._drive_after_cancel(new_record)
                raise
            if result.outcome == CommitOutcome.APPLIED:
                if outbox is not None and self.webhooks is not None:
                    self.webhooks.wake()
                entry = self.records.put(table_id, version + 1, new_record)
                if entry is not None and not unread:
                    entry.skip = max(0, entry.skip - 1)
                self._maybe_drive(new_record)
                return response  # type: ignore[return-value]  # a message is an M
            if result.outcome == CommitOutcome.REPLAYED and result.replay is not None:
                self._start_driver(table_id, by_timer=True)  # as for a replay read above
                return _replayed(response_type, result.replay, fingerprint)
            if unread:
                # Stale: read, then decide again (the read also answers not-found and etags).
                unread = False
                if cached is not None:
                    cached.skip = _SPECULATION_BACKOFF
                continue
            # Lost the race: the next read answers a pinned etag (ETAG_MISMATCH), and a table
            # that expired or was deleted meanwhile (TABLE_NOT_FOUND).
        raise ServiceError("CONFLICT", "the table is too busy; try again")

    # ------------------------------------------------------------------ creating and seating

    async def create_table(
        self, table: pb.Table, request_id: str, *, identity_token: str = "", client: str = ""
    ) -> api.CreateTableResponse:
        """Create a table; seats given as bots start as bots, the rest are free.

        ``client`` is the caller's network address (for the quota of tables an address may
        create, when the caller has no identity); empty when unknown.
        """
        _check_request_id(request_id)
        identity = await self._identity(identity_token)  # a server may admit signed-in callers
        # A signed-in caller's id goes first, under a method name of its own: another caller
        # who repeats the request and its id is refused, never answered with this creator token.
        fingerprint = (
            _fingerprint(request_id, b"CreateTable", table)
            if identity is None
            else _fingerprint(request_id, b"CreateTable/identity", identity.player_id, table)
        )
        rules = _rules(table)
        if not 0 <= table.dealer <= 3:
            raise ServiceError("INVALID_REQUEST", "dealer must be a seat, 0 to 3")
        if len(table.display_name) > _MAX_TABLE_NAME:
            raise ServiceError(
                "INVALID_REQUEST", f"display_name is at most {_MAX_TABLE_NAME} characters"
            )
        if _has_control_characters(table.display_name):
            raise ServiceError("INVALID_REQUEST", "display_name: no control characters")
        turn_timeout_ms = _turn_timeout_ms(table, self._max_turn_timeout_ms)
        fill_after_ms = _fill_after_ms(table, self._max_turn_timeout_ms)
        if table.turn_notifications and self.webhooks is None:
            raise ServiceError(
                "WEBHOOKS_DISABLED",
                "turn_notifications are webhooks, and this server sends none (--webhook-url)",
            )
        seats = [SeatRecord() for _ in range(4)]
        given: set[int] = set()
        for seat in table.seats:
            if not 0 <= seat.seat <= 3:
                raise ServiceError("INVALID_REQUEST", f"no seat {seat.seat}; seats are 0 to 3")
            if seat.seat in given:  # also bounds the work: at most four entries are read
                raise ServiceError("INVALID_REQUEST", f"seat {seat.seat} is given twice")
            given.add(seat.seat)
            if seat.occupant == pb.SEAT_OCCUPANT_BOT:
                level = convert.bot_level_from_pb(seat.bot_level)
                # Checked and trimmed as a player's name is, except that an empty or blank
                # one is the server's to pick.
                asked = seat.player_display_name
                if len(asked) > _MAX_NAME_GIVEN or asked.strip() or _has_control_characters(asked):
                    name = _player_name(asked)
                else:
                    name = f"{level.value.title()} bot"
                seats[seat.seat] = SeatRecord(Occupant.BOT, name, level)
            elif seat.occupant not in (pb.SEAT_OCCUPANT_EMPTY, pb.SEAT_OCCUPANT_UNSPECIFIED):
                raise ServiceError("INVALID_REQUEST", "seats may only start as bots or empty")
        await self._count_table_created(identity, client, request_id)
        now = self._now_ms()
        table_id = self._new_table_id(unlisted=table.unlisted, now_ms=now)

        def new_table(table_id: str, now: int) -> tuple[TableRecord, list[StoredEvent]]:
            """The table's first record and events, as the request makes them."""
            record = TableRecord(
                table_id=table_id,
                display_name=table.display_name or "Hearts table",
                rules=rules,
                first_dealer=table.dealer,
                seats=tuple(seats),
                create_ms=now,
                update_ms=now,
                sequence=0,
                deck_seed=table.deck_seed if table.HasField("deck_seed") else None,
                bot_seed=table.deck_seed if table.HasField("deck_seed") else secrets.randbits(62),
                turn_timeout_ms=turn_timeout_ms,
                turn_ms=now,
                unlisted=table.unlisted,
                turn_notifications=table.turn_notifications,
                fill_after_ms=fill_after_ms,
            )
            batch = _Batch(now)
            record = self._start_if_full(record, batch)
            stored = batch.stored(1)
            return dataclasses.replace(record, sequence=len(stored)), stored

        record, stored = new_table(table_id, now)
        response = api.CreateTableResponse(
            view=convert.view_to_pb(record, 1, None),
            creator_token=self.tokens.issue(table_id, CREATOR, record.creator_epoch),
            etag="1",
        )
        try:
            result = await self._store_create(
                record,
                stored,
                request_id=request_id or None,
                response=_remembered(fingerprint, response.SerializeToString())
                if request_id
                else None,
            )
        except StoreUnavailableError as error:
            self._drive_after_cancel(record)  # made, perhaps, with the answer lost
            raise self._store_unavailable(error) from None
        except asyncio.CancelledError:
            self._drive_after_cancel(record)  # made, perhaps: its bots must start
            raise
        if result.replay is not None:
            replayed = _replayed(api.CreateTableResponse, result.replay, fingerprint)
            await self._make_claimed_table(
                parse_table_name(replayed.view.table.name),
                lambda table_id: new_table(
                    table_id, replayed.view.table.create_time.ToMilliseconds()
                ),
            )
            return replayed
        if not result.created:  # pragma: no cover - 40 random bits collided
            raise ServiceError("CONFLICT", "could not allocate a table id; try again")
        # The first join then commits without a read, like every command after one of ours.
        self.records.put(table_id, 1, record)
        self._maybe_drive(record)
        return response

    async def _store_create(
        self,
        record: TableRecord,
        stored: Sequence[StoredEvent],
        *,
        request_id: str | None = None,
        response: bytes | None = None,
    ) -> CreateResult:
        """:meth:`Store.create` of a new table's first ``record`` and events, as CreateTable
        makes it (and a retry of one makes it again)."""
        return await self.store.create(
            record.table_id,
            record.to_json(schema=self._record_schema),
            stored,
            open_seats=record.has_free_seat,
            listed=not record.unlisted,
            finished=record.phase_over,
            due_ms=self._due_ms(record),
            request_id=request_id,
            response=response,
        )

    async def _make_claimed_table(
        self, table_id: str, make: Callable[[str], tuple[TableRecord, list[StoredEvent]]]
    ) -> None:
        """After a retried create was answered from its request id's claim: make the table the
        answer names if it does not exist (``make`` builds it under that id, as the first
        attempt did).

        The Redis store claims the id and makes the table in two round trips; a replica that
        died between them left a claim naming no table, and every retry would have been told
        of a table that never was. A table deleted since is not made again (the store marks its
        id gone), nor one that may have expired: the claim outlives a finished game's table, so
        only a claim younger than the shortest life a table can have is trusted to name a table
        never made. One more round trip, on retries only.
        """
        record, stored = make(table_id)
        if self._now_ms() - record.create_ms >= self._shortest_life_ms:
            self._start_driver(table_id, by_timer=True)  # as below: it finds the table, or not
            return
        try:
            result = await self._store_create(record, stored)
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        if result.created:
            log.warning(
                "%s: made the table a retried create named (its first attempt died)", table_id
            )
            self.records.put(table_id, 1, record)
            self._maybe_drive(record)
        else:
            # A retry of a create whose answer was lost: its timer may be armed nowhere (as
            # for a replayed command, in _mutate).
            self._start_driver(table_id, by_timer=True)

    @property
    def counts_creates(self) -> bool:
        """Whether creates count against a quota (--max-tables-per-hour)."""
        return self._max_tables_per_hour > 0

    async def _count_table_created(
        self, identity: Identity | None, client: str, request_id: str
    ) -> None:
        """Count a table created by the player of ``identity``, or else from the address
        ``client``, against --max-tables-per-hour; refuse it past the limit. The retry of a
        create the store remembers (its ``request_id``) is not counted: it gets its answer."""
        limit = self._max_tables_per_hour
        if not limit or (identity is None and not client):
            return
        who = f"id:{identity.player_id}" if identity is not None else f"ip:{caller_network(client)}"
        try:
            uses = await self.store.count_use(
                f"create:{who}", window_ms=_QUOTA_WINDOW_MS, create_request_id=request_id or None
            )
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        if uses > limit:
            raise ServiceError(
                "TOO_MANY_TABLES",
                f"at most {limit} new table{'' if limit == 1 else 's'} an hour from one "
                f"{'player' if identity is not None else 'address'}; try again later",
            )

    async def join_table(
        self,
        name: str,
        seat: int | None,
        display_name: str,
        *,
        etag: str,
        request_id: str,
        token: str | None = None,
        identity_token: str = "",
        waiting_only: bool = False,
    ) -> api.JoinTableResponse:
        """Take a seat (a given one or any free one); returns the seat token.

        With the seat token of one of this table's seats (``token``, expired or not) it is a
        renewal instead: a new token for that seat, which must still be the caller's. With an
        ``identity_token``, the seat records the player's id, and a player who holds a seat of
        the table already gets a new token for it instead of a second seat (``waiting_only``:
        only while the game has not started; then the table is full to that player).
        """
        table_id = parse_table_name(name)
        _check_request_id(request_id)  # a renewal too, which answers before _mutate would check
        identity: Identity | None = None
        if token and identity_token:
            # A renewal keeps the seat's id; a token sent with it is checked all the same.
            identity = await self._identity(identity_token)
        if token:
            renewed = await self._renew(
                table_id, seat, token, joining=bool(display_name.strip()), etag=etag
            )
            if renewed is not None:
                return renewed
        display_name = _player_name(display_name)
        if seat is not None and not 0 <= seat <= 3:
            raise ServiceError("INVALID_REQUEST", f"no seat {seat}; seats are 0 to 3")
        if identity is None:
            identity = await self._identity(identity_token)
        player_id = "" if identity is None else identity.player_id

        def decide(record: TableRecord, version: int) -> _Decision:
            if player_id and not (waiting_only and record.game is not None):
                held = self._held_by(record, player_id)
                if held is not None:
                    if seat is not None and seat != held:
                        raise _already_seated(held)
                    # The player's own seat (another device, a lost token): a new token for it.
                    return self._seat_held(api.JoinTableResponse, record, held)
            free = [i for i, s in enumerate(record.seats) if s.occupant == Occupant.EMPTY]
            if seat is None:
                if not free:
                    raise ServiceError("TABLE_FULL", "every seat is taken")
                chosen = free[0]
            elif seat not in free and not record.seats[seat].stand_in:
                raise ServiceError("SEAT_TAKEN", f"seat {seat} is taken")
            elif seat not in free and record.phase_over:
                raise ServiceError("GAME_OVER", "the game is over: its seats stay as they are")
            else:
                chosen = seat  # empty, or a bot standing in for a player who left
            return self._seat_player(
                record, chosen, display_name, api.JoinTableResponse, player_id=player_id
            )

        return await self._mutate_seating(
            table_id,
            request_id=request_id,
            etag=etag,
            decide=decide,
            response_type=api.JoinTableResponse,
            player_id=player_id,
            # A join without an identity hashes as it did before identities existed (retries
            # across an upgrade still match); one with, under a method name of its own with the
            # player's id first, so that no other caller's request hashes the same (the fields
            # hold no control characters; see _mutate).
            fingerprint=(
                _fingerprint(request_id, b"JoinTable", name, seat, display_name, etag)
                if not player_id
                else _fingerprint(
                    request_id, b"JoinTable/identity", player_id, name, seat, display_name, etag
                )
            ),
        )

    async def _note_player_seat(self, player_id: str, table_id: str, *, taken: bool) -> None:
        """Put the table in the player's list (ListPlayerTables) once a seat there is theirs:
        first in the list for a seat ``taken`` now; a seat the player held already keeps its
        place, and is added only if missing (a note lost before).

        The list is a hint that the table's record confirms when it is read, so a store that
        cannot be reached now costs the seat nothing: the join stands, and is logged."""
        try:
            await self.store.player_seat_taken(
                player_id,
                table_id,
                at_us=int(self._clock() * 1_000_000),
                ttl_ms=self._player_list_ttl_ms,
                if_absent=not taken,
            )
        except StoreUnavailableError:
            log.warning("could not add tables/%s to a player's list of tables", table_id)

    async def _mutate_seating(
        self,
        table_id: str,
        *,
        request_id: str,
        etag: str,
        decide: Callable[[TableRecord, int], _Decision],
        response_type: type[M],
        fingerprint: bytes,
        player_id: str = "",
    ) -> M:
        """:meth:`_mutate` for a call that seats its caller, who holds no seat of the table yet:
        its request is remembered under its own id (a join's caller key). A caller with a
        verified ``player_id`` has the table put in their list (:meth:`_note_player_seat`)."""
        last: list[_Decision] = []  # the decision the answer comes from, if one was made

        def deciding(record: TableRecord, version: int) -> _Decision:
            last[:] = [decide(record, version)]
            return last[0]

        response = _message(
            await self._mutate(
                table_id,
                caller_key=f"{JOIN_CALLER_PREFIX}{request_id}" if request_id else "join",
                request_id=request_id,
                etag=etag,
                decide=deciding if player_id else decide,
                response_type=response_type,
                fingerprint=fingerprint,
            )
        )
        if player_id:
            # A seat taken now (a decision that writes) goes first in the list; a seat the
            # player held already keeps its place, as does a retry answered from the table's
            # memory before any decision was made.
            await self._note_player_seat(player_id, table_id, taken=bool(last) and last[0].write)
        return response

    def _seat_player(
        self,
        record: TableRecord,
        seat: int,
        display_name: str,
        response_type: type[api.JoinTableResponse] | type[api.RematchTableResponse],
        *,
        rematched: bool = False,
        player_id: str = "",
    ) -> _Decision:
        """Seat a player at ``seat`` (empty, or a stand-in's), answering ``response_type``."""
        batch = _Batch(self._now_after(record))
        seats = list(record.seats)
        old = seats[seat]
        seats[seat] = SeatRecord(
            Occupant.HUMAN, display_name, None, old.epoch, rematched=rematched, player_id=player_id
        )
        joined = events_pb.TableEvent(event_time=convert.timestamp(batch.now_ms))
        joined.player_joined.seat = seat
        joined.player_joined.player_display_name = display_name
        batch.add(None, joined)
        new = self._start_if_full(dataclasses.replace(record, seats=tuple(seats)), batch)
        if record.game is not None and _paused(record):
            # A player comes back to a game that waited for one: the bots make the moves they
            # owe now, inline, as at any table with a player, and whatever the game then waits
            # for is asked for now (a fresh turn timer).
            new = dataclasses.replace(new, turn_ms=batch.now_ms)
            new = dataclasses.replace(new, game=self._advance(new, record.game, batch))
        token = self.tokens.issue(record.table_id, seat, old.epoch)

        def respond(final: TableRecord, new_version: int) -> Message:
            return response_type(
                seat_token=token,
                seat=seat,
                view=convert.view_to_pb(final, new_version, seat),
                etag=str(new_version),
            )

        return _Decision(new, batch, respond, open_seats=new.has_free_seat)

    @staticmethod
    def _held_by(record: TableRecord, player_id: str) -> int | None:
        """The seat a player with a verified ``player_id`` holds at the table, if any."""
        for index, held in enumerate(record.seats):
            if held.occupant is Occupant.HUMAN and held.player_id == player_id and not held.left:
                return index
        return None

    def _seat_held(
        self,
        response_type: type[api.JoinTableResponse] | type[api.RematchTableResponse],
        record: TableRecord,
        seat: int,
    ) -> _Decision:
        """The answer to a caller who holds ``seat`` already: a new token for it, and the
        caller's view; nothing is written."""

        def respond(final: TableRecord, version: int) -> Message:
            return response_type(
                seat_token=self.tokens.issue(final.table_id, seat, final.seats[seat].epoch),
                seat=seat,
                view=convert.view_to_pb(final, version, seat),
                etag=str(version),
            )

        return _unwritten(record, respond)

    # ------------------------------------------------------------------ quick games

    async def quick_join(
        self,
        rules: pb.Rules | None,
        turn_timeout: Any,
        display_name: str,
        *,
        fill_with_bots_after: Any = None,
        request_id: str,
        identity_token: str = "",
        client: str = "",
    ) -> api.QuickJoinResponse:
        """Seat the caller at the table that waits for players of this game, or make one.

        A lobby slot in the store, one per game asked for (rules, turn timeout, wait for bots),
        names the table its players are seated at. A caller who finds the slot empty names a
        new table id there (one compare-and-set, so concurrent callers on any replicas agree on
        it), and makes the table; a caller who finds a named table missing (its maker failed
        in between, or it expired) makes it under that name, as a rematch's table is made, so
        no step is lost. A caller who finds the table full offers a new one in its place the
        same way, and the join that takes a table's last seat empties the slot.

        With a ``request_id``, a second slot keeps which table the request was trying, and a
        retry goes there first: its join answers from that table's memory of the request.
        """
        _check_request_id(request_id)
        display_name = _player_name(display_name)
        game = self._quick_game(rules, turn_timeout, fill_with_bots_after)
        identity = await self._identity(identity_token)
        lobby = _lobby(game)
        # The request's own slot keeps the table it tried, tagged with the game, so that the
        # same id sent for another game is refused instead of seating the caller twice.
        pin = f"request:{request_id}" if request_id else ""
        game_tag = hashlib.blake2b(lobby.encode(), digest_size=8).hexdigest()
        ttl_ms = self._table_ttl_ms

        async def seat(table_id: str, *, retry: bool = False) -> api.QuickJoinResponse:
            """Join ``table_id``; then keep the slot up to date, except on a ``retry``, whose
            answer may be the first call's (remembered), not what the table holds now."""
            joined = await self.join_table(
                convert.table_name(table_id),
                None,
                display_name,
                etag="",
                request_id=request_id,
                identity_token=identity_token,
                # A player's seat is theirs again only at a table that still waits: a game
                # that started (bots filled it) is no quick join's answer.
                waiting_only=True,
            )
            free = any(s.occupant == pb.SEAT_OCCUPANT_EMPTY for s in joined.view.table.seats)
            # A slot left naming a full table (after a retry, or a failure here) is replaced
            # by the next caller, who finds it full: the caller has the seat, which is what
            # counts.
            if not retry:
                try:
                    if free:  # still waiting: the slot lives on as long as the table
                        await self.store.lobby_offer(lobby, table_id, ttl_ms=ttl_ms)
                    else:  # the fourth player: the game starts; the next callers need a table
                        await self.store.lobby_release(lobby, table_id)
                except StoreUnavailableError:
                    log.warning("could not update the lobby after a quick join at %s", table_id)
            response = api.QuickJoinResponse(
                seat_token=joined.seat_token, seat=joined.seat, etag=joined.etag
            )
            response.view.CopyFrom(joined.view)
            return response

        try:
            pinned = await self.store.lobby_get(pin) if pin else None
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        pinned_table = ""
        if pinned is not None:
            tag, _, pinned_table = pinned.partition("/")
            if tag != game_tag:
                raise ServiceError(
                    "REQUEST_ID_REUSED", "request_id was used for a QuickJoin of another game"
                )
            # A retry: the table the first call was trying answers it (it remembers the join),
            # or seats the caller now if the first call never got that far.
            try:
                return await seat(pinned_table, retry=True)
            except ServiceError as error:
                if error.reason not in ("TABLE_FULL", "TABLE_NOT_FOUND"):
                    raise

        counted = False  # a call counts against the quota once, whatever tables it makes

        async def next_table(full: str | None) -> str:
            """The table the slot names now; a new one when it is empty or names ``full``,
            made by this call and counted against the caller's quota: once a call, for the
            others it makes are those that filled up before the caller got a seat there."""
            offered = self._new_table_id()
            held = await self.store.lobby_offer(lobby, offered, ttl_ms=ttl_ms, replacing=full)
            nonlocal counted
            if held == offered:
                if not counted:
                    try:
                        await self._count_table_created(identity, client, "")
                    except ServiceError:
                        await self.store.lobby_release(lobby, offered)
                        raise
                    counted = True
                await self._create_quick(offered, game)
            return held

        # A burst of callers all try the table the slot names, and each round seats four of
        # them: the last of N callers needs about N / 4 tries. So a call gives up only after a
        # while, not after a number of tries (which a burst of some dozens would exhaust).
        deadline = self._clock() + _QUICK_SECONDS
        try:
            table_id = await self.store.lobby_get(lobby)
            for _ in range(_QUICK_ATTEMPTS):
                if table_id is None:
                    table_id = await next_table(None)
                if pin and table_id != pinned_table:
                    # Compare-and-set, not a plain write: a copy of this request sent at the same
                    # time (a retry overlapping the first call, on another replica) may have
                    # pinned another table meanwhile, and then both follow that one, where the
                    # join's memory of the request id gives them the one seat.
                    tried = f"{game_tag}/{pinned_table}" if pinned_table else None
                    wanted = f"{game_tag}/{table_id}"
                    held = await self.store.lobby_offer(pin, wanted, ttl_ms=ttl_ms, replacing=tried)
                    if held != wanted:
                        tag, _, table_id = held.partition("/")
                        if tag != game_tag:
                            raise ServiceError(
                                "REQUEST_ID_REUSED",
                                "request_id was used for a QuickJoin of another game",
                            )
                    pinned_table = table_id
                try:
                    return await seat(table_id)
                except ServiceError as error:
                    if error.reason == "TABLE_NOT_FOUND":
                        # Named but not made yet (its maker failed in between, or is about to),
                        # or expired: made now, if the slot still names it.
                        held = await self.store.lobby_offer(lobby, table_id, ttl_ms=ttl_ms)
                        if held == table_id:
                            await self._create_quick(table_id, game)
                        table_id = held
                    elif error.reason == "TABLE_FULL":
                        table_id = await next_table(table_id)
                    else:
                        raise
                if self._clock() > deadline:
                    break
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        raise ServiceError("CONFLICT", "every waiting table filled up meanwhile; try again")

    def lobby_name(
        self, rules: pb.Rules | None, turn_timeout: Any, fill_with_bots_after: Any = None
    ) -> str:
        """The name of the lobby slot of a QuickJoin asking for this game."""
        return _lobby(self._quick_game(rules, turn_timeout, fill_with_bots_after))

    def _quick_game(
        self, rules: pb.Rules | None, turn_timeout: Any, fill_with_bots_after: Any
    ) -> _QuickGame:
        """The game a QuickJoin asks for; INVALID_ARGUMENT if it is no game."""
        template = pb.Table(display_name=_QUICK_NAME)
        if rules is not None:
            template.rules.CopyFrom(rules)
        if turn_timeout is not None:
            template.turn_timeout.CopyFrom(turn_timeout)
        if fill_with_bots_after is not None:
            template.fill_with_bots_after.CopyFrom(fill_with_bots_after)
        most = self._max_turn_timeout_ms
        return _QuickGame(
            _rules(template), _turn_timeout_ms(template, most), _fill_after_ms(template, most)
        )

    def _new_table_id(self, *, unlisted: bool = False, now_ms: int | None = None) -> str:
        """A new table's id. Ids sort by creation time (the listing is newest first): a listed
        table's comes after every id this process gave, also within a millisecond. An unlisted
        table's name is what keeps strangers out: random from the clock on, never the listed
        ids' increment within a millisecond (which a neighbour's id would give away)."""
        now = self._now_ms() if now_ms is None else now_ms
        if unlisted:
            return new_table_id(now)
        self._last_table_id = new_table_id(now, self._last_table_id)
        return self._last_table_id

    async def _create_quick(self, table_id: str, game: _QuickGame) -> None:
        """Make the quick game's table ``table_id`` (seats free, listed), unless it exists.

        The seats' epochs are the creation time, as a rematch table's: should it expire and
        be made again under its name, the tokens of its first life do not work at the new one.
        """
        now = self._now_ms()
        record = TableRecord(
            table_id=table_id,
            display_name=_QUICK_NAME,
            rules=game.rules,
            first_dealer=0,
            seats=tuple(SeatRecord(epoch=now) for _ in range(4)),
            create_ms=now,
            update_ms=now,
            sequence=0,
            deck_seed=None,
            bot_seed=secrets.randbits(62),
            turn_timeout_ms=game.turn_timeout_ms,
            turn_ms=now,
            fill_after_ms=game.fill_after_ms,
        )
        await self._make_table(record)

    # ------------------------------------------------------------------ rematches

    async def rematch_table(
        self, name: str, token: str | None, *, request_id: str, client: str = ""
    ) -> api.RematchTableResponse:
        """Seat the caller, a player of a finished game, at the same seat of the next game.

        The first call claims the next game's table id in the finished table's record (one
        compare-and-set, so concurrent callers on any replicas agree on it), then creates that
        table with the finished one's settings; every call then seats its caller there. A call
        that finds the id claimed but its table missing (the claiming call failed in between)
        creates it, so no step is lost: the table is the same whoever creates it, but for its
        bots' seed.
        """
        _check_request_id(request_id)
        old_id = parse_table_name(name)
        caller = self.caller(token, old_id)
        if caller.claims is None:
            raise ServiceError("TOKEN_MISSING", "send the seat token as authorization: Bearer")
        if self.counts_creates:
            # A call that will name the next game's table counts it against the caller's quota
            # (--max-tables-per-hour), as CreateTable and QuickJoin count theirs: else a chain
            # of one-round games against bots, each rematched, would make tables unchecked.
            # Read first (a rare call, on a server with the limit only): a call for a rematch
            # named already, or refused, is not counted.
            _, finished = await self._read(old_id)
            self._player(finished, caller)
            if finished.phase_over and not finished.rematch_id:
                await self._count_table_created(None, client, "")
        record = await self._claim_rematch(old_id, caller)
        new_id, seat = record.rematch_id, caller.claims.seat
        if self.records.get(new_id) is None:
            await self._create_rematch(new_id, record)
        try:
            return await self._take_rematch_seat(
                new_id, seat, record.seats[seat], name=name, request_id=request_id
            )
        except ServiceError as error:
            if error.reason != "TABLE_NOT_FOUND":
                raise
        # The rematch table expired (idle longer than --table-ttl-seconds) while the finished
        # one is still there: it is made again, with its seats free.
        await self._create_rematch(new_id, record)
        return await self._take_rematch_seat(
            new_id, seat, record.seats[seat], name=name, request_id=request_id
        )

    async def _claim_rematch(self, old_id: str, caller: Caller) -> TableRecord:
        """The finished table's record, naming its rematch: checks that the caller is one of its
        players, and names the rematch unless a call did before (one commit, then; none when
        this process holds the table's record, which names it, as most calls find)."""
        claimed: list[TableRecord] = []

        def decide(record: TableRecord, version: int) -> _Decision:
            seat = self._player(record, caller)
            if not record.phase_over:
                raise ServiceError("GAME_NOT_OVER", "a rematch follows a finished game")
            claimed[:] = [record]
            if record.rematch_id:  # named by an earlier call
                return _unwritten(record, lambda final, version: b"")
            new_id = self._new_table_id(unlisted=record.unlisted)
            batch = _Batch(self._now_after(record))
            created = events_pb.TableEvent(event_time=convert.timestamp(batch.now_ms))
            created.rematch_created.table = convert.table_name(new_id)
            created.rematch_created.seat = seat
            batch.add(None, created)
            new = dataclasses.replace(record, rematch_id=new_id)
            claimed[:] = [new]
            return _Decision(new, batch, lambda final, version: b"")

        await self._mutate(
            old_id,
            caller_key=caller.key,
            request_id="",
            etag="",
            decide=decide,
            response_type=api.RematchTableResponse,
            fingerprint=b"",
        )
        return claimed[0]

    async def _create_rematch(self, new_id: str, finished: TableRecord) -> None:
        """Create the rematch table of ``finished`` as ``new_id``, unless it exists."""
        now = self._now_ms()
        record = TableRecord(
            table_id=new_id,
            display_name=finished.display_name,
            rules=finished.rules,
            # The deal moves on: the next game's first dealer is the seat after the last one's.
            first_dealer=(finished.first_dealer + 1) % 4,
            # The bots chosen for the table play again; a seat whose player left is free. The
            # seats' epochs start at the creation time: should this table expire and be made
            # again under its name (see rematch_table), the tokens of its first life, whose
            # epochs were another creation's time, do not work at the new one.
            seats=tuple(
                SeatRecord(Occupant.BOT, seat.name, seat.bot_level, now)
                if seat.occupant is Occupant.BOT and not seat.stand_in
                else SeatRecord(epoch=now)
                for seat in finished.seats
            ),
            create_ms=now,
            update_ms=now,
            sequence=0,
            deck_seed=None,  # a seeded game's seed would deal the same game again
            bot_seed=secrets.randbits(62),
            turn_timeout_ms=min(finished.turn_timeout_ms, self._max_turn_timeout_ms),
            turn_ms=now,
            unlisted=finished.unlisted,
            rematch_of=finished.table_id,
            turn_notifications=finished.turn_notifications,
            fill_after_ms=min(finished.fill_after_ms, self._max_turn_timeout_ms),
        )
        await self._make_table(record)

    async def _make_table(self, record: TableRecord) -> None:
        """Create the table of ``record`` (seats free or bots, no events), unless its id is
        taken: a table the server makes under a name agreed on beforehand (a rematch's, a quick
        game's), which every caller that finds it missing makes the same way.

        Such a name can outlive its table (the table expires while the finished game or the
        lobby slot still names it) and be made again. So its events are numbered from a base
        taken from its creation time, above every number an earlier table of that name reached:
        a stream of the earlier one then meets a gap it cannot fill and ends (STREAM_LAGGED),
        and its resume gets a snapshot, instead of the next table's events read as its own (a
        seat's stream would have shown the new occupant's cards). A table under a new name,
        as CreateTable makes, numbers from 1."""
        record = dataclasses.replace(record, sequence=record.create_ms * _SEQUENCES_PER_MS)
        try:
            result = await self.store.create(
                record.table_id,
                record.to_json(schema=self._record_schema),
                (),
                open_seats=True,
                listed=not record.unlisted,
            )
        except StoreUnavailableError as error:
            raise self._store_unavailable(error) from None
        if result.created:
            self.records.put(record.table_id, 1, record)

    async def _take_rematch_seat(
        self, new_id: str, seat: int, player: SeatRecord, *, name: str, request_id: str
    ) -> api.RematchTableResponse:
        """Seat the caller (``player`` at ``seat`` of the finished table) at ``seat`` of the
        rematch table, or renew the seat it took there."""

        def decide(record: TableRecord, version: int) -> _Decision:
            held = record.seats[seat]
            if held.occupant is Occupant.HUMAN and held.rematched:
                # Taken by RematchTable from this seat of the finished table, whose token the
                # caller holds: the caller's own seat. A new token for it; nothing changes.
                return self._seat_held(api.RematchTableResponse, record, seat)
            if player.player_id:
                elsewhere = self._held_by(record, player.player_id)
                if elsewhere == seat:  # the player joined the rematch with JoinTable already
                    return self._seat_held(api.RematchTableResponse, record, seat)
                if elsewhere is not None:
                    raise _already_seated(elsewhere)
            if held.occupant is not Occupant.EMPTY and not (
                held.stand_in and not record.phase_over
            ):
                raise ServiceError(
                    "SEAT_TAKEN",
                    f"seat {seat} of the rematch tables/{new_id} is taken"
                    + ("" if record.game is not None else "; JoinTable takes another seat there"),
                )
            return self._seat_player(
                record,
                seat,
                player.name,
                api.RematchTableResponse,
                rematched=True,
                player_id=player.player_id,
            )

        return await self._mutate_seating(
            new_id,
            request_id=request_id,
            etag="",
            decide=decide,
            response_type=api.RematchTableResponse,
            player_id=player.player_id,
            # The seat too: another player who sends the same id must not be answered with this
            # one's seat token (REQUEST_ID_REUSED instead).
            fingerprint=_fingerprint(request_id, b"RematchTable", name, seat),
        )

    async def _renew(
        self, table_id: str, seat: int | None, token: str, *, joining: bool, etag: str = ""
    ) -> api.JoinTableResponse | None:
        """A new token for the seat of ``token``, or None when it is no seat token of this table.

        Tokens expire (``--token-ttl-seconds``) while the seat stays taken, so an expired one
        must lead back to the seat. It is renewed only while its seat is still the caller's
        (same epoch); nothing is written. A token whose seat was left is refused, unless the
        call is also a join (``joining``: it names a player), which then goes on as one: a
        client that sends its last token with every call can still come back to the table.
        """
        try:
            claims = self.tokens.authentic(token)
        except TokenError as error:
            raise ServiceError(error.reason, str(error)) from None
        if claims.table_id != table_id or claims.seat == CREATOR:
            return None  # an ordinary join, which takes no token
        version, record = await self._read(table_id)
        self._kick_overdue(record)  # a read: it knows of the table's deadlines from now on
        try:
            self._check_epoch(record, Caller(claims))
        except ServiceError:
            if joining:
                return None
            raise
        if seat is not None and seat != claims.seat:
            raise ServiceError(
                "INVALID_REQUEST", f"the token is seat {claims.seat}'s; it renews only that seat"
            )
        if etag and etag != str(version):  # as for every JoinTable (docs/api.md, etags)
            raise ServiceError("ETAG_MISMATCH", "the table changed since that etag; re-read it")
        held = record.seats[claims.seat]
        return api.JoinTableResponse(
            seat_token=self.tokens.issue(table_id, claims.seat, held.epoch),
            seat=claims.seat,
            view=convert.view_to_pb(record, version, claims.seat),
            etag=str(version),
        )

    async def leave_table(
        self, name: str, token: str | None, *, etag: str, request_id: str
    ) -> api.LeaveTableResponse:
        """Give up a seat: before the game it becomes free, during it a bot takes over."""
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)

        def decide(record: TableRecord, version: int) -> _Decision:
            seat = self._player(record, caller)
            batch = _Batch(self._now_after(record))
            seats = list(record.seats)
            old = seats[seat]
            left = events_pb.TableEvent(event_time=convert.timestamp(batch.now_ms))
            left.player_left.seat = seat
            left.player_left.player_display_name = old.name
            if record.game is None:
                seats[seat] = SeatRecord(Occupant.EMPTY, "", None, old.epoch + 1)
            elif record.game.phase != Phase.GAME_OVER:
                level = BotLevel.HEURISTIC
                seats[seat] = SeatRecord(
                    Occupant.BOT, _stand_in_name(old.name), level, old.epoch + 1, stand_in=True
                )
                left.player_left.replacement_bot_level = convert.BOT_LEVELS[level]
            else:
                # A finished game keeps its players' names; leaving only revokes the token, so
                # nobody can join a game that will never restart.
                seats[seat] = dataclasses.replace(
                    old, epoch=old.epoch + 1, rematched=False, left=True
                )
            batch.add(None, left)
            new = dataclasses.replace(record, seats=tuple(seats))
            if new.game is not None:
                new = dataclasses.replace(new, game=self._advance(new, new.game, batch))

            def respond(final: TableRecord, new_version: int) -> Message:
                return api.LeaveTableResponse(
                    view=convert.view_to_pb(final, new_version, None), etag=str(new_version)
                )

            return _Decision(new, batch, respond, open_seats=new.has_free_seat)

        response = _message(
            await self._mutate(
                table_id,
                caller_key=caller.key,
                request_id=request_id,
                etag=etag,
                decide=decide,
                response_type=api.LeaveTableResponse,
                fingerprint=_fingerprint(request_id, b"LeaveTable", name, etag),
            )
        )
        # The seat's presence goes with its player: leases of their streams that are left
        # (on a replica that died or drained) must not speak for whoever sits there next. Only
        # those of the player's token (its epoch), so a retry answered from memory after the
        # next player sat down there leaves that player's alone.
        if caller.claims is not None and caller.seat is not None:
            try:
                vacated = (caller.seat, f"{caller.claims.epoch}:")
                await self._update_presence(table_id, vacate=(vacated,))
            except StoreUnavailableError as error:
                self._store_unavailable(error)  # left; the leases run out instead
        return response

    async def delete_table(
        self, name: str, token: str | None, *, etag: str, request_id: str
    ) -> api.DeleteTableResponse:
        """Delete a table; only its creator may."""
        _check_request_id(request_id)
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)
        if caller.claims is None:
            raise ServiceError("TOKEN_MISSING", "send the creator token as authorization: Bearer")
        if caller.claims.seat != CREATOR:
            raise ServiceError("NOT_TABLE_CREATOR", "only the table's creator may delete it")
        for _ in range(self._max_retries):
            try:
                loaded = await self.store.load(table_id)
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            if not loaded.exists:
                if request_id:
                    return api.DeleteTableResponse()  # a retried delete: it is gone, as asked
                raise ServiceError("TABLE_NOT_FOUND", f"no table tables/{table_id}")
            # Decoded (and cached) before anything can refuse: the cache must never keep an older
            # record of the version the store just sent (see _load).
            record = self._record(table_id, loaded)
            if record is None:  # pragma: no cover - this load always sends the bytes
                continue
            if etag and etag != str(loaded.version):
                raise ServiceError("ETAG_MISMATCH", "the table changed since that etag; re-read it")
            self._check_epoch(record, caller)
            batch = _Batch(self._now_after(record))
            deleted = events_pb.TableEvent(event_time=convert.timestamp(batch.now_ms))
            deleted.table_deleted.SetInParent()
            batch.add(None, deleted)
            try:
                done = await self.store.delete(
                    table_id,
                    expected_version=loaded.version,
                    events=batch.stored(record.sequence + 1),
                )
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            if done:
                self.records.drop(table_id)
                self._forget_turn_timer(table_id)
                return api.DeleteTableResponse()
            # Lost the race: the next read answers an etag, or a table gone meanwhile.
        raise ServiceError("CONFLICT", "the table is too busy; try again")

    # ------------------------------------------------------------------ moves

    async def pass_cards(
        self,
        name: str,
        token: str | None,
        cards: Sequence[pb.Card],
        *,
        etag: str,
        request_id: str,
    ) -> api.PassCardsResponse | bytes:
        """Submit the caller's three cards to pass; the response, serialized when it is new."""
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)
        if len(cards) > len(DECK):
            # Not worth reading card by card (a request of 1 MiB holds some 170,000).
            raise ServiceError("INVALID_REQUEST", f"a pass names 3 cards, not {len(cards)}")
        chosen = tuple(convert.card_from_pb(card) for card in cards)
        return await self._mutate(
            table_id,
            caller_key=caller.key,
            request_id=request_id,
            etag=etag,
            decide=functools.partial(
                self._decide_move, caller, lambda seat: PassCards(seat, chosen)
            ),
            response_type=api.PassCardsResponse,
            fingerprint=_fingerprint(request_id, b"PassCards", name, *map(int, chosen), etag),
        )

    async def play_card(
        self, name: str, token: str | None, card: pb.Card, *, etag: str, request_id: str
    ) -> api.PlayCardResponse | bytes:
        """Play one card to the current trick; the response, serialized when it is new."""
        table_id = parse_table_name(name)
        caller = self.caller(token, table_id)
        chosen = convert.card_from_pb(card)
        return await self._mutate(
            table_id,
            caller_key=caller.key,
            request_id=request_id,
            etag=etag,
            decide=functools.partial(
                self._decide_move, caller, lambda seat: PlayCard(seat, chosen)
            ),
            response_type=api.PlayCardResponse,
            fingerprint=_fingerprint(request_id, b"PlayCard", name, int(chosen), etag),
        )

    def _decide_move(
        self,
        caller: Caller,
        move: Callable[[int], Action],
        record: TableRecord,
        version: int,
    ) -> _Decision:
        """Decide ``move(seat)`` for the caller's seat (a pass or a play)."""
        seat = self._player(record, caller)
        state = record.game
        if state is None:
            raise ServiceError(
                Reason.WRONG_PHASE,
                "the game starts when all four seats are taken",
                legal_cards=(),
            )
        action = move(seat)
        batch = _Batch(self._now_after(record))
        try:
            state, events = step(state, action)
        except (IllegalActionError, MalformedError) as error:
            seat_view = view(state, seat)
            raise from_engine(
                error, legal_cards=seat_view.legal, cards_to_pass=seat_view.pass_count
            ) from None
        batch.add_engine(events)
        state = self._advance(record, state, batch)

        def respond(final: TableRecord, new_version: int) -> bytes:
            return _move_response(convert.view_bytes(final, new_version, seat), new_version)

        return _Decision(record, batch, respond, game=state)

    # ------------------------------------------------------------------ the game loop

    def _start_if_full(self, record: TableRecord, batch: _Batch) -> TableRecord:
        if record.game is not None or record.has_free_seat:
            return record
        game = new_game(record.rules, first_dealer=record.first_dealer)
        return dataclasses.replace(record, game=self._advance(record, game, batch))

    def _deck(self, record: TableRecord, round_index: int) -> tuple[Card, ...]:
        if record.deck_seed is not None:
            return seeded_deck(record.deck_seed, round_index)
        deck = list(DECK)
        _SECURE.shuffle(deck)
        return tuple(deck)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def _bot(level: BotLevel, seed: int) -> Bot:
        return make_bot(level, seed=seed)

    def _advance(self, record: TableRecord, state: State, batch: _Batch) -> State:
        """Deal new rounds and let inline bots act until a human (or a slow bot) owes a move.

        At a table of bots only, that would be the rest of the game, thousands of moves to a
        high target: seconds of the event loop. There the bots play one round and stop once
        the next is dealt, and the bot driver (:meth:`_drive`) commits the rest round by round,
        letting other calls in between.
        """
        if state.phase is Phase.PLAYING:
            # The common case, a human to play next, answered before the loop below.
            seat_record = record.seats[state.turn]
            if seat_record.occupant is not Occupant.BOT or seat_record.bot_level is None:
                batch.add(None, self._turn_changed(record, state, batch))
                return state
        if _paused(record):
            return state  # the last player left: the bots wait for one to come back
        # The deals this call may make before it stops at the next (None: no limit).
        rounds_left = None if _has_human(record) else 1 if state.phase is Phase.DEALING else 0
        while True:
            if state.phase == Phase.DEALING:
                state, events = step(state, Deal(self._deck(record, state.round_index)))
                batch.add_engine(events)
                if rounds_left is not None:
                    if rounds_left == 0:
                        break  # the new round is the driver's
                    rounds_left -= 1
                continue
            acted = False
            for seat in seats_to_act(state):
                seat_record = record.seats[seat]
                if seat_record.occupant != Occupant.BOT or seat_record.bot_level is None:
                    continue
                if state.phase == Phase.PLAYING and seat_record.bot_level not in _INLINE_LEVELS:
                    continue
                bot = self._bot(seat_record.bot_level, record.bot_seed + seat)
                state, events = step(state, bot.decide(view(state, seat)))
                batch.add_engine(events)
                acted = True
                break
            if not acted:
                break
        if state.phase == Phase.PLAYING:
            # Every decision that leaves the game in play ends by saying whose turn it is.
            batch.add(None, self._turn_changed(record, state, batch))
        return state

    @staticmethod
    def _turn_changed(record: TableRecord, state: State, batch: _Batch) -> bytes:
        """The TurnChanged event that ends a decision leaving ``state`` (playing) after
        ``record``'s game, with the seat's deadline at a table with a turn timeout."""
        seat = state.turn
        if not record.turn_timeout_ms or record.seats[seat].occupant is not Occupant.HUMAN:
            return convert.turn_changed_bytes(seat, batch.now_ms)
        asked = record.turn_since(record.game, state, batch.now_ms)
        return convert.turn_changed_bytes(seat, batch.now_ms, asked + record.turn_timeout_ms)

    # ------------------------------------------------------------------ slow bots

    def _slow_bot_due(self, record: TableRecord) -> int | None:
        """The bot seat that owes a move the driver must make, if any.

        A Monte Carlo bot's card, or at a table without a human any bot's move (the command
        that dealt the round left it to the driver; see :meth:`_advance`).
        """
        state = record.game
        if state is None:
            return None
        if state.phase is Phase.PLAYING:
            seat = record.seats[state.turn]
            if seat.occupant != Occupant.BOT or _paused(record):
                return None
            if seat.bot_level not in _INLINE_LEVELS or not _has_human(record):
                return state.turn
            return None
        if state.phase is Phase.PASSING and not _has_human(record) and not _paused(record):
            return next(iter(seats_to_act(state)), None)
        return None

    def _due_ms(self, record: TableRecord) -> int | None:
        """When another process must look at the table if the one that writes ``record`` falls
        silent (see :meth:`_watch_due`); None when the server owes it nothing.

        A slow bot's move (a Monte Carlo bot's, or any at a table of bots only) is due once the
        bot is overdue, as for a request's kick; a deadline (a turn's, the wait for bots) a
        moment after it runs out, so that the writer's own timer acts first."""
        due = record.timer_deadline_ms
        if due is not None:
            due += _DUE_SLACK_MS
        if self._slow_bot_due(record) is not None:
            overdue = record.update_ms + self._slow_bot_grace_ms
            due = overdue if due is None else min(due, overdue)
        return due

    def start(self) -> None:
        """Start watching for due tables (:meth:`_watch_due`); needs a running event loop."""
        if self._due_watch is None or self._due_watch.done():
            self._due_watch = asyncio.get_running_loop().create_task(
                self._watch_due(), name="due-tables"
            )

    async def _watch_due(self) -> None:
        """Drive the tables the store says are due, whatever process last wrote them.

        Every write records when the table is next owed something by the server (a slow bot's
        move, a player's timed-out move, bots for empty seats), and the process that wrote it
        keeps a driver or a timer for it. If that process dies (or drains) first, nothing here
        knew of the table unless someone read or watched it: a table of bots, or one whose
        players wait for their turn with the app closed, stood still until it expired. Every
        process claims the due tables about once a second (a claim is a lease: another process
        claims the table again only if no write set a new time by then) and starts the driver,
        which reads the table and makes what is owed, or finds it made (compare-and-set: a
        second driver only loses the race)."""
        while not self._draining:
            await asyncio.sleep(_DUE_POLL_SECONDS)
            if self._draining:
                return
            try:
                due = await self.store.due_claim(
                    now_ms=self._now_ms(), lease_ms=self._slow_bot_grace_ms, limit=_DUE_BATCH
                )
            except StoreUnavailableError as error:
                self._store_unavailable(error)  # logged at most every 5 s
                continue
            except Exception:  # the watch must go on
                log.exception("claiming the due tables failed")
                continue
            for table_id in due:
                self._start_driver(table_id, by_timer=True)

    def _maybe_drive(self, record: TableRecord) -> None:
        if _timed(record):
            self._arm_turn_timer(record)
        if self._slow_bot_due(record) is None:
            return
        self._start_driver(record.table_id)

    def _drive_after_cancel(self, record: TableRecord) -> None:
        """After a write whose caller was cancelled once it was sent: start the driver if
        ``record``, what the write would store, needs one (a bot owes a move, or a timer runs).

        Whether the write applied is unknown, so not :meth:`_maybe_drive`, which would arm the
        timer from ``record``: the driver reads what the store holds, plays what is owed there
        and arms the timer from it (or finds the table missing, for a create that never
        applied)."""
        timed = _timed(record)
        if timed or self._slow_bot_due(record) is not None:
            self._start_driver(record.table_id, timed=timed)

    def _start_driver(self, table_id: str, *, by_timer: bool = False, timed: bool = False) -> None:
        """Start the table's driver unless it runs. ``timed``: the table may have a deadline
        that nothing here knows of yet, so a driver that stops short tries again (as one the
        timer started does)."""
        task = self._drivers.get(table_id)
        if task is not None and not task.done():
            if not by_timer:
                # A driver the timer started waits for a slow bot to be overdue; this start
                # comes from a move that gave the bot its turn here, so it plays it at once.
                self._drive_now.add(table_id)
            return
        self._drivers[table_id] = asyncio.get_running_loop().create_task(
            self._drive(table_id, by_timer=by_timer, timed=timed), name=f"bot-driver-{table_id}"
        )

    # ------------------------------------------------------------------ turn timers

    def _arm_turn_timer(self, record: TableRecord) -> None:
        """Have the driver run when the time for the players' owed moves runs out (at once if
        it has), or forget the table's timer when no player owes a move.

        The process that commits a move of the table keeps the timer; a read elsewhere only
        starts the driver when a deadline has passed (:meth:`_kick_overdue`). A replica that
        dies with the timer delays the moves until another one claims the table from the due
        tables (:meth:`_watch_due`: about a second or two), or a read notices first. Should two
        processes act at once, the compare-and-set lets one commit; the other steps back.
        """
        table_id = record.table_id
        deadline = record.timer_deadline_ms
        armed = self._turn_timers.get(table_id)
        if armed is not None:
            if armed[0] == deadline:
                return
            armed[1].cancel()
            del self._turn_timers[table_id]
        if deadline is None or self._draining:
            return
        self._set_turn_timer(table_id, deadline)

    def _set_turn_timer(self, table_id: str, deadline_ms: int) -> None:
        delay = max(0.0, (deadline_ms - self._now_ms()) / 1000)
        handle = asyncio.get_running_loop().call_later(delay, self._turn_timer_fired, table_id)
        self._turn_timers[table_id] = (deadline_ms, handle)

    def _turn_timer_fired(self, table_id: str) -> None:
        self._turn_timers.pop(table_id, None)
        if not self._draining:
            # The driver reads the table, makes the moves whose time ran out (if they still
            # are owed) and arms the timer for the next deadline when it stops.
            self._start_driver(table_id, by_timer=True)

    def _forget_turn_timer(self, table_id: str) -> None:
        """Drop the table's timer (the table is gone, or a new one follows)."""
        armed = self._turn_timers.pop(table_id, None)
        if armed is not None:
            armed[1].cancel()

    async def _commit_timed_out_moves(
        self, table_id: str, version: int, record: TableRecord, seats: Sequence[int]
    ) -> bool:
        """Make the moves of ``seats``, whose time ran out, as a heuristic bot would; whether
        the commit applied."""
        state = record.game
        assert state is not None
        batch = _Batch(self._now_after(record))
        for seat in seats:
            batch.add(None, convert.turn_timed_out_bytes(seat, batch.now_ms))
            bot = self._bot(BotLevel.HEURISTIC, record.bot_seed + seat)
            state, events = step(state, bot.decide(view(state, seat)))
            batch.add_engine(events)
        if await self._commit_advanced(table_id, version, record, state, batch):
            self.timed_out_moves += len(seats)
            return True
        return False

    async def _fill_with_bots(self, table_id: str, version: int, record: TableRecord) -> bool:
        """Seat heuristic bots in the empty seats of ``record``'s table, which waited long
        enough for players (``fill_after_ms``), and start the game; whether it applied."""
        batch = _Batch(self._now_after(record))
        level = BotLevel.HEURISTIC
        seats = list(record.seats)
        for index, seat in enumerate(seats):
            if seat.occupant is not Occupant.EMPTY:
                continue
            seats[index] = SeatRecord(Occupant.BOT, f"{level.value.title()} bot", level, seat.epoch)
            joined = events_pb.TableEvent(event_time=convert.timestamp(batch.now_ms))
            joined.player_joined.seat = index
            joined.player_joined.player_display_name = seats[index].name
            joined.player_joined.bot_level = convert.BOT_LEVELS[level]
            batch.add(None, joined)
        new = self._start_if_full(dataclasses.replace(record, seats=tuple(seats)), batch)
        stored = batch.stored(record.sequence + 1)
        new = new.evolve(new.game, record.sequence + len(stored), batch.now_ms, started_from=record)
        # A lost race (the seating changed meanwhile) is fine: the driver reads the table again.
        return await self._commit_driven(
            table_id, version, record, new, stored, open_seats=None if new.unlisted else False
        )

    async def _drive(self, table_id: str, *, by_timer: bool = False, timed: bool = False) -> None:
        """Play slow bots' turns until a human owes a move; each move is a CAS commit.

        It also makes the moves of players whose time ran out (see :meth:`_arm_turn_timer`).
        Started ``by_timer``, it makes a slow bot's move only once the bot is overdue, as a
        request's kick would: the replica that gave the bot its turn is driving it. A driver
        that stops short (the store failed, the table stood still) sets the timer of a timed
        table again, so a deadline is never lost to one failure.

        The slow bots are Monte Carlo ones, and at a table of bots only every bot (their moves
        are not made inside a player's command, since there is none).

        As many turns as the game takes (a game of four such bots to a high target is thousands
        of them). It stops if the table stands still for a few turns in a row, which a commit
        that never lands would cause: a later request finds the bot overdue and starts it again.
        """
        cached_record = self.records.get(table_id)
        timed = timed or by_timer or (cached_record is not None and _timed(cached_record.record))
        finished = False  # stopped where it should: nothing owed here, or the table is gone
        # Whether this process drives the table: asked to by a move of its own (not a timer or
        # a claim of the store's due tables), or it committed a move in this run. One that was
        # not and finds the moves made steps back and drops its timer, and so does any whose
        # bot's move loses a race: another process drives the table (and keeps its timer), and
        # if that one dies, the due tables bring the table back here. Without that, a replica
        # that once took a table over (its writer stalled for a second) raced the writer on
        # every move after.
        driving = not by_timer

        def step_back() -> None:
            nonlocal finished
            self._forget_turn_timer(table_id)
            finished = True

        try:
            last_version, still = -1, 0
            while True:
                # Let other calls in between two commits (an in-memory store never suspends).
                await asyncio.sleep(0)
                cached = self.records.get(table_id)
                loaded = await self.store.load(
                    table_id, known_version=0 if cached is None else cached.version
                )
                if not loaded.exists:
                    self.records.drop(table_id)
                    self._forget_turn_timer(table_id)
                    await self.store.due_drop(table_id)  # expired: nothing owed any more
                    finished = True
                    return
                record = self._record(table_id, loaded)
                if record is None:
                    continue
                timed = _timed(record)
                if self._draining and not _has_human(record):
                    return  # nobody waits on it: another replica takes it over when overdue
                still = still + 1 if loaded.version == last_version else 0
                if still >= _DRIVER_STANDSTILL:
                    log.warning("bot driver for %s: the table does not move; stopping", table_id)
                    return
                last_version = loaded.version
                fill_at = record.fill_deadline_ms
                # A move this driver commits gives the next turn; a bot that has it is this
                # driver's to play at once, not once overdue (nobody else knows it is due).
                if fill_at is not None and fill_at <= self._now_ms():
                    if await self._fill_with_bots(table_id, loaded.version, record):
                        by_timer, driving = False, True
                    continue
                timed_out = record.timed_out(self._now_ms())
                if timed_out:
                    if await self._commit_timed_out_moves(
                        table_id, loaded.version, record, timed_out
                    ):
                        by_timer, driving = False, True
                    continue
                if by_timer and table_id in self._drive_now:
                    by_timer, driving = False, True
                seat = self._slow_bot_due(record)
                if (
                    seat is None
                    or record.game is None
                    or (by_timer and record.update_ms + self._slow_bot_grace_ms >= self._now_ms())
                ):
                    if not timed:
                        finished = True
                    elif driving:
                        self._arm_turn_timer(record)
                        finished = True
                    else:
                        step_back()
                    return
                by_timer = False  # the bot was overdue: this driver is its driver now
                level = record.seats[seat].bot_level
                assert level is not None
                if level in _INLINE_LEVELS:  # a table of bots only: a round of their moves
                    action = None
                else:
                    seat_view = view(record.game, seat)
                    seed = record.bot_seed + seat
                    action = await self._think(level, seed, seat_view)
                if not await self._commit_bot_move(table_id, loaded.version, record, action):
                    # Another process wrote the table meanwhile: the one whose commit gave the
                    # next turn drives it (each commit starts the driver it calls for).
                    step_back()
                    return
                driving = True
        except StoreUnavailableError as error:
            # Logged as every store failure is, at most every 5 s: with Redis down, each table
            # with a turn timer would otherwise add a line every few seconds.
            self._store_unavailable(error)
        except ServiceError as error:
            log.warning("bot driver for %s stopped: %s", table_id, error)
        except Exception:
            log.exception("bot driver for %s failed", table_id)
        finally:
            self._drivers.pop(table_id, None)
            self._drive_now.discard(table_id)
            if timed and not finished and not self._draining:
                # Stopped short: try the table's deadline again in a moment.
                self._forget_turn_timer(table_id)
                self._set_turn_timer(table_id, self._now_ms() + _TIMER_RETRY_MS)

    async def _think(self, level: BotLevel, seed: int, seat_view: SeatView) -> Action:
        """A slow bot's decision, off the event loop; the heuristic's if the worker fails.

        A game must never stall on a broken worker: the fallback keeps it moving, and a broken
        process pool is replaced for the next decision. Nor on a saturated one: past
        ``max_thinking`` decisions queued or in progress, the heuristic decides at once (in
        microseconds). The wait in the queue then stays well under the time after which other
        replicas take a bot for dead and start driving it too, which under overload would only
        repeat the same work.
        """
        if self.thinking >= self._max_thinking:
            self.bot_fallbacks += 1
            return self._bot(BotLevel.HEURISTIC, seed).decide(seat_view)
        self.thinking += 1
        try:
            return await self._decide_elsewhere(level, seed, seat_view)
        finally:
            self.thinking -= 1

    async def _decide_elsewhere(self, level: BotLevel, seed: int, seat_view: SeatView) -> Action:
        executor = self._executor
        try:
            if executor is not None:
                return await asyncio.get_running_loop().run_in_executor(
                    executor, _decide_in_worker, level.value, seed, seat_view
                )
            return await asyncio.to_thread(_decide_in_worker, level.value, seed, seat_view)
        except concurrent.futures.process.BrokenProcessPool:
            # Every decision in flight on the broken pool lands here: the first replaces it.
            factory = self._executor_factory
            if executor is not None and executor is self._executor and factory is not None:
                log.error("the bot worker pool broke; starting a new one")
                executor.shutdown(wait=False, cancel_futures=True)
                self._executor = factory()
        except Exception:
            log.exception("a %s bot failed to decide; the heuristic plays this card", level)
        self.bot_fallbacks += 1
        return self._bot(BotLevel.HEURISTIC, seed).decide(seat_view)

    async def _commit_bot_move(
        self, table_id: str, version: int, record: TableRecord, action: Action | None
    ) -> bool:
        """Commit a slow bot's ``action`` (None: none, the inline bots move) and what follows;
        whether it applied."""
        state = record.game
        assert state is not None
        batch = _Batch(self._now_after(record))
        if action is not None:
            state, events = step(state, action)
            batch.add_engine(events)
        return await self._commit_advanced(table_id, version, record, state, batch)

    async def _commit_advanced(
        self, table_id: str, version: int, record: TableRecord, state: State, batch: _Batch
    ) -> bool:
        """Let the inline bots act from ``state`` and commit it all on ``version``; whether it
        applied. A lost race is fine: the process that won it drives the table on (see
        :meth:`_drive`)."""
        state = self._advance(record, state, batch)
        stored = batch.stored(record.sequence + 1)
        new = record.evolve(state, record.sequence + len(stored), batch.now_ms)
        return await self._commit_driven(table_id, version, record, new, stored)

    async def _commit_driven(
        self,
        table_id: str,
        version: int,
        record: TableRecord,
        new: TableRecord,
        stored: Sequence[StoredEvent],
        *,
        open_seats: bool | None = None,
    ) -> bool:
        """Commit ``new`` (with its events, ``stored``) over ``record`` at ``version``, for the
        driver, with the webhook it sends; whether it applied."""
        outbox = self._outbox(record, new, new.update_ms)
        result = await self.store.commit(
            table_id,
            expected_version=version,
            data=new.to_json(schema=self._record_schema),
            events=stored,
            open_seats=open_seats,
            finished=new.phase_over,
            outbox=outbox,
            due_ms=self._due_ms(new),
        )
        if result.outcome != CommitOutcome.APPLIED:
            return False
        if outbox is not None and self.webhooks is not None:
            self.webhooks.wake()
        self.records.put(table_id, version + 1, new)
        return True

    def _outbox(
        self, old: TableRecord, new: TableRecord, now_ms: int
    ) -> tuple[OutboxItem, int] | None:
        """The webhook this commit sends, due now, or None.

        A commit that ends a game with a player sends its result (never for games of bots
        only: no player's result to tell). At a table with ``turn_notifications``, a commit
        that asks players for new moves tells whom, and so does one that seats a player where
        a move is owed. Other commits, and any without webhooks, send none. One commit never
        does both: a game that ends asks for no move.
        """
        if self.webhooks is None:
            return None
        document: dict[str, Any]
        if new.phase_over:
            if old.phase_over or not any(
                seat.occupant is Occupant.HUMAN or seat.stand_in or seat.left for seat in new.seats
            ):
                return None
            document = game_over_document(new, now_ms)
        elif new.turn_notifications:
            seats = new.owing_players()
            if not asked_anew(old.game, new.game):
                # The same moves are owed, but a seat may owe one now that did not (a player
                # took over a stand-in bot's seat while the game waited for it).
                before = old.owing_players()
                seats = tuple(seat for seat in seats if seat not in before)
            if not seats:
                return None  # only bots owe moves, or the players owed theirs already
            document = turn_started_document(new, seats, now_ms)
        else:
            return None
        return OutboxItem(document["id"], orjson.dumps(document)), now_ms

    def _kick_overdue(self, record: TableRecord) -> None:
        """After a read: start the driver if the table is owed a move that is overdue (a
        player's time ran out, or a slow bot's move is late), as when the process that wrote it
        died. A deadline still to come is left to the writer's timer and, should the writer
        die, to the due tables (:meth:`_watch_due`): a timer here too would only race it."""
        now = self._now_ms()
        deadline = record.timer_deadline_ms
        if deadline is not None and deadline <= now:
            self._start_driver(record.table_id, by_timer=True)
        elif (
            record.update_ms + self._slow_bot_grace_ms < now
            and self._slow_bot_due(record) is not None
        ):
            self._start_driver(record.table_id)

    def _watch_slow_bots(self, record: TableRecord) -> bool:
        """Count a watcher of ``record``'s table if the driver may play there; whether it does."""
        if not _driven(record):
            return False
        self._count_watcher(record.table_id)
        return True

    def _count_watcher(self, table_id: str) -> None:
        """Count a watcher of a table the sweeper checks for bots (see :meth:`_sweep`)."""
        self._slow_watched[table_id] += 1

    def _start_sweeper(self) -> None:
        if self._sweeper is None or self._sweeper.done():
            self._sweeper = asyncio.get_running_loop().create_task(self._sweep(), name="sweeper")

    def _unwatch_slow_bots(self, table_id: str) -> None:
        self._slow_watched[table_id] -= 1
        if self._slow_watched[table_id] <= 0:
            del self._slow_watched[table_id]

    async def _sweep(self) -> None:
        """While anything is watched here: restart overdue bots, end streams of expired tables.

        A bot's driver runs on the replica that gave it the turn. If that replica dies, the
        table stands still until a request finds the bot overdue; players who only watch, waiting
        for their turn, send none. So every replica with watchers of such a table checks it once
        per grace period: a read that usually finds the version it knows (no record sent), then
        the same kick a request gives. Drivers on two replicas are harmless (compare-and-set).

        A table that expires publishes nothing, so its watchers would wait for ever (a finished
        game's spectators, 10 minutes after its end). Every watched table is read once per
        :data:`_GONE_CHECK_SECONDS`; the streams of one found gone end with TABLE_NOT_FOUND.
        """
        loop = asyncio.get_running_loop()
        period = self._slow_bot_grace_ms / 1000
        next_kick = loop.time() + period
        next_gone_check = loop.time() + self._gone_check_seconds
        next_presence = loop.time() + self._presence_refresh_seconds
        nap = min(period, self._gone_check_seconds, self._presence_refresh_seconds)
        while self._watched:
            await asyncio.sleep(nap)
            now = loop.time()
            if now >= next_presence:
                next_presence = now + self._presence_refresh_seconds
                await self._refresh_presence()
            if now >= next_gone_check:
                next_gone_check = now + self._gone_check_seconds
                await self._end_streams_of_gone_tables()
            if now < next_kick:
                continue
            next_kick = now + period
            for table_id in list(self._slow_watched):
                task = self._drivers.get(table_id)
                if task is not None and not task.done():
                    continue
                try:
                    _, record = await self._read(table_id)
                    self._kick_overdue(record)
                except ServiceError:  # gone, or the store is down: the watchers hear of it
                    continue
                except Exception:  # the sweep must go on for the other tables
                    log.exception("checking %s for an overdue bot failed", table_id)

    async def _refresh_presence(self) -> None:
        """Renew the leases of the player streams open here, and end those of every table
        watched here that ran out: a stream whose process died announces nothing itself, so
        the watchers of its table learn it from the processes still serving them."""
        tables = list(self._watched)
        for start in range(0, len(tables), _PRESENCE_BATCH):
            chunk = tables[start : start + _PRESENCE_BATCH]
            outcomes = await asyncio.gather(
                *(self._update_presence(t, hold=self._held(t)) for t in chunk),
                return_exceptions=True,
            )
            for table_id, outcome in zip(chunk, outcomes, strict=True):
                if isinstance(outcome, StoreUnavailableError):
                    self._store_unavailable(outcome)  # logged, rate-limited
                elif isinstance(outcome, Exception):  # the others' leases must be renewed
                    log.error("renewing the presence of %s failed", table_id, exc_info=outcome)

    def _held(self, table_id: str) -> tuple[tuple[int, str], ...]:
        return tuple(self._leases.get(table_id, {}))

    async def _update_presence(
        self,
        table_id: str,
        *,
        hold: Sequence[tuple[int, str]] = (),
        drop: Sequence[tuple[int, str]] = (),
        vacate: Sequence[tuple[int, str]] = (),
    ) -> int:
        """Update the table's presence (see ``Store.presence``): the seats connected after."""
        now = self._now_ms()
        return await self.store.presence(
            table_id,
            now_ms=now,
            until_ms=now + self._presence_lease_ms,
            hold=hold,
            drop=drop,
            vacate=vacate,
            announce=convert.presence_announcements(now),
        )

    def keep_presence(self) -> None:
        """From now on (a drain), streams that end leave their leases to run out instead of
        announcing their players gone: the players reconnect to another replica meanwhile.
        Streams their apps closed before are announced at once, without their grace."""
        self._presence_kept = True
        self._presence_draining.set()

    def _take_lease(self, table_id: str, seat: int, epoch: int) -> str:
        """The lease of ``seat`` (held with a token of ``epoch``) for one more stream here."""
        lease = f"{epoch}:{self._lease_owner}"
        leases = self._leases.setdefault(table_id, {})
        leases[seat, lease] = leases.get((seat, lease), 0) + 1
        return lease

    def _end_lease(self, table_id: str, seat: int, lease: str) -> None:
        """One stream fewer holds the seat's ``lease``. After its last, forget it and, unless
        draining, end it in the store after the grace (in the background: a stream's end must
        not wait for it). Until then it stands: its last renewal keeps it at least 20 s."""
        leases = self._leases[table_id]
        leases[seat, lease] -= 1
        if leases[seat, lease] > 0:
            return
        del leases[seat, lease]
        if not leases:
            del self._leases[table_id]
        if self._presence_kept:
            return
        key = (table_id, seat, lease)
        ended = self._lease_ended[key] = self._lease_ended.get(key, 0) + 1
        try:
            task = asyncio.get_running_loop().create_task(
                self._drop_lease(table_id, seat, lease, ended)
            )
        except RuntimeError:  # no loop left (the process is ending): the lease runs out
            return
        self._lease_drops.add(task)
        task.add_done_callback(self._lease_drops.discard)

    async def _drop_lease(self, table_id: str, seat: int, lease: str, ended: int) -> None:
        # A reconnect within the grace finds the seat still present: nothing is announced. A
        # drain ends the grace: the app closed this stream itself, so no reconnect is due.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._presence_draining.wait(), self._presence_grace_seconds)
        key = (table_id, seat, lease)
        if self._lease_ended.get(key) != ended:
            return  # taken again and let go since: that later end drops it, after its grace
        del self._lease_ended[key]
        if (seat, lease) in self._leases.get(table_id, {}):
            return  # a stream here holds it again (a reconnect to this process)
        try:
            await self._update_presence(table_id, drop=((seat, lease),))
        except StoreUnavailableError as error:
            self._store_unavailable(error)  # the lease runs out instead
        except Exception:
            log.exception("ending a presence lease of %s failed", table_id)

    async def _end_streams_of_gone_tables(self) -> None:
        for table_id in list(self._watched):
            await asyncio.sleep(0)  # other calls between two reads (the memory store never waits)
            try:
                await self._read(table_id)
            except ServiceError as error:
                if error.reason == "TABLE_NOT_FOUND":
                    self.store.end_watchers(table_id)
                    self._forget_turn_timer(table_id)
            except Exception:  # the sweep must go on for the other tables
                log.exception("checking whether %s still exists failed", table_id)

    async def aclose(self, grace: float = 0.0) -> None:
        """Stop bot drivers and the sweeper (at shutdown).

        Within ``grace`` seconds, drivers at tables with a human first make the moves their bots
        owe, which ends them: the player's next move is then theirs to make, not left for
        another replica to notice the bots overdue (seconds later). Drivers of tables of bots
        only stop after their current move.
        """
        self._draining = True
        if self.identity is not None:
            self.identity.close()
        for _, handle in self._turn_timers.values():
            handle.cancel()  # other replicas (or the next read) make those moves
        self._turn_timers.clear()
        deadline = asyncio.get_running_loop().time() + grace
        while self._drivers:
            left = deadline - asyncio.get_running_loop().time()
            if left <= 0:
                break
            await asyncio.wait(list(self._drivers.values()), timeout=left)
        tasks = list(self._drivers.values())
        if self._sweeper is not None:
            tasks.append(self._sweeper)
        if self._due_watch is not None:
            tasks.append(self._due_watch)
        if self._lease_drops:  # woken by the drain (keep_presence): a moment to finish
            await asyncio.wait(list(self._lease_drops), timeout=1.0)
        tasks += self._lease_drops  # the rest run out
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)

    # ------------------------------------------------------------------ watching

    async def watch(
        self,
        name: str,
        token: str | None,
        after_sequence: int | None,
        heartbeat_interval: duration_pb2.Duration | None = None,
    ) -> AsyncIterator[api.WatchTableResponse]:
        """A snapshot of the caller's view, then every event it may see, in order.

        With ``after_sequence`` the stream resumes: the events after it, or a new snapshot first
        when those are no longer kept. Subscribing happens before reading, so no event falls in
        the gap between the snapshot and the live feed. With ``heartbeat_interval``, a
        ``Heartbeat`` whenever the stream has sent nothing for that long.
        """
        table_id = parse_table_name(name)
        heartbeat = _heartbeat_seconds(heartbeat_interval)
        caller = self.caller(token, table_id)
        seat = caller.seat
        subscription = self.store.subscribe(table_id)
        swept = False
        # The presence lease this stream holds, once it holds one (see _take_lease).
        lease = ""
        self._watched[table_id] += 1
        self._start_sweeper()
        try:
            version, record = await self._read(table_id)
            self._check_epoch(record, caller)
            self._kick_overdue(record)
            swept = self._watch_slow_bots(record)
            last = record.sequence
            resumed = False
            if after_sequence == 0:  # from the table's first event, wherever its numbers start
                after_sequence = _sequence_base(record)
            if after_sequence is not None and 0 <= after_sequence <= last:
                missed = await self._read_since(table_id, after_sequence, last)
                if missed is not None:
                    responses = [
                        _event_response(event)
                        for event in missed
                        if event.audience is None or event.audience == seat
                    ]
                    # The token is current, so a player who left this seat in that range was an
                    # earlier occupant: what it was sent is not this caller's; a snapshot is.
                    if not any(_leaves(response, seat) for response in responses):
                        resumed = True
                        for response in responses:
                            yield response
            if not resumed:
                yield api.WatchTableResponse(
                    sequence=last,
                    snapshot=convert.view_to_pb(record, version, seat),
                )
            # Presence: this stream's player is connected while it is open; the stream starts
            # with every seated player's presence (a resumed stream may have missed changes).
            if seat is not None:
                epoch = caller.claims.epoch if caller.claims else 0
                lease = self._take_lease(table_id, seat, epoch)
            try:
                present = await self._update_presence(
                    table_id, hold=((seat, lease),) if seat is not None else ()
                )
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            told = convert.timestamp(self._now_ms())  # when the presence above was read
            for other, seat_record in enumerate(record.seats):
                if seat_record.occupant is Occupant.HUMAN:
                    response = api.WatchTableResponse(sequence=last)
                    response.event.event_time.CopyFrom(told)
                    response.event.presence_changed.seat = other
                    response.event.presence_changed.connected = bool(present >> other & 1)
                    yield response
                else:
                    # Not told: a player who sat down there since this stream's record was
                    # read, and is connected, is told with the events that follow.
                    present &= ~(1 << other)
            loop = asyncio.get_running_loop()
            sent = loop.time()  # when this stream last sent something (for heartbeats)
            while True:
                if heartbeat is None:
                    batch = await subscription.receive()
                else:
                    try:
                        async with asyncio.timeout_at(sent + heartbeat):
                            batch = await subscription.receive()
                    except TimeoutError:
                        yield _heartbeat(last, self._now_ms())
                        sent = loop.time()
                        continue
                if batch is None:
                    break
                for event in batch:
                    if event.sequence == EPHEMERAL_SEQUENCE:
                        # Unstored (a reaction, a presence change): it takes the number of the
                        # event before it.
                        response = api.WatchTableResponse(sequence=last)
                        response.event.ParseFromString(event.payload)
                        if response.event.HasField("presence_changed"):
                            # Only what changes what this stream told (its own lease's
                            # announcement, say, follows the presence it started with).
                            changed = response.event.presence_changed
                            if bool(present >> changed.seat & 1) == changed.connected:
                                continue
                            present ^= 1 << changed.seat
                        yield response
                        sent = loop.time()
                        continue
                    if event.sequence <= last:
                        continue
                    if event.sequence > last + 1:
                        # A batch went missing on the way (a reconnect): fetch the gap.
                        gap = await self._read_since(table_id, last, event.sequence - 1)
                        if gap is None:
                            raise ServiceError("STREAM_LAGGED", "events were lost; resume")
                        for missed_event in gap:
                            if missed_event.audience is None or missed_event.audience == seat:
                                response = _event_response(missed_event)
                                yield response
                                sent = loop.time()
                                if _leaves(response, seat):
                                    raise _revoked()
                    last = event.sequence
                    if event.audience is None or event.audience == seat:
                        response = _event_response(event)
                        yield response
                        sent = loop.time()
                        if response.event.HasField("table_deleted"):
                            return
                        # Leaving revokes the seat's token (its epoch moves on): the stream
                        # ends here, before the seat's next private event, which belongs to
                        # whoever sits there next.
                        if _leaves(response, seat):
                            raise _revoked()
        except SubscriptionLostError:
            raise ServiceError(
                "STORE_UNAVAILABLE",
                "the server lost the table store; resume from the last sequence",
            ) from None
        except SubscriptionLaggedError:
            raise ServiceError(
                "STREAM_LAGGED", "this stream fell behind; resume from the last sequence"
            ) from None
        except TableGoneError:
            raise ServiceError("TABLE_NOT_FOUND", f"no table tables/{table_id}") from None
        finally:
            if lease:
                assert seat is not None
                self._end_lease(table_id, seat, lease)
            if swept:
                self._unwatch_slow_bots(table_id)
            self._watched[table_id] -= 1
            if self._watched[table_id] <= 0:
                del self._watched[table_id]
            await subscription.close()

    async def _read_since(self, table_id: str, after: int, upto: int) -> list[StoredEvent] | None:
        """Events ``after < sequence <= upto``, or None when some were trimmed away."""
        events: list[StoredEvent] = []
        cursor = after
        while cursor < upto:
            try:
                page = await self.store.read_events(table_id, after=cursor, limit=1000)
            except StoreUnavailableError as error:
                raise self._store_unavailable(error) from None
            if not page.events or page.events[0].sequence != cursor + 1:
                return None
            for event in page.events:
                if event.sequence > upto:
                    return events
                events.append(event)
                cursor = event.sequence
        return events


def game_over_document(record: TableRecord, now_ms: int) -> dict[str, Any]:
    """The ``game.over`` webhook's JSON document for a finished game's record (see
    docs/api.md, Webhooks)."""
    game = record.game
    assert game is not None
    outcome = result(game)
    assert outcome is not None
    return {
        # The creation time too: a rematch table that expired and was made again under its
        # name plays another game, with a result of its own.
        "id": f"{record.table_id}.{record.create_ms}.game_over",
        "type": "game.over",
        "time": _rfc3339(now_ms),
        "table": convert.table_name(record.table_id),
        "display_name": record.display_name,
        "rematch_of": convert.table_name(record.rematch_of) if record.rematch_of else None,
        "rules": record.rules.to_dict(),
        # Dealt from a seed its creator chose, who could recompute every hand: not to rank on.
        "seeded": record.deck_seed is not None,
        "rounds": len(game.rounds),
        "seats": [
            {
                "seat": index,
                "occupant": seat.occupant.value,
                "player_id": seat.player_id or None,
                "player_display_name": seat.name,
                "bot_level": seat.bot_level.value if seat.bot_level else None,
                "stand_in": seat.stand_in,
                "total_score": outcome.totals[index],
            }
            for index, seat in enumerate(record.seats)
        ],
        "winners": list(outcome.winners),
        "losers": list(outcome.losers),
    }


def turn_started_document(
    record: TableRecord, seats: tuple[int, ...], now_ms: int
) -> dict[str, Any]:
    """The ``turn.started`` webhook's JSON document: the game of ``record`` asks the players in
    ``seats`` for a move (see docs/api.md, Webhooks). It tells no card of anyone's."""
    game = record.game
    assert game is not None
    deadline = record.turn_deadline_ms
    return {
        # The sequence of the commit's last event: one document per commit of the table.
        "id": f"{record.table_id}.{record.create_ms}.turn.{record.sequence}",
        "type": "turn.started",
        "time": _rfc3339(now_ms),
        "table": convert.table_name(record.table_id),
        "display_name": record.display_name,
        # A table that expired can be made again under its name (a rematch's): its sequence
        # starts again, so the creation time tells the two apart.
        "create_time": _rfc3339(record.create_ms),
        "sequence": record.sequence,
        "phase": "PASSING" if game.phase is Phase.PASSING else "PLAYING",
        "round_number": game.round_index + 1,
        "deadline": None if deadline is None else _rfc3339(deadline),
        "seats": [
            {
                "seat": seat,
                "player_id": record.seats[seat].player_id or None,
                "player_display_name": record.seats[seat].name,
            }
            for seat in seats
        ],
    }


def _rfc3339(ms: int) -> str:
    seconds, millis = divmod(ms, 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) + f".{millis:03d}Z"


def _stand_in_name(name: str) -> str:
    """The name of the bot that stands in for the player ``name``: ``"Ann (bot)"``, at most
    40 characters like every display name (a long name is cut, with an ellipsis)."""
    suffix = " (bot)"
    room = _MAX_NAME - len(suffix)
    return (name if len(name) <= room else name[: room - 1] + "…") + suffix


def _has_control_characters(text: str) -> bool:
    """Whether ``text`` holds a C0 or C1 control character (a fingerprint's separator is one),
    or a bidirectional embedding, override or isolate (U+202A to U+202E, U+2066 to U+2069),
    which would let a name reorder the text shown after it: a lobby's or a score list's."""
    return _CONTROL_CHARACTER.search(text) is not None


# Searched at C speed.
_CONTROL_CHARACTER = re.compile("[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _is_visible(text: str) -> bool:
    """Whether ``text`` shows anything: a letter, digit, punctuation mark or symbol (emoji
    included). Spaces, format characters (a zero-width space, a joiner) and combining marks
    alone show nothing."""
    return any(unicodedata.category(character)[0] in "LNPS" for character in text)


def _already_seated(seat: int) -> ServiceError:
    return ServiceError(
        "ALREADY_SEATED",
        f"the player holds seat {seat} of this table already; join without a seat (or with "
        f"seat {seat}) for a new token for it",
    )


def _event_response(event: StoredEvent) -> api.WatchTableResponse:
    response = api.WatchTableResponse(sequence=event.sequence)
    response.event.ParseFromString(event.payload)
    return response


def _leaves(response: api.WatchTableResponse, seat: int | None) -> bool:
    """Whether ``response`` says that the player in ``seat`` (a watcher's seat) left it."""
    return (
        seat is not None
        and response.event.HasField("player_left")
        and response.event.player_left.seat == seat
    )


def _revoked() -> ServiceError:
    return ServiceError("TOKEN_REVOKED", "this seat was left; its token no longer works")


def _move_response(view: bytes, version: int) -> bytes:
    """A serialized PassCardsResponse or PlayCardResponse: ``view`` (a serialized TableView) and
    the etag of ``version``, without parsing the view into a message to serialize it again.

    Both responses are ``TableView view = 1; string etag = 2``: on the wire, field 1's key, the
    view's length as a varint and its bytes, then field 2's key, the etag's length and the etag,
    exactly what protobuf writes for the message (a test compares the two byte for byte). gRPC
    sends these bytes as they are (see :func:`hearts_server.rpc.add_servicer`).
    """
    etag = str(version).encode()
    return b"%s\x12%c%s" % (convert.length_prefixed(_VIEW_FIELD, view), len(etag), etag)


_VIEW_FIELD = b"\x0a"  # field 1, length-delimited
"""The key of a response's ``view`` (field 1, wire type 2); ``etag`` is field 2 (``\x12``), and
an etag, a version number, is always shorter than 128 bytes: its length is one byte."""


def _message(response: M | bytes) -> M:
    """A response that is a message (only moves answer with bytes)."""
    if isinstance(response, bytes):
        raise TypeError("expected a message, got serialized bytes")
    return response


def serialize_response(response: Message | bytes) -> bytes:
    """A response's wire form: a message serialized, or the bytes of one already serialized."""
    return response if isinstance(response, bytes) else response.SerializeToString()


def _fingerprint(request_id: str, method: bytes, *fields: object) -> bytes:
    """What identifies a request under its ``request_id``: its method and fields, hashed.

    Stored with the response, so that a request that reuses an id for something else is refused
    (``REQUEST_ID_REUSED``) instead of answered with another request's response, such as another
    player's seat token. Empty without a ``request_id``: nothing is remembered then.
    """
    if not request_id:
        return b""
    parts = [method]
    for field in fields:
        if isinstance(field, Message):
            parts.append(field.SerializeToString(deterministic=True))
        else:
            parts.append(field if isinstance(field, bytes) else str(field).encode())
    return hashlib.blake2b(b"\x1f".join(parts), digest_size=_FINGERPRINT_SIZE).digest()


_SEQUENCES_PER_MS = 1000
"""The sequence base of a table made under an agreed name is its creation time in ms times this:
a later table of the same name starts above an earlier one that had fewer events than this many
per ms between their creations (at least a second's worth of idle expiry: a million)."""


def _sequence_base(record: TableRecord) -> int:
    """The number before the table's first event: its base if it was made under an agreed name
    (see ``TableApp._make_table``), else 0. No table numbers its events anywhere near the base
    of its creation time (about 10**15) but one that started there."""
    base = record.create_ms * _SEQUENCES_PER_MS
    return base if record.sequence >= base else 0


_FINGERPRINT_SIZE = 16
_REMEMBERED = b"\x00"
"""The first byte of a remembered response that starts with its request's fingerprint. A
serialized message never starts with it (no field is numbered 0), so responses remembered before
fingerprints existed are still told apart, and answered without the check."""


def _remembered(fingerprint: bytes, response: bytes) -> bytes:
    """What the store keeps for a request id: the request's fingerprint, then its response."""
    return _REMEMBERED + fingerprint + response


def _replayed(response_type: type[M], remembered: bytes, fingerprint: bytes) -> M:
    """The response remembered for a retried request id, if the request is the same one."""
    if remembered[:1] == _REMEMBERED:
        if remembered[1 : 1 + _FINGERPRINT_SIZE] != fingerprint:
            raise ServiceError(
                "REQUEST_ID_REUSED", "that request_id was used for a different request"
            )
        remembered = remembered[1 + _FINGERPRINT_SIZE :]
    return _parse(response_type, remembered)


def _parse(response_type: type[M], raw: bytes) -> M:
    message = response_type()
    message.ParseFromString(raw)
    return message


def _check_request_id(request_id: str) -> None:
    if len(request_id) > _MAX_REQUEST_ID:
        raise ServiceError("INVALID_REQUEST", f"request_id is at most {_MAX_REQUEST_ID} characters")


_PLAYER_LIST_TTL_MS = 30 * 86_400_000


def _timed(record: TableRecord) -> bool:
    """Whether the table may have a deadline for its driver (see ``_arm_turn_timer``)."""
    return record.turn_timeout_ms > 0 or record.fill_after_ms > 0


def _turn_timeout_ms(table: pb.Table, most: int) -> int:
    """The table's turn timeout in milliseconds (0: none), from 1 s to ``most`` ms."""
    turn_timeout = table.turn_timeout if table.HasField("turn_timeout") else None
    return _duration_ms(turn_timeout, "turn_timeout", _MIN_TURN_TIMEOUT_MS, most, " on this server")


def _fill_after_ms(table: pb.Table, most: int) -> int:
    """The table's fill_with_bots_after in milliseconds (0: never), from 1 s to ``most`` ms."""
    fill_after = table.fill_with_bots_after if table.HasField("fill_with_bots_after") else None
    return _duration_ms(
        fill_after, "fill_with_bots_after", _MIN_TURN_TIMEOUT_MS, most, " on this server"
    )


def _heartbeat_seconds(interval: duration_pb2.Duration | None) -> float | None:
    """A watch's heartbeat_interval in seconds (None: no heartbeats), from 5 s to 10 minutes."""
    milliseconds = _duration_ms(
        interval, "heartbeat_interval", _MIN_HEARTBEAT_SECONDS * 1000, _MAX_HEARTBEAT_SECONDS * 1000
    )
    return milliseconds / 1000 if milliseconds else None


def _duration_ms(
    duration: duration_pb2.Duration | None, field: str, least: float, most: int, where: str = ""
) -> int:
    """The request's duration ``field`` in milliseconds (0: unset or zero), from ``least`` to
    ``most`` ms; INVALID_REQUEST otherwise. ``where``: what the limits are of, for the message."""
    if duration is None:
        return 0
    if duration.seconds < 0 or duration.nanos < 0:
        raise ServiceError("INVALID_REQUEST", f"{field} must not be negative")
    if duration.nanos >= 1_000_000_000:
        raise ServiceError(
            "INVALID_REQUEST", f"{field} is not a valid duration: nanos must be below 1,000,000,000"
        )
    milliseconds = duration.seconds * 1000 + duration.nanos // 1_000_000
    if milliseconds == 0 and duration.nanos == 0:
        return 0
    if not least <= milliseconds <= most:
        raise ServiceError(
            "INVALID_REQUEST",
            f"{field} must be from {least / 1000:g} to {most / 1000:g} seconds{where}, or unset",
        )
    return milliseconds


def _heartbeat(sequence: int, now_ms: int) -> api.WatchTableResponse:
    """A stream's Heartbeat: the number of the table's last event before it, and the server's
    time."""
    response = api.WatchTableResponse(sequence=sequence)
    response.heartbeat.server_time.FromMilliseconds(now_ms)
    return response


def caller_network(address: str) -> str:
    """Who a caller's IP ``address`` counts as for a limit: the address, or an IPv6 address's
    /64 (a host is given a whole /64 to pick its addresses from); empty for none."""
    if ":" in address:
        return str(ipaddress.ip_network(f"{address}/64", strict=False))
    return address


def _player_name(display_name: str) -> str:
    """A player's display name as given, trimmed; INVALID_ARGUMENT unless 1 to 40 characters
    without control characters, some of them visible.

    Control characters are looked for before trimming: ``str.strip`` also takes tabs, line
    breaks and the separators U+001C to U+001F off the ends, which the API refuses anywhere."""
    if len(display_name) > _MAX_NAME_GIVEN:  # before reading it: a request may hold 1 MiB
        raise ServiceError("INVALID_REQUEST", f"player_display_name: 1 to {_MAX_NAME} characters")
    if _has_control_characters(display_name):
        raise ServiceError("INVALID_REQUEST", "player_display_name: no control characters")
    display_name = display_name.strip()
    if not display_name or len(display_name) > _MAX_NAME:
        raise ServiceError("INVALID_REQUEST", f"player_display_name: 1 to {_MAX_NAME} characters")
    if not _is_visible(display_name):
        raise ServiceError(
            "INVALID_REQUEST",
            "player_display_name must show a letter, digit, punctuation mark or symbol",
        )
    return display_name


class _QuickGame(NamedTuple):
    """The game a QuickJoin asks for."""

    rules: Rules
    turn_timeout_ms: int
    fill_after_ms: int


def _lobby(game: _QuickGame) -> str:
    """The lobby slot of the quick games like ``game``: every rules option by name, so that
    callers agree on it whatever fields they left unset. (A game without bots to fill in is
    named as before that option existed.)"""
    parts: list[Any] = [game.rules.to_dict(), game.turn_timeout_ms]
    if game.fill_after_ms:
        parts.append(game.fill_after_ms)
    return f"game:{orjson.dumps(parts, option=orjson.OPT_SORT_KEYS).decode()}"


def _rules(table: pb.Table) -> Rules:
    try:
        return convert.rules_from_pb(table.rules)
    except MalformedError as error:
        raise from_engine(error) from None


def _encode_page_token(before: str, open_only: bool) -> str:
    return base64.urlsafe_b64encode(f"{int(open_only)}:{before}".encode()).decode()


def _decode_page_token(token: str, open_only: bool) -> str:
    try:
        flag, before = base64.urlsafe_b64decode(token.encode()).decode().split(":", 1)
    except (ValueError, binascii.Error, UnicodeDecodeError):
        raise ServiceError(
            "INVALID_PAGE_TOKEN", "the page_token is not one this server gave"
        ) from None
    if flag not in ("0", "1") or not _is_table_id(before):
        raise ServiceError("INVALID_PAGE_TOKEN", "the page_token is not one this server gave")
    if flag != str(int(open_only)):
        raise ServiceError("INVALID_PAGE_TOKEN", "page_token belongs to a different query")
    return before
