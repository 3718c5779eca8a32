"""The asyncio client for ``hearts.v1.TableService``.

:class:`HeartsClient` hides the plumbing of the API: it keeps the seat token a join returned and
sends it as ``authorization: Bearer`` metadata on later calls to that table, sends the signed-in
user's identity token (if given) with every CreateTable, JoinTable, QuickJoin and ListPlayerTables,
gives every mutation one ``request_id`` that all retries of that call reuse (so a retry after a
lost answer never acts twice, AIP-155), retries UNAVAILABLE, DEADLINE_EXCEEDED,
RESOURCE_EXHAUSTED and CANCELLED with backoff, turns failures into
:class:`~hearts_client.errors.HeartsError` subclasses, and resumes a watch stream from the last
sequence it delivered. It must never retry a call that
could act twice: only calls that carry a request_id, or read, are retried, and a reaction only
when it was refused before it ran.
"""

from __future__ import annotations

import asyncio
import datetime
import random
import uuid
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, NamedTuple, Self, TypeAlias

import grpc
from google.protobuf import duration_pb2, json_format

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_client.cards import CardLike, card, cards
from hearts_client.errors import HeartsError, UnavailableError, error_from_rpc

__all__ = [
    "BotLevelLike",
    "CreatedTable",
    "HeartsClient",
    "JoinedTable",
    "PlayerTable",
    "RulesLike",
    "TablePage",
    "bot_level",
    "make_rules",
    "table_name",
]

RulesLike: TypeAlias = pb.Rules | Mapping[str, object]
"""Rules as a ``hearts.v1.Rules`` message or a dict of its fields (``{"target_score": 50}``)."""

BotLevelLike: TypeAlias = str | int
"""A bot level: ``"random"``, ``"heuristic"``, ``"monte_carlo"``, or a ``hearts.v1.BotLevel``."""
ReactionLike: TypeAlias = str | int
"""A reaction: its name (``"thumbs-up"``) or a ``hearts.v1.Reaction``."""

# Calls are retried on an UnavailableError: UNAVAILABLE and DEADLINE_EXCEEDED, RESOURCE_EXHAUSTED
# when it is the server shedding load (reason OVERLOADED: the call was not run, and the request_id
# makes a retry safe anyway), and CANCELLED: this client never cancels a call itself (a cancelled
# task raises CancelledError, not an RpcError), and a saturated server's gRPC ends calls past its
# pending-call limit that way, before running them.
# The refusals of a call that it had not run: what a call without a request_id may retry.
_NOT_RUN = frozenset({"OVERLOADED", "CANCELLED"})

# Channel reconnects start fast, so a retry soon after a server restart finds it up again
# (gRPC's own default waits a second before the first reconnect). Keepalive pings on open calls
# notice a silently dead connection (a sleeping laptop, a dropped NAT entry) within about 80 s,
# so a quiet watch stream fails with UNAVAILABLE and resumes instead of hanging forever; the
# Hearts server accepts pings every 10 s, and an idle watch sends no data, hence no ping limit.
# grpcio waits for a ping's answer as long as ping_timeout_ms says (60 s by default), whatever
# keepalive_timeout_ms says, so both are set.
_CHANNEL_OPTIONS: tuple[tuple[str, Any], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 5000),
    ("grpc.keepalive_time_ms", 60_000),
    ("grpc.keepalive_timeout_ms", 20_000),
    ("grpc.http2.ping_timeout_ms", 20_000),
    ("grpc.http2.max_pings_without_data", 0),
)


class CreatedTable(NamedTuple):
    """What :meth:`HeartsClient.create_table` returns; unpacks as ``view, creator_token``."""

    view: pb.TableView
    """A spectator's view of the new table."""
    creator_token: str
    """The secret that alone may delete the table; the server never shows it again."""

    @property
    def name(self) -> str:
        """The table's resource name, ``tables/{table}``."""
        return self.view.table.name


class JoinedTable(NamedTuple):
    """What :meth:`HeartsClient.join_table`, :meth:`~HeartsClient.renew_seat_token`,
    :meth:`~HeartsClient.rematch_table` and :meth:`~HeartsClient.quick_join` return."""

    seat: int
    """The seat taken, 0 to 3."""
    view: pb.TableView
    """The table as the new player sees it (the hand, once all four seats are taken)."""
    seat_token: str
    """The seat's secret token; the client keeps it for later calls on this table."""

    @property
    def name(self) -> str:
        """The resource name of the table the seat is at, ``tables/{table}`` (for
        :meth:`HeartsClient.rematch_table`, the new table's; for
        :meth:`HeartsClient.quick_join`, the table the server chose)."""
        return self.view.table.name

    @property
    def player_id(self) -> str:
        """The seat's ``player_id``: the verified identity token's ``sub`` when the player
        joined with one (see :attr:`HeartsClient.identity_token`), else empty."""
        for seat in self.view.table.seats:
            if seat.seat == self.seat:
                return seat.player_id
        return ""


class TablePage(NamedTuple):
    """One page of :meth:`HeartsClient.list_tables`."""

    tables: list[pb.Table]
    """The tables of the page, newest first."""
    next_page_token: str
    """The token for the next page; empty on the last page."""


class PlayerTable(NamedTuple):
    """A table where the signed-in player holds a seat, from
    :meth:`HeartsClient.list_player_tables`."""

    table: pb.Table
    """The table, as :meth:`HeartsClient.list_tables` shows it (no cards)."""
    seat: int
    """The seat the player holds there, 0 to 3."""

    @property
    def name(self) -> str:
        """The table's resource name, ``tables/{table}``."""
        return self.table.name


class Suggestion(NamedTuple):
    """A move :meth:`HeartsClient.suggest_move` suggests."""

    cards: list[pb.Card]
    """One card to play, or the cards to pass."""
    etag: str
    """The table's etag it was decided on: pass it with the move."""


def table_name(name: str) -> str:
    """The resource name for a table name or bare id.

    >>> table_name("abc123"), table_name("tables/abc123")
    ('tables/abc123', 'tables/abc123')
    """
    return name if name.startswith("tables/") else f"tables/{name}"


def bot_level(level: BotLevelLike) -> pb.BotLevel.ValueType:
    """The ``hearts.v1.BotLevel`` value of a level name or value.

    >>> bot_level("monte-carlo") == pb.BOT_LEVEL_MONTE_CARLO
    True
    """
    if isinstance(level, int):
        if level not in pb.BotLevel.values():
            raise ValueError(f"unknown bot level {level}")
        return pb.BotLevel.ValueType(level)
    value = _named_value(pb.BotLevel, "BOT_LEVEL_", level)
    if value is None:
        raise ValueError(f"unknown bot level {level!r} (random, heuristic or monte_carlo)")
    return pb.BotLevel.ValueType(value)


def reaction(value: ReactionLike) -> pb.Reaction.ValueType:
    """The ``hearts.v1.Reaction`` value of a reaction name or value.

    >>> reaction("thumbs-up") == pb.REACTION_THUMBS_UP
    True
    """
    if isinstance(value, int):
        if value not in pb.Reaction.values() or value == pb.REACTION_UNSPECIFIED:
            raise ValueError(f"unknown reaction {value}")
        return pb.Reaction.ValueType(value)
    named = _named_value(pb.Reaction, "REACTION_", value)
    if named is None:
        raise ValueError(f"unknown reaction {value!r} ({', '.join(REACTIONS)})")
    return pb.Reaction.ValueType(named)


def _named_value(enum: Any, prefix: str, text: str) -> int | None:
    """The value of ``enum`` (a generated enum: mypy-protobuf types each as a class of its
    own) that ``text`` names, in any case, with or without ``prefix`` and
    with ``-`` for ``_``; None for no value, and for the ``UNSPECIFIED`` one."""
    key = text.strip().upper().replace("-", "_")
    key = key if key.startswith(prefix) else prefix + key
    if key not in enum.DESCRIPTOR.values_by_name or key == f"{prefix}UNSPECIFIED":
        return None
    return int(enum.Value(key))


REACTIONS = tuple(
    name.removeprefix("REACTION_").lower()
    for name in pb.Reaction.keys()  # noqa: SIM118  # an enum wrapper, not a dict
    if name != "REACTION_UNSPECIFIED"
)
"""The reactions' short names, as :func:`reaction` takes them: ``thumbs_up``, ``clap``..."""


def make_rules(value: RulesLike) -> pb.Rules:
    """A ``hearts.v1.Rules`` from a message or a dict of its fields; unset fields stay unset.

    ``moon_scoring`` may be written short: ``"subtract_from_shooter"``.

    >>> r = make_rules({"target_score": 50, "moon_scoring": "subtract_from_shooter"})
    >>> r.target_score, r.moon_scoring == pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER
    (50, True)
    >>> r.HasField("pass_cards")
    False
    """
    if isinstance(value, pb.Rules):
        copy = pb.Rules()
        copy.CopyFrom(value)
        return copy
    fields = dict(value)
    moon = fields.get("moon_scoring")
    if isinstance(moon, str):
        moon = moon.strip().upper()
        fields["moon_scoring"] = (
            moon if moon.startswith("MOON_SCORING_") else f"MOON_SCORING_{moon}"
        )
    try:
        return json_format.ParseDict(fields, pb.Rules())
    except json_format.ParseError as error:
        raise ValueError(f"bad rules {dict(value)!r}: {error}") from None


class HeartsClient:
    """An asyncio client for one Hearts server, over one grpc.aio channel.

    Use it as an async context manager (the channel opens on first use and closes on exit)::

        async with HeartsClient("127.0.0.1:50051") as client:
            created = await client.create_table("Evening game", bots={1: "heuristic"})
            joined = await client.join_table(created.name, "Ada")

    Args:
        target: the server's ``host:port``.
        token: a token to send on every call that has no table-specific one (a seat token from
            another process, say). Seat tokens from :meth:`join_table` and creator tokens from
            :meth:`create_table` are kept per table and take precedence.
        identity_token: the signed-in user's identity token (a JWT from the app's sign-in), sent
            with every :meth:`create_table`, :meth:`join_table`, :meth:`quick_join` and
            :meth:`list_player_tables` (``identity_token`` field of the request; never as
            metadata, nor on other calls),
            for a server that verifies them: the seat then shows the token's ``sub`` as
            ``Seat.player_id``. Replace it when the app refreshes the token
            (:attr:`identity_token`); a call's own ``identity_token=`` argument overrides it. A
            server that checks no identity tokens refuses calls that carry one
            (``IDENTITY_NOT_ACCEPTED``).
        timeout: the deadline of each attempt of a unary call, in seconds (streams have none).
        max_retries: how many times a call is retried after UNAVAILABLE, DEADLINE_EXCEEDED,
            RESOURCE_EXHAUSTED or CANCELLED (and a mutation after ABORTED / ``CONFLICT``), and
            how many consecutive failed reconnects a watch tolerates.
        credentials: channel credentials for TLS; None dials without TLS.
        interceptors: grpc.aio client interceptors, applied to every call.
        options: gRPC channel options; one this client sets too (its keepalive, say) replaces
            the client's.
        backoff: the first retry's delay in seconds; each later one doubles, up to 5 s, jittered.
    """

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        identity_token: str | None = None,
        timeout: float = 10,
        max_retries: int = 3,
        credentials: grpc.ChannelCredentials | None = None,
        interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
        options: Sequence[tuple[str, Any]] = (),
        backoff: float = 0.2,
    ) -> None:
        if max_retries < 0:
            raise ValueError("max_retries must not be negative")
        self.target = target
        self.timeout = timeout
        self.max_retries = max_retries
        self._token = token
        self._identity_token = identity_token or None
        self._credentials = credentials
        self._interceptors = list(interceptors)
        # gRPC takes the first of two options of the same name: the caller's go first.
        given = {name for name, _ in options}
        self._options = [*options, *(o for o in _CHANNEL_OPTIONS if o[0] not in given)]
        self._backoff = backoff
        self._channel: grpc.aio.Channel | None = None
        self._stub: Any = None
        self._seat_tokens: dict[str, str] = {}
        self._creator_tokens: dict[str, str] = {}

    # ------------------------------------------------------------------ lifecycle

    async def __aenter__(self) -> Self:
        self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    def _open(self) -> Any:
        if self._stub is None:
            if self._credentials is None:
                self._channel = grpc.aio.insecure_channel(
                    self.target, options=self._options, interceptors=self._interceptors
                )
            else:
                self._channel = grpc.aio.secure_channel(
                    self.target,
                    self._credentials,
                    options=self._options,
                    interceptors=self._interceptors,
                )
            self._stub = api_grpc.TableServiceStub(self._channel)
        return self._stub

    async def close(self) -> None:
        """Close the channel; open streams end. The client may be used again afterwards.

        A :meth:`watch` iteration then simply ends; a call still waiting for its answer raises
        :class:`~hearts_client.errors.HeartsError` with reason ``CLIENT_CLOSED``.
        """
        channel, self._channel, self._stub = self._channel, None, None
        if channel is not None:
            await channel.close()

    # ------------------------------------------------------------------ tokens

    def seat_token(self, name: str) -> str | None:
        """The seat token this client holds for a table, if it joined it."""
        return self._seat_tokens.get(table_name(name))

    def set_seat_token(self, name: str, token: str | None) -> None:
        """Use ``token`` for calls on a table from now on (None forgets it).

        This resumes a seat from another process: keep the ``seat_token`` of :meth:`join_table`
        and hand it to a new client.
        """
        if token is None:
            self._seat_tokens.pop(table_name(name), None)
        else:
            self._seat_tokens[table_name(name)] = token

    def creator_token(self, name: str) -> str | None:
        """The creator token of a table this client created, if it still holds it."""
        return self._creator_tokens.get(table_name(name))

    @property
    def identity_token(self) -> str | None:
        """The signed-in user's identity token, sent with :meth:`create_table`,
        :meth:`join_table`, :meth:`quick_join` and :meth:`list_player_tables`; None (or "") for
        none.

        Assign the new token when the app's sign-in refreshes it (identity tokens are short-lived:
        a stale one fails with ``IDENTITY_EXPIRED``); calls from then on send it. A call that
        is already running (and its retries) keeps the token it started with.
        """
        return self._identity_token

    @identity_token.setter
    def identity_token(self, token: str | None) -> None:
        self._identity_token = token or None

    def _identity_for(self, override: str | None) -> str:
        """The identity token a CreateTable, JoinTable, QuickJoin or ListPlayerTables sends: the
        call's own, else the client's; "" for none."""
        token = self._identity_token if override is None else override
        return token or ""

    def _metadata(self, token: str | None) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),) if token else ()

    def _token_for(self, name: str) -> str | None:
        return self._seat_tokens.get(name, self._token)

    # ------------------------------------------------------------------ calling

    def _delay(self, attempt: int) -> float:
        delay: float = min(5.0, self._backoff * 2 ** (attempt - 1))
        return delay * random.uniform(0.5, 1.0)

    async def _call(
        self, method: str, request: Any, *, token: str | None, once: bool = False
    ) -> Any:
        """Call a unary method, retrying what is safe to retry; raise HeartsError on failure.

        A mutation's request carries its request_id already: every attempt sends the very same
        request, so the server answers a retry of an applied call from its memory. A call that
        acts but has no request_id (``once``: a reaction) is retried only when it was refused
        before it ran (``OVERLOADED``, or gRPC's bare ``CANCELLED``): after a
        lost answer, or an error of the store mid-call, it may have acted.
        """
        stub = self._open()
        channel = self._channel
        metadata = self._metadata(token)
        mutation = bool(getattr(request, "request_id", ""))
        attempt = 0
        while True:
            try:
                return await getattr(stub, method)(request, timeout=self.timeout, metadata=metadata)
            except asyncio.CancelledError:
                if self._closed_under(channel):
                    raise _client_closed() from None
                raise
            except grpc.RpcError as rpc_error:
                error = error_from_rpc(rpc_error)
                if once:
                    retry = error.reason in _NOT_RUN
                else:
                    retry = isinstance(error, UnavailableError) or (
                        mutation and error.reason == "CONFLICT"
                    )
                if not retry or attempt >= self.max_retries:
                    raise error from rpc_error
            attempt += 1
            await asyncio.sleep(self._delay(attempt))
            if self._channel is not channel:
                raise _client_closed()  # closed while waiting to retry: no call on a new channel

    def _closed_under(self, channel: object) -> bool:
        """Whether a call on ``channel`` was cancelled by :meth:`close`, not by its own task.

        Closing a channel cancels its calls, which grpc.aio reports as ``CancelledError`` in the
        task awaiting them, as if that task had been cancelled.
        """
        task = asyncio.current_task()
        return self._channel is not channel and (task is None or not task.cancelling())

    @staticmethod
    def _request_id(request_id: str | None) -> str:
        return request_id or str(uuid.uuid4())

    # ------------------------------------------------------------------ reading

    async def get_table(self, name: str) -> pb.TableView:
        """The table as this client may see it: with its hand if it holds the seat token."""
        name = table_name(name)
        response: api.GetTableResponse = await self._call(
            "GetTable", api.GetTableRequest(name=name), token=self._token_for(name)
        )
        return response.view

    async def list_tables(
        self, *, has_free_seat: bool = False, page_size: int = 0, page_token: str = ""
    ) -> TablePage:
        """One page of tables, newest first; ``page_size`` 0 is the server's default (50)."""
        response: api.ListTablesResponse = await self._call(
            "ListTables",
            api.ListTablesRequest(
                page_size=page_size, page_token=page_token, has_free_seat=has_free_seat
            ),
            token=None,
        )
        return TablePage(list(response.tables), response.next_page_token)

    async def iter_tables(
        self, *, has_free_seat: bool = False, page_size: int = 0
    ) -> AsyncGenerator[pb.Table, None]:
        """Every table, page after page, newest first."""
        token = ""
        while True:
            page = await self.list_tables(
                has_free_seat=has_free_seat, page_size=page_size, page_token=token
            )
            for table in page.tables:
                yield table
            if not page.next_page_token:
                return
            token = page.next_page_token

    async def list_player_tables(
        self, *, page_size: int = 0, identity_token: str | None = None
    ) -> list[PlayerTable]:
        """The tables where the signed-in player holds a seat, the most recently joined first:
        a "my games" screen, and how an app finds its player's games again on a new device.

        The player is the ``sub`` of the identity token (the client's :attr:`identity_token`,
        or ``identity_token`` for this call); the list has listed and unlisted tables, and a
        finished game until the player leaves it or it expires. ``page_size`` 0 is the
        server's default (50), and it returns at most 100 (the server keeps a player's 100 most
        recently joined tables; there is no next page). Take a seat's token again with
        :meth:`join_table` and the same identity token.

        Raises :class:`~hearts_client.errors.AuthError` (``IDENTITY_REQUIRED``: no identity
        token; ``IDENTITY_INVALID``, ``IDENTITY_EXPIRED``: sign in again) and
        :class:`~hearts_client.errors.InvalidRequestError` (``IDENTITY_NOT_ACCEPTED``: the
        server checks no identity tokens, so it keeps no player's tables; ``INVALID_REQUEST``:
        a negative ``page_size``).
        """
        request = api.ListPlayerTablesRequest(
            identity_token=self._identity_for(identity_token), page_size=page_size
        )
        response: api.ListPlayerTablesResponse = await self._call(
            "ListPlayerTables", request, token=None
        )
        return [PlayerTable(entry.table, entry.seat) for entry in response.tables]

    # ------------------------------------------------------------------ creating and seating

    async def create_table(
        self,
        display_name: str = "",
        *,
        rules: RulesLike | None = None,
        bots: Mapping[int, BotLevelLike] | None = None,
        deck_seed: int | None = None,
        dealer: int = 0,
        turn_timeout: float | datetime.timedelta | None = None,
        unlisted: bool = False,
        turn_notifications: bool = False,
        fill_with_bots_after: float | datetime.timedelta | None = None,
        request_id: str | None = None,
        identity_token: str | None = None,
    ) -> CreatedTable:
        """Create a table; the seats in ``bots`` (``{1: "heuristic"}``) start as bots.

        Unset rules take the server's defaults. With ``deck_seed`` every deal of the game is
        reproducible. With ``turn_timeout`` (seconds: at least 1, at most the server's limit,
        59 minutes by default) a player who takes longer for a move has it made for them
        (``Table.turn_timeout``). With ``fill_with_bots_after`` (seconds or a ``timedelta``,
        within the same bounds) the table stops waiting for players once the seating has not
        changed for that long while someone sits at it: heuristic bots take the empty seats
        (watchers get a ``player_joined`` event with ``bot_level`` set for each) and the game
        starts (``Table.fill_with_bots_after``); a table nobody has joined is never filled.
        Either duration out of bounds raises
        :class:`~hearts_client.errors.InvalidRequestError` (``INVALID_REQUEST``). An
        ``unlisted`` table is left out of :meth:`list_tables`: share its name with the players
        you invite. With
        ``turn_notifications`` the server posts a ``turn.started`` webhook each time a player
        owes a move, for apps that notify players who are away (the server must send webhooks;
        otherwise :class:`~hearts_client.errors.IllegalMoveError`, ``WEBHOOKS_DISABLED``). The
        creator token is kept for :meth:`delete_table`.

        ``identity_token`` overrides the client's :attr:`identity_token` for this call ("" sends
        none); see :meth:`join_table`. Only a server started with ``--identity-required`` needs
        one here: without one it raises :class:`~hearts_client.errors.AuthError`
        (``IDENTITY_REQUIRED``); a bad one raises it with ``IDENTITY_INVALID`` or
        ``IDENTITY_EXPIRED``, and one sent to a server that checks none
        :class:`~hearts_client.errors.InvalidRequestError` (``IDENTITY_NOT_ACCEPTED``).
        """
        table = pb.Table(
            display_name=display_name,
            dealer=dealer,
            unlisted=unlisted,
            turn_notifications=turn_notifications,
        )
        if turn_timeout is not None:
            _set_duration(table.turn_timeout, turn_timeout)
        if fill_with_bots_after is not None:
            _set_duration(table.fill_with_bots_after, fill_with_bots_after)
        if rules is not None:
            table.rules.CopyFrom(make_rules(rules))
        for seat, level in sorted((bots or {}).items()):
            table.seats.append(
                pb.Seat(seat=seat, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=bot_level(level))
            )
        if deck_seed is not None:
            table.deck_seed = deck_seed
        request = api.CreateTableRequest(
            table=table,
            request_id=self._request_id(request_id),
            identity_token=self._identity_for(identity_token),
        )
        response: api.CreateTableResponse = await self._call("CreateTable", request, token=None)
        self._creator_tokens[response.view.table.name] = response.creator_token
        return CreatedTable(response.view, response.creator_token)

    async def join_table(
        self,
        name: str,
        player_name: str,
        *,
        seat: int | None = None,
        etag: str = "",
        request_id: str | None = None,
        identity_token: str | None = None,
    ) -> JoinedTable:
        """Take ``seat`` (None: any free seat); the seat token is kept for later calls.

        With an identity token (the client's :attr:`identity_token`, or ``identity_token`` for
        this call; "" sends none) the server verifies it and the seat shows its ``sub`` as
        ``player_id`` (:attr:`JoinedTable.player_id`). A player who already holds a seat at the
        table (the same ``sub``: another device, a lost seat token) gets a new token for that
        seat instead of a second one, and the table does not change; naming another ``seat``
        then raises :class:`~hearts_client.errors.SeatTakenError` (``ALREADY_SEATED``).

        Raises :class:`~hearts_client.errors.SeatTakenError` (``SEAT_TAKEN``,
        ``ALREADY_SEATED``), :class:`~hearts_client.errors.IllegalMoveError` (``TABLE_FULL``),
        :class:`~hearts_client.errors.AuthError` (``IDENTITY_REQUIRED`` on a server that admits
        signed-in players only, ``IDENTITY_INVALID``, ``IDENTITY_EXPIRED``: sign in again),
        :class:`~hearts_client.errors.InvalidRequestError` (``IDENTITY_NOT_ACCEPTED``: the
        server checks no identity tokens) and, once the retries are used up,
        :class:`~hearts_client.errors.UnavailableError` (``IDENTITY_UNAVAILABLE``: the server
        cannot fetch the identity provider's keys).
        """
        name = table_name(name)
        request = api.JoinTableRequest(
            name=name,
            player_display_name=player_name,
            etag=etag,
            request_id=self._request_id(request_id),
            identity_token=self._identity_for(identity_token),
        )
        if seat is not None:
            request.seat = seat
        response: api.JoinTableResponse = await self._call("JoinTable", request, token=None)
        self._seat_tokens[name] = response.seat_token
        return JoinedTable(response.seat, response.view, response.seat_token)

    async def quick_join(
        self,
        player_name: str,
        *,
        rules: RulesLike | None = None,
        turn_timeout: float | datetime.timedelta | None = None,
        fill_with_bots_after: float | datetime.timedelta | None = None,
        request_id: str | None = None,
        identity_token: str | None = None,
    ) -> JoinedTable:
        """Take a seat at the game that waits for players with these ``rules``, this
        ``turn_timeout`` and this ``fill_with_bots_after``, or at a new one: "play now" with
        strangers.

        Players who ask for the same game (unset rules are the defaults; no ``turn_timeout`` is
        no limit; no ``fill_with_bots_after`` waits for players) are seated together, four to a
        table, in the order they ask; the game starts when the fourth takes a seat, so the view
        may show ``PHASE_WAITING_FOR_PLAYERS``: watch the table for the deal. With
        ``fill_with_bots_after`` (seconds or a ``timedelta``, as for :meth:`create_table`) it
        also starts once nobody has sat down or left for that long: heuristic bots take the
        empty seats (a ``player_joined`` event with ``bot_level`` set for each). The server
        makes the table when none waits ("Quick game", listed, no bots until then), and it
        counts against your quota of new tables, as :meth:`create_table` does. The seat token is
        kept for the table (``.name``); leaving and the other calls work on it as on any table.

        The client's ``request_id`` (every retry sends the same) makes a retry after a lost
        answer get the same seat, not a second one. With an identity token (see
        :meth:`join_table`) a player who already holds a seat at the waiting table gets that
        seat again.

        Raises :class:`~hearts_client.errors.InvalidRequestError` (``INVALID_REQUEST``: a bad
        name, turn timeout or wait; ``INVALID_RULES``; ``REQUEST_ID_REUSED``: the same request_id
        with other arguments; ``IDENTITY_NOT_ACCEPTED``),
        :class:`~hearts_client.errors.AuthError` (``IDENTITY_REQUIRED``, ``IDENTITY_INVALID``,
        ``IDENTITY_EXPIRED``), :class:`~hearts_client.errors.HeartsError`
        (``TOO_MANY_TABLES``: a new table was needed and you made as many this hour as the
        server allows) and, once the retries are used up,
        :class:`~hearts_client.errors.ConflictError` (``CONFLICT``: every waiting table
        filled up meanwhile) or :class:`~hearts_client.errors.UnavailableError`.
        """
        request = api.QuickJoinRequest(
            player_display_name=player_name,
            request_id=self._request_id(request_id),
            identity_token=self._identity_for(identity_token),
        )
        if rules is not None:
            request.rules.CopyFrom(make_rules(rules))
        if turn_timeout is not None:
            _set_duration(request.turn_timeout, turn_timeout)
        if fill_with_bots_after is not None:
            _set_duration(request.fill_with_bots_after, fill_with_bots_after)
        response: api.QuickJoinResponse = await self._call("QuickJoin", request, token=None)
        self._seat_tokens[response.view.table.name] = response.seat_token
        return JoinedTable(response.seat, response.view, response.seat_token)

    async def renew_seat_token(self, name: str) -> JoinedTable:
        """Exchange the seat token held for ``name`` (expired or not) for a new one.

        Tokens expire after the server's ``--token-ttl-seconds`` while the seat stays taken;
        calls then fail with ``TOKEN_EXPIRED``. This asks ``JoinTable`` with the token, which
        renews it while the seat is still this player's, and keeps the new token. It sends no
        identity token (the seat token is the proof), so it works on a server that requires
        one; a player whose seat token is lost may join again with their identity token instead.
        """
        name = table_name(name)
        token = self._token_for(name)  # the table's seat token, else the client's token=
        if token is None:
            raise ValueError(f"this client holds no seat token for {name}")
        request = api.JoinTableRequest(name=name)
        response: api.JoinTableResponse = await self._call("JoinTable", request, token=token)
        self._seat_tokens[name] = response.seat_token
        return JoinedTable(response.seat, response.view, response.seat_token)

    async def leave_table(
        self, name: str, *, etag: str = "", request_id: str | None = None
    ) -> pb.TableView:
        """Give up this client's seat (a bot takes it over mid-game); forgets the seat token."""
        name = table_name(name)
        request = api.LeaveTableRequest(
            name=name, etag=etag, request_id=self._request_id(request_id)
        )
        response: api.LeaveTableResponse = await self._call(
            "LeaveTable", request, token=self._token_for(name)
        )
        self._seat_tokens.pop(name, None)
        return response.view

    async def rematch_table(self, name: str, *, request_id: str | None = None) -> JoinedTable:
        """Take this player's seat in the next game with the same players, at a new table.

        ``name`` is the finished table (phase ``GAME_OVER``); the call carries the seat token
        held for it. The first player to ask creates the new table with the finished one's
        settings (display name, rules, bots, turn timeout, listing, wait for players) and the
        finished table names it in ``Table.rematch_table`` (its watchers get a
        ``rematch_created`` event); each other player who asks takes their own seat there. The
        game starts once all four seats are taken, so the view may show
        ``PHASE_WAITING_FOR_PLAYERS``. Asking again returns a new token for the same seat.

        Returns the seat (the same as at the finished table), the new table's view, and its
        seat token, which the client keeps for the new table (``.name``); the finished table's
        token is kept too. Raises :class:`~hearts_client.errors.IllegalMoveError`
        (``GAME_NOT_OVER``) before the game is over, :class:`~hearts_client.errors.AuthError`
        (``TOKEN_MISSING``, ``NOT_A_PLAYER``, ``TOKEN_REVOKED`` once the player left,
        ``WRONG_TABLE``), and :class:`~hearts_client.errors.SeatTakenError` when someone else
        took the seat at the new table first.
        """
        name = table_name(name)
        request = api.RematchTableRequest(name=name, request_id=self._request_id(request_id))
        response: api.RematchTableResponse = await self._call(
            "RematchTable", request, token=self._token_for(name)
        )
        self._seat_tokens[response.view.table.name] = response.seat_token
        return JoinedTable(response.seat, response.view, response.seat_token)

    async def delete_table(
        self,
        name: str,
        *,
        creator_token: str | None = None,
        etag: str = "",
        request_id: str | None = None,
    ) -> None:
        """Delete a table with its creator token (by default the one kept from create_table)."""
        name = table_name(name)
        token = creator_token or self._creator_tokens.get(name) or self._token
        request = api.DeleteTableRequest(
            name=name, etag=etag, request_id=self._request_id(request_id)
        )
        await self._call("DeleteTable", request, token=token)
        self._creator_tokens.pop(name, None)
        self._seat_tokens.pop(name, None)

    # ------------------------------------------------------------------ moves

    async def pass_cards(
        self,
        name: str,
        to_pass: str | Iterable[CardLike],
        *,
        etag: str = "",
        request_id: str | None = None,
    ) -> pb.TableView:
        """Pass three cards, given as ``"QS KS AH"``, notations or ``Card`` messages.

        Raises :class:`~hearts_client.errors.IllegalMoveError` with the reason
        (``WRONG_PASS_COUNT``, ``CARD_NOT_IN_HAND``...) when the pass is refused.
        """
        name = table_name(name)
        request = api.PassCardsRequest(
            name=name, cards=cards(to_pass), etag=etag, request_id=self._request_id(request_id)
        )
        response: api.PassCardsResponse = await self._call(
            "PassCards", request, token=self._token_for(name)
        )
        return response.view

    async def play_card(
        self,
        name: str,
        to_play: CardLike,
        *,
        etag: str = "",
        request_id: str | None = None,
    ) -> pb.TableView:
        """Play one card, given as ``"QS"``, ``"10H"`` or a ``Card`` message.

        Returns the view after the play and the random and heuristic bots' moves it set off
        (Monte Carlo bots move afterwards, in the background). Raises
        :class:`~hearts_client.errors.IllegalMoveError` (``MUST_FOLLOW_SUIT``, ...) with
        ``legal_cards`` when the play is refused.
        """
        name = table_name(name)
        request = api.PlayCardRequest(
            name=name, card=card(to_play), etag=etag, request_id=self._request_id(request_id)
        )
        response: api.PlayCardResponse = await self._call(
            "PlayCard", request, token=self._token_for(name)
        )
        return response.view

    async def suggest_move(self, name: str) -> Suggestion:
        """The move the server suggests for this client's seat: what a heuristic bot would
        play (or pass) from the seat's view. It changes nothing.

        Make it with :meth:`play_card` or :meth:`pass_cards`, passing ``etag`` so that it is
        refused if the table moved on meanwhile. Raises
        :class:`~hearts_client.errors.IllegalMoveError` (``NOT_YOUR_TURN``, ``ALREADY_PASSED``,
        ``WRONG_PHASE``, ``GAME_OVER``) when the seat owes no move.
        """
        name = table_name(name)
        response: api.SuggestMoveResponse = await self._call(
            "SuggestMove", api.SuggestMoveRequest(name=name), token=self._token_for(name)
        )
        return Suggestion(list(response.cards), response.etag)

    async def send_reaction(self, name: str, to_send: ReactionLike) -> None:
        """Show a reaction (``"thumbs_up"``, ``"clap"``, ... or a ``hearts.v1.Reaction``
        value; see :data:`REACTIONS`) to everyone watching the table. It is not stored and
        changes nothing; a seat may send 5 every 10 seconds, more raise
        :class:`~hearts_client.errors.HeartsError` (``TOO_MANY_REACTIONS``). Needs this
        client's seat at the table. Raises ``ValueError`` for an unknown reaction. It is
        retried only when the server refused it before it ran: one call never shows the
        reaction twice, and may fail where it was shown after all.
        """
        name = table_name(name)
        request = api.SendReactionRequest(name=name, reaction=reaction(to_send))
        await self._call("SendReaction", request, token=self._token_for(name), once=True)

    # ------------------------------------------------------------------ watching

    async def watch(
        self,
        name: str,
        *,
        after_sequence: int | None = None,
        max_reconnects: int | None = None,
        heartbeat_interval: float | None = None,
    ) -> AsyncGenerator[api.WatchTableResponse, None]:
        """The table's stream: a snapshot (unless resuming), then every event this client may see.

        Each item is a ``hearts.v1.WatchTableResponse`` with a ``sequence`` and either a
        ``snapshot`` (a ``TableView``) or an ``event``. When the stream drops (UNAVAILABLE, for
        instance a server restart or a lagging stream), the client reconnects with backoff and
        resumes after the last sequence it delivered, skipping anything it already delivered;
        it gives up after ``max_reconnects`` (default: ``max_retries``) failed attempts in a
        row. A new snapshot may arrive when the server no longer holds the missed events:
        treat it as the new state. A ``reaction`` or ``presence_changed`` event repeats the
        sequence of the event before it (neither is stored; a reconnect does not bring back one
        missed, but each stream starts with every seated player's presence, so a reconnect
        brings the presence up to date). The iteration ends after a ``table_deleted`` event.

        ``heartbeat_interval`` (seconds, 5 to 600) asks the server for a ``heartbeat`` item
        whenever the stream has sent nothing for that long; like a reaction it takes the
        sequence of the table's last event, and it carries the server's time
        (``heartbeat.server_time``). Proxies that close idle responses need it; over gRPC the
        channel's keepalive pings keep the connection.

        Close the iterator when done (``contextlib.aclosing``) to end the call promptly.
        """
        name = table_name(name)
        limit = self.max_retries if max_reconnects is None else max_reconnects
        last = after_sequence
        failures = 0
        while True:
            stub = self._open()
            channel = self._channel
            request = api.WatchTableRequest(name=name)
            if last is not None:
                request.after_sequence = last
            if heartbeat_interval is not None:
                request.heartbeat_interval.FromNanoseconds(round(heartbeat_interval * 1e9))
            call = stub.WatchTable(request, metadata=self._metadata(self._token_for(name)))
            try:
                async for response in call:
                    failures = 0
                    if response.HasField("event"):
                        if response.event.WhichOneof("event") in _UNSTORED:
                            # Unstored: it repeats the sequence before it, and a resumed
                            # stream never sends it again.
                            yield response
                            continue
                        if last is not None and response.sequence <= last:
                            continue  # already delivered before the reconnect
                        last = response.sequence
                        yield response
                        if response.event.HasField("table_deleted"):
                            return
                    elif response.HasField("heartbeat"):
                        yield response  # the sequence of the last event: nothing to keep
                    else:
                        last = response.sequence
                        yield response
                return
            except asyncio.CancelledError:
                if self._closed_under(channel):
                    return  # close() ended the stream: so does the iteration
                raise
            except grpc.RpcError as rpc_error:
                error = error_from_rpc(rpc_error)
                if not isinstance(error, UnavailableError) or failures >= limit:
                    raise error from rpc_error
            finally:
                call.cancel()
            failures += 1
            await asyncio.sleep(self._delay(failures))
            if self._channel is not channel:
                return  # closed while waiting to reconnect: the iteration ends, as documented


_UNSTORED = frozenset({"reaction", "presence_changed"})
"""The events a stream sends without a sequence number of their own (see ``watch``)."""


def _set_duration(field: duration_pb2.Duration, value: float | datetime.timedelta) -> None:
    """Set a Duration field from seconds or a ``timedelta``."""
    if isinstance(value, datetime.timedelta):
        field.FromTimedelta(value)
    else:
        field.FromMilliseconds(round(value * 1000))


def _client_closed() -> HeartsError:
    return HeartsError(
        grpc.StatusCode.CANCELLED, "CLIENT_CLOSED", "the client was closed during the call"
    )
