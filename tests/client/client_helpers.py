"""Helpers for the client tests: a server (on the test's loop or in a thread), bots at a table,
players that make legal moves, interceptors that lose an answer or record the calls, identity
tokens, the ``hearts`` command running beside the test."""

from __future__ import annotations

import asyncio
import contextlib
import io
import threading
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any, TextIO

import grpc
import jwt

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, JoinedTable
from hearts_client.cli import main
from hearts_server.config import Settings
from hearts_server.server import HeartsServer
from hearts_server.store.memory import MemoryStore

SECRET = "client-tests-secret-0123456789abcdef"
"""The token secret of every test server (a restarted server must accept the old tokens)."""

THREE_BOTS = {1: "heuristic", 2: "heuristic", 3: "heuristic"}

IDENTITY_SECRET = "the-apps-backend-signs-identities-0123456789"
"""The identity secret of the test servers that check identity tokens."""


def identity(sub: str = "user-1", *, key: str = IDENTITY_SECRET, **claims: Any) -> str:
    """An identity token for ``sub``, valid for an hour, with ``claims`` added."""
    payload = {"sub": sub, "exp": int(time.time()) + 3600, **claims}
    return jwt.encode(payload, key, "HS256")


async def start_server(
    port: int = 0, store: MemoryStore | None = None, **settings: Any
) -> HeartsServer:
    """A started server on ``port`` (0: a free one), optionally over an existing store, with
    ``settings`` (``identity_secret=...``) added to the tests' own."""
    server = HeartsServer(
        Settings(port=port, token_secret=SECRET, bot_workers=0, **settings), store=store
    )
    await server.start()
    return server


@contextlib.contextmanager
def server_in_thread(**settings: Any) -> Iterator[str]:
    """A server on its own event loop in a thread (the sync client must own the test's); its
    address. ``settings`` are added to the tests' own."""
    ready = threading.Event()
    address: list[str] = []
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        server = await start_server(**settings)
        address.append(server.address)
        ready.set()
        await stop.wait()
        await server.stop(0)

    thread = threading.Thread(target=loop.run_until_complete, args=(serve(),), daemon=True)
    thread.start()
    assert ready.wait(10)
    try:
        yield address[0]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(10)
        loop.close()


class LoseFirstAnswer(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Loses the answer of the first call to ``method`` after the server has applied it; keeps
    the request of every attempt of ``method`` (``requests``) and their ``request_ids``."""

    def __init__(self, method: str) -> None:
        self.method = method
        self.requests: list[Any] = []
        self.request_ids: list[str] = []
        self.lost = False

    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: Any, request: Any
    ) -> Any:
        call = await continuation(client_call_details, request)
        method = client_call_details.method
        if isinstance(method, bytes):
            method = method.decode()
        if not method.endswith(f"/{self.method}"):
            return call
        self.requests.append(request)
        self.request_ids.append(request.request_id)
        if not self.lost:
            self.lost = True
            await call  # the server has applied the call and answered
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                details="answer lost on the way (injected)",
            )
        return call


class Record(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Keeps every attempt's method, request and metadata."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any, list[tuple[str, str]]]] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        self.calls.append((method.rsplit("/", 1)[-1], request, list(details.metadata or ())))
        return await continuation(details, request)


async def table_with_bots(
    client: HeartsClient, *, seed: int = 7, passing: bool = True, target: int = 100
) -> JoinedTable:
    """A new table with three heuristic bots, joined by ``client`` at seat 0; the game is on."""
    created = await client.create_table(
        "client test",
        rules={"pass_cards": passing, "target_score": target},
        bots=THREE_BOTS,
        deck_seed=seed,
    )
    return await client.join_table(created.name, "Tester", seat=0)


def waits_for_me(view: pb.TableView) -> bool:
    """Whether the game waits for the viewer's pass or play."""
    if view.table.phase == pb.PHASE_PASSING:
        return view.cards_to_pass > 0
    return view.table.phase == pb.PHASE_PLAYING and bool(view.legal_cards)


async def make_move(client: HeartsClient, name: str, view: pb.TableView) -> pb.TableView:
    """Pass the first three cards, or play the first legal card; the view after it."""
    if view.table.phase == pb.PHASE_PASSING:
        return await client.pass_cards(name, view.hand[:3])
    return await client.play_card(name, view.legal_cards[0])


async def play_to_the_end(client: HeartsClient, name: str, view: pb.TableView) -> pb.TableView:
    """Make legal moves until the game is over (inline bots answer within each call)."""
    for _ in range(2000):
        if view.table.phase == pb.PHASE_GAME_OVER:
            return view
        assert waits_for_me(view), f"the game does not wait for seat 0: {view.table}"
        view = await make_move(client, name, view)
    raise AssertionError("the game did not end within 2000 moves")


async def play_seats(name: str, *players: HeartsClient) -> pb.TableView:
    """Make every move the game at ``name`` waits for from ``players`` until it is over, while
    the other seats (bots, another program) move on their own; the last view."""
    for _ in range(3000):
        views = [await player.get_table(name) for player in players]
        if views[0].table.phase == pb.PHASE_GAME_OVER:
            return views[0]
        waiting = [(p, v) for p, v in zip(players, views, strict=True) if waits_for_me(v)]
        if waiting:
            player, view = waiting[0]
            await make_move(player, name, view)
        else:
            await asyncio.sleep(0.01)
    raise AssertionError(f"the game at {name} did not end")


async def run_hearts(argv: list[str], typed: str = "") -> tuple[int, str]:
    """The ``hearts`` command run with ``argv`` to its end in a worker thread, ``typed`` its
    input; its exit code and output."""
    out = io.StringIO()
    code = await asyncio.to_thread(main, argv, stdin=io.StringIO(typed), stdout=out)
    return code, out.getvalue()


@contextlib.asynccontextmanager
async def hearts_command(
    argv: list[str], stdin: TextIO, stdout: TextIO
) -> AsyncIterator[asyncio.Task[int]]:
    """The ``hearts`` command run with ``argv`` in a worker thread (it runs an event loop of its
    own) while the test plays the other seats; the task gives its exit code. A test that fails
    meanwhile lets the command end first (30 s at most), so that its failure is what is shown."""
    command = asyncio.create_task(asyncio.to_thread(main, argv, stdin=stdin, stdout=stdout))
    try:
        yield command
    finally:
        if not command.done():
            with contextlib.suppress(Exception):
                async with asyncio.timeout(30):
                    await command
