"""Optimistic concurrency (etag), idempotent retries (request_id) and leaving mid-game."""

from __future__ import annotations

import asyncio
import random
import re
import threading
import time
from typing import Any

import grpc
import prometheus_client
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_engine.bots import BotLevel, make_bot
from hearts_server import service
from hearts_server.rpc import METRICS, Backlog

from .conftest import bearer, event_kind, failure, names, owing, read_until, rejected

INVALID = grpc.StatusCode.INVALID_ARGUMENT

pytestmark = pytest.mark.timeout(60)

ABORTED = grpc.StatusCode.ABORTED


async def test_a_stale_etag_is_aborted_and_changes_nothing(hearts) -> None:
    seated = await hearts.seated([0, 1])
    stale = await hearts.etag(seated.name)
    joined = await hearts.join(seated.name, 2, etag=stale)  # a current etag is accepted
    assert joined.etag != stale
    current = joined.etag
    for call in (
        hearts.join(seated.name, 3, etag=stale),
        hearts.leave(seated.name, seated.tokens[0], etag=stale),
        hearts.delete(seated.name, seated.creator_token, etag=stale),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (ABORTED, "ETAG_MISMATCH")
        assert await hearts.etag(seated.name) == current


async def test_a_move_with_a_stale_etag_is_aborted(hearts) -> None:
    seated = await hearts.seated(deck_seed=8)
    name = seated.name
    stale = await hearts.etag(name)
    views = {seat: await hearts.view(name, token) for seat, token in seated.tokens.items()}
    first = await hearts.pass_cards(name, seated.tokens[0], views[0].legal_cards[:3], etag=stale)
    refusal = await failure(
        hearts.pass_cards(name, seated.tokens[1], views[1].legal_cards[:3], etag=stale)
    )
    assert (refusal.code, refusal.reason) == (ABORTED, "ETAG_MISMATCH")
    assert await hearts.etag(name) == first.etag
    for seat in (1, 2, 3):
        await hearts.pass_cards(name, seated.tokens[seat], views[seat].legal_cards[:3])
    table = (await hearts.view(name)).table
    turn = owing(table)[0]
    view = await hearts.view(name, seated.tokens[turn])
    refusal = await failure(
        hearts.play(name, seated.tokens[turn], view.legal_cards[0], etag=first.etag)
    )
    assert (refusal.code, refusal.reason) == (ABORTED, "ETAG_MISMATCH")
    played = await hearts.play(name, seated.tokens[turn], view.legal_cards[0], etag=table.etag)
    assert int(played.etag) == int(table.etag) + 1


async def test_a_retried_move_returns_the_first_response_and_acts_once(hearts) -> None:
    seated = await hearts.seated(deck_seed=12)
    name, tokens = seated.name, seated.tokens
    view = await hearts.view(name, tokens[0])
    chosen = view.legal_cards[:3]
    first = await hearts.pass_cards(name, tokens[0], chosen, request_id="pass-0")
    again = await hearts.pass_cards(name, tokens[0], chosen, request_id="pass-0")
    assert again.SerializeToString() == first.SerializeToString()
    assert await hearts.etag(name) == first.etag

    # Finish passing, then retry a play after another seat has moved: still the first answer.
    await hearts.play_until(name, tokens, lambda table: table.phase == pb.PHASE_PLAYING)
    table = (await hearts.view(name)).table
    seat = owing(table)[0]
    view = await hearts.view(name, tokens[seat])
    played = await hearts.play(name, tokens[seat], view.legal_cards[0], request_id="play-1")
    after_first = played.etag
    retried = await hearts.play(name, tokens[seat], view.legal_cards[0], request_id="play-1")
    assert retried.SerializeToString() == played.SerializeToString()
    assert await hearts.etag(name) == after_first
    following = owing(played.view.table)[0]
    next_view = await hearts.view(name, tokens[following])
    await hearts.play(name, tokens[following], next_view.legal_cards[0], request_id="play-2")
    late = await hearts.play(name, tokens[seat], view.legal_cards[0], request_id="play-1")
    assert late.SerializeToString() == played.SerializeToString()
    assert int(await hearts.etag(name)) == int(after_first) + 1


async def test_a_retried_join_takes_one_seat(hearts) -> None:
    created = await hearts.create()
    name = created.view.table.name
    first = await hearts.join(name, player="ann", request_id="join-ann")
    again = await hearts.join(name, player="ann", request_id="join-ann")
    assert again.SerializeToString() == first.SerializeToString()
    assert await hearts.etag(name) == first.etag
    table = (await hearts.view(name)).table
    humans = [seat.seat for seat in table.seats if seat.occupant == pb.SEAT_OCCUPANT_HUMAN]
    assert humans == [first.seat]
    other = await hearts.join(name, player="bob", request_id="join-bob")
    assert other.seat != first.seat


async def test_a_retried_create_makes_one_table(hearts) -> None:
    first = await hearts.create(request_id="create-once", target_score=50)
    again = await hearts.create(request_id="create-once", target_score=50)
    assert again.SerializeToString() == first.SerializeToString()


async def test_a_create_retried_after_its_table_was_deleted_makes_none(hearts) -> None:
    # The retry is answered as the first attempt was, and the deleted table stays deleted.
    first = await hearts.create(request_id="create-then-delete", target_score=50)
    name = first.view.table.name
    await hearts.delete(name, first.creator_token)
    again = await hearts.create(request_id="create-then-delete", target_score=50)
    assert again.SerializeToString() == first.SerializeToString()
    refusal = await failure(hearts.view(name))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_a_request_id_reused_for_another_join_is_refused(hearts) -> None:
    created = await hearts.create()
    name = created.view.table.name
    alice = await hearts.join(name, 1, player="alice", request_id="req-1")
    etag = await hearts.etag(name)
    refusal = await failure(hearts.join(name, 2, player="bob", request_id="req-1"))
    assert (refusal.code, refusal.reason) == (INVALID, "REQUEST_ID_REUSED")
    assert await hearts.etag(name) == etag
    seats = (await hearts.view(name)).table.seats
    assert seats[2].occupant == pb.SEAT_OCCUPANT_EMPTY
    # The same request again is still a retry: alice's own answer, nobody else's.
    again = await hearts.join(name, 1, player="alice", request_id="req-1")
    assert again.SerializeToString() == alice.SerializeToString()


async def test_a_request_id_reused_for_another_table_is_refused(hearts) -> None:
    await hearts.create(request_id="create-1", target_score=50)
    refusal = await failure(hearts.create(request_id="create-1", target_score=120))
    assert (refusal.code, refusal.reason) == (INVALID, "REQUEST_ID_REUSED")


async def test_a_request_id_reused_for_another_move_is_refused(hearts) -> None:
    seated = await hearts.seated(deck_seed=12)
    name, tokens = seated.name, seated.tokens
    view = await hearts.view(name, tokens[0])
    await hearts.pass_cards(name, tokens[0], view.legal_cards[:3], request_id="move-1")
    etag = await hearts.etag(name)
    refusal = await failure(
        hearts.pass_cards(name, tokens[0], view.legal_cards[3:6], request_id="move-1")
    )
    assert (refusal.code, refusal.reason) == (INVALID, "REQUEST_ID_REUSED")
    assert await hearts.etag(name) == etag


async def test_a_retried_delete_succeeds(hearts) -> None:
    seated = await hearts.seated([0])
    await hearts.delete(seated.name, seated.creator_token, request_id="delete-1")
    await hearts.delete(seated.name, seated.creator_token, request_id="delete-1")
    refusal = await failure(hearts.view(seated.name))
    assert refusal.reason == "TABLE_NOT_FOUND"


async def test_a_seat_left_mid_game_is_played_on_by_a_bot(hearts) -> None:
    seated = await hearts.seated(deck_seed=21, target_score=30)
    name, tokens = seated.name, dict(seated.tokens)
    watcher = hearts.watch(name)
    await read_until(watcher, lambda m: event_kind(m) == "snapshot")
    # Into the first round's play, then seat 2 walks away.
    await hearts.play_until(
        name, tokens, lambda table: table.phase == pb.PHASE_PLAYING and owing(table) != [2]
    )
    left = await hearts.leave(name, tokens.pop(2))
    seat = left.view.table.seats[2]
    assert seat.occupant == pb.SEAT_OCCUPANT_BOT
    assert seat.bot_level == pb.BOT_LEVEL_HEURISTIC
    assert not left.view.HasField("viewer_seat")
    # The three humans play on; the game could not end if the bot did not play seat 2.
    table = await hearts.play_out(name, tokens, rng=random.Random(21))
    assert table.phase == pb.PHASE_GAME_OVER
    messages = await read_until(watcher, lambda m: event_kind(m) == "game_over")
    watcher.cancel()
    left_at = next(i for i, m in enumerate(messages) if event_kind(m) == "player_left")
    assert messages[left_at].event.player_left.seat == 2
    assert messages[left_at].event.player_left.replacement_bot_level == pb.BOT_LEVEL_HEURISTIC
    bot_plays = [
        m
        for m in messages[left_at:]
        if event_kind(m) == "card_played" and m.event.card_played.seat == 2
    ]
    assert len(bot_plays) >= 10


async def test_a_player_takes_over_a_seat_a_bot_plays_for_someone_who_left(hearts) -> None:
    seated = await hearts.seated(deck_seed=21, target_score=30)
    name, tokens = seated.name, dict(seated.tokens)
    await hearts.play_until(
        name, tokens, lambda table: table.phase == pb.PHASE_PLAYING and owing(table) != [2]
    )
    before = await hearts.view(name, tokens[2])
    left = await hearts.leave(name, tokens.pop(2))
    assert left.view.table.seats[2].stand_in
    # Only a join that names the seat takes it over: "any empty seat" finds none.
    assert (await failure(hearts.join(name))).reason == "TABLE_FULL"
    joined = await hearts.join(name, 2, player="Back again")
    assert joined.seat == 2
    seat = joined.view.table.seats[2]
    assert (seat.occupant, seat.player_display_name, seat.stand_in) == (
        pb.SEAT_OCCUPANT_HUMAN,
        "Back again",
        False,
    )
    # The seat's cards and points are the player's now; cards the bot played are gone.
    assert set(names(joined.view.hand)) <= set(names(before.hand))
    assert joined.view.round_points[2] >= before.round_points[2]
    tokens[2] = joined.seat_token
    table = await hearts.play_out(name, tokens, rng=random.Random(21))
    assert table.phase == pb.PHASE_GAME_OVER
    # A seat whose bot was chosen at the start, or any seat once the game is over, stays taken.
    bots = await hearts.seated([0], bots=dict.fromkeys((1, 2, 3), pb.BOT_LEVEL_RANDOM))
    assert not (await hearts.view(bots.name)).table.seats[1].stand_in
    assert (await failure(hearts.join(bots.name, 1))).reason == "SEAT_TAKEN"
    assert table.seats[2].occupant == pb.SEAT_OCCUPANT_HUMAN


async def test_a_stand_in_is_named_after_the_player_within_forty_characters(hearts) -> None:
    # "<name> (bot)" reached 46 characters for a 40-character name, past the proto's limit.
    seated = await hearts.seated((0, 1), bots=dict.fromkeys((2, 3), pb.BOT_LEVEL_HEURISTIC))
    shown = {}
    for seat, name in ((0, "Ann"), (1, "N" * 40)):
        await hearts.leave(seated.name, seated.tokens[seat])  # a stand-in takes the seat
        joined = await hearts.join(seated.name, seat, player=name)  # the seat taken back
        left = await hearts.leave(seated.name, joined.seat_token)
        shown[seat] = left.view.table.seats[seat].player_display_name
    assert shown == {0: "Ann (bot)", 1: "N" * 33 + "… (bot)"}
    assert len(shown[1]) == 40


@pytest.mark.parametrize("pass_cards", [False, True], ids=["playing", "passing"])
async def test_the_game_waits_when_the_last_player_leaves_and_goes_on_when_one_is_back(
    hearts, pass_cards: bool
) -> None:
    seated = await hearts.seated(deck_seed=5, pass_cards=pass_cards, target_score=1000)
    name, tokens = seated.name, dict(seated.tokens)
    moves = iter(range(1000))
    await hearts.play_until(name, tokens, lambda table: next(moves) == 2)  # into the round
    for seat in (0, 1, 2, 3):
        await hearts.leave(name, tokens[seat])
    # Four stand-ins and nobody to play for: they wait, rather than play a game for nobody.
    paused = (await hearts.view(name)).table
    await asyncio.sleep(0.5)
    assert (await hearts.view(name)).table.etag == paused.etag
    seat = next(s for s in range(4) if not paused.HasField("turn_seat") or s != paused.turn_seat)
    joined = await hearts.join(name, seat, player="back")
    # Within the join the bots make the moves they owe, up to the player's.
    table = joined.view.table
    assert owing(table) == [seat], table
    moved = await hearts.play_out(name, {seat: joined.seat_token}, rng=random.Random(5))
    assert moved.phase == pb.PHASE_GAME_OVER


async def test_a_leaver_whose_client_still_sends_the_old_token_can_join_again(hearts) -> None:
    seated = await hearts.seated(deck_seed=23)
    name, tokens = seated.name, dict(seated.tokens)
    old = tokens.pop(1)
    await hearts.leave(name, old)
    # A renewal (no player name) with the left seat's token is refused; a join that carries it
    # (a client that sends its last token on every call) is a join like any other.
    renewal = await failure(
        hearts.stub.JoinTable(api.JoinTableRequest(name=name), metadata=bearer(old))
    )
    assert renewal.reason == "TOKEN_REVOKED"
    request = api.JoinTableRequest(name=name, seat=1, player_display_name="Back")
    joined = await hearts.stub.JoinTable(request, metadata=bearer(old))
    assert joined.seat == 1
    assert joined.view.table.seats[1].player_display_name == "Back"
    assert joined.seat_token != old


async def test_a_stand_in_seat_is_not_taken_over_once_the_game_is_over(hearts) -> None:
    seated = await hearts.seated(deck_seed=22, target_score=1)
    name, tokens = seated.name, dict(seated.tokens)
    await hearts.play_until(name, tokens, lambda table: table.phase == pb.PHASE_PLAYING)
    await hearts.leave(name, tokens.pop(3))
    table = await hearts.play_out(name, tokens, rng=random.Random(22))
    assert table.phase == pb.PHASE_GAME_OVER
    assert table.seats[3].stand_in
    assert (await failure(hearts.join(name, 3))).reason == "GAME_OVER"


async def test_calls_past_the_in_flight_limit_are_shed_as_overloaded(make_server, connect) -> None:
    server = await make_server(max_concurrent_rpcs=2)
    hearts = connect(server)
    created = await hearts.create()
    name = created.view.table.name
    # Two calls already in flight: the next one is refused at once, with a stable reason, and
    # changes nothing; once they are done, calls go through again.
    shed = METRICS.shed_overloaded._value.get()
    server.servicer.calls_in_flight += 2
    try:
        refusal = await failure(hearts.join(name, 0))
    finally:
        server.servicer.calls_in_flight -= 2
    assert refusal.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert refusal.reason == "OVERLOADED"
    assert METRICS.shed_overloaded._value.get() == shed + 1  # hearts_shed_total{OVERLOADED}
    assert all(not seat.player_display_name for seat in (await hearts.view(name)).table.seats)
    await hearts.join(name, 0)


def test_the_backlog_estimate_counts_down_the_calls_picked_up() -> None:
    backlog = Backlog(limit=8)
    assert not backlog.over()  # nothing sampled yet: nothing waits
    # Idle: the 3 calls gRPC started that the servicer never picked up (another service's)
    # are the offset, not a queue.
    backlog.sample(started=4, ended=4, running=0, idle=True)
    assert backlog.waiting == 0
    for _ in range(10):
        assert not backlog.over()
    # Busy: 26 more started, 10 picked up (11 in all), 2 running.
    backlog.sample(started=30, ended=8, running=2, idle=False)
    # The smaller bound: started - picked - offset = 30 - 11 - 3 = 16, not alive - running = 20
    # (which also counts the calls on their way out of gRPC).
    assert backlog.waiting == 16
    # Each call picked up leaves one fewer waiting; of the calls picked up while 8 or more wait,
    # every other one is refused, never two in a row.
    assert [backlog.over() for _ in range(10)] == [True, False] * 4 + [False, False]
    # gRPC refused calls itself, which the servicer never picks up: the bound by calls alive
    # (100 - 95 - 1 = 4) holds the estimate down until the next idle sample.
    backlog.sample(started=100, ended=95, running=1, idle=False)
    assert backlog.waiting == 4
    assert not backlog.over()
    backlog.sample(started=100, ended=100, running=3, idle=False)
    assert backlog.waiting == 0  # never below zero


def test_the_backlog_estimate_forgets_the_calls_grpc_refused_itself() -> None:
    # channelz counts a call that gRPC's pending limit refused (CANCELLED) as started and never
    # as ended: 2,742 of 3,000 in a burst, all finished. Both bounds then drift up, and the
    # gauge read 9,487 calls waiting where gRPC holds at most 256.
    backlog = Backlog(limit=64, cap=256)
    backlog.sample(started=3_000, ended=258, running=0, idle=False)  # picked up: none counted
    assert backlog.waiting == 256  # never more than gRPC's hard limit
    backlog.sample(started=3_000, ended=258, running=0, idle=True)  # quiet: nothing waits
    assert backlog.waiting == 0
    # Later, 40 more calls wait: both bounds count from the idle sample.
    backlog.sample(started=3_050, ended=266, running=2, idle=False)
    assert backlog.waiting == 40  # alive: 3,050 - 266 - 2 - 2,742; by pickups it would be 50


def _fire(address: str, count: int, go: threading.Event) -> list[grpc.RpcError | None]:
    """``count`` ListTables calls at once from a blocking channel, once ``go`` is set."""
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=10)
        stub = api_grpc.TableServiceStub(channel)
        go.wait(10)
        calls = [stub.ListTables.future(api.ListTablesRequest(), timeout=20) for _ in range(count)]
        outcomes: list[grpc.RpcError | None] = []
        for call in calls:
            try:
                call.result()
                outcomes.append(None)
            except grpc.RpcError as error:
                outcomes.append(error)
        return outcomes


async def test_calls_past_the_waiting_limit_are_shed_as_overloaded(make_server) -> None:
    # gRPC holds calls the process has not picked up yet; while more than max_pending_rpcs wait
    # there, the servicer refuses what it picks up with RESOURCE_EXHAUSTED / OVERLOADED, and
    # gRPC's own limit (which answers CANCELLED) is never reached at twice that.
    server = await make_server(max_pending_rpcs=8)
    go = threading.Event()
    firing = asyncio.get_running_loop().run_in_executor(None, _fire, server.address, 15, go)
    await asyncio.sleep(0.2)  # the client connects
    go.set()
    # Hold the event loop the way a saturated process does: the calls queue up inside gRPC.
    end = time.perf_counter() + 0.5
    while time.perf_counter() < end:
        pass
    outcomes = await firing
    refused = [error for error in outcomes if error is not None]
    assert refused, "every call was served: none was shed"
    for error in refused:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
        assert rejected(error).reason == "OVERLOADED"  # type: ignore[arg-type]
    assert len(refused) <= 15 - 8 + 1  # about the excess over the limit, not everything


def _grpc_calls() -> dict[str, float]:
    """hearts_grpc_calls_total by outcome, as /metrics shows it."""
    text = prometheus_client.generate_latest().decode()
    found = re.findall(r'^hearts_grpc_calls_total\{outcome="(\w+)"\} (\S+)$', text, re.MULTILINE)
    return {outcome: float(value) for outcome, value in found}


async def test_calls_grpc_refuses_itself_show_in_its_call_counts(make_server) -> None:
    # Past four times max_pending_rpcs waiting, gRPC's own limit refuses new calls with
    # CANCELLED before any handler runs: hearts_requests_total never sees them, and only
    # hearts_grpc_calls_total shows them, as started and never ended.
    server = await make_server(max_pending_rpcs=4)
    before = _grpc_calls()
    go = threading.Event()
    firing = asyncio.get_running_loop().run_in_executor(None, _fire, server.address, 80, go)
    await asyncio.sleep(0.2)  # the client connects
    go.set()
    end = time.perf_counter() + 0.5  # a saturated process: the calls queue up inside gRPC
    while time.perf_counter() < end:
        pass
    outcomes = await firing
    served = sum(error is None for error in outcomes)
    shed = sum(
        error is not None and error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        for error in outcomes
    )
    cancelled = sum(
        error is not None and error.code() == grpc.StatusCode.CANCELLED for error in outcomes
    )
    assert served + shed + cancelled == 80
    assert cancelled, "gRPC's own limit was never reached"
    after = _grpc_calls()
    started, succeeded, failed = (
        after[k] - before.get(k, 0.0) for k in ("started", "succeeded", "failed")
    )
    assert succeeded >= served
    assert failed >= shed
    assert started - succeeded - failed >= cancelled
    # A stopped server's counts stay in the totals: a counter never goes down.
    await server.stop(0)
    assert all(_grpc_calls()[k] >= after[k] for k in after)


async def test_a_server_whose_queue_cannot_be_read_keeps_serving(make_server, connect) -> None:
    server = await make_server()
    assert server._calls is not None  # channelz is on: the server reads gRPC's queue

    def broken() -> tuple[int, int]:
        raise KeyError("callsStarted")  # as if a grpcio release changed channelz's shape

    server._calls.read = broken  # type: ignore[method-assign]
    await asyncio.sleep(1.2)  # past the once-a-second read of an idle server
    assert server._calls is None
    assert server.servicer.backlog.waiting == 0
    created = await connect(server).create()
    assert created.view.table.name.startswith("tables/")


async def test_an_old_connection_is_asked_to_move_on_and_its_stream_goes_on(
    make_server, connect
) -> None:
    # Replicas the autoscaler adds would get only new clients: past --max-connection-age the
    # server sends GOAWAY, the client's next call opens a new connection (which the Service may
    # send anywhere), and what is in flight, a watch stream above all, goes on.
    server = await make_server(max_connection_age_seconds=0.5)
    hearts = connect(server)
    seated = await hearts.seated(deck_seed=3)
    watcher = hearts.watch(seated.name)
    await read_until(watcher, lambda m: m.HasField("snapshot"))
    channel = hearts.channel
    async with asyncio.timeout(5):  # GOAWAY: the channel leaves READY
        while channel.get_state() == grpc.ChannelConnectivity.READY:
            await channel.wait_for_state_change(grpc.ChannelConnectivity.READY)
    view = await hearts.view(seated.name, seated.tokens[0])  # on a new connection
    await hearts.pass_cards(seated.name, seated.tokens[0], view.legal_cards[:3])
    heard = await read_until(watcher, lambda m: event_kind(m) == "seat_passed")
    assert heard[-1].event.seat_passed.seat == 0
    watcher.cancel()


def _late_once(monkeypatch: pytest.MonkeyPatch, store: Any, method: str) -> None:
    """Make the store's next ``method`` call do its work, then answer late (after 5 s), as a
    Redis reply stuck behind a slow network would: the caller's deadline passes in between."""
    original = getattr(store, method)
    late = [True]

    async def applied_then_late(*args: Any, **kwargs: Any) -> Any:
        result = await original(*args, **kwargs)
        if late.pop() if late else False:
            await asyncio.sleep(5)
        return result

    monkeypatch.setattr(store, method, applied_then_late)


async def test_a_table_of_bots_whose_creator_gave_up_still_plays(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Its bots started after the create's answer; a caller cancelled before the answer (its
    # deadline) left the table made but standing, with nobody holding its name to kick it.
    server = await make_server()
    hearts = connect(server)
    _late_once(monkeypatch, server.store, "create")
    table = pb.Table(display_name="bots only")
    for seat in range(4):
        table.seats.append(
            pb.Seat(seat=seat, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM)
        )
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await hearts.stub.CreateTable(api.CreateTableRequest(table=table), timeout=0.3)
    assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    (listed,) = (await hearts.stub.ListTables(api.ListTablesRequest())).tables
    for _ in range(40):  # 2 s at most: well inside the 5 s after which a read would kick it
        if int((await hearts.view(listed.name)).table.etag) > 1:
            break
        await asyncio.sleep(0.05)
    assert int((await hearts.view(listed.name)).table.etag) > 1


async def test_a_slow_bot_after_a_move_whose_caller_gave_up_still_plays(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    def decide(level: str, seed: int, seat_view: Any) -> Any:
        return make_bot(BotLevel.RANDOM, seed=seed).decide(seat_view)

    monkeypatch.setattr(service, "_decide_in_worker", decide)
    server = await make_server()
    hearts = connect(server)
    bots = dict.fromkeys((1, 2, 3), pb.BOT_LEVEL_MONTE_CARLO)
    # No passing: seat 0 holds the 2C, leads, and the Monte Carlo bot at seat 1 owes next.
    seated = await hearts.seated(humans=(0,), bots=bots, deck_seed=12, pass_cards=False)
    name, token = seated.name, seated.tokens[0]
    view = await hearts.view(name, token)
    assert (view.table.turn_seat, len(view.current_trick.cards)) == (0, 0)
    _late_once(monkeypatch, server.store, "commit")
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await hearts.stub.PlayCard(
            api.PlayCardRequest(name=name, card=view.legal_cards[0]),
            metadata=bearer(token),
            timeout=0.3,
        )
    assert refused.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    played = int(view.table.etag) + 1
    for _ in range(40):  # 2 s: the slow bot's driver, not the 5 s overdue kick of a read
        if int((await hearts.view(name)).table.etag) > played:
            break
        await asyncio.sleep(0.05)
    assert int((await hearts.view(name)).table.etag) > played
