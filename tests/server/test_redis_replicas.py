"""Two server replicas on one Redis behave as one service: any replica serves any table.

The replicas share the token secret and nothing else: no state in the process survives between
calls, writes are compare-and-set on the table's version, and events reach watchers on every
replica through Redis pub/sub. A stopped replica's streams end with UNAVAILABLE, and the client
resumes on another one from its last sequence without a gap or a duplicate.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from typing import Any

import grpc
import pytest
import redis.asyncio
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_engine.bots import BotLevel, make_bot
from hearts_server import service
from hearts_server.store import keys
from hearts_server.store import redis as redis_store
from hearts_server.store.base import CommitOutcome, StoreUnavailableError

from .conftest import (
    bearer,
    event_kind,
    failure,
    key,
    names,
    owing,
    read_until,
    rejected,
    stored,
)

SERVICE = "hearts.v1.TableService"

pytestmark = [pytest.mark.redis, pytest.mark.timeout(60)]


@pytest.fixture
async def replicas(make_server, connect):
    """Two servers on the same Redis, and a client of each."""
    first = await make_server(store="redis")
    second = await make_server(store="redis")
    return connect(first), connect(second)


async def test_plays_through_either_replica_reach_watchers_on_the_other(replicas) -> None:
    a, b = replicas
    seated = await a.seated(deck_seed=41, target_score=100)
    name, tokens = seated.name, seated.tokens
    watcher = b.watch(name)
    await read_until(watcher, lambda m: True)
    made = []
    rng = random.Random(41)
    table = (await b.view(name)).table
    for move in range(40):
        client = (a, b)[move % 2]
        seat = owing(table)[0]
        view = await client.view(name, tokens[seat])
        if view.table.phase == pb.PHASE_PASSING:
            response = await client.pass_cards(name, tokens[seat], view.legal_cards[:3])
        else:
            chosen = rng.choice(view.legal_cards)
            response = await client.play(name, tokens[seat], chosen)
            made.append((seat, names([chosen])[0]))
        table = response.view.table
    assert len(made) == 36
    end = response.view.sequence  # the last play's turn_changed: public
    messages = await read_until(watcher, lambda m: m.sequence >= end)
    watcher.cancel()
    plays = [
        (m.event.card_played.seat, names([m.event.card_played.card])[0])
        for m in messages
        if event_kind(m) == "card_played"
    ]
    assert plays == made
    # Deleting through one replica ends the streams on the other.
    watcher = b.watch(name, tokens[0])
    await read_until(watcher, lambda m: True)
    await a.delete(name, seated.creator_token)
    rest = stored([message async for message in watcher])
    assert [event_kind(m) for m in rest] == ["table_deleted"]


@pytest.mark.parametrize("pin_etag", [False, True], ids=["no-etag", "same-etag"])
async def test_conflicting_concurrent_plays_on_two_replicas_let_exactly_one_win(
    replicas, pin_etag: bool
) -> None:
    a, b = replicas
    seated = await a.seated(deck_seed=42, pass_cards=False)
    name, tokens = seated.name, seated.tokens
    moves = iter(range(5))
    # After the first trick the winner leads from (nearly) a whole hand.
    await a.play_until(name, tokens, lambda table: next(moves) == 4)
    table = (await a.view(name)).table
    seat = owing(table)[0]
    view = await b.view(name, tokens[seat])
    legal = list(view.legal_cards)
    assert len(legal) > 1
    etag = table.etag if pin_etag else ""
    calls = [
        (a if i % 2 else b).play(name, tokens[seat], legal[i % len(legal)], etag=etag)
        for i in range(10)
    ]
    outcomes = await asyncio.gather(*calls, return_exceptions=True)
    wins = [outcome for outcome in outcomes if not isinstance(outcome, BaseException)]
    losses = [outcome for outcome in outcomes if isinstance(outcome, BaseException)]
    assert len(wins) == 1, outcomes
    for loss in losses:
        assert isinstance(loss, grpc.aio.AioRpcError), loss
        refusal = rejected(loss)
        assert (refusal.code, refusal.reason) in {
            (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN"),
            (grpc.StatusCode.FAILED_PRECONDITION, "CARD_NOT_IN_HAND"),
            (grpc.StatusCode.ABORTED, "CONFLICT"),
            (grpc.StatusCode.ABORTED, "ETAG_MISMATCH"),
        }, refusal
    after = await a.view(name, tokens[seat])
    assert int(after.table.etag) == int(table.etag) + 1
    mine = [played for played in after.current_trick.cards if played.seat == seat]
    assert len(mine) == 1
    assert key(mine[0].card) == key(wins[0].view.current_trick.cards[0].card)
    assert len(after.hand) == len(view.hand) - 1


async def test_a_retry_on_another_replica_returns_the_first_response(replicas) -> None:
    a, b = replicas
    seated = await a.seated(deck_seed=43, pass_cards=False)
    name, tokens = seated.name, seated.tokens
    seat = owing((await a.view(name)).table)[0]
    view = await a.view(name, tokens[seat])
    first = await a.play(name, tokens[seat], view.legal_cards[0], request_id="retry-me")
    again = await b.play(name, tokens[seat], view.legal_cards[0], request_id="retry-me")
    assert again.SerializeToString() == first.SerializeToString()
    assert await b.etag(name) == first.etag
    created = await a.create(request_id="create-me")
    recreated = await b.create(request_id="create-me")
    assert recreated.SerializeToString() == created.SerializeToString()


async def test_a_stream_resumes_on_a_new_server_after_its_server_stops(
    make_server, connect
) -> None:
    first_server = await make_server(store="redis")
    other_server = await make_server(store="redis")
    doomed, other = connect(first_server), connect(other_server)
    seated = await other.seated(deck_seed=44, target_score=100)
    name, tokens = seated.name, seated.tokens
    token = tokens[0]
    steady = other.watch(name, token)
    flaky = doomed.watch(name, token)
    moves = iter(range(11))
    await other.play_until(name, tokens, lambda table: next(moves) == 10)
    seen = await read_until(flaky, lambda m: event_kind(m) == "card_played")
    stopping = asyncio.ensure_future(first_server.stop(0.5))

    async def drain() -> None:
        async for message in flaky:
            seen.extend(stored([message]))

    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await drain()
    await stopping
    refusal = rejected(ended.value)
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "SHUTTING_DOWN")
    last = seen[-1].sequence
    # Play on while the watcher is away, then resume on a brand-new server.
    moves = iter(range(13))
    await other.play_until(name, tokens, lambda table: next(moves) == 12)
    fresh = connect(await make_server(store="redis"))
    resumed = fresh.watch(name, token, after_sequence=last)
    end = (await other.view(name)).sequence

    def caught_up(message):
        return message.sequence >= end

    after = await read_until(resumed, caught_up)
    everything = await read_until(steady, caught_up)
    resumed.cancel()
    steady.cancel()
    assert after, "the resumed stream must carry the missed events"
    assert all(event_kind(m) != "snapshot" for m in after)
    assert [m.SerializeToString() for m in after] == [
        m.SerializeToString() for m in everything if m.sequence > last
    ]
    assert [m.SerializeToString() for m in seen] == [
        m.SerializeToString() for m in everything if m.sequence <= last
    ]


async def test_a_replica_started_before_its_redis_serves_once_redis_answers(
    make_server, connect, redis_server, caplog: pytest.LogCaptureFixture
) -> None:
    await asyncio.to_thread(redis_server.stop)
    server = await make_server(store="redis", redis_url=redis_server.url)
    said = [r.getMessage() for r in caplog.records]
    assert any("NOT_SERVING until the table store answers" in m for m in said), said
    hearts = connect(server)
    async with grpc.aio.insecure_channel(server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)

        async def status(service: str) -> int:
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
            return int(reply.status)

        # The process is up (liveness), the service is not (readiness), and calls say why.
        assert await status("") == health_pb2.HealthCheckResponse.SERVING
        assert await status(SERVICE) == health_pb2.HealthCheckResponse.NOT_SERVING
        refusal = await failure(hearts.create())
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")

        watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE))
        await asyncio.to_thread(redis_server.start)  # on the same port
        async with asyncio.timeout(20):
            async for reply in watch:
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    break
        watch.cancel()
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    seated = await hearts.seated(deck_seed=5)
    assert len((await hearts.view(seated.name, seated.tokens[0])).hand) == 13


async def test_losing_redis_while_serving_answers_unavailable_and_health_stays_serving(
    make_server, connect, redis_server
) -> None:
    # Every replica shares the one Redis: NOT_SERVING would empty the Service at once, so health
    # stays SERVING and calls say why they fail (docs/operations.md, "Losing Redis").
    server = await make_server(store="redis", redis_url=redis_server.url)
    hearts = connect(server)
    seated = await hearts.seated(deck_seed=5)
    view = await hearts.view(seated.name, seated.tokens[0])
    await asyncio.to_thread(redis_server.stop)
    refusal = await failure(hearts.pass_cards(seated.name, seated.tokens[0], view.hand[:3]))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    async with grpc.aio.insecure_channel(server.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", SERVICE):
            reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, service
    await asyncio.to_thread(redis_server.start)  # empty: this test's Redis keeps nothing on disk
    async with asyncio.timeout(20):
        while True:  # the pool's connections to the stopped Redis are replaced as they are taken
            try:
                again = await hearts.seated(deck_seed=6)
                break
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.UNAVAILABLE:
                    raise
                await asyncio.sleep(0.1)
    view = await hearts.view(again.name, again.tokens[0])
    await hearts.pass_cards(again.name, again.tokens[0], view.hand[:3])


async def test_with_redis_gone_a_call_fails_at_once_and_the_log_says_why(
    make_server, connect, redis_server, caplog: pytest.LogCaptureFixture
) -> None:
    # Before, every read waited the whole 5 s socket timeout for the pub/sub listener (even of
    # a table nobody watched), so calls piled up to the in-flight limit and most were refused
    # OVERLOADED instead of STORE_UNAVAILABLE; and the log said only "network:ConnectionError".
    server = await make_server(store="redis", redis_url=redis_server.url)
    hearts = connect(server)
    watched = await hearts.seated(deck_seed=5)
    watch = hearts.watch(watched.name)  # the listener runs, and has a channel
    await read_until(watch, lambda m: True)
    unwatched = (await hearts.create()).view.table.name
    with caplog.at_level(logging.WARNING):
        await asyncio.to_thread(redis_server.stop)
        for _ in range(3):
            started = time.monotonic()
            refusal = await failure(hearts.view(unwatched))
            assert (refusal.code, refusal.reason) == (
                grpc.StatusCode.UNAVAILABLE,
                "STORE_UNAVAILABLE",
            )
            assert time.monotonic() - started < 2.5  # not the 5 s timeout
        await asyncio.sleep(0.5)  # the listener notices
    watch.cancel()
    lines = [record.getMessage() for record in caplog.records]
    lost = [line for line in lines if "pub/sub listener lost its connection" in line]
    assert lost, lines
    assert "ConnectionError: " in lost[0], lost  # redis-py's message: what failed, and where
    unavailable = [line for line in lines if "the table store is unavailable" in line]
    assert len(unavailable) == 1, lines  # at most every 5 s
    assert "ConnectionError: " in unavailable[0], unavailable


async def test_a_redis_at_its_memory_limit_refuses_writes_as_unavailable(
    make_server, connect, redis_server, caplog: pytest.LogCaptureFixture
) -> None:
    # noeviction at maxmemory: Redis refuses every write. Clients get the store's retryable
    # status, not INTERNAL, reads still answer, and writes work again once memory is there.
    server = await make_server(store="redis", redis_url=redis_server.url)
    hearts = connect(server)
    seated = await hearts.seated(deck_seed=8)
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        await admin.config_set("maxmemory-policy", "noeviction")
        await admin.config_set("maxmemory", 1)
        view = await hearts.view(seated.name, seated.tokens[0])
        refusal = await failure(hearts.pass_cards(seated.name, seated.tokens[0], view.hand[:3]))
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        refusal = await failure(hearts.create())
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
        # The client hears "unavailable"; the operator reads why.
        said = [r.getMessage() for r in caplog.records]
        assert any("OutOfMemoryError" in m for m in said), said
        assert (await hearts.view(seated.name, seated.tokens[0])).hand == view.hand
        await admin.config_set("maxmemory", 0)
    finally:
        await admin.aclose()
    response = await hearts.pass_cards(seated.name, seated.tokens[0], view.hand[:3])
    assert len(response.view.hand) == 13


async def _first_dies_driving(make_server, connect, monkeypatch, grace_ms: int):
    """Clients of two replicas on one Redis, with a bot grace period of ``grace_ms``; the first
    replica never starts a bot driver, as if it died right after each commit, and the second
    does not watch the due tables, so only what the test does can get the bots going."""
    first = await make_server(store="redis")
    second = await make_server(store="redis")
    for server in (first, second):
        server.app._slow_bot_grace_ms = grace_ms
    monkeypatch.setattr(first.app, "_start_driver", lambda table_id, **_: None)
    assert second.app._due_watch is not None
    second.app._due_watch.cancel()
    return connect(first), connect(second)


async def _stuck_on_a_slow_bot(make_server, connect, monkeypatch, grace_ms: int):
    """Two replicas; a table of one human and three Monte Carlo bots (deciding as random bots)
    that the first replica left standing on a bot's turn, as if it died right after its commit:
    its drivers never start. Returns (first client, second client, table name, human's token).
    """

    def decide(level: str, seed: int, seat_view: Any) -> Any:
        return make_bot(BotLevel.RANDOM, seed=seed).decide(seat_view)

    monkeypatch.setattr(service, "_decide_in_worker", decide)
    a, b = await _first_dies_driving(make_server, connect, monkeypatch, grace_ms)
    bots = dict.fromkeys((1, 2, 3), pb.BOT_LEVEL_MONTE_CARLO)
    seated = await a.seated(humans=(0,), bots=bots, deck_seed=12)
    name, token = seated.name, seated.tokens[0]
    view = await a.view(name, token)
    table = (await a.pass_cards(name, token, view.legal_cards[:3])).view.table
    while table.turn_seat == 0:  # the human holds the 2C: play until a bot owes the card
        view = await a.view(name, token)
        table = (await a.play(name, token, view.legal_cards[0])).view.table
    assert table.phase == pb.PHASE_PLAYING
    return a, b, name, token


async def test_a_refused_move_restarts_a_slow_bot_whose_replica_died(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b, name, token = await _stuck_on_a_slow_bot(make_server, connect, monkeypatch, 200)
    stuck = (await a.view(name)).table.etag
    await asyncio.sleep(0.4)
    assert (await a.view(name)).table.etag == stuck  # nobody drives the bots
    view = await a.view(name, token)
    refusal = await failure(b.play(name, token, view.hand[0]))
    assert refusal.reason == "NOT_YOUR_TURN"
    # The second replica found the bot overdue while refusing, and drove the bots since.
    for _ in range(200):  # 10 s at most
        table = (await a.view(name)).table
        if table.turn_seat == 0:
            break
        await asyncio.sleep(0.05)
    assert table.turn_seat == 0
    assert table.etag != stuck


async def test_a_watcher_alone_gets_a_slow_bot_going_again(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A player who only watches, waiting for its turn, sends nothing that would find the bot
    # overdue: the replica it watches through checks the table once per grace period.
    _, b, name, token = await _stuck_on_a_slow_bot(make_server, connect, monkeypatch, 1000)
    watch = b.watch(name, token)  # at once: the bot is due, not yet overdue
    messages = await read_until(watch, lambda m: event_kind(m) == "card_played", seconds=10)
    watch.cancel()
    assert event_kind(messages[-1]) == "card_played"


@pytest.mark.parametrize("read_between", ["nothing", "a refused delete"])
async def test_a_move_redis_lost_is_never_taken_for_the_current_record(
    make_server, connect, redis_server, read_between: str
) -> None:
    # Redis restored from older data (a snapshot, a lagging replica promoted) loses the newest
    # writes, and the table may then reach the same version again with other moves. A replica
    # that still holds the lost record must not take it for the current one (nor commit on it).
    first = await make_server(store="redis", redis_url=redis_server.url)
    second = await make_server(store="redis", redis_url=redis_server.url)
    a, b = connect(first), connect(second)
    seated = await a.seated(deck_seed=41)
    name, tokens = seated.name, seated.tokens
    await a.play_until(name, tokens, lambda table: table.phase == pb.PHASE_PLAYING)
    for _ in range(60):  # a seat that follows second or third, with a choice of cards
        table = (await a.view(name)).table
        seat = table.turn_seat
        view = await a.view(name, tokens[seat])
        if len(view.legal_cards) >= 2 and len(view.current_trick.cards) in (1, 2):
            break
        await a.play(name, tokens[seat], view.legal_cards[0])
    else:
        raise AssertionError("no choice of cards came up")
    table_id = name.removeprefix("tables/")
    table_keys = (keys.table(table_id), keys.events(table_id), keys.requests(table_id))
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        saved = [await admin.dump(k) for k in table_keys]
        lost, kept = view.legal_cards[0], view.legal_cards[-1]
        await a.play(name, tokens[seat], lost)  # the first replica holds this record now
        for k, dumped in zip(table_keys, saved, strict=True):  # ... which Redis loses
            if dumped is None:
                await admin.delete(k)
            else:
                await admin.restore(k, 0, dumped, replace=True)
    finally:
        await admin.aclose()
    await b.play(name, tokens[seat], kept)  # the same version again, with another card
    if read_between == "a refused delete":  # the first replica reads the table, then refuses
        refusal = await failure(a.delete(name, seated.creator_token, etag="1"))
        assert refusal.reason == "ETAG_MISMATCH"
    following = (await b.view(name)).table.turn_seat
    choice = (await b.view(name, tokens[following])).legal_cards[0]
    await a.play(name, tokens[following], choice)  # through the replica that held the lost one
    held = {key(c) for c in (await a.view(name, tokens[seat])).hand}
    assert key(lost) in held  # never played, as far as the table knows
    assert key(kept) not in held
    trick = (await b.view(name)).current_trick.cards
    assert [(c.seat, key(c.card)) for c in trick][-2:] == [
        (seat, key(kept)),
        (following, key(choice)),
    ]


async def test_a_watcher_gets_a_table_of_bots_going_again_after_its_replica_died(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A table of bots only plays a round per commit through the driver of the replica that
    # made it. That replica dies (its drivers never start): a watcher elsewhere restarts it.
    a, b = await _first_dies_driving(make_server, connect, monkeypatch, 1000)
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_HEURISTIC)
    created = await a.create(bots=bots, deck_seed=4)
    name = created.view.table.name
    stuck = (await a.view(name)).table
    assert stuck.phase != pb.PHASE_GAME_OVER
    watch = b.watch(name)  # at once: nothing is overdue yet
    await read_until(watch, lambda m: event_kind(m) == "round_scored", seconds=10)
    watch.cancel()
    assert (await a.view(name)).table.round_number > stuck.round_number


async def test_a_game_whose_players_all_left_waits_and_goes_on_through_another_replica(
    make_server, connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Four players leave through the first replica (as if it died after each commit: it never
    # starts a driver). The game waits for a player, on every replica: a spectator on the
    # second sees nothing after the four PlayerLeft events. A player then takes a seat back
    # through the second, and the stand-ins play on up to them.
    a, b = await _first_dies_driving(make_server, connect, monkeypatch, 200)
    seated = await a.seated(deck_seed=9)
    name = seated.name
    watch = b.watch(name)
    await read_until(watch, lambda m: event_kind(m) == "snapshot")
    for seat in range(4):
        await a.leave(name, seated.tokens[seat])
    await read_until(
        watch, lambda m: m.event.player_left.seat == 3 and event_kind(m) == "player_left"
    )
    waiting = (await b.view(name)).table
    await asyncio.sleep(0.6)  # three times the grace after which a replica restarts bots
    assert (await b.view(name)).table.etag == waiting.etag
    joined = await b.join(name, 0, player="back")
    assert owing(joined.view.table) == [0]
    messages = await read_until(watch, lambda m: event_kind(m) == "player_joined", seconds=10)
    watch.cancel()
    assert [event_kind(m) for m in messages] == ["player_joined"]


async def test_rotating_the_token_secret_replica_by_replica_keeps_every_seat(
    make_server, connect, redis_server
) -> None:
    # docs/operations.md: the new secret is first accepted everywhere, then signs, then the old
    # one goes. Each step rolls replica by replica, so pods of two steps serve side by side.
    # Secrets read from files often end in a newline: the extra secret keeps it, as the secret
    # did, or the old tokens would not verify in step 2.
    old, new = "the-old-token-secret-0123456789\n", "the-new-token-secret-0123456789\n"
    url = redis_server.url
    before = connect(await make_server(store="redis", redis_url=url, token_secret=old))
    accepting = connect(
        await make_server(store="redis", redis_url=url, token_secret=old, token_extra_secret=new)
    )
    signing = connect(
        await make_server(store="redis", redis_url=url, token_secret=new, token_extra_secret=old)
    )
    after = connect(await make_server(store="redis", redis_url=url, token_secret=new))
    seated = await before.seated(deck_seed=8)  # seat tokens signed with the old secret
    name, token = seated.name, seated.tokens[0]
    # Step 1 beside step 0, and step 2 beside step 1: every token works on every pod.
    for pod in (before, accepting, signing):
        assert (await pod.view(name, token)).viewer_seat == 0
    renewed = (
        await signing.stub.JoinTable(api.JoinTableRequest(name=name), metadata=bearer(token))
    ).seat_token
    for pod in (accepting, signing, after):
        assert (await pod.view(name, renewed)).viewer_seat == 0
    # Step 3: the old secret is gone; a token renewed in step 2 goes on.
    refusal = await failure(after.view(name, token))
    assert refusal.reason == "TOKEN_INVALID"
    view = await after.view(name, renewed)
    await after.pass_cards(name, renewed, view.legal_cards[:3])


async def test_a_stopping_replica_lets_its_bots_answer_the_last_move_first(
    make_server, connect, redis_server
) -> None:
    # A rolling update stops pods with games in play. Monte Carlo bots move on the replica that
    # gave them the turn; if the stop cut them off, the player would wait until another replica
    # found them overdue (seconds). The drain lets them answer first.
    url = redis_server.url
    leaving = await make_server(store="redis", redis_url=url, grace_seconds=5)
    staying = connect(await make_server(store="redis", redis_url=url))
    a = connect(leaving)
    mc = pb.BOT_LEVEL_MONTE_CARLO
    seated = await a.seated((0,), bots={1: mc, 2: mc, 3: mc}, deck_seed=12, pass_cards=False)
    name, token = seated.name, seated.tokens[0]
    for _ in range(200):  # until the bots' first moves are made and it is the human's turn
        view = await a.view(name, token)
        if view.legal_cards:
            break
        await asyncio.sleep(0.02)
    else:
        raise AssertionError("the human's turn never came")
    await a.play(name, token, view.legal_cards[0])  # three Monte Carlo bots owe a card now
    await leaving.stop()
    table = (await staying.view(name)).table
    assert owing(table) == [0], "the bots' moves were left to another replica"


def _lose_redis_before_the_table(server: Any) -> None:
    """Make ``server``'s store fail every create script, as a replica fails that died (or lost
    Redis) right after claiming a create's request id."""
    run = server.store._run

    async def dies_before_the_table(*commands: Any, **options: Any) -> Any:
        if any(command[:2] == ("EVALSHA", redis_store._CREATE.sha) for command in commands):
            raise StoreUnavailableError("the connection is gone")
        return await run(*commands, **options)

    server.store._run = dies_before_the_table


async def _random_bots_table(hearts: Any) -> str:
    """A new table of four random bots playing to 1000 points: its id."""
    bots = dict.fromkeys(range(4), pb.BOT_LEVEL_RANDOM)
    created = await hearts.create(bots=bots, target_score=1000)
    return created.view.table.name.removeprefix("tables/")


async def _until_version_above(
    admin: redis.asyncio.Redis, table_key: str, version: int, *, seconds: float
) -> None:
    """Wait until the table's stored version passes ``version``, read from Redis itself (not
    through a replica, whose read could set the table going)."""
    for _ in range(int(seconds / 0.2)):
        if int(await admin.hget(table_key, "v")) > version:
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"the table stood still at or below version {version}")


async def test_a_table_of_bots_goes_on_when_its_replica_stops_and_nobody_looks(
    make_server, connect, redis_server
) -> None:
    # The replica driving a table of bots drained (a rolling deploy), and nobody reads or
    # watches the table: another replica finds it due in the store and drives it on. It used to
    # stand still until someone read it, or until it expired.
    driving = await make_server(store="redis", redis_url=redis_server.url)
    await make_server(store="redis", redis_url=redis_server.url)
    table_key = keys.table(await _random_bots_table(connect(driving)))
    async with redis.asyncio.Redis.from_url(redis_server.url) as admin:
        await driving.stop(0)
        stopped = int(await admin.hget(table_key, "v"))
        # The bot's 5 s grace, then a poll a second.
        await _until_version_above(admin, table_key, stopped + 10, seconds=15)


async def test_a_create_racing_its_own_retry_makes_one_table(
    make_server, connect, redis_server
) -> None:
    # The first attempt claims the request id, and its create is slow to reach Redis; a retry
    # on another replica, answered from the claim, makes the table first. The first attempt's
    # create then finds the id taken: it must answer as the retry did, not give the claim up
    # (the next retry would make a second table).
    slow = await make_server(store="redis", redis_url=redis_server.url)
    other = connect(await make_server(store="redis", redis_url=redis_server.url))
    run, gate = slow.store._run, asyncio.Event()

    async def slow_create(*commands: Any, **options: Any) -> Any:
        if any(command[:2] == ("EVALSHA", redis_store._CREATE.sha) for command in commands):
            await gate.wait()
        return await run(*commands, **options)

    slow.store._run = slow_create  # type: ignore[method-assign]
    request = api.CreateTableRequest(table=pb.Table(display_name="raced"), request_id="racing")
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        first = asyncio.ensure_future(connect(slow).stub.CreateTable(request))
        for _ in range(250):  # 5 s at most
            if await admin.exists(keys.create_request("racing")):
                break
            await asyncio.sleep(0.02)
        retried = await other.stub.CreateTable(request)
        gate.set()
        assert await first == retried
        assert await other.stub.CreateTable(request) == retried
        assert len([key async for key in admin.scan_iter(match="hearts:{*}:t")]) == 1
    finally:
        gate.set()
        await admin.aclose()


async def test_a_late_retry_does_not_make_a_table_that_may_have_expired(
    make_server, connect, redis_server
) -> None:
    # The claim outlives a finished game's table (idle TTL against finished TTL): past the
    # shortest life a table can have, a claim without its table may be one that expired, and a
    # retry then makes nothing.
    dying = await make_server(
        store="redis", redis_url=redis_server.url, finished_table_ttl_seconds=1
    )
    other = connect(
        await make_server(store="redis", redis_url=redis_server.url, finished_table_ttl_seconds=1)
    )
    _lose_redis_before_the_table(dying)
    request = api.CreateTableRequest(table=pb.Table(), request_id="late")
    await failure(connect(dying).stub.CreateTable(request))
    await asyncio.sleep(1.1)
    created = await other.stub.CreateTable(request)  # the claim's answer, as always
    refusal = await failure(other.stub.GetTable(api.GetTableRequest(name=created.view.table.name)))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_a_table_of_bots_whose_first_driver_never_started_is_driven(
    make_server, connect, redis_server
) -> None:
    # The replica that made the table died before it drove it (here: it never starts drivers
    # of its own): the create alone made the table due.
    server = await make_server(store="redis", redis_url=redis_server.url)
    server.app._maybe_drive = lambda record: None  # type: ignore[method-assign]
    table_key = keys.table(await _random_bots_table(connect(server)))
    async with redis.asyncio.Redis.from_url(redis_server.url) as admin:
        # The bot's 5 s grace, then a poll a second (20 s: once timed out at 10 s on a machine
        # busy with other builds).
        await _until_version_above(admin, table_key, 5, seconds=20)


async def test_a_due_table_found_gone_leaves_the_due_set(
    make_server, connect, redis_server
) -> None:
    # A table that expires is due until some process finds it gone (expiry runs no script).
    server = await make_server(store="redis", redis_url=redis_server.url)
    created = await connect(server).create()
    table_id = created.view.table.name.removeprefix("tables/")
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    try:
        await admin.delete(keys.table(table_id), keys.events(table_id), keys.requests(table_id))
        await admin.zadd(keys.DUE, {table_id: 0})
        for _ in range(50):  # 10 s at most: a poll a second
            if await admin.zscore(keys.DUE, table_id) is None:
                break
            await asyncio.sleep(0.2)
        else:
            raise AssertionError("the gone table stayed due")
    finally:
        await admin.aclose()


async def test_two_replicas_driving_one_table_of_bots_settle_on_one(
    make_server, connect, redis_server
) -> None:
    # A replica that took a table over (its driver stalled past the bot's grace, and another
    # claimed it among the due tables) and the one that drove it before both drive it when the
    # first wakes up. The compare-and-set keeps the game right, but they raced on every move
    # for the rest of the game, each commit computed twice. The one that loses a race steps
    # back now.
    servers = [await make_server(store="redis", redis_url=redis_server.url) for _ in range(2)]
    lost: list[str] = []
    for server in servers:

        async def counting(*args: Any, _commit: Any = server.store.commit, **kwargs: Any) -> Any:
            result = await _commit(*args, **kwargs)
            if result.outcome is CommitOutcome.CONFLICT:
                lost.append(args[0])
            return result

        server.store.commit = counting  # type: ignore[method-assign]
    table_id = await _random_bots_table(connect(servers[0]))
    servers[1].app._start_driver(table_id)  # as if it had taken the table over
    async with redis.asyncio.Redis.from_url(redis_server.url) as admin:
        # The game ends at about 140 rounds, one a commit.
        await _until_version_above(admin, keys.table(table_id), 100, seconds=20)
    assert len(lost) <= 3, f"{len(lost)} lost races"


async def test_streams_cut_by_a_lost_store_say_so(make_server, connect, redis_server) -> None:
    # When the server's live connection to Redis breaks, batches may have been missed, so its
    # watchers are cut to resume from their last sequence. They were told STREAM_LAGGED ("this
    # stream fell behind"), which blames the client; the store was lost.
    hearts = connect(await make_server(store="redis", redis_url=redis_server.url))
    created = await hearts.create()
    watcher = hearts.watch(created.view.table.name)
    await read_until(watcher, lambda message: message.HasField("snapshot"))
    await asyncio.to_thread(redis_server.restart)
    refusal = await failure(read_until(watcher, lambda message: False))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    assert "resume" in refusal.message


async def test_a_create_whose_replica_died_after_claiming_its_id_is_made_by_the_retry(
    make_server, connect, redis_server
) -> None:
    # A create with a request id claims the id, then makes the table: two round trips. A replica
    # that died in between (or lost Redis) left a claim naming a table that was never made, and
    # every retry (for the idle TTL) was answered with that name: GetTable and JoinTable then
    # said TABLE_NOT_FOUND. Here the first replica loses Redis the moment the claim is taken.
    dying = await make_server(store="redis", redis_url=redis_server.url)
    other = connect(await make_server(store="redis", redis_url=redis_server.url))
    _lose_redis_before_the_table(dying)
    table = pb.Table(
        display_name="survivor",
        rules=pb.Rules(target_score=50),
        seats=[
            pb.Seat(seat=seat, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM)
            for seat in (1, 2, 3)
        ],
    )
    request = api.CreateTableRequest(table=table, request_id="claimed-then-died")
    refusal = await failure(connect(dying).stub.CreateTable(request))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAVAILABLE, "STORE_UNAVAILABLE")
    created = await other.stub.CreateTable(request)
    name = created.view.table.name
    view = (await other.stub.GetTable(api.GetTableRequest(name=name))).view
    assert view.table == created.view.table  # made as the claim's answer shows it
    assert [seat.occupant for seat in view.table.seats] == [
        pb.SEAT_OCCUPANT_EMPTY, *[pb.SEAT_OCCUPANT_BOT] * 3,
    ]  # fmt: skip
    assert await other.stub.CreateTable(request) == created  # and only once
    joined = await other.join(name, 0)
    assert joined.seat == 0
    listed = await other.stub.ListTables(api.ListTablesRequest())
    assert name in [table.name for table in listed.tables]  # listed, as asked


@pytest.mark.parametrize(
    "refused",
    ["zadd", "hset"],
    ids=["the listing refused, the table made", "the table refused, the listing written"],
)
async def test_a_create_redis_refuses_in_part_leaves_nothing_a_retry_would_trust(
    make_server, connect, redis_server, refused: str
) -> None:
    # A create is the table (a script) and its listing (commands on the indexes, another slot)
    # in one round trip, after the request id's claim. At maxmemory Redis may take one and
    # refuse the other. The claim used to answer the retry with whatever the first attempt
    # named: a table missing from ListTables for good, or a table that was never made. Here
    # an ACL refuses one command of the create, every time, until the retry.
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    await admin.acl_setuser(
        "hearts", enabled=True, passwords=["+pw"], keys=["*"], channels=["*"],
        commands=["+@all", f"-{refused}"],
    )  # fmt: skip
    try:
        url = redis_server.url.replace("redis://", "redis://hearts:pw@", 1)
        hearts = connect(await make_server(store="redis", redis_url=url))
        request = api.CreateTableRequest(table=pb.Table(display_name="listed"), request_id="c-1")
        refusal = await failure(hearts.stub.CreateTable(request))
        assert refusal.code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNAVAILABLE)
        tables = [k async for k in admin.scan_iter(match="hearts:{*}:t")]
        assert tables == []  # nothing made, or made and taken back
        async for leftover in admin.scan_iter(match="hearts:{*}:e"):
            assert await admin.pttl(leftover) > 0  # a failed script's events expire
        await admin.acl_setuser("hearts", enabled=True, commands=[f"+{refused}"])
        created = await hearts.stub.CreateTable(request)
        name = created.view.table.name
        assert (await hearts.stub.GetTable(api.GetTableRequest(name=name))).view.table.name == name
        listed = await hearts.stub.ListTables(api.ListTablesRequest())
        assert name in [table.name for table in listed.tables]
        assert await hearts.stub.CreateTable(request) == created  # the claim answers now
    finally:
        await admin.acl_deluser("hearts")
        await admin.aclose()
