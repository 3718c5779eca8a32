"""Webhooks: a finished game's result, posted to the app's backend, signed, at least once.

Design notes.

* The app's backend learns results from the server, not from players' devices, which could lie:
  when a game with at least one player ends, the server POSTs a JSON document (see
  :func:`game_over_payload`) to ``--webhook-url``.
* Nothing is lost when a replica dies: the commit that ends the game also puts the document in
  the store's outbox, atomically (see :mod:`hearts_server.store.base`). Every replica runs a
  :class:`WebhookSender`, which claims the items due (each leased for a while to the claimer, so
  two replicas never send one item at once unless a send outlives its lease), posts them, and
  removes them once the receiver answers 2xx. Any other answer, a timeout or a refused
  connection is tried again later, with the waits doubling from 5 s up to an hour, 12 times at
  most; then the item is dropped and logged as an error. So a receiver may get an item twice
  (it answered, but the answer was lost): the ``Hearts-Webhook-Id`` header (and the document's
  ``id``) tells repeats apart.
* Signed like Stripe's: ``Hearts-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
  "<t>.<body>" with --webhook-secret>``. The receiver recomputes it, compares in constant time,
  and refuses an old ``t`` (replays).
* Posts run on a few threads of their own (the standard library's HTTP client, which blocks;
  redirects are not followed), never on the threads others share.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import hashlib
import hmac
import http.client
import logging
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

from hearts_server.store.base import OutboxItem, Store, StoreUnavailableError

__all__ = ["WebhookSender", "signature"]

log = logging.getLogger(__name__)

USER_AGENT = "hearts-server"


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``Hearts-Signature`` header's value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret, b"%d." % timestamp + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a 3xx is an answer like any other non-2xx: tried again later


class WebhookSender:
    """Sends the outbox's items to one URL, as the design notes say."""

    MAX_ATTEMPTS = 12
    FIRST_WAIT_SECONDS = 5.0
    MAX_WAIT_SECONDS = 3600.0
    LEASE_SECONDS = 60.0  # longer than a post may take, so a live sender's item is not resent
    TIMEOUT_SECONDS = 10.0
    POLL_SECONDS = 1.0  # how often the outbox is looked at when nothing wakes the sender
    BATCH = 16

    def __init__(
        self,
        store: Store,
        *,
        url: str,
        secret: bytes,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._store = store
        self._url = url
        self._secret = secret
        self._clock = clock
        self._opener = urllib.request.build_opener(_NoRedirects())
        self._threads = concurrent.futures.ThreadPoolExecutor(4, thread_name_prefix="webhook")
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._logged_at = 0.0
        # Counted for the metrics (sampled by the server).
        self.delivered = 0
        self.retried = 0
        self.dropped = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="webhooks")

    def wake(self) -> None:
        """Look at the outbox now (an item was just put there)."""
        self._wake.set()

    async def aclose(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            try:
                sent = await self.send_due()
            except StoreUnavailableError as error:
                self._log_store(error)
                sent = 0
            if sent == self.BATCH:
                continue  # more may be due
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.POLL_SECONDS)

    async def send_due(self) -> int:
        """Claim the items due and send them; how many were claimed."""
        now_ms = int(self._clock() * 1000)
        items = await self._store.outbox_claim(
            now_ms=now_ms, lease_ms=int(self.LEASE_SECONDS * 1000), limit=self.BATCH
        )
        if items:
            await asyncio.gather(*(self._deliver(item) for item in items))
        return len(items)

    async def _deliver(self, item: OutboxItem) -> None:
        attempt = item.attempts + 1
        loop = asyncio.get_running_loop()
        outcome = await loop.run_in_executor(self._threads, self._post, item, attempt)
        if outcome is None:
            self.delivered += 1
            await self._store.outbox_done(item.id)
            return
        if attempt >= self.MAX_ATTEMPTS:
            self.dropped += 1
            log.error(
                "gave up on webhook %s after %d attempts (last: %s)", item.id, attempt, outcome
            )
            await self._store.outbox_done(item.id)
            return
        self.retried += 1
        wait = min(self.FIRST_WAIT_SECONDS * 2 ** (attempt - 1), self.MAX_WAIT_SECONDS)
        log.warning(
            "webhook %s attempt %d failed (%s); next in %.0f s", item.id, attempt, outcome, wait
        )
        due_ms = int((self._clock() + wait) * 1000)
        await self._store.outbox_retry(item.id, due_ms=due_ms, attempts=attempt)

    def _post(self, item: OutboxItem, attempt: int) -> str | None:
        """POST one item (on a sender thread); None when the receiver took it, else why not."""
        timestamp = int(self._clock())
        request = urllib.request.Request(
            self._url,
            data=item.payload,
            method="POST",
            headers={
                "Content-Type": "application/json",
                "User-Agent": USER_AGENT,
                "Hearts-Webhook-Id": item.id,
                "Hearts-Webhook-Attempt": str(attempt),
                "Hearts-Signature": signature(self._secret, timestamp, item.payload),
            },
        )
        try:
            with self._opener.open(request, timeout=self.TIMEOUT_SECONDS) as response:
                response.read(65536)  # let the connection close cleanly; the body is not used
                return None  # urllib raises HTTPError for anything but 2xx (no redirects)
        except urllib.error.HTTPError as error:
            error.close()
            return f"HTTP {error.code}"
        except (urllib.error.URLError, TimeoutError, OSError, http.client.HTTPException) as error:
            return f"{type(error).__name__}: {error}"

    def _log_store(self, error: Exception) -> None:
        now = time.monotonic()
        if now - self._logged_at >= 5:
            self._logged_at = now
            log.warning("cannot reach the outbox: %s", error)
