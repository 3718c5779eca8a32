"""WatchTable: a snapshot, then events in order; resuming after a disconnect misses nothing."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server import service

from .conftest import Rejected, event_kind, owing, read_until, rejected, stored

pytestmark = pytest.mark.timeout(60)


def moves_made(count: int):
    """A ``done`` predicate for ``play_until`` that stops after ``count`` more moves."""
    calls = iter(range(count + 1))
    return lambda table: next(calls) == count


async def test_the_first_message_is_a_snapshot_of_the_callers_view(hearts) -> None:
    seated = await hearts.seated(deck_seed=31)
    for seat in (None, 0, 3):
        token = None if seat is None else seated.tokens[seat]
        view = await hearts.view(seated.name, token)
        call = hearts.watch(seated.name, token)
        first = await anext(aiter(call))
        call.cancel()
        assert first.HasField("snapshot")
        assert first.sequence == first.snapshot.sequence == view.sequence
        assert first.snapshot == view
        if seat is not None:
            assert first.snapshot.viewer_seat == seat
            assert len(first.snapshot.hand) == 13


async def test_a_watcher_sees_in_order_the_moves_other_clients_make(
    hearts, server, connect
) -> None:
    seated = await hearts.seated(deck_seed=32, pass_cards=False)
    watcher = connect(server).watch(seated.name, seated.tokens[0])
    snapshot = await read_until(watcher, lambda m: True)
    table = (await hearts.view(seated.name)).table
    mover = owing(table)[0]
    view = await hearts.view(seated.name, seated.tokens[mover])
    played = await hearts.play(seated.name, seated.tokens[mover], view.legal_cards[0])
    await hearts.play_until(seated.name, seated.tokens, moves_made(6))
    end = await hearts.view(seated.name)
    messages = snapshot + await read_until(watcher, lambda m: m.sequence >= end.sequence)
    watcher.cancel()
    sequences = [m.sequence for m in messages]
    assert sequences == sorted(set(sequences)), "sequences must strictly increase"
    plays = [m.event.card_played for m in messages if event_kind(m) == "card_played"]
    assert len(plays) == 7
    assert (plays[0].seat, plays[0].card) == (mover, view.legal_cards[0])
    assert messages[-1].sequence == end.sequence
    assert played.view.sequence <= end.sequence


@pytest.mark.parametrize("viewer", [1, None], ids=["seat", "spectator"])
async def test_a_resumed_stream_gets_exactly_the_missed_events(hearts, viewer) -> None:
    seated = await hearts.seated(deck_seed=33, target_score=100)
    name = seated.name
    token = None if viewer is None else seated.tokens[viewer]
    steady = hearts.watch(name, token)
    flaky = hearts.watch(name, token)
    # Both snapshots first: a stream the server starts only after some moves (a loaded
    # machine) would begin with another snapshot than the other's.
    steady_start = await read_until(steady, lambda m: True)
    flaky_start = await read_until(flaky, lambda m: True)
    await hearts.play_until(name, seated.tokens, moves_made(4 + 2))  # passes and two cards
    before = flaky_start + await read_until(flaky, lambda m: event_kind(m) == "card_played")
    assert event_kind(before[0]) == "snapshot"
    flaky.cancel()
    await asyncio.sleep(0)
    last = before[-1].sequence
    # Mid-trick: the rest of the round and into the next one, with new private deals.
    await hearts.play_until(name, seated.tokens, lambda table: table.round_number == 2)
    await hearts.play_until(name, seated.tokens, moves_made(1))

    def end(message):  # the first (public) pass of round 2
        return event_kind(message) == "seat_passed" and message.sequence > last

    resumed = hearts.watch(name, token, after_sequence=last)
    after = await read_until(resumed, end)
    everything = steady_start + await read_until(steady, end)
    resumed.cancel()
    steady.cancel()
    assert all(event_kind(m) != "snapshot" for m in after)
    assert [m.SerializeToString() for m in after] == [
        m.SerializeToString() for m in everything if m.sequence > last
    ]
    assert [m.SerializeToString() for m in before] == [
        m.SerializeToString() for m in everything if m.sequence <= last
    ]
    kinds = [event_kind(m) for m in after]
    assert "round_started" in kinds
    assert kinds.count("hand_dealt") == (0 if viewer is None else 1)


async def test_a_resume_from_trimmed_events_starts_with_a_new_snapshot(
    store_kind, make_server, connect
) -> None:
    hearts = connect(await make_server(store=store_kind, max_events=5))
    seated = await hearts.seated(deck_seed=34, pass_cards=False)
    name, token = seated.name, seated.tokens[0]
    await hearts.play_until(name, seated.tokens, moves_made(8))
    view = await hearts.view(name, token)
    call = hearts.watch(name, token, after_sequence=1)
    first = await anext(aiter(call))
    assert first.HasField("snapshot")
    assert first.sequence == view.sequence
    assert first.snapshot == view
    await hearts.play_until(name, seated.tokens, moves_made(1))
    following = await read_until(call, lambda m: event_kind(m) == "turn_changed")
    call.cancel()
    assert following[0].sequence == view.sequence + 1
    assert event_kind(following[0]) == "card_played"
    # A resume from an event still kept gets events, not a snapshot.
    recent = hearts.watch(name, token, after_sequence=view.sequence - 1)
    again = await anext(aiter(recent))
    recent.cancel()
    assert event_kind(again) != "snapshot"
    assert again.sequence == view.sequence


async def test_a_stream_ends_after_the_table_is_deleted(hearts) -> None:
    seated = await hearts.seated([0, 1])
    watchers = [hearts.watch(seated.name, seated.tokens[0]), hearts.watch(seated.name)]
    for watcher in watchers:
        await read_until(watcher, lambda m: True)
    await hearts.delete(seated.name, seated.creator_token)
    for watcher in watchers:
        rest = stored([message async for message in watcher])
        assert [event_kind(m) for m in rest] == ["table_deleted"]
        assert await watcher.code() == grpc.StatusCode.OK


async def _until_it_ends(call: Any) -> tuple[list[api.WatchTableResponse], Rejected]:
    """Every message of a stream that must end with an error, and that error."""
    received: list[api.WatchTableResponse] = []

    async def read() -> None:
        async for message in call:
            received.append(message)

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await asyncio.wait_for(read(), 10)
    return received, rejected(caught.value)


async def test_a_seat_stream_ends_when_its_seat_is_left_before_the_next_player_is_dealt(
    hearts,
) -> None:
    created = await hearts.create(deck_seed=7)
    name = created.view.table.name
    for seat in (0, 1):
        await hearts.join(name, seat, player=f"p{seat}")
    alice = (await hearts.join(name, 3, player="alice")).seat_token
    stream = hearts.watch(name, alice)
    await read_until(stream, lambda m: True)  # the snapshot
    await hearts.leave(name, alice)
    bob = (await hearts.join(name, 3, player="bob")).seat_token
    await hearts.join(name, 2, player="p2")  # full: the game starts and deals bob's hand
    assert len((await hearts.view(name, bob)).hand) == 13
    received, status = await _until_it_ends(stream)
    assert (status.code, status.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
    assert event_kind(received[-1]) == "player_left"
    assert received[-1].event.player_left.seat == 3
    assert all(event_kind(m) != "hand_dealt" for m in received)


async def test_a_seat_stream_ends_when_its_player_leaves_mid_game(hearts) -> None:
    seated = await hearts.seated(deck_seed=9, target_score=100)
    name = seated.name
    stream = hearts.watch(name, seated.tokens[3])
    spectator = hearts.watch(name)
    await read_until(stream, lambda m: True)
    left = await hearts.leave(name, seated.tokens[3])  # a bot takes seat 3 over
    others = {seat: token for seat, token in seated.tokens.items() if seat != 3}
    await hearts.play_until(name, others, lambda table: table.round_number == 2)
    # The game went on into a new deal, seat 3's private events included.
    seen = await read_until(spectator, lambda m: event_kind(m) == "round_started")
    spectator.cancel()
    assert seen[-1].sequence > left.view.sequence
    received, status = await _until_it_ends(stream)
    assert (status.code, status.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
    assert event_kind(received[-1]) == "player_left"
    assert received[-1].sequence <= left.view.sequence


async def test_a_resume_across_an_earlier_occupant_leaving_starts_with_a_snapshot(hearts) -> None:
    created = await hearts.create(deck_seed=12)
    name = created.view.table.name
    before = (await hearts.view(name)).sequence
    alice = (await hearts.join(name, 3, player="alice")).seat_token
    await hearts.leave(name, alice)
    bob = (await hearts.join(name, 3, player="bob")).seat_token
    call = hearts.watch(name, bob, after_sequence=before)
    first = await anext(aiter(call))
    call.cancel()
    assert first.HasField("snapshot")
    assert first.snapshot == await hearts.view(name, bob)
    # Without a departure in between, the same resume gets the events.
    carol = hearts.watch(name, created.creator_token, after_sequence=before)
    again = await anext(aiter(carol))
    carol.cancel()
    assert event_kind(again) == "player_joined"


def _requests(method: str, code: str) -> float:
    from prometheus_client import REGISTRY

    value = REGISTRY.get_sample_value("hearts_requests_total", {"method": method, "code": code})
    return value or 0.0


async def test_calls_their_clients_gave_up_are_counted_as_cancelled(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Counted as OK before: an outage where every call timed out looked like 100 % success.
    server = await make_server()
    hearts = connect(server)
    name = (await hearts.create()).view.table.name
    watch_ok, watch_cancelled = _requests("WatchTable", "OK"), _requests("WatchTable", "CANCELLED")
    watch = hearts.watch(name)
    await read_until(watch, lambda m: event_kind(m) == "snapshot")
    watch.cancel()
    for _ in range(100):  # the server sees the cancellation soon after
        if _requests("WatchTable", "CANCELLED") > watch_cancelled:
            break
        await asyncio.sleep(0.02)
    assert _requests("WatchTable", "CANCELLED") == watch_cancelled + 1
    assert _requests("WatchTable", "OK") == watch_ok

    async def slow(*args: Any) -> Any:
        await asyncio.sleep(5)

    monkeypatch.setattr(server.app, "get_table", slow)
    get_ok, get_cancelled = _requests("GetTable", "OK"), _requests("GetTable", "CANCELLED")
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await hearts.stub.GetTable(api.GetTableRequest(name=name), timeout=0.2)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    for _ in range(100):
        if _requests("GetTable", "CANCELLED") > get_cancelled:
            break
        await asyncio.sleep(0.02)
    assert _requests("GetTable", "CANCELLED") == get_cancelled + 1
    assert _requests("GetTable", "OK") == get_ok


async def test_streams_of_a_table_that_expires_end_with_table_not_found(
    store_kind, make_server, connect
) -> None:
    # Expiry publishes nothing: a finished game's spectators waited for ever, holding a stream
    # slot each. The server checks its watched tables and ends the streams of those gone.
    server = await make_server(store=store_kind, finished_table_ttl_seconds=1)
    server.app._gone_check_seconds = 0.2
    hearts = connect(server)
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_RANDOM)
    name = (await hearts.create(bots=bots, deck_seed=2)).view.table.name
    await hearts.until_game_over(name)
    watch = hearts.watch(name)

    async def read_to_the_end() -> None:
        async with asyncio.timeout(10):
            async for _ in watch:
                pass

    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await read_to_the_end()
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert rejected(caught.value).reason == "TABLE_NOT_FOUND"


async def test_a_resume_with_nothing_missed_answers_its_headers_at_once(hearts) -> None:
    # A quiet table: a stream that resumes from the last sequence has no message to send, but
    # its headers come at once (clients such as tonic hand out the stream only then).
    seated = await hearts.seated([0], bots=dict.fromkeys((1, 2, 3), pb.BOT_LEVEL_RANDOM))
    last = (await hearts.view(seated.name)).sequence
    watch = hearts.watch(seated.name, seated.tokens[0], after_sequence=last)
    await asyncio.wait_for(watch.initial_metadata(), 5)
    watch.cancel()


@pytest.fixture
def quick_heartbeats(monkeypatch: pytest.MonkeyPatch) -> None:
    """Heartbeat intervals from 0.1 s (the API's least is 5 s)."""
    monkeypatch.setattr(service, "_MIN_HEARTBEAT_SECONDS", 0.1)


async def test_a_quiet_stream_beats_at_the_interval_it_asked_for(
    hearts, quick_heartbeats: None
) -> None:
    # A table that waits for players: nothing happens on it.
    created = await hearts.create(bots={1: pb.BOT_LEVEL_RANDOM})
    name = created.view.table.name
    loop = asyncio.get_running_loop()
    call = hearts.watch(name, heartbeat_seconds=0.3)
    messages = aiter(call)
    snapshot = await anext(messages)
    assert snapshot.HasField("snapshot")
    opened = loop.time()
    beats = [await asyncio.wait_for(anext(messages), 2) for _ in range(3)]
    assert [event_kind(m) for m in beats] == ["heartbeat"] * 3
    # Each repeats the number of the message before it, and tells the server's time.
    assert {m.sequence for m in beats} == {snapshot.sequence}
    now_ms = time.time() * 1000  # the server's clock is this machine's
    assert all(0 <= now_ms - m.heartbeat.server_time.ToMilliseconds() < 5_000 for m in beats)
    assert 0.85 <= loop.time() - opened < 3  # three intervals of 0.3 s (a busy machine: more)
    # An event in between: the next heartbeat comes one interval after it.
    joined = await hearts.join(name, 0, player="late")
    event = await asyncio.wait_for(anext(messages), 2)
    while event_kind(event) != "player_joined":  # a heartbeat may have been on its way
        event = await asyncio.wait_for(anext(messages), 2)
    after_event = loop.time()
    beat = await asyncio.wait_for(anext(messages), 2)
    assert event_kind(beat) == "heartbeat"
    assert 0.25 <= loop.time() - after_event < 2
    assert beat.sequence == event.sequence == joined.view.sequence
    call.cancel()


async def test_a_stream_that_asks_for_no_heartbeat_gets_none(
    hearts, quick_heartbeats: None
) -> None:
    created = await hearts.create(bots={1: pb.BOT_LEVEL_RANDOM})
    call = hearts.watch(created.view.table.name)
    messages = aiter(call)
    assert (await anext(messages)).HasField("snapshot")
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(anext(messages), 0.8)
    call.cancel()


@pytest.mark.parametrize("seconds", [-1.0, 4.9, 600.5])
async def test_a_heartbeat_interval_out_of_range_is_refused(hearts, seconds: float) -> None:
    created = await hearts.create()
    call = hearts.watch(created.view.table.name, heartbeat_seconds=seconds)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await anext(aiter(call))  # refused before any message
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert rejected(caught.value).reason == "INVALID_REQUEST"
    assert "heartbeat_interval" in (caught.value.details() or "")
