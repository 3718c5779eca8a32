"""WatchTable: a snapshot, then events in order; resuming after a disconnect misses nothing."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from .conftest import event_kind, owing, read_until

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
    await hearts.play_until(name, seated.tokens, moves_made(4 + 2))  # passes and two cards
    before = await read_until(flaky, lambda m: event_kind(m) == "card_played")
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
    everything = await read_until(steady, end)
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
        rest = [message async for message in watcher]
        assert [event_kind(m) for m in rest] == ["table_deleted"]
        assert await watcher.code() == grpc.StatusCode.OK
