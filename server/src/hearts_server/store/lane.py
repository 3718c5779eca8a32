"""One multiplexed Redis connection for the store's round trips.

redis-py's asyncio client takes a connection from its pool for every command and gives it
back after the reply, under a condition variable and a timeout each, and writes through a task
that ``asyncio.wait_for`` makes: about 60 µs of CPU a move in-process on this machine, and
60–100 µs under load (see docs/benchmarks.md). Redis answers the commands of one connection in the
order they came, so a single connection carries every command of the process here, each
written as it is asked for and answered by the next reply that arrives: a command costs a
future and a write. Concurrent commands wait in Redis's queue rather than the pool's, and a
cancelled caller leaves its reply to be read and dropped instead of a connection to be closed.

The lane speaks RESP3 and parses with hiredis as redis-py's own connections do (the same
``HELLO``, the same reader options), and replies go through the client's response callbacks,
so every command answers what redis-py's ``execute_command`` would. Errors are redis-py's:
error replies become its exception classes, a lost or refused connection its
``ConnectionError``, and a reply that takes longer than the timeout its ``TimeoutError``; a
timeout ends the connection (later replies could no longer be matched to their commands) and
every command waiting on it. The next command connects again.

A lane is made from the redis-py connection pool the URL describes (:meth:`RedisLane.of_pool`),
so it connects where and as that pool would: TCP (``redis://``), TLS (``rediss://``, with the
``ssl.SSLContext`` redis-py builds from the URL's ``ssl_*`` options) or a unix socket
(``unix://``), with its user, password and database.
"""

from __future__ import annotations

import asyncio
import collections
import inspect
import ssl
from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

import hiredis
from redis._parsers import BaseParser
from redis.asyncio import ConnectionPool
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse
from redis.exceptions import TimeoutError as RedisTimeoutError

__all__ = ["RedisLane"]

_Command = tuple[bytes | str | int, ...]

_NOT_ENOUGH_DATA = object()  # hiredis's "no whole reply yet" (False is a RESP3 reply)


def _pack(command: _Command) -> bytes:
    first = command[0]
    if isinstance(first, str) and " " in first:  # "SCRIPT LOAD": Redis wants two words
        command = (*first.split(), *command[1:])
    packed: bytes = hiredis.pack_command(cast(Any, command))
    return packed


class _Connection(asyncio.Protocol):
    """The socket's protocol: each reply resolves the oldest command still waiting."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._reader = hiredis.Reader(
            protocolError=InvalidResponse,
            replyError=BaseParser.parse_error,
            notEnoughData=_NOT_ENOUGH_DATA,
        )
        # Per command sent and not yet answered: its future and the loop time it was sent.
        self.waiting: collections.deque[tuple[asyncio.Future[Any], float]] = collections.deque()
        self.transport: asyncio.Transport | None = None
        self.lost = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def send(self, data: bytes, count: int) -> list[asyncio.Future[Any]]:
        """Write ``count`` packed commands; a future per command for its reply."""
        assert self.transport is not None
        now = self._loop.time()
        futures = [self._loop.create_future() for _ in range(count)]
        self.waiting.extend((future, now) for future in futures)
        self.transport.write(data)
        return futures

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        waiting = self.waiting
        try:
            while (reply := reader.gets()) is not _NOT_ENOUGH_DATA:
                future = waiting.popleft()[0]
                if not future.done():  # its caller may have been cancelled
                    future.set_result(reply)
        except (InvalidResponse, IndexError) as exc:  # garbage, or a reply nobody asked for
            self.end(RedisConnectionError(f"Protocol error from Redis: {exc!r}"))

    def eof_received(self) -> None:
        self.lost = True  # no command may follow; the transport closes and calls connection_lost

    def connection_lost(self, exc: Exception | None) -> None:
        detail = f": {exc}" if exc is not None else ""
        self._fail(RedisConnectionError(f"Connection closed by Redis{detail}."))

    def end(self, error: Exception) -> None:
        """Close at once (unsent data dropped) and fail every command waiting with ``error``."""
        self._fail(error)
        if self.transport is not None:
            self.transport.abort()

    def _fail(self, error: Exception) -> None:
        self.lost = True
        waiting, self.waiting = self.waiting, collections.deque()
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error)
                # A caller cancelled meanwhile never retrieves it: no "never retrieved" log.
                future.exception()

    def overdue(self, deadline: float) -> bool:
        """Whether the oldest command waiting was sent before ``deadline``."""
        return bool(self.waiting) and self.waiting[0][1] < deadline


class RedisLane:
    """Every command of a process on one connection to ``host``:``port``, reconnected on demand.

    ``callbacks`` are the client's response callbacks by command name
    (``Redis.response_callbacks``). ``timeout`` bounds connecting and every reply.
    """

    def __init__(
        self,
        *,
        host: str = "localhost",
        port: int = 6379,
        path: str | None = None,
        tls: ssl.SSLContext | None = None,
        db: int = 0,
        username: str | None = None,
        password: str | None = None,
        client_name: str | None = None,
        timeout: float,
        callbacks: Mapping[str | bytes, Callable[..., Any]],
    ) -> None:
        """A lane to ``host``:``port`` (over ``tls`` if given), or to the unix socket ``path``."""
        self._host = host
        self._port = port
        self._path = path
        self._tls = tls
        self._db = db
        self._username = username
        self._password = password
        self._client_name = client_name
        self._timeout = timeout
        # A plain dict by upper-case name: redis-py's CaseInsensitiveDict costs a lookup ~1 µs.
        self._callbacks: dict[str, Callable[..., Any]] = {
            (name.decode() if isinstance(name, bytes) else name).upper(): callback
            for name, callback in callbacks.items()
        }
        self._connection: _Connection | None = None
        self._connecting: asyncio.Future[_Connection] | None = None
        self._watchdog: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    def of_pool(
        cls,
        pool: ConnectionPool,
        *,
        timeout: float,
        callbacks: Mapping[str | bytes, Callable[..., Any]],
        client_name: str | None = None,
    ) -> RedisLane:
        """A lane to where ``pool``'s connections go (built by ``from_url``), as they would."""
        settings = pool.connection_kwargs
        kind = pool.connection_class
        tls = None
        if issubclass(kind, SSLConnection):
            # redis-py turns the URL's ssl_* options into a context: the same checks here.
            tls = kind(**settings).ssl_context.get()
        return cls(
            host=settings.get("host", "localhost"),
            port=int(settings.get("port", 6379)),
            path=settings.get("path") if issubclass(kind, UnixDomainSocketConnection) else None,
            tls=tls,
            db=int(settings.get("db", 0)),
            username=settings.get("username"),
            password=settings.get("password"),
            client_name=client_name,
            timeout=timeout,
            callbacks=callbacks,
        )

    async def run(self, commands: Sequence[_Command], *, raw: bool = False) -> list[Any]:
        """Send ``commands`` in one write and return their replies, in order; parsed by the
        response callbacks unless ``raw`` (a callback that needs redis-py's options).

        An error reply is returned as its redis-py exception, not raised; a lost connection or
        a timeout raises redis-py's ``ConnectionError`` or ``TimeoutError``.
        """
        connection = self._connection
        if connection is None or connection.lost:
            connection = await self._connect()
        if len(commands) == 1:
            [future] = connection.send(_pack(commands[0]), 1)
            replies = [await future]
        else:
            futures = connection.send(b"".join(map(_pack, commands)), len(commands))
            replies = [await future for future in futures]
        if raw:
            return replies
        callbacks = self._callbacks
        for index, command in enumerate(commands):
            name = command[0]
            callback = callbacks.get(name.upper()) if isinstance(name, str) else None
            if callback is not None and not isinstance(replies[index], Exception):
                reply = callback(replies[index])
                replies[index] = await reply if inspect.isawaitable(reply) else reply
        return replies

    async def aclose(self) -> None:
        self._closed = True
        if self._watchdog is not None:
            self._watchdog.cancel()
            self._watchdog = None
        if self._connection is not None:
            self._connection.end(RedisConnectionError("The store was closed."))
            self._connection = None

    async def _connect(self) -> _Connection:
        if self._closed:
            raise RedisConnectionError("The store was closed.")
        if self._connecting is None:
            self._connecting = asyncio.ensure_future(self._open())
            self._connecting.add_done_callback(self._opened)
        # Shielded: one caller's cancellation must not end the connection the others wait for.
        connection = await asyncio.shield(self._connecting)
        if connection.lost:  # closed by aclose() or by Redis before this caller woke up
            if self._closed:
                raise RedisConnectionError("The store was closed.")
            raise RedisConnectionError("Connection closed by Redis.")
        return connection

    def _opened(self, connecting: asyncio.Future[_Connection]) -> None:
        self._connecting = None
        if not connecting.cancelled() and connecting.exception() is None:
            if self._closed:  # closed while connecting
                connecting.result().end(RedisConnectionError("The store was closed."))
                return
            self._connection = connecting.result()
            if self._watchdog is None and not self._closed:
                self._watchdog = asyncio.ensure_future(self._watch())

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        where = self._path or f"{self._host}:{self._port}"
        try:
            if self._path is not None:
                opening = loop.create_unix_connection(lambda: _Connection(loop), self._path)
            else:
                opening = loop.create_connection(
                    lambda: _Connection(loop), self._host, self._port, ssl=self._tls
                )
            _, connection = await asyncio.wait_for(opening, self._timeout)
        except (TimeoutError, OSError) as exc:  # ssl.SSLError is an OSError
            raise RedisConnectionError(f"Error connecting to {where}. {exc!r}.") from exc
        hello: list[bytes | str | int] = ["HELLO", 3]
        if self._password is not None:
            hello += ["AUTH", self._username or "default", self._password]
        if self._client_name:
            hello += ["SETNAME", self._client_name]
        handshake: list[_Command] = [tuple(hello)]
        if self._db:
            handshake.append(("SELECT", self._db))
        futures = connection.send(b"".join(map(_pack, handshake)), len(handshake))
        try:
            async with asyncio.timeout(self._timeout):
                replies = [await future for future in futures]
        except TimeoutError:
            connection.end(RedisTimeoutError("Timeout reading from Redis."))
            raise RedisTimeoutError("Timeout connecting to Redis.") from None
        for reply in replies:
            if isinstance(reply, Exception):
                connection.end(RedisConnectionError("The handshake failed."))
                if isinstance(reply, RedisConnectionError):  # AuthenticationError and the like
                    raise reply
                raise RedisConnectionError(f"Redis refused the handshake: {reply}") from reply
        return connection

    async def _watch(self) -> None:
        """End a connection whose oldest command has waited longer than the timeout."""
        loop = asyncio.get_running_loop()
        period = min(max(self._timeout / 4, 0.01), 1.0)
        while True:
            await asyncio.sleep(period)
            connection = self._connection
            if connection is not None and connection.overdue(loop.time() - self._timeout):
                connection.end(RedisTimeoutError("Timeout reading from Redis."))
