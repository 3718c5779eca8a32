"""Fixtures and a small client harness for the server tests: a real server, real gRPC calls.

Every test talks to an in-process :class:`~hearts_server.server.HeartsServer` on a free loopback
port, over a real ``grpc.aio`` channel, exactly as a client would. The ``server`` fixture is
parametrized over both stores (memory and a real Redis started by ``tests/conftest.py``), so one
API test checks both. :class:`Hearts` holds the stub plus the few moves every test needs (create,
join, play a legal move from the caller's own view) and :func:`rejected` decodes an error's
``google.rpc.ErrorInfo`` and ``hearts.v1.MoveRejection``.

Test modules import the helpers with ``from .conftest import ...``: tests are packages, so
each folder's conftest is a module of its own.
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Iterator, Mapping
from typing import Any

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from hearts.v1 import error_details_pb2 as hearts_errors_pb
from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_server.config import Settings
from hearts_server.server import HeartsServer

from ..webhook_receiver import Receiver

SECRET = "server-api-tests-secret-0123456789"
"""The token secret every test server shares (replicas must share it)."""

_RANKS = "23456789TJQKA"
_SUITS = "CDHS"

ServerFactory = Callable[..., Awaitable[HeartsServer]]


# --------------------------------------------------------------------------- cards


def card(text: str) -> pb.Card:
    """A card message from notation: ``card("QS")``."""
    rank, suit = text[:-1], text[-1]
    return pb.Card(suit=_SUITS.index(suit) + 1, rank=_RANKS.index(rank) + 2)  # type: ignore[arg-type]


def cards(text: str) -> list[pb.Card]:
    """Card messages from notation: ``cards("2C QS")``."""
    return [card(word) for word in text.split()]


def notation(message: pb.Card) -> str:
    """``QS`` for the queen of spades; ``?<suit>/<rank>`` for values that name no card."""
    if 1 <= message.suit <= 4 and 2 <= message.rank <= 14:
        return _RANKS[message.rank - 2] + _SUITS[message.suit - 1]
    return f"?{message.suit}/{message.rank}"


def names(messages: Iterable[pb.Card]) -> list[str]:
    """Notation for each card, in order."""
    return [notation(message) for message in messages]


def key(message: pb.Card) -> tuple[int, int]:
    """A hashable form of a card message."""
    return (message.suit, message.rank)


# --------------------------------------------------------------------------- errors


@dataclasses.dataclass(frozen=True)
class Rejected:
    """A failed call as a client sees it: status code, ErrorInfo and, for a move, MoveRejection."""

    code: grpc.StatusCode
    reason: str
    domain: str
    metadata: Mapping[str, str]
    move: hearts_errors_pb.MoveRejection | None
    message: str


def rejected(error: grpc.aio.AioRpcError) -> Rejected:
    """Decode the rich status of a failed call."""
    status = rpc_status.from_call(error)
    assert status is not None, f"{error.code()} without google.rpc.Status details: {error}"
    info: error_details_pb2.ErrorInfo | None = None
    move: hearts_errors_pb.MoveRejection | None = None
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
        elif detail.Is(hearts_errors_pb.MoveRejection.DESCRIPTOR):
            move = hearts_errors_pb.MoveRejection()
            detail.Unpack(move)
    assert info is not None, f"{error.code()} without ErrorInfo: {error}"
    return Rejected(
        error.code(), info.reason, info.domain, dict(info.metadata), move, status.message
    )


async def failure(call: Awaitable[Any]) -> Rejected:
    """Await a call that must fail, and decode its status."""
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return rejected(caught.value)


async def read_until(
    call: Any,
    stop: Callable[[api.WatchTableResponse], bool],
    *,
    seconds: float = 10.0,
    presence: bool = False,
) -> list[api.WatchTableResponse]:
    """Messages of a WatchTable call up to and including the first that ``stop`` accepts.

    Presence events (unstored; they arrive whenever a stream opens or closes) are skipped
    unless ``presence``: the tests of presence read them, the others read the game.
    """
    received: list[api.WatchTableResponse] = []

    async def read() -> None:
        async for message in call:
            if not presence and message.event.HasField("presence_changed"):
                continue
            received.append(message)
            if stop(message):
                return
        raise AssertionError(f"the stream ended before the awaited message: {received[-3:]}")

    try:
        await asyncio.wait_for(read(), seconds)
    except TimeoutError:
        raise AssertionError(f"no awaited message in {seconds}s; last: {received[-3:]}") from None
    return received


def event_kind(message: api.WatchTableResponse) -> str:
    """``snapshot``, or the event's kind (``card_played``, ...)."""
    if message.HasField("snapshot"):
        return "snapshot"
    if message.HasField("heartbeat"):
        return "heartbeat"
    return str(message.event.WhichOneof("event"))


def stored(messages: Iterable[api.WatchTableResponse]) -> list[api.WatchTableResponse]:
    """``messages`` without presence events (see :func:`read_until`)."""
    return [m for m in messages if not m.event.HasField("presence_changed")]


def bearer(token: str | None) -> tuple[tuple[str, str], ...]:
    """Call metadata that carries ``token`` (none for a spectator)."""
    return () if token is None else (("authorization", f"Bearer {token}"),)


# --------------------------------------------------------------------------- the harness


@dataclasses.dataclass
class Seated:
    """A table whose seats were taken by the test: its name and every token."""

    name: str
    creator_token: str
    tokens: dict[int, str]
    """Seat token by seat, for the human seats."""


def owing(table: pb.Table) -> list[int]:
    """The seats that owe a move on ``table`` (from its public state only)."""
    if table.phase == pb.PHASE_PASSING:
        return [seat.seat for seat in table.seats if not seat.has_passed]
    if table.phase == pb.PHASE_PLAYING and table.HasField("turn_seat"):
        return [table.turn_seat]
    return []


BeforeMove = Callable[[int, pb.TableView], Awaitable[None]]
OnResponse = Callable[[int, Any], None]


class Hearts:
    """A test client: one channel to one server, and the moves the tests repeat."""

    def __init__(self, channel: grpc.aio.Channel) -> None:
        self.channel = channel
        self.stub = api_grpc.TableServiceStub(channel)

    # ---- tables and seats

    async def create(
        self,
        *,
        bots: Mapping[int, int] | None = None,
        deck_seed: int | None = None,
        dealer: int = 0,
        request_id: str = "",
        turn_timeout_ms: int | None = None,
        unlisted: bool = False,
        turn_notifications: bool = False,
        **rules: Any,
    ) -> api.CreateTableResponse:
        """Create a table; ``bots`` maps seat to ``pb.BOT_LEVEL_*``, ``rules`` are Rules fields."""
        table = pb.Table(display_name="test table", rules=pb.Rules(**rules), dealer=dealer)
        for seat, level in (bots or {}).items():
            table.seats.append(pb.Seat(seat=seat, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=level))
        if deck_seed is not None:
            table.deck_seed = deck_seed
        if turn_timeout_ms is not None:
            table.turn_timeout.FromMilliseconds(turn_timeout_ms)
        table.unlisted = unlisted
        table.turn_notifications = turn_notifications
        return await self.stub.CreateTable(
            api.CreateTableRequest(table=table, request_id=request_id)
        )

    async def join(
        self,
        name: str,
        seat: int | None = None,
        *,
        player: str = "player",
        etag: str = "",
        request_id: str = "",
    ) -> api.JoinTableResponse:
        """Take ``seat`` (None: any free one)."""
        request = api.JoinTableRequest(
            name=name, player_display_name=player, etag=etag, request_id=request_id
        )
        if seat is not None:
            request.seat = seat
        return await self.stub.JoinTable(request)

    async def seated(
        self,
        humans: Iterable[int] = (0, 1, 2, 3),
        *,
        bots: Mapping[int, int] | None = None,
        **create: Any,
    ) -> Seated:
        """A new table with ``bots`` and a joined human in each of ``humans``."""
        created = await self.create(bots=bots, **create)
        name = created.view.table.name
        tokens = {}
        for seat in humans:
            joined = await self.join(name, seat, player=f"human {seat}")
            tokens[seat] = joined.seat_token
        return Seated(name, created.creator_token, tokens)

    # ---- reading and moving

    async def view(self, name: str, token: str | None = None) -> pb.TableView:
        """The caller's view (a spectator's without a token)."""
        response = await self.stub.GetTable(api.GetTableRequest(name=name), metadata=bearer(token))
        return response.view

    async def etag(self, name: str) -> str:
        """The table's current etag."""
        return (await self.view(name)).table.etag

    async def pass_cards(
        self,
        name: str,
        token: str | None,
        chosen: Iterable[pb.Card],
        *,
        etag: str = "",
        request_id: str = "",
    ) -> api.PassCardsResponse:
        """PassCards with the given token."""
        request = api.PassCardsRequest(
            name=name, cards=list(chosen), etag=etag, request_id=request_id
        )
        return await self.stub.PassCards(request, metadata=bearer(token))

    async def play(
        self,
        name: str,
        token: str | None,
        chosen: pb.Card,
        *,
        etag: str = "",
        request_id: str = "",
    ) -> api.PlayCardResponse:
        """PlayCard with the given token."""
        request = api.PlayCardRequest(name=name, card=chosen, etag=etag, request_id=request_id)
        return await self.stub.PlayCard(request, metadata=bearer(token))

    async def leave(
        self, name: str, token: str | None, *, etag: str = "", request_id: str = ""
    ) -> api.LeaveTableResponse:
        """LeaveTable with the given token."""
        request = api.LeaveTableRequest(name=name, etag=etag, request_id=request_id)
        return await self.stub.LeaveTable(request, metadata=bearer(token))

    async def rematch(
        self, name: str, token: str | None, *, request_id: str = ""
    ) -> api.RematchTableResponse:
        """RematchTable with the given token (one of the finished table's)."""
        request = api.RematchTableRequest(name=name, request_id=request_id)
        return await self.stub.RematchTable(request, metadata=bearer(token))

    async def delete(
        self, name: str, token: str | None, *, etag: str = "", request_id: str = ""
    ) -> api.DeleteTableResponse:
        """DeleteTable with the given token."""
        request = api.DeleteTableRequest(name=name, etag=etag, request_id=request_id)
        return await self.stub.DeleteTable(request, metadata=bearer(token))

    def watch(
        self,
        name: str,
        token: str | None = None,
        *,
        after_sequence: int | None = None,
        heartbeat_seconds: float | None = None,
    ) -> Any:
        """A WatchTable call (iterate it; ``cancel()`` it to disconnect)."""
        request = api.WatchTableRequest(name=name)
        if after_sequence is not None:
            request.after_sequence = after_sequence
        if heartbeat_seconds is not None:
            request.heartbeat_interval.FromMilliseconds(round(heartbeat_seconds * 1000))
        return self.stub.WatchTable(request, metadata=bearer(token))

    async def move(self, name: str, token: str, seat_view: pb.TableView, rng: random.Random) -> Any:
        """Make a random move chosen only from the view's legal cards / cards_to_pass."""
        legal = list(seat_view.legal_cards)
        assert legal, f"seat {seat_view.viewer_seat} owes no move: {seat_view.table}"
        if seat_view.table.phase == pb.PHASE_PASSING:
            assert seat_view.cards_to_pass == 3
            return await self.pass_cards(name, token, rng.sample(legal, seat_view.cards_to_pass))
        return await self.play(name, token, rng.choice(legal))

    async def play_until(
        self,
        name: str,
        tokens: Mapping[int, str],
        done: Callable[[pb.Table], bool],
        *,
        rng: random.Random | None = None,
        before_move: BeforeMove | None = None,
        on_response: OnResponse | None = None,
        max_moves: int = 5000,
    ) -> pb.Table:
        """Let the human seats of ``tokens`` move (each from its own view) until ``done``.

        The public table of each response says who owes the next move, so a move costs two
        calls: the mover's GetTable and its PassCards/PlayCard. Bots move inside those calls.
        """
        rng = rng or random.Random(0)
        table = (await self.view(name)).table
        for _ in range(max_moves):
            if done(table):
                return table
            humans = [seat for seat in owing(table) if seat in tokens]
            assert humans, f"no human seat owes a move, the game is stuck: {table}"
            seat = humans[0]
            seat_view = await self.view(name, tokens[seat])
            if on_response is not None:
                on_response(seat, seat_view)
            if before_move is not None:
                await before_move(seat, seat_view)
            response = await self.move(name, tokens[seat], seat_view, rng)
            if on_response is not None:
                on_response(seat, response)
            table = response.view.table
        raise AssertionError(f"no end after {max_moves} moves")

    async def until_game_over(self, name: str, seconds: float = 10) -> pb.Table:
        """Poll the table until its game is over (bots play it in the server); fail after
        ``seconds``. The finished table."""
        async with asyncio.timeout(seconds):
            while True:  # nothing to wait on here but the table itself
                table = (await self.view(name)).table
                if table.phase == pb.PHASE_GAME_OVER:
                    return table
                await asyncio.sleep(0.02)

    async def play_out(self, name: str, tokens: Mapping[int, str], **options: Any) -> pb.Table:
        """Play until the game is over."""
        return await self.play_until(
            name, tokens, lambda table: table.phase == pb.PHASE_GAME_OVER, **options
        )


# --------------------------------------------------------------------------- fixtures


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
def store_kind(request: pytest.FixtureRequest) -> str:
    """Which store the server runs on; API tests run once per store."""
    return str(request.param)


def _redis_url(request: pytest.FixtureRequest) -> str:
    """The URL of the session's real Redis, flushed for this test."""
    url = str(request.getfixturevalue("redis_url"))
    request.getfixturevalue("clean_redis")
    return url


@pytest.fixture
async def make_server(request: pytest.FixtureRequest) -> AsyncIterator[ServerFactory]:
    """Start servers: ``await make_server(store="redis", max_events=5)``; stopped at the end."""
    started: list[HeartsServer] = []

    async def start(
        *, store: str = "memory", host_clock: Callable[[], float] = time.time, **overrides: Any
    ) -> HeartsServer:
        settings: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": 0,
            "token_secret": SECRET,
            "bot_workers": 0,
            "metrics_port": 0,
        }
        if store == "redis":
            settings["redis_url"] = _redis_url(request)
        settings.update(overrides)
        server = HeartsServer(Settings(**settings), host_clock=host_clock)
        await server.start()
        started.append(server)
        return server

    yield start
    for server in reversed(started):
        if not server.servicer.shutting_down:
            await server.stop(0.5)


@pytest.fixture
async def server(store_kind: str, make_server: ServerFactory) -> HeartsServer:
    """A running server on the parametrized store."""
    return await make_server(store=store_kind)


@pytest.fixture
async def connect() -> AsyncIterator[Callable[[HeartsServer], Hearts]]:
    """Open test clients: ``connect(server)``; channels are closed at the end."""
    channels: list[grpc.aio.Channel] = []

    def open_client(target: HeartsServer) -> Hearts:
        channel = grpc.aio.insecure_channel(target.address)
        channels.append(channel)
        return Hearts(channel)

    yield open_client
    for channel in channels:
        await channel.close()


@pytest.fixture
def hearts(server: HeartsServer, connect: Callable[[HeartsServer], Hearts]) -> Hearts:
    """A test client of ``server``."""
    return connect(server)


WEBHOOK_SECRET = "webhook-secret-of-the-apps-backend-0123456789"
"""The --webhook-secret of :func:`webhook_server`'s servers."""


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    """A webhook receiver on loopback that answers 200 (see ``tests/webhook_receiver.py``)."""
    made = Receiver()
    yield made
    made.close()


async def webhook_server(
    make_server: ServerFactory, store_kind: str, receiver: Receiver, **settings: Any
) -> HeartsServer:
    """A server that posts its webhooks to ``receiver``, signed with :data:`WEBHOOK_SECRET`."""
    return await make_server(
        store=store_kind, webhook_url=receiver.url, webhook_secret=WEBHOOK_SECRET, **settings
    )
