"""The embedded in-memory store: the default when no Redis URL is configured.

It keeps the same contract as the Redis store (compare-and-set, capped event log, expiry, one
remembered request per caller, live fan-out) inside one process, so a single command starts a
working server. It is not shared between processes: run Redis for more than one replica.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Sequence

from hearts_server.store.base import (
    EPHEMERAL_SEQUENCE,
    JOIN_CALLER_PREFIX,
    MAX_CALLERS,
    PLAYER_TABLES_KEPT,
    CommitOutcome,
    CommitResult,
    CreateResult,
    EventPage,
    Loaded,
    OutboxItem,
    Published,
    StoredEvent,
)
from hearts_server.store.hub import Hub, HubSubscription

__all__ = ["MemoryStore"]


_FIRST_SWEEP = 1024
_WINDOWS_SWEEP = 10_000  # counter windows held before the ended ones are dropped


@dataclasses.dataclass(slots=True)
class _Table:
    version: int
    data: bytes
    open_seats: bool
    expires_at: float
    events: deque[StoredEvent]
    requests: dict[str, tuple[str, bytes]]
    listed: bool = True


class MemoryStore:
    """A :class:`~hearts_server.store.base.Store` in this process's memory."""

    def __init__(
        self,
        *,
        idle_ttl_seconds: float = 3600.0,
        finished_ttl_seconds: float = 600.0,
        max_events: int = 5000,
        hub: Hub | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._tables: dict[str, _Table] = {}
        self._creates: dict[str, tuple[str, bytes, float]] = {}
        self._idle_ttl = idle_ttl_seconds
        self._finished_ttl = finished_ttl_seconds
        self._max_events = max_events
        self.hub = hub or Hub()
        self._clock = clock
        self._sweep_at = _FIRST_SWEEP  # tables held when create next sweeps the expired ones
        # The outbox: item id -> (due ms, payload, attempts). A process's memory store is its
        # own, so a lease matters only to the process's own sender.
        self._outbox: dict[str, tuple[int, bytes, int]] = {}
        # Counters with a window (reactions per seat, quotas): key -> (the window's end, uses).
        self._windows: dict[str, tuple[float, int]] = {}
        self._windows_sweep_at = _WINDOWS_SWEEP
        # Lobby slots: name -> (table id, when the slot expires).
        self._lobby: dict[str, tuple[str, float]] = {}
        self._lobby_sweep_at = _WINDOWS_SWEEP
        self._creates_sweep_at = _WINDOWS_SWEEP  # create requests held before a sweep
        # Tables due for a look (see Store.due_claim): id -> when (ms).
        self._due: dict[str, int] = {}
        # Deleted tables' ids, never made again while held: id -> when it is forgotten.
        self._gone: dict[str, float] = {}
        self._gone_sweep_at = _WINDOWS_SWEEP
        # Players' lists of tables: player id -> (when the list expires, table id -> seat ms).
        self._players: dict[str, tuple[float, dict[str, int]]] = {}
        self._players_sweep_at = _WINDOWS_SWEEP
        # Presence leases: table id -> ((seat, lease id) -> when the lease runs out, ms).
        self._presence: dict[str, dict[tuple[int, str], int]] = {}

    def _get(self, table_id: str) -> _Table | None:
        table = self._tables.get(table_id)
        if table is not None and table.expires_at <= self._clock():
            del self._tables[table_id]
            return None
        return table

    def _sweep(self) -> None:
        """Forget every expired table (each read forgets only the table it reads).

        ``create`` sweeps once the tables held have doubled since the last sweep, so they stay
        within twice the live ones (at least ``_FIRST_SWEEP``) for a constant cost per create.
        """
        now = self._clock()
        self._tables = {k: t for k, t in self._tables.items() if t.expires_at > now}
        self._sweep_at = max(_FIRST_SWEEP, 2 * len(self._tables))

    async def load(
        self,
        table_id: str,
        *,
        caller: str | None = None,
        request_id: str | None = None,
        known_version: int = 0,
    ) -> Loaded:
        table = self._get(table_id)
        if table is None:
            return Loaded(0, b"")
        replay = None
        if caller is not None and request_id:
            remembered = table.requests.get(caller)
            if remembered is not None and remembered[0] == request_id:
                replay = remembered[1]
        data = b"" if table.version == known_version else table.data
        return Loaded(table.version, data, replay)

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
        if request_id:
            earlier = self._creates.get(request_id)
            if earlier is not None and earlier[2] > self._clock():
                return CreateResult(False, earlier[0], earlier[1])
        gone = self._gone.get(table_id)
        if self._get(table_id) is not None or (gone is not None and gone > self._clock()):
            if request_id and response is not None:
                # As the Redis store answers a create whose claimed id a retry made meanwhile
                # (this store claims and creates at once, so it never sees that case).
                self._remember_create(request_id, table_id, response)
                return CreateResult(False, table_id, response)
            return CreateResult(False, table_id)
        if len(self._tables) >= self._sweep_at:
            self._sweep()
        self._tables[table_id] = _Table(
            1,
            data,
            open_seats,
            self._clock() + (self._finished_ttl if finished else self._idle_ttl),
            deque(events, maxlen=self._max_events),
            {},
            listed,
        )
        if request_id and response is not None:
            self._remember_create(request_id, table_id, response)
        self._set_due(table_id, due_ms)
        if events:
            self.hub.publish(table_id, tuple(events))
        return CreateResult(True, table_id)

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
        table = self._get(table_id)
        if table is None:
            return CommitResult(CommitOutcome.CONFLICT, 0)
        if caller is not None and request_id:
            remembered = table.requests.get(caller)
            if remembered is not None and remembered[0] == request_id:
                return CommitResult(CommitOutcome.REPLAYED, table.version, remembered[1])
        if table.version != expected_version:
            return CommitResult(CommitOutcome.CONFLICT, table.version)
        table.version += 1
        table.data = data
        table.events.extend(events)
        if caller is not None and request_id and response is not None:
            table.requests[caller] = (request_id, response)
            if caller.startswith(JOIN_CALLER_PREFIX) and len(table.requests) > MAX_CALLERS:
                # As the Redis script does: past the bound, only the newest join is kept.
                for key in [k for k in table.requests if k.startswith(JOIN_CALLER_PREFIX)]:
                    if key != caller:
                        del table.requests[key]
        if open_seats is not None:
            table.open_seats = open_seats
        table.expires_at = self._clock() + (self._finished_ttl if finished else self._idle_ttl)
        if outbox is not None:
            item, item_due_ms = outbox
            self._outbox.setdefault(item.id, (item_due_ms, item.payload, 0))
        self._set_due(table_id, due_ms)
        if events:
            self.hub.publish(table_id, tuple(events))
        return CommitResult(CommitOutcome.APPLIED, table.version)

    def _remember_create(self, request_id: str, table_id: str, response: bytes) -> None:
        now = self._clock()
        if len(self._creates) >= self._creates_sweep_at:  # forget expired ones now and then
            self._creates = {k: v for k, v in self._creates.items() if v[2] > now}
            # Twice what is left, as for the other maps: with more than 10,000 live, a sweep at
            # every create cost milliseconds each (1.7 ms at 12,000).
            self._creates_sweep_at = max(_WINDOWS_SWEEP, 2 * len(self._creates))
        self._creates[request_id] = (table_id, response, now + self._idle_ttl)

    def _set_due(self, table_id: str, due_ms: int | None) -> None:
        if due_ms is None:
            self._due.pop(table_id, None)
        else:
            self._due[table_id] = due_ms

    async def due_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[str]:
        due = sorted((at, table_id) for table_id, at in self._due.items() if at <= now_ms)[:limit]
        for _, table_id in due:
            self._due[table_id] = now_ms + lease_ms
        return [table_id for _, table_id in due]

    async def due_drop(self, table_id: str) -> None:
        self._due.pop(table_id, None)

    async def outbox_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[OutboxItem]:
        due = sorted(
            (entry[0], item_id) for item_id, entry in self._outbox.items() if entry[0] <= now_ms
        )[:limit]
        claimed = []
        for _, item_id in due:
            _, payload, attempts = self._outbox[item_id]
            self._outbox[item_id] = (now_ms + lease_ms, payload, attempts + 1)
            claimed.append(OutboxItem(item_id, payload, attempts + 1, now_ms + lease_ms))
        return claimed

    async def outbox_done(self, item_id: str) -> None:
        self._outbox.pop(item_id, None)

    async def outbox_retry(self, item: OutboxItem, *, due_ms: int) -> bool:
        entry = self._outbox.get(item.id)
        if entry is None or entry[0] != item.lease_ms:
            return False
        self._outbox[item.id] = (due_ms, entry[1], entry[2])
        return True

    async def outbox_size(self) -> int:
        return len(self._outbox)

    async def count_use(
        self, name: str, *, window_ms: int, create_request_id: str | None = None
    ) -> int:
        if create_request_id:
            earlier = self._creates.get(create_request_id)
            if earlier is not None and earlier[2] > self._clock():
                return 0  # a retry of an applied create
        return self._use(f"quota:{name}", window_ms)

    async def lobby_get(self, name: str) -> str | None:
        held = self._lobby.get(name)
        if held is None:
            return None
        if held[1] <= self._clock():
            del self._lobby[name]
            return None
        return held[0]

    async def lobby_offer(
        self, name: str, table_id: str, *, ttl_ms: int, replacing: str | None = None
    ) -> str:
        held = await self.lobby_get(name)
        if held is not None and held not in (table_id, replacing):
            return held
        await self.lobby_put(name, table_id, ttl_ms=ttl_ms)
        return table_id

    async def lobby_put(self, name: str, table_id: str, *, ttl_ms: int) -> None:
        now = self._clock()
        if len(self._lobby) >= self._lobby_sweep_at:  # expired slots are dropped now and then
            self._lobby = {k: held for k, held in self._lobby.items() if held[1] > now}
            self._lobby_sweep_at = max(_WINDOWS_SWEEP, 2 * len(self._lobby))
        self._lobby[name] = (table_id, now + ttl_ms / 1000)

    async def lobby_release(self, name: str, table_id: str) -> None:
        if await self.lobby_get(name) == table_id:
            del self._lobby[name]

    async def player_seat_taken(
        self, player_id: str, table_id: str, *, at_us: int, ttl_ms: int, if_absent: bool = False
    ) -> None:
        now = self._clock()
        if len(self._players) >= self._players_sweep_at:  # expired lists are dropped now and then
            self._players = {k: held for k, held in self._players.items() if held[0] > now}
            self._players_sweep_at = max(_WINDOWS_SWEEP, 2 * len(self._players))
        held = self._players.get(player_id)
        tables = {} if held is None or held[0] <= now else held[1]
        if not (if_absent and table_id in tables):
            tables[table_id] = at_us
        if len(tables) > PLAYER_TABLES_KEPT:  # the oldest go, as the Redis store's trim does
            kept = sorted(tables.items(), key=lambda item: (item[1], item[0]))[-PLAYER_TABLES_KEPT:]
            tables = dict(kept)
        self._players[player_id] = (now + ttl_ms / 1000, tables)

    async def player_tables(self, player_id: str, *, ttl_ms: int) -> list[tuple[str, int, bytes]]:
        now = self._clock()
        held = self._players.get(player_id)
        if held is None or held[0] <= now:
            return []
        held = self._players[player_id] = (now + ttl_ms / 1000, held[1])
        found = []
        newest_first = sorted(held[1].items(), key=lambda item: (item[1], item[0]), reverse=True)
        for table_id, _ in newest_first:
            table = self._get(table_id)
            if table is None:
                del held[1][table_id]
            else:
                found.append((table_id, table.version, _first_line(table.data)))
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
        table = self._get(table_id)
        if table is None or table.version != expected_version:
            return Published.STALE
        if self._use(f"ephemeral:{table_id}:{sender}", window_ms) > limit:
            return Published.LIMITED
        self.hub.publish(table_id, (StoredEvent(EPHEMERAL_SEQUENCE, None, payload),))
        return Published.SENT

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
        leases = self._presence.get(table_id, {})
        before = _seat_bits(leases)
        leases = {
            lease: until
            for lease, until in leases.items()
            if until > now_ms
            and not any(lease[0] == seat and lease[1].startswith(prefix) for seat, prefix in vacate)
        }
        for lease in drop:
            leases.pop(lease, None)
        for lease in hold:
            leases[lease] = until_ms
        if leases:
            self._presence[table_id] = leases
        else:
            self._presence.pop(table_id, None)
        after = _seat_bits(leases)
        for seat in range(4) if announce else ():
            if (after ^ before) >> seat & 1:
                payload = announce[seat if after >> seat & 1 else 4 + seat]
                self.hub.publish(table_id, (StoredEvent(EPHEMERAL_SEQUENCE, None, payload),))
        return after

    def _use(self, key: str, window_ms: int) -> int:
        """Count a use of ``key`` in its window (which starts with its first use); the uses in
        the window so far, this one included. Like the Redis store's counters that expire."""
        now = self._clock()
        if len(self._windows) >= self._windows_sweep_at:  # ended windows are dropped now and then
            self._windows = {k: window for k, window in self._windows.items() if window[0] > now}
            # Not again before as many more are held: live windows (an hour's quotas) stay, and
            # a sweep that keeps them all must not run on every call.
            self._windows_sweep_at = max(_WINDOWS_SWEEP, 2 * len(self._windows))
        ends, count = self._windows.get(key, (0.0, 0))
        if ends <= now:
            ends, count = now + window_ms / 1000, 0
        self._windows[key] = (ends, count + 1)
        return count + 1

    async def delete(
        self, table_id: str, *, expected_version: int, events: Sequence[StoredEvent]
    ) -> bool:
        table = self._get(table_id)
        if table is None or table.version != expected_version:
            return False
        if events:
            self.hub.publish(table_id, tuple(events))
        del self._tables[table_id]
        self._due.pop(table_id, None)
        now = self._clock()
        if len(self._gone) >= self._gone_sweep_at:  # forget expired ones now and then
            self._gone = {k: v for k, v in self._gone.items() if v > now}
            self._gone_sweep_at = max(_WINDOWS_SWEEP, 2 * len(self._gone))
        self._gone[table_id] = now + self._idle_ttl
        return True

    async def read_events(self, table_id: str, *, after: int, limit: int = 1000) -> EventPage:
        table = self._get(table_id)
        if table is None or not table.events:
            return EventPage((), 0)
        first = table.events[0].sequence
        # Sequences are dense within the log, so the start index is arithmetic.
        start = max(0, after + 1 - first)
        events = tuple(table.events[i] for i in range(start, min(len(table.events), start + limit)))
        return EventPage(events, first)

    async def list_tables(
        self, *, open_only: bool, before_id: str | None, limit: int
    ) -> tuple[list[tuple[str, int, bytes]], bool]:
        now = self._clock()
        ids = sorted(
            (
                table_id
                for table_id, table in self._tables.items()
                if table.expires_at > now
                and table.listed
                and (not open_only or table.open_seats)
                and (before_id is None or table_id < before_id)
            ),
            reverse=True,
        )
        page = [
            (table_id, self._tables[table_id].version, _first_line(self._tables[table_id].data))
            for table_id in ids[:limit]
        ]
        return page, len(ids) > limit

    def subscribe(self, table_id: str) -> HubSubscription:
        return self.hub.subscribe(table_id)

    def end_watchers(self, table_id: str) -> None:
        self.hub.end_gone(table_id)

    async def ping(self) -> None:
        return None

    async def time(self) -> float:
        return time.time()  # one process: its host's clock is the only one

    async def close(self) -> None:
        self.hub.close_all()

    async def start(self) -> None:
        """Nothing to start: the store is this process's memory."""

    def end_all_watchers(self) -> None:
        self.hub.close_all()

    async def table_count(self) -> int:
        """Tables held now, expired ones forgotten first (for metrics, every few seconds)."""
        self._sweep()
        return len(self._tables)


def _seat_bits(leases: dict[tuple[int, str], int]) -> int:
    """The seats holding a lease in ``leases``, as bits (``1 << seat``)."""
    bits = 0
    for seat, _ in leases:
        bits |= 1 << seat
    return bits


def _first_line(data: bytes) -> bytes:
    """What a listing gets of a record: its first line (see ``Store.list_tables``)."""
    return data.partition(b"\n")[0]
