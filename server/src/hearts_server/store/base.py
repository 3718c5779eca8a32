"""The storage interface: one table = one versioned record plus an ordered, capped event log.

The application layer reaches storage only through :class:`Store`. Both implementations (memory
and Redis) pass the same contract suite (``tests/server/test_store_contract.py``).

Rules every implementation keeps:

* :meth:`Store.commit` is an atomic compare-and-set on the table's version: the new record and its
  events are written together or not at all, and the version then goes up by exactly one.
* The caller numbers events (the record knows its last sequence); the store keeps them in order
  and may trim the oldest beyond a cap. :meth:`Store.read_events` says where the log starts, so a
  reader can tell a trimmed gap from no gap.
* Every committed batch of events is also published to live subscribers (:meth:`Store.subscribe`),
  in commit order per table, so watchers on any replica see it.
* The last request of each caller key is remembered with its response, for idempotent retries.
  Joins are remembered under a key of their own request id (``join:<id>``: the joiner has no
  seat yet); once a table remembers more than :data:`MAX_CALLERS` callers, a new join forgets
  the other joins, so a table joined and left over and over does not grow without bound.
* A record is opaque bytes, given back exactly as committed. One may come in two parts, split at
  its first newline: the second (a table's finished rounds) changes far less often than the
  first. The Redis store keeps the parts in two fields and sends the second only when it
  changed, so a command writes about as much late in a game as early.
* Index entries for listing are hints: listing returns records, and the caller re-checks them.
* A commit may put one item in the outbox, atomically with the record (a finished game's
  webhook): :meth:`Store.outbox_claim` hands out the items due, each leased to the claimer for a
  while (another process claims it again only once the lease runs out, so an item whose sender
  died is not lost), until :meth:`Store.outbox_done` removes it or :meth:`Store.outbox_retry`
  sets when it is due again.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import AsyncIterator, Sequence
from typing import NamedTuple, Protocol

__all__ = [
    "EPHEMERAL_SEQUENCE",
    "JOIN_CALLER_PREFIX",
    "MAX_CALLERS",
    "PLAYER_TABLES_KEPT",
    "CommitOutcome",
    "CommitResult",
    "CreateResult",
    "EventPage",
    "Loaded",
    "OutboxItem",
    "Published",
    "Store",
    "StoreUnavailableError",
    "StoreUnsupportedError",
    "StoredEvent",
    "Subscription",
    "SubscriptionLaggedError",
    "SubscriptionLostError",
    "TableGoneError",
]


# The sequence of an event sent by publish_ephemeral: no stored event has it (they count from
# 1), so watchers tell the two apart.
EPHEMERAL_SEQUENCE = 0

JOIN_CALLER_PREFIX = "join:"
MAX_CALLERS = 64

# How many tables a player's list (ListPlayerTables) keeps: the most recently joined.
PLAYER_TABLES_KEPT = 100


@dataclasses.dataclass(frozen=True, slots=True)
class OutboxItem:
    """Something to send (a webhook): its id, its payload, and how many deliveries of it were
    tried: for a claimed item, this claim's included (its delivery's number, from 1).

    ``lease_ms``: for a claimed item, when the claimer's lease runs out (it identifies the
    claim: a retry by a claimer whose lease ran out changes nothing).
    """

    id: str
    payload: bytes
    attempts: int = 0
    lease_ms: int = dataclasses.field(default=0, compare=False)


class StoreUnavailableError(Exception):
    """The backing store cannot be reached; the caller should answer UNAVAILABLE."""


class StoreUnsupportedError(Exception):
    """The backing store answers but is not one the server can use (a Redis Cluster node, say).

    Unlike :class:`StoreUnavailableError`, waiting does not help: the operator must change it.
    """


class StoredEvent(NamedTuple):
    """One event of a table's log.

    ``audience`` is the only seat that may see it, or ``None`` when it is public; ``payload`` is
    opaque to the store (the server keeps a serialized ``hearts.v1.TableEvent`` there). A named
    tuple rather than a frozen dataclass: every command makes one or more, and a tuple is made
    in a third of the time.
    """

    sequence: int
    audience: int | None
    payload: bytes


@dataclasses.dataclass(frozen=True, slots=True)
class Loaded:
    """A table's record as read, or ``version == 0`` and empty data when it does not exist.

    ``data`` is also empty when the version is the ``known_version`` the reader passed: it holds
    that record already (the Redis store also checks that it is the same write of that version).
    ``replay`` is the stored response when ``request_id`` matched the caller's last request.
    """

    version: int
    data: bytes
    replay: bytes | None = None

    @property
    def exists(self) -> bool:
        """Whether the table exists."""
        return self.version > 0


class CommitOutcome(enum.Enum):
    """How a commit ended."""

    APPLIED = "APPLIED"
    CONFLICT = "CONFLICT"
    """The version moved on (or the table vanished); re-read and decide again."""
    REPLAYED = "REPLAYED"
    """The caller's request id was already committed; ``replay`` is the first answer."""


class Published(enum.Enum):
    """How :meth:`Store.publish_ephemeral` ended."""

    SENT = "SENT"
    LIMITED = "LIMITED"
    """The sender sent the most it may in the current window; nothing was sent."""
    STALE = "STALE"
    """The table is at another version (or gone); nothing was sent or counted."""


@dataclasses.dataclass(frozen=True, slots=True)
class CommitResult:
    """The outcome of :meth:`Store.commit`."""

    outcome: CommitOutcome
    version: int
    replay: bytes | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class CreateResult:
    """The outcome of :meth:`Store.create`: the table that owns the request, and a replay."""

    created: bool
    table_id: str
    replay: bytes | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class EventPage:
    """Events after a sequence, and the first sequence the log still holds (0 if empty)."""

    events: tuple[StoredEvent, ...]
    first_sequence: int


class SubscriptionLaggedError(Exception):
    """The subscriber fell too far behind and was dropped; resume from the last sequence."""


class SubscriptionLostError(SubscriptionLaggedError):
    """The store's connection for live events was lost, so batches may have been missed; resume
    from the last sequence (once the store answers again)."""


class TableGoneError(Exception):
    """The table no longer exists (it expired): nothing more will come."""


class Subscription(Protocol):
    """Live batches of one table's events, in commit order. Close it when done."""

    def __aiter__(self) -> AsyncIterator[tuple[StoredEvent, ...]]: ...

    async def receive(self) -> tuple[StoredEvent, ...] | None:
        """The next batch, or None once closed. A wait cancelled (a timeout) loses nothing:
        the subscription goes on."""
        ...

    async def close(self) -> None: ...


class Store(Protocol):
    """Where tables live. All methods may raise :class:`StoreUnavailableError`."""

    async def load(
        self,
        table_id: str,
        *,
        caller: str | None = None,
        request_id: str | None = None,
        known_version: int = 0,
    ) -> Loaded:
        """The table's record; with ``caller`` and ``request_id``, also a remembered response.

        When the table is at ``known_version`` (> 0), the record's bytes are left out.
        """
        ...

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
        """Create the table at version 1, unless ``request_id`` already created one.

        ``due_ms``, as for :meth:`commit`: when some process must look at the table if nobody
        has before.

        ``listed`` false leaves the table out of :meth:`list_tables` for good (an unlisted
        table); its commits then pass no ``open_seats``.

        ``finished``: the game is over already (four bots whose first round reaches the
        target), so the table gets the finished-table TTL, as a commit that ends a game gives it.

        With a ``request_id``, the store remembers (for the idle TTL) which table it created and
        the ``response`` given, so a retried create returns the first table and answer
        (``created`` false, ``replay`` the stored response) and creates nothing. A taken
        ``table_id`` also creates nothing, nor does the id of a table deleted within the idle
        TTL (``created`` false, ``replay`` None); with a ``request_id`` and ``response`` the
        request is then remembered as having made that table, and answered with its
        ``response``: ids are random, so the one way a create's own id is taken is a retry of
        the same request that made the table while this call was on its way. A store whose
        claim of the request id and whose table are two writes may hold a claim without its
        table (the writer died in between): the service then creates the table the replay
        names, without a ``request_id``.
        """
        ...

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
        """Compare-and-set the record and append ``events``, atomically.

        ``open_seats`` updates the listing hint when not ``None``. ``finished`` means the game is
        over: the table then expires after the finished-table TTL instead of the idle TTL.
        ``outbox``: an item to put in the outbox with the commit, due at the given time (ms);
        an item whose id is there already stays as it is. ``due_ms``: when some process must
        look at the table if the one that wrote it has not acted by then (see
        :meth:`due_claim`); None when the server owes the table nothing.
        """
        ...

    async def due_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[str]:
        """Up to ``limit`` tables due by ``now_ms``, soonest first, each now leased: due again
        at ``now_ms + lease_ms`` unless a commit sets its time before.

        A table is due when the server owes it something (a bot's move, a player's timed-out
        move, bots for the empty seats): the time its last write (:meth:`create`,
        :meth:`commit`) gave as ``due_ms``; a write without one, and a delete, take the table
        out. So the tables a process was driving when it died are found by the others.
        """
        ...

    async def due_drop(self, table_id: str) -> None:
        """Take a table out of the due ones (it is gone)."""
        ...

    async def outbox_claim(self, *, now_ms: int, lease_ms: int, limit: int) -> list[OutboxItem]:
        """Up to ``limit`` outbox items due by ``now_ms``, oldest due first, each now leased:
        due again at ``now_ms + lease_ms`` unless done or retried before. Each claim counts a
        delivery tried (``attempts``), so one whose claimer died before it could say how the
        delivery went counts too."""
        ...

    async def outbox_done(self, item_id: str) -> None:
        """Remove an item from the outbox (sent, or given up)."""
        ...

    async def outbox_retry(self, item: OutboxItem, *, due_ms: int) -> bool:
        """Make a claimed item due at ``due_ms``, if the claim is still the item's (its lease
        has not run out and been claimed again, nor the item sent meanwhile); whether it was."""
        ...

    async def outbox_size(self) -> int:
        """How many items the outbox holds (for metrics)."""
        ...

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
        """Send ``payload`` (an event) to the table's watchers in every process, unstored: a
        batch of one :class:`StoredEvent` with sequence :data:`EPHEMERAL_SEQUENCE`.

        Only while the table is at ``expected_version`` (the version whose record allowed the
        sender to send; else ``STALE``), and unless ``sender`` sent ``limit`` such events to
        the table in the current window of ``window_ms``, which starts with its first
        (``LIMITED``).
        """
        ...

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
        """Update the table's presence (which seats have a player's stream open) and return it:
        bit ``1 << seat`` set for each seat holding at least one lease after the update.

        Leases that ran out by ``now_ms`` go first; then the leases ``drop`` (``(seat, lease
        id)``) end, every lease of a seat whose id starts with the prefix given with it in
        ``vacate`` (``(seat, prefix)``: a player left, and the service starts its lease ids with
        the seat's epoch) ends, and the leases ``hold`` are taken or renewed until ``until_ms``.
        (The service holds one lease per seat, token epoch and process, for all of that
        process's streams of the seat.)
        With ``announce`` (eight events: seat 0 to 3 connected, then seat 0 to 3 disconnected),
        each seat whose bit changed has its event sent to the table's watchers in every process,
        unstored (as :meth:`publish_ephemeral` sends), in the same atomic step, so events of two
        processes reach every watcher in the order the changes happened.
        """
        ...

    async def count_use(
        self, name: str, *, window_ms: int, create_request_id: str | None = None
    ) -> int:
        """Count one use of the quota ``name``; the uses in its current window, this one
        included. A window starts with its first use and lasts ``window_ms``; the count is shared
        by every process of the store.

        With ``create_request_id``, a use for a create request that the store remembers as
        applied (a retry, which :meth:`create` answers from memory) is not counted: 0.
        """
        ...

    async def lobby_get(self, name: str) -> str | None:
        """The table id the lobby slot ``name`` holds, or None.

        A slot is a short string shared by every process of the store, which names the table
        that players asking for the same game are seated at (``QuickJoin``); the service also
        keeps there which table a quick-join request went to."""
        ...

    async def lobby_offer(
        self, name: str, table_id: str, *, ttl_ms: int, replacing: str | None = None
    ) -> str:
        """Put ``table_id`` in the slot ``name`` for ``ttl_ms`` unless the slot holds another
        table (one other than ``replacing``, which the caller found full); the table the slot
        holds now: ``table_id``, or the one another call put there first. (Offering the table
        the slot holds renews its time to live.)"""
        ...

    async def lobby_put(self, name: str, table_id: str, *, ttl_ms: int) -> None:
        """Put ``table_id`` in the slot ``name`` for ``ttl_ms``, whatever it held."""
        ...

    async def lobby_release(self, name: str, table_id: str) -> None:
        """Empty the slot ``name`` if it still holds ``table_id``."""
        ...

    async def player_seat_taken(
        self, player_id: str, table_id: str, *, at_us: int, ttl_ms: int, if_absent: bool = False
    ) -> None:
        """Note that the player with the verified ``player_id`` took a seat at the table at
        ``at_us`` (microseconds, so that one player's seats taken one after the other never
        tie): the player's list of tables (``ListPlayerTables``). It keeps the player's
        :data:`PLAYER_TABLES_KEPT` most recent tables, and is forgotten ``ttl_ms`` after it was
        last written or read. A hint: the table's record says whether the seat is still
        theirs. ``if_absent``: only if the table is not in the list (a seat the player held
        already keeps its place)."""
        ...

    async def player_tables(self, player_id: str, *, ttl_ms: int) -> list[tuple[str, int, bytes]]:
        """``(table_id, version, data)`` of the tables in the player's list whose records
        exist (``data``: the record's first line, as :meth:`list_tables` gives it), the most
        recently taken seat first; the list lives ``ttl_ms`` from now. Entries
        whose table is gone are dropped, unless a seat was taken there since they were read (a
        table made again under its id). Those of tables the player left stay until the table is
        gone: dropping them could race with the player taking a seat there again."""
        ...

    async def delete(
        self, table_id: str, *, expected_version: int, events: Sequence[StoredEvent]
    ) -> bool:
        """Delete the table if still at ``expected_version``, publishing ``events`` first; no
        :meth:`create` makes its id again within the idle TTL."""
        ...

    async def read_events(self, table_id: str, *, after: int, limit: int = 1000) -> EventPage:
        """Up to ``limit`` events with sequence greater than ``after``, oldest first."""
        ...

    async def list_tables(
        self, *, open_only: bool, before_id: str | None, limit: int
    ) -> tuple[list[tuple[str, int, bytes]], bool]:
        """``(table_id, version, data)`` in descending id order, ids below ``before_id``.

        ``data`` is the record's first line only: a listing shows a table's own fields, and a
        schema 3 record's second line, its finished rounds, is most of it late in a game (see
        ``TableRecord.from_json(summary=True)``).

        Table ids begin with their creation time, so this is newest first. The bool says whether
        more may follow. ``open_only`` keeps tables whose last commit said they had a free seat.
        """
        ...

    def subscribe(self, table_id: str) -> Subscription:
        """Start receiving the table's committed event batches from now on."""
        ...

    def end_watchers(self, table_id: str) -> None:
        """End this process's subscriptions of a table found gone (expired): their iterators
        raise :class:`TableGoneError`. Expiry publishes nothing, so
        without this they would wait for ever."""
        ...

    def end_all_watchers(self) -> None:
        """End every subscription of this process with
        :class:`SubscriptionLaggedError`, so that its watchers resume
        from their last sequence elsewhere (at shutdown)."""
        ...

    async def ping(self) -> None:
        """Raise :class:`StoreUnavailableError` unless the store answers."""
        ...

    async def time(self) -> float:
        """The store's clock, in seconds since the epoch: the one clock of every replica
        (see :mod:`hearts_server.clock`); raise :class:`StoreUnavailableError` if it cannot."""
        ...

    async def start(self) -> None:
        """Start the store's background work once it answers (the Redis store's pub/sub
        listener and index sweeper); raise :class:`StoreUnavailableError` if it cannot."""
        ...

    async def table_count(self) -> int:
        """How many tables the store holds (for metrics, every few seconds)."""
        ...

    async def close(self) -> None:
        """Release connections and background tasks."""
        ...
