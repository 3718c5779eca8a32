"""Webhooks: finished games' results (and players' turns), posted to the app's backend, signed.

Design notes.

* The app's backend learns results from the server, not from players' devices, which could lie:
  when a game with at least one player ends, the server POSTs a JSON document (see
  ``service.game_over_document``) to ``--webhook-url``.
* Nothing is lost when a replica dies: the commit that ends the game also puts the document in
  the store's outbox, atomically (see :mod:`hearts_server.store.base`). Every replica runs a
  :class:`WebhookSender`, which claims the items due (each leased to it for a minute, so two
  replicas never send one item at once), posts them, and removes them once the receiver answers
  2xx. Any other answer, a post that takes more than 10 s in all, a refused connection or any
  other failure is tried again later, with the waits doubling from 5 s up to an hour, 12 times
  at most (a ``turn.started`` notification 4 times, about half a minute: later, the turn may
  well be over); then the item is dropped and logged as an error. A ``turn.started`` item
  older than a minute when it comes up is dropped unsent, whatever its attempts: behind a
  receiver that hangs (each post then takes the whole 10 s) the sender cannot keep up with the
  turns, and the outbox would grow without end with notices for turns long over. A receiver
  may get an item twice (it answered, but the answer was lost; a replica died mid-post): the
  ``Hearts-Webhook-Id`` header (and the document's ``id``) tells repeats apart. A sender whose
  lease ran out never changes the item any more (the store checks the lease).
* Signed like Stripe's: ``Hearts-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of
  "<t>.<body>" with --webhook-secret>``. The receiver recomputes it, compares in constant time,
  and refuses an old ``t`` (replays).
* Up to 16 posts are in flight at once, and a post that ends makes room for the next item at
  once (a slow one does not hold up the others).
* Posts run on a few threads of their own with the standard library's ``http.client`` (which
  follows no redirects), never on the threads others share. The 10 s limit holds for the whole
  post: when it passes, the event loop shuts the post's socket, which ends the thread's wait.
* The outbox holds two kinds of documents: a finished game's result (``game.over``), and at
  tables that ask for them a player's new turn (``turn.started``). Their ids end in the kind
  (``.game_over``; ``.turn.<sequence>``), which is how the sender tells their schedules apart.
* Nothing a receiver or the store does stops the sender: every failure is one failed attempt,
  or one missed look at the outbox, logged.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import datetime
import hashlib
import hmac
import http.client
import logging
import socket
import ssl
import threading
import time
import urllib.parse
from collections.abc import Callable

import orjson

from hearts_server.store.base import OutboxItem, Store

__all__ = ["WebhookSender", "signature"]

log = logging.getLogger(__name__)

USER_AGENT = "hearts-server"


def _age(item: OutboxItem, now: float) -> float:
    """Seconds since ``item``'s document was made (its ``time``); 0 if it does not say."""
    try:
        made = datetime.datetime.fromisoformat(orjson.loads(item.payload)["time"])
    except (ValueError, KeyError, TypeError):
        return 0.0
    return now - made.timestamp()


def signature(secret: bytes, timestamp: int, body: bytes) -> str:
    """The ``Hearts-Signature`` header's value for ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret, b"%d." % timestamp + body, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"


class _Post:
    """One post's connection, which the event loop may shut when the post takes too long."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._connection: http.client.HTTPConnection | None = None
        self._cut = False

    def hold(self, connection: http.client.HTTPConnection) -> None:
        with self._lock:
            self._connection = connection
            if self._cut:
                self._shut()

    def cut(self) -> None:
        """Make the post's blocking calls fail at once (from any thread)."""
        with self._lock:
            self._cut = True
            self._shut()

    def _shut(self) -> None:
        sock = self._connection.sock if self._connection is not None else None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)


class WebhookSender:
    """Sends the outbox's items to one URL, as the design notes say."""

    MAX_ATTEMPTS = 12
    TURN_MAX_ATTEMPTS = 4  # a turn notification goes stale: 5, 10 and 20 s after the first
    TURN_MAX_AGE_SECONDS = 60.0  # older than this when it comes up, it is dropped unsent
    FIRST_WAIT_SECONDS = 5.0
    MAX_WAIT_SECONDS = 3600.0
    LEASE_SECONDS = 60.0  # far longer than a post may take: a live sender's item is not resent
    TIMEOUT_SECONDS = 10.0  # a whole post, from connecting to the answer's last byte
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
        parts = urllib.parse.urlsplit(url)
        self._https = parts.scheme.lower() == "https"
        self._host = parts.hostname or ""
        self._port = parts.port
        self._path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._host_header = parts.netloc
        self._store = store
        self._secret = secret
        self._clock = clock
        self._ssl = ssl.create_default_context() if self._https else None
        self._threads = concurrent.futures.ThreadPoolExecutor(
            self.BATCH, thread_name_prefix="webhook"
        )
        self._posts: set[_Post] = set()
        self._sending: set[asyncio.Task[None]] = set()
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
        """Stop sending; posts in flight are cut (their items' leases run out, and another
        replica, or this one restarted, sends them)."""
        for post in list(self._posts):
            post.cut()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
            self._task = None
        sending, self._sending = self._sending, set()
        for task in sending:
            task.cancel()
        await asyncio.gather(*sending, return_exceptions=True)
        self._threads.shutdown(wait=False, cancel_futures=True)

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            free = self.BATCH - len(self._sending)
            claimed = 0
            try:
                items, claimed = await self._claim(free)
                for item in items:
                    task = asyncio.create_task(self._deliver(item), name=f"webhook-{item.id}")
                    self._sending.add(task)
                    task.add_done_callback(self._sending.discard)
            except Exception as error:  # the store, most likely: look again at the next poll
                self._log_rarely("cannot send from the outbox: %s", error)
                claimed = -1
            if claimed == free:  # more may be due: on at once, or when a slot frees
                if len(self._sending) >= self.BATCH:
                    await asyncio.wait(self._sending, return_when=asyncio.FIRST_COMPLETED)
                continue
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), self.POLL_SECONDS)

    async def send_due(self) -> int:
        """Claim the items due and send them, waiting for every post; how many were claimed."""
        items, _ = await self._claim(self.BATCH)
        if items:
            await asyncio.gather(*(self._deliver(item) for item in items))
        return len(items)

    async def _claim(self, limit: int) -> tuple[list[OutboxItem], int]:
        """Claim up to ``limit`` items due; those to send (the stale turn notices among them
        are dropped unsent, see the design notes), and how many were claimed in all."""
        if limit <= 0:
            return [], 0
        now = self._clock()
        items = await self._store.outbox_claim(
            now_ms=int(now * 1000), lease_ms=int(self.LEASE_SECONDS * 1000), limit=limit
        )
        fresh = []
        for item in items:
            if ".turn." in item.id and _age(item, now) > self.TURN_MAX_AGE_SECONDS:
                self.dropped += 1
                self._log_rarely(
                    "dropped webhook %s unsent: its turn began more than %g s ago (the "
                    "receiver is slow or does not answer)",
                    item.id,
                    self.TURN_MAX_AGE_SECONDS,
                )
                try:
                    await self._store.outbox_done(item.id)
                except Exception as error:  # its lease runs out; it is dropped next time
                    self._log_rarely("cannot update webhook %s in the outbox: %s", item.id, error)
            else:
                fresh.append(item)
        return fresh, len(items)

    async def _deliver(self, item: OutboxItem) -> None:
        attempt = item.attempts  # this delivery's number, counted when it was claimed
        failure = await self._attempt(item, attempt)
        try:
            if failure is None:
                self.delivered += 1
                await self._store.outbox_done(item.id)
            elif attempt >= self._max_attempts(item):
                self.dropped += 1
                log.error(
                    "gave up on webhook %s after %d attempts (last: %s)", item.id, attempt, failure
                )
                await self._store.outbox_done(item.id)
            else:
                wait = min(self.FIRST_WAIT_SECONDS * 2 ** (attempt - 1), self.MAX_WAIT_SECONDS)
                due_ms = int((self._clock() + wait) * 1000)
                if await self._store.outbox_retry(item, due_ms=due_ms):
                    self.retried += 1
                    log.warning(
                        "webhook %s attempt %d failed (%s); next in %.0f s",
                        item.id,
                        attempt,
                        failure,
                        wait,
                    )
        except Exception as error:  # the item's lease runs out, and it is claimed again
            self._log_rarely("cannot update webhook %s in the outbox: %s", item.id, error)

    def _max_attempts(self, item: OutboxItem) -> int:
        return self.TURN_MAX_ATTEMPTS if ".turn." in item.id else self.MAX_ATTEMPTS

    async def _attempt(self, item: OutboxItem, attempt: int) -> str | None:
        """Post ``item`` once; None when the receiver took it, else why not."""
        post = _Post()
        self._posts.add(post)
        loop = asyncio.get_running_loop()
        try:
            future = loop.run_in_executor(self._threads, self._post, post, item, attempt)
            try:
                return await asyncio.wait_for(asyncio.shield(future), self.TIMEOUT_SECONDS)
            except TimeoutError:
                post.cut()  # the thread's wait ends at once
                return f"no answer within {self.TIMEOUT_SECONDS:g} s"
        except Exception as error:  # whatever it was, this attempt failed
            return f"{type(error).__name__}: {error}"
        finally:
            self._posts.discard(post)

    def _post(self, post: _Post, item: OutboxItem, attempt: int) -> str | None:
        """POST one item (on a sender thread); None for a 2xx answer, else why not."""
        connection: http.client.HTTPConnection
        if self._ssl is not None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=self.TIMEOUT_SECONDS, context=self._ssl
            )
        else:
            connection = http.client.HTTPConnection(
                self._host, self._port, timeout=self.TIMEOUT_SECONDS
            )
        timestamp = int(self._clock())
        try:
            connection.connect()
            post.hold(connection)
            connection.request(
                "POST",
                self._path,
                body=item.payload,
                headers={
                    "Host": self._host_header,
                    "Content-Type": "application/json",
                    "User-Agent": USER_AGENT,
                    "Hearts-Webhook-Id": item.id,
                    "Hearts-Webhook-Attempt": str(attempt),
                    "Hearts-Signature": signature(self._secret, timestamp, item.payload),
                },
            )
            response = connection.getresponse()
            response.read(65536)  # the body is not used; a little is read to end cleanly
            if 200 <= response.status < 300:
                return None
            return f"HTTP {response.status}"  # redirects included: they are not followed
        except (OSError, http.client.HTTPException, ValueError) as error:
            return f"{type(error).__name__}: {error}"
        finally:
            connection.close()

    def _log_rarely(self, message: str, *args: object) -> None:
        now = time.monotonic()
        if now - self._logged_at >= 5:
            self._logged_at = now
            log.warning(message, *args)
