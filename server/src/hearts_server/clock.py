"""One clock for every replica: the table store's.

Replicas stamp the moves they commit, and any replica may enforce a turn's deadline or post a
turn's webhook from those stamps, so the stamps must come from one clock. Each host's own clock
would not do: a replica whose clock is behind stamps a turn's start in the past, and the next
player loses that much of their time on whichever replica times them out; one whose clock is
ahead stamps the future, and since a table's times never go backwards, every replica then waits
out that lead before a deadline passes (long enough, for a turn timer near the table's expiry,
that the table expires first).

So a replica reads the store's time (Redis's ``TIME``) at start-up and then every minute, a few
times each, and keeps the reading with the shortest round trip (its error is at most half of
that, a fraction of a millisecond on a quiet network). Between readings it counts on from there
with the host's monotonic clock, which steps of the host's wall clock do not move. Until the
first reading the host's clock stands in, as it does for the embedded store, whose one process
is its own reference.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

__all__ = ["StoreClock"]

log = logging.getLogger(__name__)

_READINGS = 3  # per synchronisation; the one with the shortest round trip counts
_INTERVAL_SECONDS = 60.0
_WARN_OFFSET_SECONDS = 1.0  # the host's clock this far off the store's is worth a log line


class StoreClock:
    """``time.time()`` of the store's clock: call it for seconds since the epoch.

    ``source`` reads the store's time (seconds since the epoch); ``None`` keeps the host's clock.
    """

    def __init__(
        self,
        source: Callable[[], Awaitable[float]] | None,
        *,
        interval: float = _INTERVAL_SECONDS,
        wall: Callable[[], float] = time.time,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self._source = source
        self._interval = interval
        self._wall = wall
        self._monotonic = monotonic
        # The reading in use: the store's time, and the monotonic time it was taken at, in one
        # tuple so that a reader on another thread (the webhook posts) never sees half of one.
        self._reading: tuple[float, float] | None = None
        self._task: asyncio.Task[None] | None = None
        self._warned = False

    def __call__(self) -> float:
        reading = self._reading
        if reading is None:
            return self._wall()
        return reading[0] + (self._monotonic() - reading[1])

    @property
    def synced(self) -> bool:
        """Whether the store's time has been read (else the host's clock stands in)."""
        return self._reading is not None

    @property
    def offset(self) -> float:
        """The store's clock minus the host's, in seconds, as last read (0 before)."""
        return 0.0 if self._reading is None else self() - self._wall()

    async def sync(self) -> None:
        """Read the store's time now; raises what the source raises when it cannot be read."""
        if self._source is None:
            return
        best: tuple[float, float, float] | None = None  # round trip, store time, monotonic
        for _ in range(_READINGS):
            sent = self._monotonic()
            now = await self._source()
            received = self._monotonic()
            trip = received - sent
            if best is None or trip < best[0]:
                best = (trip, now, received)
        assert best is not None
        trip, now, received = best
        # The reading was taken somewhere in the round trip: its middle is the best guess.
        self._reading = (now + trip / 2, received)
        offset = self.offset
        if abs(offset) >= _WARN_OFFSET_SECONDS and not self._warned:
            self._warned = True
            log.warning(
                "this host's clock is %.1f s %s the table store's; the server keeps the store's "
                "time (deadlines and event times), but the host's clock needs fixing",
                abs(offset),
                "behind" if offset > 0 else "ahead of",
            )

    def start(self) -> None:
        """Read the store's time again every minute, in the background, until :meth:`close`."""
        if self._source is not None and (self._task is None or self._task.done()):
            self._task = asyncio.get_running_loop().create_task(self._resync(), name="clock")

    async def _resync(self) -> None:
        while True:
            await asyncio.sleep(self._interval)
            try:
                await self.sync()
            except Exception as error:  # the store is away: count on from the last reading
                log.debug("could not read the table store's time: %s", error)

    async def close(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
