"""Turn timers: a player whose time for a move runs out has it made for them, and plays on.

``Table.turn_timeout`` gives each move a time limit. When it passes, the server process that
asked for the move (by its timer), one that reads the table after the deadline, or, should the
asker have died, one that claims the table from the store's due tables makes the move as a
heuristic bot would, after a public ``TurnTimedOutEvent``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_engine.bots import BotLevel, make_bot
from hearts_server.store.base import StoreUnavailableError

from .conftest import event_kind, failure, names, read_until

pytestmark = pytest.mark.timeout(60)

HEURISTIC = pb.BOT_LEVEL_HEURISTIC
BOTS = {1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}


def _ms(message) -> int:
    return int(message.ToMilliseconds())


@pytest.fixture
async def replicas(make_server, connect):
    """Two servers on one Redis, each with a client: ((server, client), (server, client))."""
    servers = [await make_server(store="redis") for _ in range(2)]
    return tuple((server, connect(server)) for server in servers)


async def test_a_player_out_of_time_has_the_move_made_and_plays_on(hearts) -> None:
    seated = await hearts.seated([0], bots=BOTS, deck_seed=5, turn_timeout_ms=1000)
    name, token = seated.name, seated.tokens[0]
    watch = hearts.watch(name, token)
    [first] = await read_until(watch, lambda m: True)
    view = first.snapshot
    assert view.table.phase == pb.PHASE_PASSING
    assert _ms(view.table.turn_timeout) == 1000
    # The passes were asked for by the deal, in the join that filled the table.
    deadline = _ms(view.table.turn_deadline)
    assert deadline == _ms(view.table.update_time) + 1000
    hand = names(view.hand)

    # Seat 0 does not pass: its time runs out and the server passes for it.
    messages = await read_until(watch, lambda m: event_kind(m) == "cards_passed", seconds=10)
    kinds = [event_kind(m) for m in messages]
    timed_out = messages[kinds.index("turn_timed_out")]
    assert timed_out.event.turn_timed_out.seat == 0
    assert _ms(timed_out.event.event_time) >= deadline
    after = messages[kinds.index("turn_timed_out") :]
    assert [m.event.seat_passed.seat for m in after if event_kind(m) == "seat_passed"] == [0]
    passed = names(messages[-1].event.cards_passed.cards)
    assert len(passed) == 3
    assert set(passed) <= set(hand)

    # The seat is still the player's: on its turn it plays in time, and nothing times out.
    messages = await read_until(
        watch,
        lambda m: event_kind(m) == "turn_changed" and m.event.turn_changed.seat == 0,
        seconds=10,
    )
    asked = messages[-1].event.event_time
    view = await hearts.view(name, token)
    assert _ms(view.table.turn_deadline) == _ms(asked) + 1000
    chosen = view.legal_cards[0]
    await hearts.play(name, token, chosen)
    messages = await read_until(
        watch,
        lambda m: event_kind(m) == "card_played" and m.event.card_played.seat == 0,
        seconds=10,
    )
    assert "turn_timed_out" not in [event_kind(m) for m in messages]
    assert names([messages[-1].event.card_played.card]) == names([chosen])

    # Its next turn runs out: the server plays a card the player could have played.
    messages = await read_until(
        watch,
        lambda m: event_kind(m) == "turn_changed" and m.event.turn_changed.seat == 0,
        seconds=10,
    )
    legal = names((await hearts.view(name, token)).legal_cards)
    messages = await read_until(
        watch,
        lambda m: event_kind(m) == "card_played" and m.event.card_played.seat == 0,
        seconds=10,
    )
    watch.cancel()
    kinds = [event_kind(m) for m in messages]
    assert kinds[0] == "turn_timed_out"
    assert messages[0].event.turn_timed_out.seat == 0
    assert names([messages[-1].event.card_played.card])[0] in legal
    view = await hearts.view(name, token)
    assert len(view.hand) == 11  # two cards played, one by the player and one for them


async def test_without_a_turn_timeout_nobody_is_timed(hearts) -> None:
    seated = await hearts.seated([0], bots=BOTS, deck_seed=5)
    view = await hearts.view(seated.name, seated.tokens[0])
    assert view.table.phase == pb.PHASE_PASSING
    assert not view.table.HasField("turn_timeout")
    assert not view.table.HasField("turn_deadline")
    zero = await hearts.seated([0], bots=BOTS, deck_seed=5, turn_timeout_ms=0)
    view = await hearts.view(zero.name, zero.tokens[0])
    assert not view.table.HasField("turn_deadline")


@pytest.mark.parametrize("milliseconds", [1, 999, 86_400_001, -1_000])
async def test_a_turn_timeout_out_of_range_is_refused(hearts, milliseconds: int) -> None:
    refusal = await failure(hearts.create(bots=BOTS, turn_timeout_ms=milliseconds))
    assert refusal.code == grpc.StatusCode.INVALID_ARGUMENT
    assert refusal.reason == "INVALID_REQUEST"
    assert "turn_timeout" in refusal.message


async def test_a_turn_timeout_that_is_no_duration_is_refused_for_what_it_is(hearts) -> None:
    # nanos past a second: not negative, so the message must not say it is.
    table = pb.Table(display_name="t")
    table.turn_timeout.seconds, table.turn_timeout.nanos = 5, 2_000_000_000
    refusal = await failure(hearts.stub.CreateTable(api.CreateTableRequest(table=table)))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "not a valid duration" in refusal.message


async def test_the_deadline_follows_the_move_the_game_waits_for(hearts) -> None:
    seated = await hearts.seated([0], bots=BOTS, deck_seed=5, turn_timeout_ms=60_000)
    name, token = seated.name, seated.tokens[0]
    view = await hearts.view(name, token)
    asked = _ms(view.table.turn_deadline)
    table = (await hearts.pass_cards(name, token, view.legal_cards[:3])).view.table
    # The bots passed with the deal; the player's pass made the exchange, and the bots played
    # inline up to the player's turn: a new move asked for, with a new deadline.
    assert table.phase == pb.PHASE_PLAYING
    assert table.turn_seat == 0
    assert _ms(table.turn_deadline) == _ms(table.update_time) + 60_000
    assert _ms(table.turn_deadline) > asked
    table = (
        await hearts.play(name, token, (await hearts.view(name, token)).legal_cards[0])
    ).view.table
    # The bots played on up to the player again (a round is 13 tricks).
    assert table.turn_seat == 0
    assert _ms(table.turn_deadline) == _ms(table.update_time) + 60_000


@pytest.mark.redis
async def test_a_replica_with_a_watcher_makes_the_move_after_the_first_one_stopped(
    replicas,
) -> None:
    (first, a), (_, b) = replicas
    seated = await a.seated([0], bots=BOTS, deck_seed=9, turn_timeout_ms=1500)
    watch = b.watch(seated.name)  # a spectator, through the second replica
    await read_until(watch, lambda m: True)
    await first.stop(0)  # its timer goes with it
    messages = await read_until(watch, lambda m: event_kind(m) == "seat_passed", seconds=10)
    watch.cancel()
    kinds = [event_kind(m) for m in messages]
    assert "turn_timed_out" in kinds
    assert messages[-1].event.seat_passed.seat == 0


@pytest.mark.redis
async def test_a_deadline_nobody_reads_or_watches_is_kept_by_another_replica(replicas) -> None:
    # The replica that held the timer stopped, and nobody reads or watches the table (its
    # players wait with their apps closed): the move is made anyway, by a replica that finds
    # the table due in the store (deadline, a second's slack, a poll a second). It used to wait
    # for the next read, or the table's expiry.
    (first, a), (_, b) = replicas
    seated = await a.seated([0], bots=BOTS, deck_seed=9, turn_timeout_ms=1000)
    await first.stop(0)  # its timer goes with it
    await asyncio.sleep(4.0)
    looked = time.time_ns() // 1_000_000  # the first read or watch of the table since
    watch = b.watch(seated.name, after_sequence=0)
    timed_out = await read_until(watch, lambda m: event_kind(m) == "turn_timed_out", seconds=5)
    watch.cancel()
    assert _ms(timed_out[-1].event.event_time) < looked
    assert timed_out[-1].event.turn_timed_out.seat == 0


async def test_a_store_failure_at_the_deadline_only_delays_the_move(
    make_server, connect, caplog: pytest.LogCaptureFixture
) -> None:
    server = await make_server()
    hearts = connect(server)
    seated = await hearts.seated([0], bots=BOTS, deck_seed=5, turn_timeout_ms=1000)
    watch = hearts.watch(seated.name)  # a spectator waiting on the table
    await read_until(watch, lambda m: True)
    store = server.app.store
    commit, failures = store.commit, []

    async def fails_once(*args, **kwargs):
        if not failures:
            failures.append(args)
            raise StoreUnavailableError("one Redis timeout")
        return await commit(*args, **kwargs)

    store.commit = fails_once
    with caplog.at_level(logging.WARNING):
        messages = await read_until(watch, lambda m: event_kind(m) == "turn_timed_out", seconds=10)
    watch.cancel()
    assert len(failures) == 1  # the first try failed; the timer was set again and the next won
    assert messages[-1].event.turn_timed_out.seat == 0
    # Logged as every store failure is (at most every 5 s), not once per table's driver: with
    # Redis down, each timed table added a line every few seconds.
    lines = [record.getMessage() for record in caplog.records]
    assert lines == ["the table store is unavailable: one Redis timeout"]


def _answer_lost_once(call: Any) -> Any:
    """``call`` (a store's write), whose first answer is lost after the write applied."""
    lost: list[Any] = []

    async def answer_lost_once(*args: Any, **kwargs: Any) -> Any:
        result = await call(*args, **kwargs)
        if not lost:
            lost.append(result)
            raise StoreUnavailableError("Redis timed out after applying the command")
        return result

    return answer_lost_once


async def _until_timed_out(server: Any) -> None:
    """Wait (5 s at most) until ``server`` made a move for a player out of time."""
    for _ in range(100):
        if server.app.timed_out_moves:
            return
        await asyncio.sleep(0.05)


async def test_a_write_whose_answer_was_lost_still_gets_its_timer(
    server, connect
) -> None:  # both stores
    # The join that fills the table deals and starts the players' time. Redis applies it but
    # its answer is lost (a timeout): the caller is told STORE_UNAVAILABLE and retries with the
    # same request id, which the store answers from its memory. Nobody reads or watches the
    # table: the timer must still make seat 0's pass when its time runs out (before, no replica
    # had armed it, and the table waited for the next read).
    hearts = connect(server)
    created = await hearts.create(bots=BOTS, deck_seed=5, turn_timeout_ms=1000)
    name = created.view.table.name
    store = server.app.store
    store.commit = _answer_lost_once(store.commit)
    refusal = await failure(hearts.join(name, 0, request_id="join-once"))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    retried = await hearts.join(name, 0, request_id="join-once")
    assert retried.view.table.phase == pb.PHASE_PASSING  # the remembered answer
    assert server.app.timed_out_moves == 0
    await _until_timed_out(server)  # no reads meanwhile: only a timer can make the move
    assert server.app.timed_out_moves == 1
    assert (await hearts.view(name)).table.phase == pb.PHASE_PLAYING  # seat 0's pass made


@pytest.mark.redis
async def test_a_retry_on_another_replica_of_a_write_whose_answer_was_lost_arms_its_timer(
    make_server, connect
) -> None:
    # As above, but the retry goes to another replica, and the first one is gone (with what it
    # started): the replica that answers from the request's memory arms the timer.
    first, second = await make_server(store="redis"), await make_server(store="redis")
    created = await connect(first).create(bots=BOTS, deck_seed=5, turn_timeout_ms=1000)
    name = created.view.table.name
    first.app.store.commit = _answer_lost_once(first.app.store.commit)
    await failure(connect(first).join(name, 0, request_id="join-once"))
    await first.stop(0.1)
    await connect(second).join(name, 0, request_id="join-once")  # the remembered answer
    await _until_timed_out(second)  # no reads meanwhile
    assert second.app.timed_out_moves == 1


@pytest.mark.redis
async def test_a_create_retried_on_another_replica_is_driven_by_one_replica(
    make_server, connect
) -> None:
    # The first replica made a table of Monte Carlo bots but its answer was lost; the retry
    # on the second is answered from the request's memory. The first drives the bots; the
    # second must not drive them too (every decision was thought on both, one commit losing).
    first, second = await make_server(store="redis"), await make_server(store="redis")
    thought = {first: 0, second: 0}
    for server in (first, second):

        async def think(level: Any, seed: int, seat_view: Any, _server: Any = server) -> Any:
            thought[_server] += 1
            await asyncio.sleep(0.02)  # a short Monte Carlo decision
            return make_bot(BotLevel.HEURISTIC, seed=seed).decide(seat_view)

        server.app._decide_elsewhere = think
    first.app.store.create = _answer_lost_once(first.app.store.create)
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_MONTE_CARLO)
    await failure(connect(first).create(bots=bots, deck_seed=3, request_id="c1"))
    await connect(second).create(bots=bots, deck_seed=3, request_id="c1")
    await asyncio.sleep(2.0)
    assert thought[first] > 10  # the first drives the game
    assert thought[second] == 0


async def test_a_turn_timeout_must_run_out_before_an_idle_table_expires(
    make_server, connect
) -> None:
    hearts = connect(await make_server(table_ttl_seconds=300))
    refusal = await failure(hearts.create(bots=BOTS, turn_timeout_ms=240_001))
    assert refusal.reason == "INVALID_REQUEST"
    assert "from 1 to 240 seconds on this server" in refusal.message
    created = await hearts.create(bots=BOTS, turn_timeout_ms=240_000)
    assert _ms(created.view.table.turn_timeout) == 240_000


async def test_turn_changed_carries_the_deadline_even_when_sent_again_in_one_turn(hearts) -> None:
    seated = await hearts.seated(
        [0, 1],
        bots={2: HEURISTIC, 3: HEURISTIC},
        deck_seed=5,
        turn_timeout_ms=60_000,
        pass_cards=False,
    )
    name, tokens = seated.name, seated.tokens
    for _ in range(20):  # play until seat 0's turn
        table = (await hearts.view(name)).table
        if table.turn_seat == 0:
            break
        seat_view = await hearts.view(name, tokens[table.turn_seat])
        await hearts.play(name, tokens[table.turn_seat], seat_view.legal_cards[0])
    view = await hearts.view(name, tokens[0])
    assert view.table.turn_seat == 0
    deadline = _ms(view.table.turn_deadline)
    watch = hearts.watch(name, tokens[0], after_sequence=view.sequence)
    await asyncio.sleep(0.3)
    await hearts.leave(name, tokens[1])  # seat 1 leaves: the turn stays seat 0's
    messages = await read_until(watch, lambda m: event_kind(m) == "turn_changed", seconds=5)
    watch.cancel()
    changed = messages[-1].event
    assert changed.turn_changed.seat == 0
    assert _ms(changed.turn_changed.deadline) == deadline
    assert _ms(changed.event_time) > deadline - 60_000  # sent later than the turn began
    assert _ms((await hearts.view(name, tokens[0])).table.turn_deadline) == deadline


async def test_a_deleted_table_leaves_no_timer(make_server, connect) -> None:
    server = await make_server()
    hearts = connect(server)
    for _ in range(20):
        seated = await hearts.seated([0], bots=BOTS, turn_timeout_ms=60_000)
        assert seated.name.removeprefix("tables/") in server.app._turn_timers
        await hearts.delete(seated.name, seated.creator_token)
    assert not server.app._turn_timers


@pytest.mark.redis
async def test_only_the_writer_keeps_a_timer_for_a_deadline_to_come(replicas) -> None:
    # Readers and watchers on another replica used to arm timers of their own and race the
    # writer at every deadline; the due tables now cover a writer that dies.
    (first, a), (second, b) = replicas
    seated = await a.seated([0], bots=BOTS, deck_seed=9, turn_timeout_ms=60_000)
    name, token = seated.name, seated.tokens[0]
    table_id = name.removeprefix("tables/")
    watch = b.watch(name)  # a spectator through the second replica
    await read_until(watch, lambda m: True)
    view = await b.view(name, token)  # a read there too
    await a.pass_cards(name, token, view.legal_cards[:3])
    await read_until(watch, lambda m: event_kind(m) == "card_played")
    await b.view(name, token)
    watch.cancel()
    assert table_id in first.app._turn_timers
    assert table_id not in second.app._turn_timers


@pytest.mark.redis
async def test_a_read_after_a_deadline_nobody_kept_makes_the_move(replicas) -> None:
    # The writer died with its timer, and this replica does not watch the due tables here: the
    # read itself, past the deadline, starts the driver.
    (first, a), (second, b) = replicas
    assert second.app._due_watch is not None
    second.app._due_watch.cancel()
    seated = await a.seated([0], bots=BOTS, deck_seed=9, turn_timeout_ms=1000)
    table_id = seated.name.removeprefix("tables/")
    await first.stop(0)
    await asyncio.sleep(1.3)
    stored = await second.app.store.load(table_id)
    await b.view(seated.name)  # one read, after the deadline
    for _ in range(50):  # 5 s at most
        now = await second.app.store.load(table_id)
        if now.version > stored.version:
            break
        await asyncio.sleep(0.1)
    assert now.version > stored.version
    watch = b.watch(seated.name, after_sequence=0)
    timed_out = await read_until(watch, lambda m: event_kind(m) == "turn_timed_out")
    watch.cancel()
    assert timed_out[-1].event.turn_timed_out.seat == 0


@pytest.mark.redis
async def test_a_stale_timer_does_not_drive_a_monte_carlo_bot_another_replica_drives(
    replicas,
) -> None:
    (first, a), (second, b) = replicas
    thinking: dict[str, list[int]] = {"first": [], "second": []}
    for key, server in (("first", first), ("second", second)):
        decide = server.app._decide_elsewhere

        async def slowly(level, seed, seat_view, _decide=decide, _key=key):
            thinking[_key].append(seat_view.seat)
            await asyncio.sleep(1.5)  # a Monte Carlo decision that takes a while
            return await _decide(level, seed, seat_view)

        server.app._decide_elsewhere = slowly
    mc = pb.BOT_LEVEL_MONTE_CARLO
    seated = await a.seated(
        [0], bots=dict.fromkeys((1, 2, 3), mc), deck_seed=7, turn_timeout_ms=2000, pass_cards=False
    )
    name, token = seated.name, seated.tokens[0]
    for _ in range(200):  # 10 s at most: the bots before seat 0 think
        view = await a.view(name, token)
        if view.table.turn_seat == 0 and view.legal_cards:
            break
        await asyncio.sleep(0.05)
    assert view.table.turn_seat == 0
    await b.view(name)  # the second replica reads the table: it sets a timer for this deadline
    left = _ms(view.table.turn_deadline) / 1000 - time.time()
    await asyncio.sleep(max(0.0, left - 0.7))
    thinking["first"].clear()
    await a.play(name, token, view.legal_cards[0])  # in time; a bot thinks next, on the first
    await asyncio.sleep(2.5)  # the second's timer fired meanwhile
    assert thinking["first"]
    assert not thinking["second"]


async def test_a_slow_bot_whose_turn_a_timed_out_move_gave_plays_at_once(
    server, connect
) -> None:  # both stores
    # The timer's driver makes the timed-out move, which gives a Monte Carlo bot the turn: that
    # driver plays the bot too. Before, it left the bot for 5 s to be "overdue" and for someone
    # to kick it (7-10 s with a watcher; never, with nobody reading).
    hearts = connect(server)

    async def quickly(level: Any, seed: int, seat_view: Any) -> Any:
        return make_bot(BotLevel.HEURISTIC, seed=seed).decide(seat_view)  # at once, in-process

    server.app._decide_elsewhere = quickly
    mc = pb.BOT_LEVEL_MONTE_CARLO
    seated = await hearts.seated(
        [0], bots=dict.fromkeys((1, 2, 3), mc), deck_seed=7, turn_timeout_ms=1000, pass_cards=False
    )
    watch = hearts.watch(seated.name)
    for _ in range(2):  # seat 0 never moves
        await read_until(watch, lambda m: event_kind(m) == "turn_timed_out", seconds=10)
        timed_out = time.monotonic()
        await read_until(
            watch,
            lambda m: event_kind(m) == "card_played" and m.event.card_played.seat != 0,
            seconds=10,
        )
        assert time.monotonic() - timed_out < 2.0  # a bot's move, not its 5 s grace
    watch.cancel()


async def test_a_move_made_while_a_timer_drives_the_table_gets_its_slow_bot_going(
    make_server, connect
) -> None:
    # A driver the timer started is reading the table when a player's move gives a Monte Carlo
    # bot the turn. The move's start of the driver finds that one running, which must then play
    # the bot at once (before, it left it for 5 s to be overdue, and for someone to kick it).
    server = await make_server()
    hearts = connect(server)

    async def quickly(level: Any, seed: int, seat_view: Any) -> Any:
        return make_bot(BotLevel.HEURISTIC, seed=seed).decide(seat_view)

    server.app._decide_elsewhere = quickly
    mc = pb.BOT_LEVEL_MONTE_CARLO
    seated = await hearts.seated(
        [0],
        bots=dict.fromkeys((1, 2, 3), mc),
        deck_seed=7,
        turn_timeout_ms=60_000,
        pass_cards=False,
    )
    name, token = seated.name, seated.tokens[0]
    for _ in range(100):  # the bots before seat 0 play first
        view = await hearts.view(name, token)
        if view.table.turn_seat == 0 and view.legal_cards:
            break
        await asyncio.sleep(0.05)
    assert view.table.turn_seat == 0
    store, release = server.app.store, asyncio.Event()
    load = store.load

    async def held(*args: Any, **kwargs: Any) -> Any:
        await release.wait()
        return await load(*args, **kwargs)

    store.load = held
    table_id = name.removeprefix("tables/")
    server.app._start_driver(table_id, by_timer=True)  # a timer's driver, reading the table
    await asyncio.sleep(0.05)
    watch = hearts.watch(name)
    played = await hearts.play(name, token, view.legal_cards[0])  # (no read: the cached record)
    store.load = load
    release.set()
    assert played.view.table.turn_seat != 0  # a bot owes the next card
    started = time.monotonic()
    await read_until(
        watch,
        lambda m: event_kind(m) == "card_played" and m.event.card_played.seat != 0,
        seconds=10,
    )
    assert time.monotonic() - started < 2.0  # the bot's move, not its 5 s grace and a kick
    watch.cancel()


async def test_a_player_back_at_a_game_that_waited_gets_a_fresh_time_limit(hearts) -> None:
    seated = await hearts.seated([0], bots=BOTS, deck_seed=5, turn_timeout_ms=60_000)
    name, token = seated.name, seated.tokens[0]
    asked = (await hearts.view(name, token)).table.turn_deadline
    await hearts.leave(name, token)  # the last player: the game waits, seat 0's pass owed
    await asyncio.sleep(0.3)
    joined = await hearts.join(name, 0, player="back")
    table = joined.view.table
    assert table.seats[0].occupant == pb.SEAT_OCCUPANT_HUMAN
    assert joined.view.cards_to_pass == 3  # still this round's passes, asked for again
    assert _ms(table.turn_deadline) == _ms(table.update_time) + 60_000
    assert _ms(table.turn_deadline) >= _ms(asked) + 300
