"""Safe retries: one request_id per call, reused by every retry, so a retry never acts twice.

The dangerous case is an answer lost after the server applied the call. A client-side
interceptor simulates it: it lets the first attempt reach the server, waits for the server's
answer, and then reports UNAVAILABLE to the client instead, which must retry.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import (
    HeartsClient,
    HeartsError,
    InvalidRequestError,
    UnavailableError,
    card_str,
)
from hearts_server.config import Settings
from hearts_server.server import HeartsServer

from .client_helpers import SECRET, LoseFirstAnswer, table_with_bots


def _played_by(view: pb.TableView, seat: int) -> list[str]:
    tricks = [*view.completed_tricks, view.current_trick]
    return [card_str(p.card) for t in tricks for p in t.cards if p.seat == seat]


async def test_a_play_whose_answer_was_lost_is_retried_and_applied_once(
    server: HeartsServer,
) -> None:
    lose = LoseFirstAnswer("PlayCard")
    async with HeartsClient(server.address, interceptors=[lose], backoff=0.01) as client:
        joined = await table_with_bots(client, seed=7, passing=False)
        name = joined.view.table.name
        to_play = joined.view.legal_cards[0]

        after = await client.play_card(name, to_play)

        assert len(lose.request_ids) == 2, "the lost answer should cause exactly one retry"
        assert lose.request_ids[0] == lose.request_ids[1] != ""
        assert len(after.hand) == 12
        assert _played_by(after, 0) == [card_str(to_play)]
        again = await client.get_table(name)
        assert len(again.hand) == 12


async def test_a_pass_whose_answer_was_lost_is_retried_and_applied_once(
    server: HeartsServer,
) -> None:
    lose = LoseFirstAnswer("PassCards")
    async with HeartsClient(server.address, interceptors=[lose], backoff=0.01) as client:
        joined = await table_with_bots(client)
        chosen = list(joined.view.hand[:3])
        after = await client.pass_cards(joined.view.table.name, chosen)
        assert lose.request_ids[0] == lose.request_ids[1]
        assert [card_str(c) for c in after.passed_cards] == [card_str(c) for c in chosen]


async def test_a_join_whose_answer_was_lost_takes_one_seat(server: HeartsServer) -> None:
    lose = LoseFirstAnswer("JoinTable")
    async with HeartsClient(server.address, interceptors=[lose], backoff=0.01) as client:
        created = await client.create_table("t")
        joined = await client.join_table(created.name, "Ada")
        view = await client.get_table(created.name)
    humans = [s.seat for s in view.table.seats if s.occupant == pb.SEAT_OCCUPANT_HUMAN]
    assert humans == [joined.seat]
    assert view.viewer_seat == joined.seat  # the replayed answer's token works


async def test_a_create_whose_answer_was_lost_creates_one_table(server: HeartsServer) -> None:
    lose = LoseFirstAnswer("CreateTable")
    async with HeartsClient(server.address, interceptors=[lose], backoff=0.01) as client:
        created = await client.create_table("once")
        names = [t.name async for t in client.iter_tables()]
    assert names == [created.name]


async def test_each_call_gets_its_own_request_id(server: HeartsServer) -> None:
    seen = LoseFirstAnswer("no such method")
    ids: list[str] = []

    class Record(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
        async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
            ids.append(getattr(request, "request_id", ""))
            return await continuation(details, request)

    async with HeartsClient(server.address, interceptors=[seen, Record()]) as client:
        await client.create_table("a")
        await client.create_table("b")
    assert len(ids) == 2
    assert all(ids)
    assert ids[0] != ids[1]


async def test_an_unreachable_server_raises_unavailable_after_the_retries() -> None:
    async with HeartsClient("127.0.0.1:1", max_retries=2, backoff=0.01, timeout=2) as client:
        with pytest.raises(UnavailableError) as caught:
            await client.get_table("tables/abc")
    assert caught.value.code == grpc.StatusCode.UNAVAILABLE
    assert caught.value.reason == "UNAVAILABLE"  # no ErrorInfo: the status code's name


class RecordCodes(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Records the status code of every attempt."""

    def __init__(self) -> None:
        self.codes: list[grpc.StatusCode] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        call = await continuation(details, request)
        self.codes.append(await call.code())
        return call


def _list_at_once(address: str, count: int, go: threading.Event) -> tuple[int, list[Any]]:
    """``count`` ListTables calls at once from a client on its own loop, once ``go`` is set."""

    async def run() -> tuple[int, list[Any]]:
        codes = RecordCodes()
        async with HeartsClient(
            address, interceptors=[codes], backoff=0.05, max_retries=10, timeout=10
        ) as client:
            await client.list_tables()  # connected
            go.wait(10)
            results = await asyncio.gather(
                *(client.list_tables() for _ in range(count)), return_exceptions=True
            )
        cancelled = codes.codes.count(grpc.StatusCode.CANCELLED)
        return cancelled, results

    return asyncio.run(run())


async def test_calls_refused_by_grpc_as_cancelled_are_retried() -> None:
    # Past its pending-call limit a saturated server's gRPC ends calls with a bare CANCELLED
    # (the call was never run). The client never cancels a call itself (a cancelled task raises
    # CancelledError, not an RpcError), so it retries them like OVERLOADED. A server with a
    # limit of 1 (gRPC's: 2 to 4), its event loop held while 20 calls arrive.
    server = HeartsServer(Settings(port=0, token_secret=SECRET, bot_workers=0, max_pending_rpcs=1))
    await server.start()
    try:
        go = threading.Event()
        loop = asyncio.get_running_loop()
        firing = loop.run_in_executor(None, _list_at_once, server.address, 20, go)
        await asyncio.sleep(0.3)  # the client connects and lists once
        go.set()
        end = time.perf_counter() + 0.5
        while time.perf_counter() < end:  # the loop held, as a saturated process's is
            pass
        cancelled, results = await firing
    finally:
        await server.stop(0)
    assert cancelled > 0, "gRPC refused nothing: the test did not overload the server"
    failures = [result for result in results if isinstance(result, BaseException)]
    assert not failures, failures


async def test_a_call_cut_by_close_raises_client_closed() -> None:
    # A listener that accepts connections and never answers: the call waits until close().
    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read()  # until the client hangs up
        writer.close()

    listener = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        client = HeartsClient(f"127.0.0.1:{port}", timeout=30)
        assert (await _closed_during_a_call(client)).reason == "CLIENT_CLOSED"
    finally:
        listener.close()
        await listener.wait_closed()


async def test_a_call_waiting_to_retry_when_the_client_closes_raises_client_closed() -> None:
    # Nothing listens on port 1: each attempt fails at once with UNAVAILABLE, and the call
    # waits a second before the next. A close() in that wait used to let the next attempt run
    # on the closed channel: a raw grpc UsageError, not a HeartsError.
    client = HeartsClient("127.0.0.1:1", backoff=1.0, max_retries=5, timeout=5)
    assert (await _closed_during_a_call(client)).reason == "CLIENT_CLOSED"
    assert client._channel is None  # no new channel opened on the closed client


async def _closed_during_a_call(client: HeartsClient) -> HeartsError:
    """The error of a GetTable that ``client`` closes 0.3 s after it starts."""
    call = asyncio.create_task(client.get_table("tables/abc"))
    await asyncio.sleep(0.3)
    await client.close()
    with pytest.raises(HeartsError) as caught:
        await asyncio.wait_for(call, 10)
    return caught.value


class CountCalls(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Counts the attempts of every call."""

    def __init__(self) -> None:
        self.calls = 0

    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: Any, request: Any
    ) -> Any:
        self.calls += 1
        return await continuation(client_call_details, request)


async def test_a_request_over_the_message_limit_is_invalid_and_not_retried(
    server: HeartsServer,
) -> None:
    # gRPC itself refuses it with a bare RESOURCE_EXHAUSTED, which a retry would meet again;
    # only the server's own RESOURCE_EXHAUSTED (reason OVERLOADED) is worth a retry.
    count = CountCalls()
    async with HeartsClient(server.address, interceptors=[count], backoff=0.01) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.create_table(display_name="x" * server.settings.max_message_bytes)
    assert caught.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert count.calls == 1
