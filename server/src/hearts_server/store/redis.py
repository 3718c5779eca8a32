"""The Redis store: tables shared by every replica, one round trip per command on the hot path.

Each write is one Lua script (compare-and-set, append to the capped stream, remember the request,
refresh the TTL, publish the batch), sent with EVALSHA in a pipeline together with the listing
hint, which lives in another Cluster slot and so cannot be inside the script. Key names come from
:mod:`hearts_server.store.keys`; ``docs/redis.md`` describes the layout and the fan-out.

Live delivery: every commit PUBLISHes its batch on its table's channel; each process holds ONE
pub/sub connection, SUBSCRIBEd to the channels of the tables it has watchers for (and to no
others), whose listener hands batches to the local :class:`Hub`. The process therefore uses a
fixed number of connections (the pool plus one), never one per watcher, and receives the batches
of the tables it watches, not every table's.

Gap-free watching relies on one rule: a watcher subscribes first, then reads (``load`` or
``read_events``). A table's first local subscription sends SUBSCRIBE; reads of that table wait
until Redis has confirmed it (and, while the listener is not connected, until it is),
so every batch committed after a read returns reaches the subscription. When the listener loses
its connection, every local subscription is cut (:class:`SubscriptionLaggedError`) and resumes
from its last sequence.

This module must never block on a dead Redis: sockets time out and connection failures become
:class:`StoreUnavailableError`.
"""

from __future__ import annotations

import asyncio
import collections
import dataclasses
import functools
import hashlib
import logging
import math
import random
import struct
from collections.abc import Coroutine, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from redis.asyncio import ConnectionPool, Redis
from redis.asyncio.connection import AbstractConnection
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import NoScriptError, OutOfMemoryError, ReadOnlyError, RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.maint_notifications import MaintNotificationsConfig

from hearts_server.store import keys
from hearts_server.store.base import (
    EPHEMERAL_SEQUENCE,
    PLAYER_TABLES_KEPT,
    CommitOutcome,
    CommitResult,
    CreateResult,
    EventPage,
    Loaded,
    OutboxItem,
    Published,
    StoredEvent,
    StoreUnavailableError,
    StoreUnsupportedError,
)
from hearts_server.store.hub import Hub, HubSubscription
from hearts_server.store.lane import RedisLane

__all__ = ["RedisStore", "decode_batch", "encode_batch"]

_log = logging.getLogger(__name__)

# Listener reconnect backoff: quick first retry (a dropped socket), capped so a long outage costs
# one connection attempt per cap interval per process.
_BACKOFF_FIRST = 0.05
_BACKOFF_CAP = 2.0

# --- The published batch: version byte, then per event (sequence, audience, length) + payload. ---

_BATCH_FORMAT = 1
_EVENT_HEADER = struct.Struct(">QBI")
_PUBLIC = 0xFF


def encode_batch(events: Sequence[StoredEvent]) -> bytes:
    """The pub/sub message for a batch; replicas of different versions read the leading byte.

    >>> batch = [StoredEvent(7, None, b"x"), StoredEvent(8, 2, b"")]
    >>> decode_batch(encode_batch(batch)) == tuple(batch)
    True
    """
    parts = [bytes((_BATCH_FORMAT,))]
    for event in events:
        audience = _PUBLIC if event.audience is None else event.audience
        parts.append(_EVENT_HEADER.pack(event.sequence, audience, len(event.payload)))
        parts.append(event.payload)
    return b"".join(parts)


def decode_batch(data: bytes) -> tuple[StoredEvent, ...]:
    """The events of an :func:`encode_batch` message; ``ValueError`` if it is not one."""
    if not data or data[0] != _BATCH_FORMAT:
        raise ValueError("unknown batch format")
    events = []
    offset = 1
    try:
        while offset < len(data):
            sequence, audience, length = _EVENT_HEADER.unpack_from(data, offset)
            offset += _EVENT_HEADER.size
            if offset + length > len(data):
                raise ValueError("truncated batch")
            payload = data[offset : offset + length]
            offset += length
            events.append(StoredEvent(sequence, None if audience == _PUBLIC else audience, payload))
    except struct.error as exc:
        raise ValueError("truncated batch") from exc
    return tuple(events)


# --- Scripts ---


@dataclasses.dataclass(frozen=True, slots=True)
class _Script:
    source: bytes
    sha: str

    @classmethod
    def read(cls, name: str) -> _Script:
        source = (Path(__file__).with_name("lua") / f"{name}.lua").read_bytes()
        return cls(source, hashlib.sha1(source).hexdigest())


_LOAD = _Script.read("load")
_CREATE = _Script.read("create")
_COMMIT = _Script.read("commit")
_DELETE = _Script.read("delete")
_OUTBOX_CLAIM = _Script.read("outbox_claim")
_DUE_CLAIM = _Script.read("due_claim")
_OUTBOX_RETRY = _Script.read("outbox_retry")
_EPHEMERAL = _Script.read("ephemeral")
_QUOTA = _Script.read("quota")
_LOBBY = _Script.read("lobby")
_PLAYER = _Script.read("player")
_PRESENCE = _Script.read("presence")
_SCRIPTS = (
    _LOAD,
    _CREATE,
    _COMMIT,
    _DELETE,
    _OUTBOX_CLAIM,
    _DUE_CLAIM,
    _OUTBOX_RETRY,
    _EPHEMERAL,
    _QUOTA,
    _LOBBY,
    _PLAYER,
    _PRESENCE,
)

_APPLIED, _CONFLICT, _REPLAYED, _OUT_OF_ORDER, _SECOND_PART_DIFFERS = 1, 0, 2, -1, 3
_PUBLISHED = {1: Published.SENT, 0: Published.LIMITED, -1: Published.STALE}

# Tables whose newest stamp a process keeps: past that, the least recently used table's next
# commit or load reads its record again (see RedisStore._stamp_of).
_STAMPS_KEPT = 65_536
# The bytes of records' second parts a process keeps, to leave a part out of the table's next
# commit when unchanged (a few KiB a table; up to about 120 KiB late in a game to 1,000
# points): past that, the least recently used tables' next commits send their parts again.
_SECONDS_BYTES = 16 << 20
_STAMP_SOURCE = random.Random()  # seeded from the OS: processes draw different stamps


def _new_stamp() -> bytes:
    """A write's stamp: 64 random bits, in hex (never ``-``, never empty)."""
    return b"%016x" % _STAMP_SOURCE.getrandbits(64)


_Command = tuple[bytes | str | int, ...]
"""One Redis command as its arguments, for :meth:`RedisStore._run`."""


class _Unavailable:
    """Turn "Redis cannot answer now" errors into StoreUnavailableError: ``with _UNAVAILABLE:``.

    A class rather than a generator-based context manager: it is entered on every command.
    """

    __slots__ = ()

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        # A replica that is read-only and a Redis at its maxmemory (noeviction refuses writes)
        # cannot take a command now either; the message says which, for the log.
        if isinstance(exc, _UNAVAILABLE_ERRORS):
            raise StoreUnavailableError(f"{type(exc).__name__}: {exc}") from exc


def _described(exc: BaseException) -> str:
    """``Kind: message`` for the log (redis-py's errors leave the message out of their repr)."""
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


_UNAVAILABLE_ERRORS = (RedisConnectionError, RedisTimeoutError, ReadOnlyError, OutOfMemoryError)
_UNAVAILABLE = _Unavailable()


def _joined(first: bytes, second: bytes | None) -> bytes:
    """A record as it was given to the store, from its hash fields ``d`` and ``f``: a record
    given in two lines is kept as two fields (see RedisStore.commit)."""
    return first if second is None else b"%s\n%s" % (first, second)


def _event_args(events: Sequence[StoredEvent]) -> list[bytes | int | str]:
    """Flatten events for a script; sequences must be positive and increasing (stream ids)."""
    args: list[bytes | int | str] = []
    last = 0
    for event in events:
        if event.sequence <= last:
            raise ValueError(f"event sequences must be >= 1 and increasing, got {event.sequence}")
        last = event.sequence
        args += [event.sequence, "" if event.audience is None else event.audience, event.payload]
    return args


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


def _flag(value: bool) -> str:
    return "1" if value else "0"


class RedisStore:
    """A :class:`~hearts_server.store.base.Store` in Redis, shared by all replicas."""

    def __init__(
        self,
        listener_pool: ConnectionPool,
        *,
        idle_ttl_seconds: float,
        finished_ttl_seconds: float,
        max_events: int,
        hub: Hub | None,
        timeout: float,
        sweep_interval_seconds: float,
        lane: RedisLane,
    ) -> None:
        """Use :meth:`from_url`; this takes the already built lane and listener pool."""
        if max_events < 1:
            raise ValueError("max_events must be at least 1")
        self._lane = lane
        self._listener_pool = listener_pool
        self._idle_ttl_ms = _ms(idle_ttl_seconds)
        self._finished_ttl_ms = _ms(finished_ttl_seconds)
        self._max_events = max_events
        self.hub = hub if hub is not None else Hub()
        self._timeout = timeout
        self._sweep_interval = sweep_interval_seconds
        self._live = asyncio.Event()
        # The tables this process has watchers for, each with the confirmation of its channel's
        # SUBSCRIBE (done once Redis confirmed the last one sent), and per table the SUBSCRIBE
        # replies still to come: a table left and watched again before the first reply arrived
        # is confirmed by the last one only.
        self._channels: dict[str, asyncio.Future[None]] = {}
        self._replies_due: collections.Counter[str] = collections.Counter()
        self._listener: AbstractConnection | None = None
        self.hub.on_idle = self._unwatched
        self._tasks: list[asyncio.Task[None]] = []
        self._chores: set[asyncio.Task[object]] = set()
        self._sweep_cursors: dict[str, str | None] = {}
        # Per table, the newest (version, stamp) this process read or wrote: commits and loads
        # that name a version also name its stamp (see _stamp_of).
        self._stamps: collections.OrderedDict[str, tuple[int, bytes]] = collections.OrderedDict()
        # Per table, the second part of the record at that version and stamp, when it has one:
        # a commit leaves out a second part that is the same bytes (see commit). At most
        # _SECONDS_BYTES of them, least recently used dropped; none of a finished game.
        self._seconds: collections.OrderedDict[str, tuple[int, bytes, bytes]] = (
            collections.OrderedDict()
        )
        self._seconds_bytes = 0

    @classmethod
    def from_url(
        cls,
        url: str,
        *,
        idle_ttl_seconds: float = 3600,
        finished_ttl_seconds: float = 600,
        max_events: int = 5000,
        hub: Hub | None = None,
        socket_timeout: float = 5.0,
        sweep_interval_seconds: float = 60.0,
    ) -> RedisStore:
        """A store on ``url``: one multiplexed connection for commands (a :class:`RedisLane`)
        and one pub/sub connection.

        Nothing connects until the first command. ``socket_timeout`` bounds every wait on Redis
        (connect, reply), so a dead Redis fails fast.
        """
        common: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": socket_timeout,
            # Retrying here could run a write twice; the caller decides (CAS makes that safe).
            "retry": Retry(NoBackoff(), 0),
            # With maintenance notifications on ("auto"), redis-py skips its check for pooled
            # connections the server closed, so a reconnect after a Redis restart would fail
            # once. They are a managed-Redis feature this store does not use.
            "maint_notifications_config": MaintNotificationsConfig(enabled=False),
        }
        # RESP2 on the listener: there, messages are plain replies that read_response returns in
        # order (RESP3 would route them to push handlers instead).
        listener_pool = ConnectionPool.from_url(
            url, max_connections=1, client_name="hearts-listener", protocol=2, **common
        )
        # Commands go through one multiplexed connection (see lane.py). redis-py parses the URL
        # (TCP, TLS or a unix socket, user, password, database) and lends its response
        # callbacks; its pool opens no connection.
        settings = ConnectionPool.from_url(url, **common)
        lane = RedisLane.of_pool(
            settings,
            timeout=socket_timeout,
            callbacks=Redis.from_pool(settings).response_callbacks,
            client_name="hearts",
        )
        return cls(
            listener_pool,
            idle_ttl_seconds=idle_ttl_seconds,
            finished_ttl_seconds=finished_ttl_seconds,
            max_events=max_events,
            hub=hub,
            timeout=socket_timeout,
            sweep_interval_seconds=sweep_interval_seconds,
            lane=lane,
        )

    # --- Round trips ---

    async def _run(self, *commands: _Command, raw: bool = False, errors: bool = False) -> list[Any]:
        """Send ``commands`` together (one round trip) and return their replies.

        A NOSCRIPT reply (Redis restarted or SCRIPT FLUSH) loads the scripts and sends the
        commands once more; redis-py's Script objects would instead add a SCRIPT EXISTS round
        trip to every call. Replies are parsed as redis-py's ``execute_command`` parses each
        command, unless ``raw``. An error reply raises (as :class:`StoreUnavailableError`),
        unless ``errors``: then it is returned in its command's place, as an exception.
        """
        for attempt in range(2):
            with _UNAVAILABLE:
                results = await self._lane.run(commands, raw=raw)
            if attempt == 0 and any(isinstance(r, NoScriptError) for r in results):
                await self._load_scripts()
                continue
            if errors:
                return results
            for result in results:
                if isinstance(result, Exception):
                    with _UNAVAILABLE:
                        raise result
            return results
        raise AssertionError("unreachable")  # pragma: no cover

    async def _run_one(self, command: _Command) -> Any:
        return (await self._run(command))[0]

    async def _load_scripts(self) -> None:
        await self._run(*(("SCRIPT LOAD", script.source) for script in _SCRIPTS))

    # --- Store ---

    def _stamp_of(self, table_id: str, version: int) -> bytes:
        """The stamp of ``version`` of the table as this process saw it, or ``-`` (unknown).

        Versions alone do not tell records apart once Redis lost writes (a restart from an older
        snapshot, a promoted replica that lagged): the table may reach a version again with other
        moves, and a process holding the lost record must not take it for the current one. So
        every write also sets a random stamp, and the scripts leave a record out of a load, or
        let a commit replace it, only when version and stamp both match. An unknown stamp
        matches nothing: the caller reads the record again, as after any conflict.
        """
        seen = self._stamps.get(table_id)
        if seen is None or seen[0] != version:
            return b"-"
        return seen[1]

    def _saw(self, table_id: str, version: int, stamp: bytes, second: bytes | None) -> None:
        """Note the newest record of a table this process read or wrote, and the second part
        it holds (None: none, or not known)."""
        self._stamps[table_id] = (version, stamp)
        self._stamps.move_to_end(table_id)
        if len(self._stamps) > _STAMPS_KEPT:
            self._stamps.popitem(last=False)
        self._drop_second(table_id)
        if second is None:
            return
        self._seconds[table_id] = (version, stamp, second)
        self._seconds_bytes += len(second)
        while self._seconds_bytes > _SECONDS_BYTES:
            self._seconds_bytes -= len(self._seconds.popitem(last=False)[1][2])

    def _drop_second(self, table_id: str) -> None:
        dropped = self._seconds.pop(table_id, None)
        if dropped is not None:
            self._seconds_bytes -= len(dropped[2])

    def _forget(self, table_id: str) -> None:
        self._stamps.pop(table_id, None)
        self._drop_second(table_id)

    async def load(
        self,
        table_id: str,
        *,
        caller: str | None = None,
        request_id: str | None = None,
        known_version: int = 0,
    ) -> Loaded:
        await self._until_live(table_id)
        check = caller is not None and bool(request_id)
        [reply] = await self._run(
            (
                "EVALSHA",
                _LOAD.sha,
                2,
                keys.table(table_id),
                keys.requests(table_id),
                _flag(check),
                caller or "",
                request_id or "",
                known_version,
                self._stamp_of(table_id, known_version) if known_version else b"-",
            )
        )
        if reply[0] == 0:
            self._forget(table_id)
            return Loaded(0, b"")
        version, data, stamp, second = int(reply[0]), reply[1], reply[2], reply[3]
        if data:
            self._saw(table_id, version, stamp, second)
            data = _joined(data, second)
        else:  # the record this process holds, and the second part it noted with it
            seen = self._seconds.get(table_id)
            held = seen is not None and seen[0] == version and seen[1] == stamp
            self._saw(table_id, version, stamp, seen[2] if held and seen is not None else None)
        return Loaded(version, data, reply[4] if len(reply) > 4 else None)

    async def create(
        self,
        table_id: str,
        data: bytes,
        events: Sequence[StoredEvent],
        *,
        open_seats: bool,
        request_id: str | None = None,
        response: bytes | None = None,
        finished: bool = False,
        listed: bool = True,
        due_ms: int | None = None,
    ) -> CreateResult:
        claim = keys.create_request(request_id) if request_id else None
        if claim is not None:
            # Claim the request id before creating (a second round trip, only for creates that
            # carry one): two concurrent retries must not both make a table. The claim lives in
            # another slot than the table, so it cannot be part of the create script.
            if response is None:
                earlier = await self._run_one(("GET", claim))
            else:
                claimed = _pack(table_id.encode(), response)
                # Raw: redis-py's SET callback answers a bool unless told of GET.
                [earlier] = await self._run(
                    ("SET", claim, claimed, "NX", "GET", "PX", self._idle_ttl_ms), raw=True
                )
            if earlier is not None:
                earlier_id, earlier_response = _unpack(earlier)
                return CreateResult(False, earlier_id.decode(), earlier_response)
        stamp = _new_stamp()
        cut = data.find(b"\n")
        first, second = (data, None) if cut < 0 else (data[:cut], data[cut + 1 :])
        script: _Command = (
            "EVALSHA",
            _CREATE.sha,
            5,
            *_table_keys(table_id),
            keys.gone(table_id),
            keys.DUE,
            first,
            _flag(open_seats),
            self._finished_ttl_ms if finished else self._idle_ttl_ms,
            self._max_events,
            keys.notify_channel(table_id),
            encode_batch(events) if events else b"",
            stamp,
            "" if second is None else "s",
            b"" if second is None else second,
            "" if due_ms is None else due_ms,
            table_id,
            *_event_args(events),
        )
        # The index entries go in the same round trip, before the script; harmless if the id
        # was taken (listing re-checks each record). An unlisted table goes to an index only
        # counted and swept.
        if not listed:
            indexes = [keys.INDEX_UNLISTED]
        else:
            indexes = [keys.INDEX_ALL, keys.INDEX_OPEN] if open_seats else [keys.INDEX_ALL]
        listing: list[_Command] = [("ZADD", index, 0, table_id) for index in indexes]
        replies = await self._run(*listing, script, errors=True)
        made = replies[-1]
        refused = next((reply for reply in replies if isinstance(reply, Exception)), None)
        if refused is not None:
            await self._undo_create(
                table_id, made, listing, claim if response is not None else None
            )
            with _UNAVAILABLE:
                raise refused
        created = made == 1
        if created:
            self._saw(table_id, 1, stamp, second)
        elif claim is not None and response is not None:
            # The id this call claimed is taken: a retry of this very request, answered from
            # the claim while this call was on its way, made the table (ids are random; see
            # TableApp._make_claimed_table). It answers as that retry did; dropping the claim
            # would let the next retry make a second table.
            return CreateResult(False, table_id, response)
        return CreateResult(created, table_id)

    async def _undo_create(
        self, table_id: str, made: object, listing: Sequence[_Command], claim: str | None
    ) -> None:
        """Take back a create that Redis refused in part (at maxmemory, say; the listing is in
        other slots than the table, so it cannot be one script with it).

        ``made`` is the create script's reply. A table made but left out of the listing would
        stay out of ListTables for good, and the request id's ``claim`` (when this call set it)
        would answer every retry with it; a claim of a table never made would answer retries
        with a table that does not exist. So the table goes while it is untouched (version 1),
        and then the claim: the retry makes the table anew. A table someone moved on meanwhile
        (a retry the claim answered, then joined; a QuickJoin's, whose id its lobby slot names)
        lives, keeps its claim, and gets its listing again. A script that failed may have left
        its events, which must not outlive the table that never was. Best effort: these
        commands are allowed at maxmemory, and listing entries of a table that does not exist
        are harmless (each listing checks the record; the sweep removes them).
        """
        try:
            if made == 1:
                channel = keys.notify_channel(table_id)
                [deleted] = await self._run(
                    # Not marked gone: a create retried (a QuickJoin's, say) may make it again.
                    (
                        "EVALSHA",
                        _DELETE.sha,
                        5,
                        *_table_keys(table_id),
                        keys.gone(table_id),
                        keys.DUE,
                        1,
                        channel,
                        b"",
                        "",
                        table_id,
                    ),
                    errors=True,
                )
                if deleted != 1:
                    await self._run(*listing, errors=True)
                    return
            undo: list[_Command] = [] if claim is None else [("DEL", claim)]
            if isinstance(made, Exception):  # the script failed part way
                undo.append(("PEXPIRE", keys.events(table_id), self._idle_ttl_ms))
            if undo:
                await self._run(*undo, errors=True)
        except StoreUnavailableError:
            _log.warning("could not take back the create of %s, refused in part", table_id)

    async def commit(
        self,
        table_id: str,
        *,
        expected_version: int,
        data: bytes,
        events: Sequence[StoredEvent],
        caller: str | None = None,
        request_id: str | None = None,
        response: bytes | None = None,
        open_seats: bool | None = None,
        finished: bool = False,
        outbox: tuple[OutboxItem, int] | None = None,
        due_ms: int | None = None,
    ) -> CommitResult:
        attempt = functools.partial(
            self._commit,
            table_id,
            expected_version=expected_version,
            data=data,
            events=events,
            caller=caller,
            request_id=request_id,
            response=response,
            open_seats=open_seats,
            finished=finished,
            outbox=outbox,
            due_ms=due_ms,
        )
        result = await attempt(whole=False)
        if result is None:
            # The stored rounds are not those this process saw at that version: never for a
            # record it read or wrote (the stamp matched), unless they were changed by hand
            # (to another length: the script checks no more).
            _log.warning("%s: the stored record's rounds are not those this process saw", table_id)
            result = await attempt(whole=True)
            assert result is not None  # the whole record is never refused for its rounds
        return result

    async def _commit(
        self,
        table_id: str,
        *,
        whole: bool,
        expected_version: int,
        data: bytes,
        events: Sequence[StoredEvent],
        caller: str | None,
        request_id: str | None,
        response: bytes | None,
        open_seats: bool | None,
        finished: bool,
        outbox: tuple[OutboxItem, int] | None,
        due_ms: int | None,
    ) -> CommitResult | None:
        """:meth:`commit`; None when it sent only the length of the record's second part (not
        ``whole``) and the stored one has another."""
        checks = caller is not None and bool(request_id)
        mode = ("2" if response is not None else "1") if checks else "0"
        stamp = _new_stamp()
        item, item_due_ms = outbox if outbox is not None else (None, 0)
        # The record's second part, its finished rounds, is sent only when it is not the very
        # bytes this process read or wrote with the version the commit expects (which the
        # stamp makes the stored record). The script checks the stored part's length.
        cut = data.find(b"\n")
        kept: bytes | None = None
        if cut < 0:
            first, keep, second = data, "", b""
        else:
            first = data[:cut]
            seen = self._seconds.get(table_id)
            if (
                not whole
                and seen is not None
                and seen[0] == expected_version
                and seen[1] == self._stamp_of(table_id, expected_version)
                and len(seen[2]) == len(data) - cut - 1
                and data.endswith(seen[2])
            ):
                kept = seen[2]
                keep, second = "k", b"%d" % len(kept)
            else:
                keep, second = "s", data[cut + 1 :]
        script: _Command = (
            "EVALSHA",
            _COMMIT.sha,
            6,
            *_table_keys(table_id),
            keys.OUTBOX,
            keys.OUTBOX_ITEMS,
            keys.DUE,
            expected_version,
            first,
            self._finished_ttl_ms if finished else self._idle_ttl_ms,
            caller or "",
            request_id or "",
            mode,
            response or b"",
            "" if open_seats is None else _flag(open_seats),
            self._max_events,
            keys.notify_channel(table_id),
            encode_batch(events) if events else b"",
            self._stamp_of(table_id, expected_version),
            stamp,
            "" if item is None else item.id,
            b"" if item is None else item.payload,
            item_due_ms,
            keep,
            second,
            "" if due_ms is None else due_ms,
            table_id,
            *_event_args(events),
        )
        hint = () if open_seats is None else (_open_hint(table_id, open=open_seats),)
        reply = (await self._run(script, *hint))[0]
        code, version = int(reply[0]), int(reply[1])
        if code == _APPLIED:
            # A finished game takes no more moves: its rounds are not kept for a next commit.
            known = None if cut < 0 or finished else second if kept is None else kept
            self._saw(table_id, version, stamp, known)
            return CommitResult(CommitOutcome.APPLIED, version)
        if code == _SECOND_PART_DIFFERS:
            return None
        if code == _OUT_OF_ORDER:
            raise ValueError(f"events do not follow the table's log: {reply[2]!r}")
        if open_seats is not None:
            # The hint went out although the commit did not apply: restore what the record says.
            actual = (reply[3] if code == _REPLAYED else reply[2]) == b"1"
            if version == 0 or actual != open_seats:
                await self._run(_open_hint(table_id, open=version > 0 and actual))
        if code == _REPLAYED:
            return CommitResult(CommitOutcome.REPLAYED, version, reply[2])
        return CommitResult(CommitOutcome.CONFLICT, version)

    async def delete(
        self, table_id: str, *, expected_version: int, events: Sequence[StoredEvent]
    ) -> bool:
        _event_args(events)  # the same checks as a commit
        [deleted] = await self._run(
            (
                "EVALSHA",
                _DELETE.sha,
                5,
                *_table_keys(table_id),
                keys.gone(table_id),
                keys.DUE,
                expected_version,
                keys.notify_channel(table_id),
                encode_batch(events) if events else b"",
                self._idle_ttl_ms,
                table_id,
            )
        )
        if deleted != 1:
            return False
        self._forget(table_id)
        # Unlisting needs another round trip (the index lives in another slot), and only once
        # the delete applied, since a refused delete must not unlist. It runs in the background
        # so the request costs one round trip here; listing drops ids whose record is gone
        # anyway, and the sweeper catches any unlisting that fails.
        self._background(self._run(*_unlist([table_id])))
        return True

    async def read_events(self, table_id: str, *, after: int, limit: int = 1000) -> EventPage:
        await self._until_live(table_id)
        stream = keys.events(table_id)
        head: _Command = ("XRANGE", stream, "-", "+", "COUNT", 1)
        if limit <= 0:
            [first] = await self._run(head)
            return EventPage((), _sequence_of(first[0][0]) if first else 0)
        first, entries = await self._run(
            head, ("XRANGE", stream, f"{max(0, after + 1)}-0", "+", "COUNT", limit)
        )
        if not first:
            return EventPage((), 0)
        return EventPage(tuple(_stored(i, f) for i, f in entries), _sequence_of(first[0][0]))

    async def list_tables(
        self, *, open_only: bool, before_id: str | None, limit: int
    ) -> tuple[list[tuple[str, int, bytes]], bool]:
        index = keys.INDEX_OPEN if open_only else keys.INDEX_ALL
        found: list[tuple[str, int, bytes]] = []
        gone: list[str] = []
        upper = "+" if before_id is None else f"({before_id}"
        # Index entries are hints: fetch one more than asked, drop those whose record is gone
        # (or, for open_only, no longer open) and fetch again until the page is full.
        while len(found) <= limit:
            want = limit + 1 - len(found)
            [members] = await self._run(("ZREVRANGEBYLEX", index, upper, "-", "LIMIT", 0, want))
            ids = [m.decode() for m in members]
            if not ids:
                break
            upper = f"({ids[-1]}"
            records = await self._run(*(("HMGET", keys.table(i), "v", "d", "o") for i in ids))
            for table_id, (version, data, open_flag) in zip(ids, records, strict=True):
                if data is None:
                    gone.append(table_id)
                elif not open_only or open_flag == b"1":
                    found.append((table_id, int(version), data))
            if len(ids) < want:
                break
        if gone:
            await self._run(*_unlist(gone))
        return found[:limit], len(found) > limit

    def end_watchers(self, table_id: str) -> None:
        self.hub.end_gone(table_id)

    def subscribe(self, table_id: str) -> HubSubscription:
        self._ensure_background()
        subscription = self.hub.subscribe(table_id)
        if table_id not in self._channels:
            # The table's first watcher here: SUBSCRIBE to its channel. Reads of the table wait
            # for Redis to confirm it (see _until_live), which keeps the subscribe-then-read rule.
            self._channels[table_id] = asyncio.get_running_loop().create_future()
            if self._live.is_set():
                self._subscribe_channels((table_id,))
            # Otherwise the listener subscribes it once connected.
        return subscription

    async def start(self) -> None:
        """Connect the pub/sub listener now and wait until it is live (else raise)."""
        self._ensure_background()
        await self._until_live()

    async def ping(self) -> None:
        """Check that Redis answers and is one this store can use.

        A Redis Cluster node answers PING but redirects most keys to other nodes, which this
        store's single-endpoint client does not follow: every call would fail. Refused here,
        at start-up, with :class:`StoreUnsupportedError` instead.
        """
        (info,) = await self._run(("INFO", "cluster"))  # redis-py parses it into a dict
        if info.get("cluster_enabled") in (1, "1"):
            raise StoreUnsupportedError(
                "the Redis at HEARTS_REDIS_URL is a Redis Cluster node; hearts-server needs a "
                "standalone Redis (or one endpoint of a Sentinel or managed primary)"
            )

    def _background(self, work: Coroutine[object, object, object]) -> None:
        """Run a best-effort chore off the request path; failures are logged, never raised."""

        async def chore() -> object:
            try:
                return await work
            except Exception:
                _log.warning("a background Redis chore failed", exc_info=True)
                return None

        task: asyncio.Task[object] = asyncio.get_running_loop().create_task(chore())
        self._chores.add(task)
        task.add_done_callback(self._chores.discard)

    async def time(self) -> float:
        """Redis's ``TIME``: seconds and microseconds, as a float."""
        seconds, microseconds = await self._run_one(("TIME",))
        return int(seconds) + int(microseconds) / 1_000_000

    async def close(self) -> None:
        if self._chores:
            await asyncio.gather(*self._chores, return_exceptions=True)
        tasks, self._tasks = self._tasks, []
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        self._live.clear()
        self.hub.close_all()
        await self._lane.aclose()
        await self._listener_pool.disconnect()

    def end_all_watchers(self) -> None:
        self.hub.close_all()

    async def due_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[str]:
        [reply] = await self._run(("EVALSHA", _DUE_CLAIM.sha, 1, keys.DUE, now_ms, lease_ms, limit))
        return [table_id.decode() for table_id in reply]

    async def due_drop(self, table_id: str) -> None:
        await self._run(("ZREM", keys.DUE, table_id))

    async def outbox_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[OutboxItem]:
        [reply] = await self._run(
            (
                "EVALSHA",
                _OUTBOX_CLAIM.sha,
                3,
                keys.OUTBOX,
                keys.OUTBOX_ITEMS,
                keys.OUTBOX_ATTEMPTS,
                now_ms,
                now_ms + lease_ms,
                limit,
            )
        )
        return [
            OutboxItem(reply[i].decode(), reply[i + 1], int(reply[i + 2]), now_ms + lease_ms)
            for i in range(0, len(reply), 3)
        ]

    async def outbox_done(self, item_id: str) -> None:
        await self._run(
            ("ZREM", keys.OUTBOX, item_id),
            ("HDEL", keys.OUTBOX_ITEMS, item_id),
            ("HDEL", keys.OUTBOX_ATTEMPTS, item_id),
        )

    async def outbox_retry(self, item: OutboxItem, *, due_ms: int) -> bool:
        [applied] = await self._run(
            ("EVALSHA", _OUTBOX_RETRY.sha, 1, keys.OUTBOX, item.id, item.lease_ms, due_ms)
        )
        return bool(applied)

    async def outbox_size(self) -> int:
        return int(await self._run_one(("ZCARD", keys.OUTBOX)))

    async def count_use(
        self, name: str, *, window_ms: int, create_request_id: str | None = None
    ) -> int:
        quota_keys = [keys.quota(name)]
        if create_request_id:
            quota_keys.append(keys.create_request(create_request_id))
        [count] = await self._run(("EVALSHA", _QUOTA.sha, len(quota_keys), *quota_keys, window_ms))
        return int(count)

    async def lobby_get(self, name: str) -> str | None:
        held = await self._run_one(("GET", keys.lobby(name)))
        return None if held is None else bytes(held).decode()

    async def lobby_offer(
        self, name: str, table_id: str, *, ttl_ms: int, replacing: str | None = None
    ) -> str:
        held = await self._run_one(
            (
                "EVALSHA",
                _LOBBY.sha,
                1,
                keys.lobby(name),
                "offer",
                table_id,
                ttl_ms,
                replacing or table_id,
            )
        )
        return bytes(held).decode()

    async def lobby_put(self, name: str, table_id: str, *, ttl_ms: int) -> None:
        await self._run_one(("SET", keys.lobby(name), table_id, "PX", ttl_ms))

    async def lobby_release(self, name: str, table_id: str) -> None:
        await self._run_one(("EVALSHA", _LOBBY.sha, 1, keys.lobby(name), "release", table_id))

    async def player_seat_taken(
        self, player_id: str, table_id: str, *, at_us: int, ttl_ms: int, if_absent: bool = False
    ) -> None:
        key = keys.player_tables(player_id)
        add = ("ZADD", key, "NX", at_us, table_id) if if_absent else ("ZADD", key, at_us, table_id)
        await self._run(
            add,
            ("ZREMRANGEBYRANK", key, 0, -PLAYER_TABLES_KEPT - 1),  # keeps the newest
            ("PEXPIRE", key, ttl_ms),
        )

    async def player_tables(self, player_id: str, *, ttl_ms: int) -> list[tuple[str, int, bytes]]:
        key = keys.player_tables(player_id)
        # redis-py answers WITHSCORES as (member, score) pairs, the score a float (exact here:
        # microseconds stay below 2**53 for centuries).
        pairs, _ = await self._run(
            ("ZREVRANGE", key, 0, PLAYER_TABLES_KEPT - 1, "WITHSCORES"), ("PEXPIRE", key, ttl_ms)
        )
        if not pairs:
            return []
        ids = [bytes(member).decode() for member, _ in pairs]
        records = await self._run(*(("HMGET", keys.table(i), "v", "d") for i in ids))
        found: list[tuple[str, int, bytes]] = []
        gone: list[str] = []
        for table_id, (_, score), (version, data) in zip(ids, pairs, records, strict=True):
            if data is None:
                gone += [table_id, f"{score:.0f}"]
            else:
                found.append((table_id, int(version), data))
        if gone:
            # Only entries that still have the score read: see player.lua.
            await self._run_one(("EVALSHA", _PLAYER.sha, 1, key, *gone))
        return found

    async def publish_ephemeral(
        self,
        table_id: str,
        payload: bytes,
        *,
        expected_version: int,
        sender: str,
        limit: int,
        window_ms: int,
    ) -> Published:
        [published] = await self._run(
            (
                "EVALSHA",
                _EPHEMERAL.sha,
                2,
                keys.table(table_id),
                keys.ephemeral_rate(table_id, sender),
                expected_version,
                limit,
                window_ms,
                keys.notify_channel(table_id),
                encode_batch((StoredEvent(EPHEMERAL_SEQUENCE, None, payload),)),
            )
        )
        return _PUBLISHED[int(published)]

    async def presence(
        self,
        table_id: str,
        *,
        now_ms: int,
        until_ms: int,
        hold: Sequence[tuple[int, str]] = (),
        drop: Sequence[tuple[int, str]] = (),
        vacate: Sequence[tuple[int, str]] = (),
        announce: Sequence[bytes] = (),
    ) -> int:
        batches = [encode_batch((StoredEvent(EPHEMERAL_SEQUENCE, None, e),)) for e in announce]
        bits = await self._run_one(
            (
                "EVALSHA",
                _PRESENCE.sha,
                1,
                keys.presence(table_id),
                now_ms,
                until_ms,
                keys.notify_channel(table_id),
                len(batches),
                *batches,
                len(drop),
                *(f"{seat}:{stream}" for seat, stream in drop),
                len(vacate),
                *(f"{seat}:{prefix}" for seat, prefix in vacate),
                *(f"{seat}:{stream}" for seat, stream in hold),
            )
        )
        return int(bits)

    async def table_count(self) -> int:
        """Entries in the indexes (for metrics); expired tables count until swept."""
        listed, unlisted = await self._run(
            ("ZCARD", keys.INDEX_ALL), ("ZCARD", keys.INDEX_UNLISTED)
        )
        return int(listed) + int(unlisted)

    async def sweep_index(self, *, batch: int = 200) -> int:
        """Unlist up to ``batch`` index entries whose table is gone; return how many.

        Listing drops the gone entries it meets, but old ones at the far end would stay forever;
        this walks the whole index one slice per call, oldest first, and wraps around. The
        index of unlisted tables, which no listing reads, is walked the same way.
        """
        swept = 0
        for index in (keys.INDEX_ALL, keys.INDEX_UNLISTED):
            cursor = self._sweep_cursors.get(index)
            lower = "-" if cursor is None else f"({cursor}"
            [members] = await self._run(("ZRANGEBYLEX", index, lower, "+", "LIMIT", 0, batch))
            ids = [m.decode() for m in members]
            self._sweep_cursors[index] = ids[-1] if len(ids) == batch else None
            if not ids:
                continue
            exists = await self._run(*(("EXISTS", keys.table(i)) for i in ids))
            gone = [i for i, e in zip(ids, exists, strict=True) if not e]
            if gone:
                await self._run(*_unlist(gone))
            swept += len(gone)
        return swept

    # --- Background: the pub/sub listener and the index sweeper ---

    def _ensure_background(self) -> None:
        if self._tasks:
            return
        self._tasks = [
            asyncio.create_task(self._listen(), name="hearts-redis-listener"),
            asyncio.create_task(self._sweep(), name="hearts-redis-sweeper"),
        ]

    async def _until_live(self, table_id: str | None = None) -> None:
        """Wait until batches committed from now on reach this process's watchers of
        ``table_id``: the listener is connected and, if the table is watched here, Redis has
        confirmed its channel's SUBSCRIBE (see the module docstring)."""
        if not self._tasks:
            return  # nothing is watched, and the listener has not been started
        if table_id is not None and table_id not in self._channels:
            # Nobody watches the table here, so no watcher's gap-free rule is at stake: a read
            # or a command goes ahead even while the listener reconnects (with Redis down, it
            # fails as fast as the command's own connection does, not after a whole timeout).
            return
        if not self._live.is_set():
            try:
                await asyncio.wait_for(self._live.wait(), self._timeout)
            except TimeoutError:
                raise StoreUnavailableError("the Redis pub/sub listener is not connected") from None
        confirmed = None if table_id is None else self._channels.get(table_id)
        if confirmed is None or confirmed.done():
            return
        try:
            await asyncio.wait_for(asyncio.shield(confirmed), self._timeout)
        except TimeoutError:
            raise StoreUnavailableError("Redis did not confirm a subscription") from None

    def _subscribe_channels(self, table_ids: Iterable[str]) -> None:
        channels = []
        for table_id in table_ids:
            self._replies_due[table_id] += 1
            channels.append(keys.notify_channel(table_id))
        self._send_to_listener("SUBSCRIBE", *channels)

    def _unwatched(self, table_id: str) -> None:
        """The hub's last subscription of ``table_id`` ended: UNSUBSCRIBE from its channel."""
        confirmed = self._channels.pop(table_id, None)
        if confirmed is None:
            return
        if not confirmed.done():
            confirmed.set_result(None)  # nobody here waits for it any more
        if self._live.is_set():
            self._send_to_listener("UNSUBSCRIBE", keys.notify_channel(table_id))

    def _send_to_listener(self, *command: str) -> None:
        """Send ``command`` on the listener's connection; its reply comes to :meth:`_pump`.

        Each command is written whole before the task first waits, and tasks start in the
        order they were made, so commands go out in the order they were asked for. If the
        connection fails, the listener reconnects and cuts every watcher anyway.
        """
        conn = self._listener
        if conn is not None:
            self._background(conn.send_command(*command, check_health=False))

    def _confirmed(self, channel: bytes) -> None:
        """Redis confirmed a SUBSCRIBE of ``channel``; the last one due confirms the table."""
        table_id = keys.table_id_of_channel(channel)
        if table_id is None:
            return
        due = self._replies_due[table_id] - 1
        if due > 0:
            self._replies_due[table_id] = due
            return
        self._replies_due.pop(table_id, None)
        confirmed = self._channels.get(table_id)
        if confirmed is not None and not confirmed.done():
            confirmed.set_result(None)

    async def _listen(self) -> None:
        delay = _BACKOFF_FIRST
        lost = False  # since the last connection: the first failure is logged, the retries not
        while True:
            conn: AbstractConnection | None = None
            try:
                # redis-py leaves get_connection unannotated.
                conn = await self._listener_pool.get_connection()  # type: ignore[no-untyped-call]
                await conn.send_command("PING", check_health=False)
                reply = await conn.read_response()
                if reply not in (b"PONG", "PONG"):
                    raise RedisConnectionError(f"unexpected PING reply {reply!r}")
                self._listener = conn
                self._live.set()
                if lost:
                    lost = False
                    _log.warning("Redis pub/sub listener connected again")
                if self._channels:  # tables watched since the connection was lost
                    self._subscribe_channels(tuple(self._channels))
                delay = _BACKOFF_FIRST
                await self._pump(conn)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                # Never let the listener die: log, back off, reconnect. Only the first failure
                # is a warning (with Redis down it retries every 2 s).
                _log.log(
                    logging.DEBUG if lost else logging.WARNING,
                    "Redis pub/sub listener lost its connection: %s",
                    _described(exc),
                )
                lost = True
            finally:
                self._listener = None
                self._replies_due.clear()  # replies on that connection will not come
                if self._live.is_set():
                    self._live.clear()
                    # Batches may have been missed: every watcher resumes from its last sequence
                    # (cutting them also forgets their tables' channels), told that the store
                    # was lost (STORE_UNAVAILABLE), not that it fell behind.
                    self.hub.close_all(lost=True)
                if conn is not None:
                    await conn.disconnect()
                    await self._listener_pool.release(conn)
            await asyncio.sleep(delay)
            delay = min(delay * 2, _BACKOFF_CAP)

    async def _pump(self, conn: AbstractConnection) -> None:
        """Deliver messages until the connection fails; PING when quiet to detect a dead peer."""
        pinged = False
        while True:
            message = await conn.read_response(timeout=self._timeout)
            if message is None:  # quiet for a whole timeout
                if pinged:
                    raise RedisTimeoutError("no PONG from Redis")
                await conn.send_command("PING", check_health=False)
                pinged = True
                continue
            pinged = False  # any reply will do: PONG, or a message that came first
            if isinstance(message, list):
                kind = message[0]
                if kind == b"message":
                    self._deliver(message[1], message[2])
                elif kind == b"subscribe":
                    self._confirmed(message[1])

    def _deliver(self, channel: bytes, data: bytes) -> None:
        table_id = keys.table_id_of_channel(channel)
        if table_id is None or not self.hub.wants(table_id):
            return
        try:
            batch = decode_batch(data)
        except ValueError:
            # Perhaps a newer replica's format: this table's watchers resume from the stream,
            # which this replica reads; the other tables' batches are unaffected.
            _log.warning("undecodable batch on %r; cutting its watchers so they resync", channel)
            self.hub.cut(table_id)
            return
        self.hub.publish(table_id, batch)

    async def sweep_pass(
        self, *, batch: int = 200, slices: int = 100, cover_passes: int = 5
    ) -> int:
        """One pass of the sweeper: :meth:`sweep_index` slice after slice; how many ids it
        unlisted.

        A pass walks at least a ``cover_passes``-th of the larger index (up to ``slices``), so
        the walk goes round an index of up to ``slices * batch * cover_passes`` ids (100,000)
        every ``cover_passes`` passes (5 minutes) however fast tables are made, and a larger
        one at ``slices * batch`` ids a pass; it then goes on while at least half of a slice
        was gone (up to ``slices`` in all, as the gone ids of a busy fleet gather where tables
        expire). Before, a pass stopped at the
        first slice mostly alive: with more than a slice of new tables a minute the walk never
        came round again, and the ids it had passed while their tables were alive stayed in
        the index (and the active-tables gauge) for good.
        """
        listed, unlisted = await self._run(
            ("ZCARD", keys.INDEX_ALL), ("ZCARD", keys.INDEX_UNLISTED)
        )
        planned = max(1, math.ceil(max(int(listed), int(unlisted)) / (batch * cover_passes)))
        swept = 0
        for walked in range(1, slices + 1):
            gone = await self.sweep_index(batch=batch)
            swept += gone
            if walked >= planned and 2 * gone < batch:
                break
        return swept

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(self._sweep_interval)
            try:
                await self.sweep_pass()
            except (StoreUnavailableError, RedisError) as exc:
                _log.warning("listing index sweep failed: %s", _described(exc))


def _pack(first: bytes, rest: bytes) -> bytes:
    """``<len(first)>:<first><rest>``, the framing the scripts also use for remembered requests."""
    return b"%d:%s%s" % (len(first), first, rest)


def _unpack(value: bytes) -> tuple[bytes, bytes]:
    length, _, tail = value.partition(b":")
    size = int(length)
    return tail[:size], tail[size:]


def _table_keys(table_id: str) -> tuple[str, str, str]:
    return keys.table(table_id), keys.events(table_id), keys.requests(table_id)


def _open_hint(table_id: str, *, open: bool) -> _Command:
    return ("ZADD", keys.INDEX_OPEN, 0, table_id) if open else ("ZREM", keys.INDEX_OPEN, table_id)


def _unlist(table_ids: Sequence[str]) -> list[_Command]:
    return [
        ("ZREM", keys.INDEX_ALL, *table_ids),
        ("ZREM", keys.INDEX_OPEN, *table_ids),
        ("ZREM", keys.INDEX_UNLISTED, *table_ids),
    ]


def _sequence_of(entry_id: bytes) -> int:
    return int(entry_id.split(b"-", 1)[0])


def _stored(entry_id: bytes, fields: dict[bytes, bytes]) -> StoredEvent:
    audience = fields.get(b"a", b"")
    return StoredEvent(
        _sequence_of(entry_id), int(audience) if audience else None, fields.get(b"p", b"")
    )
