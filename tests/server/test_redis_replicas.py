"""Two server replicas on one Redis behave as one service: any replica serves any table.

The replicas share the token secret and nothing else: no state in the process survives between
calls, writes are compare-and-set on the table's version, and events reach watchers on every
replica through Redis pub/sub. A stopped replica's streams end with UNAVAILABLE, and the client
resumes on another one from its last sequence without a gap or a duplicate.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hearts.v1 import table_pb2 as pb

from .conftest import event_kind, failure, key, names, owing, read_until, rejected

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
    rest = [message async for message in watcher]
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
            seen.append(message)

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
    make_server, connect, redis_server
) -> None:
    await asyncio.to_thread(redis_server.stop)
    server = await make_server(store="redis", redis_url=redis_server.url)
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
