"""Fan-out of committed event batches to the watchers in this process.

One hub per process routes every batch to the subscriptions of its table. Each subscription has a
bounded queue: a watcher that stops reading fills its own queue and is then cut off (its iterator
raises :class:`SubscriptionLaggedError`, and the client resumes from its last sequence), so a slow
watcher never delays the others or grows memory without bound. Publishing never blocks.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable

from hearts_server.store.base import (
    StoredEvent,
    SubscriptionLaggedError,
    SubscriptionLostError,
    TableGoneError,
)

__all__ = ["Hub", "HubSubscription"]

_CLOSED = object()


class HubSubscription:
    """One watcher's queue of batches for one table."""

    __slots__ = ("_gone", "_hub", "_lagged", "_lost", "_queue", "table_id")

    def __init__(self, hub: Hub, table_id: str, size: int) -> None:
        self._hub = hub
        self.table_id = table_id
        self._queue: asyncio.Queue[object] = asyncio.Queue(size)
        self._lagged = False
        self._gone = False
        self._lost = False  # cut because the store's live connection was lost

    def _offer(self, batch: tuple[StoredEvent, ...]) -> None:
        if self._lagged:
            return
        try:
            self._queue.put_nowait(batch)
        except asyncio.QueueFull:
            self._cut()

    def _cut(self) -> None:
        """End this subscription with SubscriptionLaggedError at the reader's next read."""
        if self._lagged:
            return
        self._lagged = True
        if self._queue.full():
            self._queue.get_nowait()  # room for the marker, so the reader wakes up
        self._queue.put_nowait(_CLOSED)

    def __aiter__(self) -> AsyncIterator[tuple[StoredEvent, ...]]:
        return self._iterate()

    async def _iterate(self) -> AsyncIterator[tuple[StoredEvent, ...]]:
        while (batch := await self.receive()) is not None:
            yield batch

    async def receive(self) -> tuple[StoredEvent, ...] | None:
        """The next batch, or None once closed. A wait cancelled (a timeout) loses nothing:
        the subscription goes on."""
        item = await self._queue.get()  # which leaves the queue as it was when cancelled
        if item is _CLOSED:
            if self._gone:
                raise TableGoneError(self.table_id)
            if self._lost:
                raise SubscriptionLostError(self.table_id)
            if self._lagged:
                raise SubscriptionLaggedError(self.table_id)
            return None
        return item  # type: ignore[return-value]

    async def close(self) -> None:
        """Stop receiving; the iterator ends."""
        self._hub._remove(self)
        if not self._lagged:
            with contextlib.suppress(asyncio.QueueFull):
                self._queue.put_nowait(_CLOSED)


class Hub:
    """Routes batches by table id to local subscriptions."""

    def __init__(self, *, queue_size: int = 256) -> None:
        self._queue_size = queue_size
        self._subs: dict[str, set[HubSubscription]] = {}
        self.on_idle: Callable[[str], None] | None = None
        """Called with a table id when its last subscription here ends (the Redis store then
        unsubscribes from the table's channel)."""

    def subscribe(self, table_id: str) -> HubSubscription:
        """A new subscription to ``table_id``'s batches from now on."""
        sub = HubSubscription(self, table_id, self._queue_size)
        self._subs.setdefault(table_id, set()).add(sub)
        return sub

    def publish(self, table_id: str, batch: tuple[StoredEvent, ...]) -> None:
        """Offer ``batch`` to every subscription of the table; never blocks."""
        for sub in tuple(self._subs.get(table_id, ())):
            sub._offer(batch)

    def wants(self, table_id: str) -> bool:
        """Whether anyone here watches ``table_id``."""
        return table_id in self._subs

    def end_gone(self, table_id: str) -> None:
        """End every subscription of ``table_id``, which no longer exists, with TableGoneError."""
        for sub in list(self._subs.get(table_id, ())):
            self._remove(sub)
            if not sub._lagged:
                sub._gone = True
                sub._cut()

    def cut(self, table_id: str) -> None:
        """End every subscription of ``table_id`` with SubscriptionLaggedError: its watchers
        resume from their last sequence, reading the events from the store."""
        for sub in list(self._subs.get(table_id, ())):
            self._remove(sub)
            sub._cut()

    def close_all(self, *, lost: bool = False) -> None:
        """End every subscription (at shutdown, or when batches may have been missed): with
        SubscriptionLostError when ``lost`` (the store's live connection was), else as
        :meth:`cut` does."""
        for table_id in list(self._subs):
            if lost:
                for sub in self._subs.get(table_id, ()):
                    sub._lost = True
            self.cut(table_id)

    def _remove(self, sub: HubSubscription) -> None:
        subs = self._subs.get(sub.table_id)
        if subs is not None:
            subs.discard(sub)
            if not subs:
                del self._subs[sub.table_id]
                if self.on_idle is not None:
                    self.on_idle(sub.table_id)
