"""Watching a table: resuming after a sequence, and reconnecting through a server restart.

The reference for "no gap, no duplicate" is the table's whole event log as the same caller may
see it, read after the fact with ``after_sequence=0``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_client import HeartsClient, HeartsError, UnavailableError
from hearts_client.client import _CHANNEL_OPTIONS
from hearts_server import service
from hearts_server.server import HeartsServer
from hearts_server.store.base import StoreUnavailableError
from hearts_server.store.memory import MemoryStore

from ..relay import Link
from .client_helpers import make_move, play_to_the_end, start_server, table_with_bots, waits_for_me

Item = tuple[int, str, bytes]


def _item(response: api.WatchTableResponse) -> Item:
    kind = response.WhichOneof("kind") or ""
    return (response.sequence, kind, getattr(response, kind).SerializeToString())


async def _collect(client: HeartsClient, name: str, upto: int, **options: Any) -> list[Item]:
    """The stream's items until one with sequence ``upto`` or more."""
    items: list[Item] = []
    stream = client.watch(name, **options)
    async with contextlib.aclosing(stream):
        async for response in stream:
            items.append(_item(response))
            if response.sequence >= upto:
                break
    return items


async def test_watch_starts_with_a_snapshot_then_live_events(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    name = joined.view.table.name
    stream = client.watch(name)
    async with contextlib.aclosing(stream):
        first = await anext(stream)
        assert first.HasField("snapshot")
        assert first.sequence == joined.view.sequence
        assert len(first.snapshot.hand) == 13  # the seat's own view
        # Then who is connected: of the four seats only seat 0 is a player's, whose stream
        # this is. Unstored, it repeats the snapshot's sequence, and gets through the client.
        presence = await anext(stream)
        told = presence.event.presence_changed
        assert (told.seat, told.connected) == (0, True)
        assert presence.sequence == first.sequence
        await client.pass_cards(name, joined.view.hand[:3])
        event = await anext(stream)
        assert event.HasField("event")
        assert event.sequence > first.sequence


async def test_resuming_after_a_sequence_yields_exactly_the_later_events(
    client: HeartsClient,
) -> None:
    joined = await table_with_bots(client, seed=5, target=30)
    name = joined.view.table.name
    final = await play_to_the_end(client, name, joined.view)
    last = final.sequence

    everything = await _collect(client, name, last, after_sequence=0)
    sequences = [seq for seq, _, _ in everything]
    assert all(kind == "event" for _, kind, _ in everything)
    assert sequences == sorted(set(sequences)), "duplicates or disorder in the log"
    assert sequences[-1] == last

    for cut in (0, sequences[10], sequences[len(sequences) // 2], sequences[-2]):
        tail = await _collect(client, name, last, after_sequence=cut)
        assert tail == [item for item in everything if item[0] > cut], f"resume after {cut}"


async def test_watch_ends_after_the_table_is_deleted(client: HeartsClient) -> None:
    created = await client.create_table("doomed")
    stream = client.watch(created.name)
    seen: list[str] = []
    async with contextlib.aclosing(stream):
        first = await anext(stream)
        seen.append(first.WhichOneof("kind") or "")
        await client.delete_table(created.name)
        async for response in stream:
            seen.append(response.event.WhichOneof("event") or "")
    assert seen == ["snapshot", "table_deleted"]


class CountWatches(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """Records the after_sequence of every WatchTable call (None: a fresh start)."""

    def __init__(self) -> None:
        self.starts: list[int | None] = []

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        has = request.HasField("after_sequence")
        self.starts.append(request.after_sequence if has else None)
        return await continuation(details, request)


async def test_watch_resumes_through_a_server_restart_without_gap_or_duplicate() -> None:
    store = MemoryStore()
    server: HeartsServer | None = await start_server(store=store)
    assert server is not None
    port = server.port
    address = server.address
    watches = CountWatches()
    try:
        async with (
            HeartsClient(address, backoff=0.05, max_retries=8) as player,
            HeartsClient(address, interceptors=[watches], backoff=0.05, max_retries=8) as watcher,
        ):
            joined = await table_with_bots(player, seed=3, target=40)
            name = joined.view.table.name
            watcher.set_seat_token(name, joined.seat_token)  # the seat's private events too

            received: list[Item] = []
            game_over = asyncio.Event()

            async def watch() -> None:
                stream = watcher.watch(name)
                async with contextlib.aclosing(stream):
                    async for response in stream:
                        if response.event.HasField("presence_changed"):
                            continue  # each new stream's presence: not part of the log
                        received.append(_item(response))
                        if response.event.HasField("game_over"):
                            game_over.set()
                            return

            task = asyncio.create_task(watch())
            view = joined.view
            for _ in range(15):
                view = await make_move(player, name, view)
            await asyncio.sleep(0.1)  # let the watcher catch up with some of the game
            seen_before_restart = len(received)

            await server.stop(0)
            server = None
            server = await start_server(port=port, store=store)

            while waits_for_me(view):
                view = await make_move(player, name, view)
            await asyncio.wait_for(game_over.wait(), timeout=30)
            await task
            last = received[-1][0]

            reference = await _collect(watcher, name, last, after_sequence=0)
    finally:
        if server is not None:
            await server.stop(0)

    assert seen_before_restart > 1
    assert len(watches.starts) >= 2, "the stream should have been reopened"
    assert watches.starts[0] is None
    assert all(start is not None for start in watches.starts[1:])
    snapshot, events = received[0], received[1:]
    assert snapshot[1] == "snapshot"
    assert events == [item for item in reference if item[0] > snapshot[0]]


async def test_closing_the_client_ends_a_watch_without_a_cancellation(
    client: HeartsClient,
) -> None:
    created = await client.create_table("closing", bots={1: "random", 2: "random", 3: "random"})
    received: list[api.WatchTableResponse] = []
    snapshot = asyncio.Event()

    async def watch() -> None:
        async for response in client.watch(created.name):
            received.append(response)
            snapshot.set()

    task = asyncio.create_task(watch())
    await asyncio.wait_for(snapshot.wait(), 10)
    await client.close()
    await asyncio.wait_for(task, 10)  # the iteration ends: no CancelledError in this task
    assert received[0].HasField("snapshot")


async def test_reactions_reach_the_watchers_and_a_rate_limit_is_not_retried(
    server: HeartsServer,
) -> None:
    async with (
        HeartsClient(server.address, backoff=0.02) as ann,
        HeartsClient(server.address, backoff=0.02) as bo,
    ):
        created = await ann.create_table(bots={2: "heuristic", 3: "heuristic"})
        await ann.join_table(created.name, "Ann", seat=0)
        await bo.join_table(created.name, "Bo", seat=1)
        stream = bo.watch(created.name)
        async with contextlib.aclosing(stream):
            first = await anext(stream)
            # Who is connected (Bo, whose stream this is), then the reactions.
            for seat, connected in ((0, False), (1, True)):
                told = (await anext(stream)).event.presence_changed
                assert (told.seat, told.connected) == (seat, connected)
            await ann.send_reaction(created.name, "thumbs-up")
            await ann.send_reaction(created.name, pb.REACTION_CLAP)
            for wanted in (pb.REACTION_THUMBS_UP, pb.REACTION_CLAP):
                shown = await anext(stream)
                assert (shown.event.reaction.seat, shown.event.reaction.reaction) == (0, wanted)
                assert shown.sequence == first.sequence  # it repeats the sequence before it
        with pytest.raises(ValueError, match="unknown reaction"):
            await ann.send_reaction(created.name, "shrug")
        for _ in range(3):
            await ann.send_reaction(created.name, "wave")
        started = time.monotonic()
        with pytest.raises(HeartsError) as refused:
            await ann.send_reaction(created.name, "wave")
        assert refused.value.reason == "TOO_MANY_REACTIONS"
        assert not isinstance(refused.value, UnavailableError)  # not retried: at once
        assert time.monotonic() - started < 1


async def test_a_reaction_whose_answer_is_lost_is_not_sent_again(
    server: HeartsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The store publishes the reaction, then fails (its answer lost): the call fails, and the
    # client must not send it again, which would show it twice.
    publish = server.store.publish_ephemeral
    sent = []

    async def publish_then_fail(*args: Any, **kwargs: Any) -> Any:
        sent.append(await publish(*args, **kwargs))
        raise StoreUnavailableError("the answer was lost")

    async with HeartsClient(server.address, backoff=0.01) as ann:
        created = await ann.create_table(bots={1: "heuristic", 2: "heuristic", 3: "heuristic"})
        await ann.join_table(created.name, "Ann", seat=0)
        monkeypatch.setattr(server.store, "publish_ephemeral", publish_then_fail)
        with pytest.raises(UnavailableError) as failed:
            await ann.send_reaction(created.name, "wave")
        assert failed.value.reason == "STORE_UNAVAILABLE"
        assert len(sent) == 1


async def test_closing_the_client_while_a_watch_waits_to_reconnect_ends_it() -> None:
    # The watch lost its server and waits a second before reconnecting; a close() in that wait
    # used to be missed: the watch opened a new channel on the closed client and went on.
    server = await start_server()
    assert server is not None
    client = HeartsClient(server.address, backoff=1.0, max_retries=5)
    created = await client.create_table("reconnecting")
    received: list[api.WatchTableResponse] = []

    async def watch() -> None:
        async for response in client.watch(created.name):
            received.append(response)

    task = asyncio.create_task(watch())
    for _ in range(100):
        if received:
            break
        await asyncio.sleep(0.05)
    await server.stop(0)  # the stream ends with UNAVAILABLE / SHUTTING_DOWN: a reconnect waits
    await asyncio.sleep(0.3)
    await client.close()
    await asyncio.wait_for(task, 10)  # the iteration ends, without an error
    assert [item.HasField("snapshot") for item in received] == [True]
    assert client._channel is None  # nothing reopened on the closed client


async def test_a_watch_that_asks_for_heartbeats_gets_them_between_events(
    client: HeartsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "_MIN_HEARTBEAT_SECONDS", 0.1)  # the API's least is 5 s
    joined = await table_with_bots(client)
    name = joined.view.table.name
    stream = client.watch(name, heartbeat_interval=0.2)
    async with contextlib.aclosing(stream):
        assert (await anext(stream)).HasField("snapshot")
        assert (await anext(stream)).event.HasField("presence_changed")
        beat = await asyncio.wait_for(anext(stream), 2)
        assert beat.HasField("heartbeat")
        assert beat.sequence == joined.view.sequence  # it repeats the sequence before it
        assert abs(beat.heartbeat.server_time.ToMilliseconds() - time.time() * 1000) < 5_000
    # Out of range: refused, not retried.
    with pytest.raises(HeartsError) as refused:
        async for _ in client.watch(name, heartbeat_interval=0.05):
            pass
    assert refused.value.reason == "INVALID_REQUEST"


async def test_a_watch_on_a_connection_that_died_fails_instead_of_hanging() -> None:
    # The client's own keepalive, pinging after 10 s (the server's least) instead of 60, and
    # every answer it waits for cut to 2 s: the same options otherwise, so a wait the client
    # leaves at gRPC's default (60 s) shows.
    scaled = [
        (key, 10_000 if key == "grpc.keepalive_time_ms" else 2_000)
        for key, _ in _CHANNEL_OPTIONS
        if key == "grpc.keepalive_time_ms" or key.endswith("timeout_ms")
    ]
    server = await start_server()
    link = await Link(server.address).start()
    try:
        async with HeartsClient(server.address) as direct:
            created = await direct.create_table(bots=dict.fromkeys((1, 2, 3), "random"))
        name = created.view.table.name  # it waits for a player: its stream stays quiet
        async with HeartsClient(link.address, options=scaled) as client:
            stream = client.watch(name, max_reconnects=0)
            async with contextlib.aclosing(stream):
                assert (await anext(stream)).HasField("snapshot")
                # Quiet for a while (gRPC's own ping after data has been answered), then cut:
                # the next ping is the keepalive's, 10 s after the snapshot.
                await asyncio.sleep(3)
                link.cut()
                cut = time.monotonic()
                with pytest.raises(UnavailableError):
                    await asyncio.wait_for(anext(stream), 30)
                assert 6 < time.monotonic() - cut < 30  # a ping's answer missed, not another end
    finally:
        await link.close()
        await server.stop(0)


async def test_a_stream_past_the_addresss_limit_is_refused_at_once_not_retried() -> None:
    server = await start_server(max_streams_per_client=1)
    try:
        async with HeartsClient(server.address, backoff=0.02) as client:
            created = await client.create_table(bots={1: "random", 2: "random", 3: "random"})
            first = client.watch(created.name)
            async with contextlib.aclosing(first):
                await anext(first)  # the snapshot: this address's one stream is open
                second = client.watch(created.name)
                started = time.monotonic()
                with pytest.raises(HeartsError) as refused:
                    await anext(second)
                assert refused.value.reason == "TOO_MANY_STREAMS_FROM_ADDRESS"
                assert not isinstance(refused.value, UnavailableError)  # the caller's own limit
                assert time.monotonic() - started < 1
    finally:
        await server.stop(0)
