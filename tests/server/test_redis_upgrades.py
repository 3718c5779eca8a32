"""What replicas of another version leave in Redis during a rolling upgrade.

Old and new pods serve side by side for a while (``maxUnavailable: 0``). A record or an event
batch one of them cannot read must cost only that table, with an answer that says what to do, and
must never be overwritten by the replica that could not read it.
"""

from __future__ import annotations

import random

import grpc
import orjson
import pytest
import redis.asyncio

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.store import keys

from .conftest import cards, failure, owing, read_until

pytestmark = [pytest.mark.redis, pytest.mark.timeout(60)]


@pytest.fixture
async def admin(redis_server):
    client = redis.asyncio.Redis.from_url(redis_server.url)
    yield client
    await client.aclose()


async def _rewrite_record(admin, name: str, change) -> bytes:
    """Replace the stored record of table ``name`` by ``change(data)``; the new bytes."""
    key = keys.table(name.removeprefix("tables/"))
    raw = change(await admin.hget(key, "d"))
    await admin.hset(key, "d", raw)
    return raw


def _changed(raw: bytes, key: str, value: object) -> bytes:
    data = orjson.loads(raw)
    data[key] = value
    return orjson.dumps(data)


def _newer_schema(raw: bytes) -> bytes:
    return _changed(raw, "schema", orjson.loads(raw)["schema"] + 1)


async def _listed(hearts) -> list[str]:
    response = await hearts.stub.ListTables(api.ListTablesRequest(page_size=100))
    return [table.name for table in response.tables]


@pytest.mark.parametrize(
    "case",
    [
        (_newer_schema, grpc.StatusCode.UNAVAILABLE, "RECORD_UNSUPPORTED"),
        (lambda raw: raw[: len(raw) // 2], grpc.StatusCode.INTERNAL, "RECORD_UNREADABLE"),
        (
            lambda raw: raw.replace(b'"seats"', b'"chairs"'),
            grpc.StatusCode.INTERNAL,
            "RECORD_UNREADABLE",
        ),
        (
            lambda raw: _changed(raw, "name", 5),
            grpc.StatusCode.INTERNAL,
            "RECORD_UNREADABLE",
        ),
    ],
    ids=["newer-schema", "truncated", "missing-field", "wrong-type"],
)
async def test_a_record_this_version_cannot_read_is_refused_and_left_as_it_is(
    make_server, connect, redis_server, admin, case
) -> None:
    change, code, reason = case
    server = await make_server(store="redis", redis_url=redis_server.url)
    hearts = connect(server)
    other = await hearts.seated(deck_seed=3)
    seated = await hearts.seated(deck_seed=4)
    name = seated.name
    # A replica that has not read the table yet (its record cache would answer otherwise).
    fresh = connect(await make_server(store="redis", redis_url=redis_server.url))
    stored = await _rewrite_record(admin, name, change)

    calls = (
        lambda: fresh.view(name),
        lambda: fresh.view(name, seated.tokens[0]),
        lambda: fresh.pass_cards(name, seated.tokens[0], cards("2C 3C 4C")),
        lambda: fresh.join(name),
        lambda: fresh.leave(name, seated.tokens[1]),
        lambda: fresh.delete(name, seated.creator_token),
    )
    for call in calls:
        refusal = await failure(call())
        assert (refusal.code, refusal.reason) == (code, reason)
    watcher = fresh.watch(name)
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await read_until(watcher, lambda m: True)
    assert ended.value.code() == code
    assert await admin.hget(keys.table(name.removeprefix("tables/")), "d") == stored
    # Listing goes on without it rather than failing for everyone.
    listed = await _listed(fresh)
    assert other.name in listed
    assert name not in listed


async def test_an_undecodable_batch_cuts_the_watchers_of_its_table_only(
    make_server, connect, redis_server, admin
) -> None:
    server = await make_server(store="redis", redis_url=redis_server.url)
    hearts = connect(server)
    first = await hearts.seated(deck_seed=5)
    second = await hearts.seated(deck_seed=6)
    watchers = [hearts.watch(first.name), hearts.watch(second.name)]
    for watcher in watchers:
        await read_until(watcher, lambda m: m.HasField("snapshot"))
    # What a replica of a later version might publish: another format byte.
    channel = keys.notify_channel(first.name.removeprefix("tables/"))
    assert await admin.publish(channel, b"\x02a later format") == 1
    with pytest.raises(grpc.aio.AioRpcError) as ended:
        await read_until(watchers[0], lambda m: False)
    assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
    # The other table's watcher still hears its moves.
    view = await hearts.view(second.name, second.tokens[0])
    await hearts.pass_cards(second.name, second.tokens[0], view.legal_cards[:3])
    heard = await read_until(watchers[1], lambda m: m.event.HasField("seat_passed"))
    assert heard[-1].event.seat_passed.seat == 0
    watchers[1].cancel()


async def test_replicas_writing_schema_2_and_3_in_turn_play_one_game_to_its_end(
    make_server, connect, redis_server, admin
) -> None:
    # The first rollout to a version that writes schema 3 keeps writing schema 2
    # (--record-schema 2) beside pods that read no schema 3; the second writes schema 3. Pods
    # of both settings serve one table's moves in turn, through many rounds.
    old = connect(await make_server(store="redis", redis_url=redis_server.url, record_schema=2))
    new = connect(await make_server(store="redis", redis_url=redis_server.url, record_schema=3))
    seated = await old.seated(deck_seed=11, target_score=40)  # made and joined on schema 2
    name, key = seated.name, keys.table(seated.name.removeprefix("tables/"))
    rng = random.Random(3)
    written = {2: 0, 3: 0}
    table = (await old.view(name)).table
    for _ in range(2000):
        if table.phase == pb.PHASE_GAME_OVER:
            break
        seat = owing(table)[0]
        schema, hearts = rng.choice(((2, old), (3, new)))
        response = await hearts.move(
            name, seated.tokens[seat], await hearts.view(name, seated.tokens[seat]), rng
        )
        table, history = response.view.table, response.view.score_history
        head, rounds = await admin.hmget(key, "d", "f")
        assert orjson.loads(head)["schema"] == schema
        if schema == 2:
            assert rounds is None  # cleared, so that no stale rounds linger
        else:
            assert len(orjson.loads(rounds)) == orjson.loads(head)["game"][-1]
        written[schema] += 1
    assert table.phase == pb.PHASE_GAME_OVER
    assert min(written.values()) > 100
    assert len(history) >= 3
    # Both read the finished game alike, as does a pod that never held the table.
    fresh = connect(await make_server(store="redis", redis_url=redis_server.url))
    views = [await hearts.view(name, seated.tokens[0]) for hearts in (old, new, fresh)]
    assert views[0] == views[1] == views[2]
