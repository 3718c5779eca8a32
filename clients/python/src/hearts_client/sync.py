"""A blocking facade over :class:`~hearts_client.client.HeartsClient`, for scripts and REPLs.

It owns a private event loop (an :class:`asyncio.Runner`) and runs each call of the asyncio
client on it, so both share one implementation of tokens, retries and resuming. It must not be
used from inside a running event loop (use :class:`HeartsClient` there).
"""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import AsyncIterator, Awaitable, Generator, Iterable, Mapping, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

import grpc

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_client.cards import CardLike
from hearts_client.client import (
    BotLevelLike,
    CreatedTable,
    HeartsClient,
    JoinedTable,
    PlayerTable,
    ReactionLike,
    RulesLike,
    Suggestion,
    TablePage,
)

__all__ = ["SyncHeartsClient"]

T = TypeVar("T")


async def _await(awaitable: Awaitable[T]) -> T:
    return await awaitable


class SyncHeartsClient:
    """The same API as :class:`HeartsClient`, blocking; ``watch`` is a plain iterator.

    >>> with SyncHeartsClient("127.0.0.1:50051") as client:  # doctest: +SKIP
    ...     created = client.create_table(bots={1: "random", 2: "random", 3: "random"})
    ...     joined = client.join_table(created.name, "Ada")
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
        self._runner = asyncio.Runner()
        self._closed = False
        self.client = HeartsClient(
            target,
            token=token,
            identity_token=identity_token,
            timeout=timeout,
            max_retries=max_retries,
            credentials=credentials,
            interceptors=interceptors,
            options=options,
            backoff=backoff,
        )
        """The asyncio client underneath."""

    @property
    def identity_token(self) -> str | None:
        """See :attr:`HeartsClient.identity_token`; assign the refreshed token here."""
        return self.client.identity_token

    @identity_token.setter
    def identity_token(self, token: str | None) -> None:
        self.client.identity_token = token

    def seat_token(self, name: str) -> str | None:
        """See :meth:`HeartsClient.seat_token`."""
        return self.client.seat_token(name)

    def set_seat_token(self, name: str, token: str | None) -> None:
        """See :meth:`HeartsClient.set_seat_token`: resume a seat from another process."""
        self.client.set_seat_token(name, token)

    def creator_token(self, name: str) -> str | None:
        """See :meth:`HeartsClient.creator_token`."""
        return self.client.creator_token(name)

    def _run(self, awaitable: Awaitable[T]) -> T:
        return self._runner.run(_await(awaitable))

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the channel and the private event loop; closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self.client.close())
        finally:
            self._runner.close()

    def get_table(self, name: str) -> pb.TableView:
        """See :meth:`HeartsClient.get_table`."""
        return self._run(self.client.get_table(name))

    def list_tables(
        self, *, has_free_seat: bool = False, page_size: int = 0, page_token: str = ""
    ) -> TablePage:
        """See :meth:`HeartsClient.list_tables`."""
        return self._run(
            self.client.list_tables(
                has_free_seat=has_free_seat, page_size=page_size, page_token=page_token
            )
        )

    def iter_tables(
        self, *, has_free_seat: bool = False, page_size: int = 0
    ) -> Generator[pb.Table, None, None]:
        """See :meth:`HeartsClient.iter_tables`."""
        return self._iterate(
            self.client.iter_tables(has_free_seat=has_free_seat, page_size=page_size)
        )

    def list_player_tables(
        self, *, page_size: int = 0, identity_token: str | None = None
    ) -> list[PlayerTable]:
        """See :meth:`HeartsClient.list_player_tables`."""
        return self._run(
            self.client.list_player_tables(page_size=page_size, identity_token=identity_token)
        )

    def create_table(
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
        """See :meth:`HeartsClient.create_table`."""
        return self._run(
            self.client.create_table(
                display_name,
                rules=rules,
                bots=bots,
                deck_seed=deck_seed,
                dealer=dealer,
                turn_timeout=turn_timeout,
                unlisted=unlisted,
                turn_notifications=turn_notifications,
                fill_with_bots_after=fill_with_bots_after,
                request_id=request_id,
                identity_token=identity_token,
            )
        )

    def join_table(
        self,
        name: str,
        player_name: str,
        *,
        seat: int | None = None,
        etag: str = "",
        request_id: str | None = None,
        identity_token: str | None = None,
    ) -> JoinedTable:
        """See :meth:`HeartsClient.join_table`."""
        return self._run(
            self.client.join_table(
                name,
                player_name,
                seat=seat,
                etag=etag,
                request_id=request_id,
                identity_token=identity_token,
            )
        )

    def quick_join(
        self,
        player_name: str,
        *,
        rules: RulesLike | None = None,
        turn_timeout: float | datetime.timedelta | None = None,
        fill_with_bots_after: float | datetime.timedelta | None = None,
        request_id: str | None = None,
        identity_token: str | None = None,
    ) -> JoinedTable:
        """See :meth:`HeartsClient.quick_join`."""
        return self._run(
            self.client.quick_join(
                player_name,
                rules=rules,
                turn_timeout=turn_timeout,
                fill_with_bots_after=fill_with_bots_after,
                request_id=request_id,
                identity_token=identity_token,
            )
        )

    def renew_seat_token(self, name: str) -> JoinedTable:
        """See :meth:`HeartsClient.renew_seat_token`."""
        return self._run(self.client.renew_seat_token(name))

    def leave_table(
        self, name: str, *, etag: str = "", request_id: str | None = None
    ) -> pb.TableView:
        """See :meth:`HeartsClient.leave_table`."""
        return self._run(self.client.leave_table(name, etag=etag, request_id=request_id))

    def rematch_table(self, name: str, *, request_id: str | None = None) -> JoinedTable:
        """See :meth:`HeartsClient.rematch_table`."""
        return self._run(self.client.rematch_table(name, request_id=request_id))

    def delete_table(
        self,
        name: str,
        *,
        creator_token: str | None = None,
        etag: str = "",
        request_id: str | None = None,
    ) -> None:
        """See :meth:`HeartsClient.delete_table`."""
        self._run(
            self.client.delete_table(
                name, creator_token=creator_token, etag=etag, request_id=request_id
            )
        )

    def pass_cards(
        self,
        name: str,
        to_pass: str | Iterable[CardLike],
        *,
        etag: str = "",
        request_id: str | None = None,
    ) -> pb.TableView:
        """See :meth:`HeartsClient.pass_cards`."""
        return self._run(self.client.pass_cards(name, to_pass, etag=etag, request_id=request_id))

    def play_card(
        self, name: str, to_play: CardLike, *, etag: str = "", request_id: str | None = None
    ) -> pb.TableView:
        """See :meth:`HeartsClient.play_card`."""
        return self._run(self.client.play_card(name, to_play, etag=etag, request_id=request_id))

    def send_reaction(self, name: str, to_send: ReactionLike) -> None:
        """See :meth:`HeartsClient.send_reaction`."""
        self._run(self.client.send_reaction(name, to_send))

    def suggest_move(self, name: str) -> Suggestion:
        """See :meth:`HeartsClient.suggest_move`."""
        return self._run(self.client.suggest_move(name))

    def watch(
        self,
        name: str,
        *,
        after_sequence: int | None = None,
        max_reconnects: int | None = None,
        heartbeat_interval: float | None = None,
    ) -> Generator[api.WatchTableResponse, None, None]:
        """See :meth:`HeartsClient.watch`; close the iterator (or exhaust it) when done."""
        return self._iterate(
            self.client.watch(
                name,
                after_sequence=after_sequence,
                max_reconnects=max_reconnects,
                heartbeat_interval=heartbeat_interval,
            )
        )

    def _iterate(self, stream: AsyncIterator[T]) -> Generator[T, None, None]:
        try:
            while True:
                try:
                    yield self._run(anext(stream))
                except StopAsyncIteration:
                    return
        finally:
            close = getattr(stream, "aclose", None)
            # After close() the private loop is gone, and closing it closed the stream already.
            if close is not None and not self._closed:
                self._run(close())
