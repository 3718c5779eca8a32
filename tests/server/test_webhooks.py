"""Webhooks: a finished game's result posted to the app's backend, signed, at least once.

A receiver on loopback (an HTTP server in a thread) records what it is sent and answers with the
status codes the test gives it.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from typing import Any

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_server.store.base import OutboxItem
from hearts_server.store.memory import MemoryStore
from hearts_server.webhooks import WebhookSender, signature

from ..webhook_receiver import Receiver
from .conftest import WEBHOOK_SECRET, Hearts, ServerFactory, webhook_server

SECRET = WEBHOOK_SECRET
HEURISTIC = pb.BOT_LEVEL_HEURISTIC


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    """Waits between attempts, and polls, in tens of milliseconds."""
    monkeypatch.setattr(WebhookSender, "FIRST_WAIT_SECONDS", 0.05)
    monkeypatch.setattr(WebhookSender, "POLL_SECONDS", 0.05)


async def one_player_game(hearts: Hearts, **create: Any) -> str:
    """A finished one-round game of a player (seat 0) and three bots; the table's name."""
    seated = await hearts.seated(
        (0,), bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, target_score=1, **create
    )
    await hearts.play_out(seated.name, seated.tokens)
    return seated.name


async def test_a_seeded_game_is_posted_as_seeded(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    receiver: Receiver,
) -> None:
    # Its creator chose the deck seed and could recompute every hand: an app must not rank it.
    hearts = connect(await webhook_server(make_server, store_kind, receiver))
    await one_player_game(hearts, deck_seed=11)
    await receiver.until(1)
    assert json.loads(receiver.posts[0][1])["seeded"] is True


async def test_a_finished_game_is_posted_signed(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    receiver: Receiver,
) -> None:
    server = await webhook_server(make_server, store_kind, receiver)
    hearts = connect(server)
    name = await one_player_game(hearts)
    await receiver.until(1)
    headers, body = receiver.posts[0]
    # The signature: HMAC-SHA256 of "<t>.<body>", as a receiver checks it.
    parts = dict(part.split("=", 1) for part in headers["hearts-signature"].split(","))
    expected = hmac.new(SECRET.encode(), f"{parts['t']}.".encode() + body, hashlib.sha256)
    assert hmac.compare_digest(parts["v1"], expected.hexdigest())
    assert abs(int(parts["t"]) - time.time()) < 60
    assert headers["content-type"] == "application/json"
    document = json.loads(body)
    table = (await hearts.view(name)).table
    table_id, created = name.removeprefix("tables/"), table.create_time.ToMilliseconds()
    assert headers["hearts-webhook-id"] == document["id"] == f"{table_id}.{created}.game_over"
    assert headers["hearts-webhook-attempt"] == "1"
    assert document["type"] == "game.over"
    assert document["table"] == name
    assert document["rules"]["target_score"] == 1
    assert document["seeded"] is table.seeded is False  # the server's own shuffles
    assert document["rounds"] == table.round_number
    assert [seat["total_score"] for seat in document["seats"]] == list(table.total_scores)
    assert (document["winners"], document["losers"]) == (
        list(table.result.winners),
        list(table.result.losers),
    )
    assert document["seats"][0] == {
        "seat": 0,
        "occupant": "HUMAN",
        "player_id": None,
        "player_display_name": "human 0",
        "bot_level": None,
        "stand_in": False,
        "total_score": table.total_scores[0],
    }
    assert document["seats"][1]["bot_level"] == "HEURISTIC"
    await asyncio.sleep(0.3)
    assert len(receiver.posts) == 1  # sent once
    assert await server.store.outbox_size() == 0


async def test_a_receiver_that_fails_gets_it_again_later(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    quick: None,
) -> None:
    receiver = Receiver(statuses=(500, 503))
    try:
        server = await webhook_server(make_server, store_kind, receiver)
        await one_player_game(connect(server))
        await receiver.until(3)
        ids = {headers["hearts-webhook-id"] for headers, _ in receiver.posts}
        assert len(ids) == 1
        attempts = [headers["hearts-webhook-attempt"] for headers, _ in receiver.posts]
        assert attempts == ["1", "2", "3"]
        await asyncio.sleep(0.3)
        assert len(receiver.posts) == 3
        assert await server.store.outbox_size() == 0
        assert server.webhooks is not None
        assert (server.webhooks.delivered, server.webhooks.retried) == (1, 2)
    finally:
        receiver.close()


async def test_a_receiver_that_never_answers_2xx_is_given_up_on(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    quick: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(WebhookSender, "MAX_ATTEMPTS", 3)
    receiver = Receiver(statuses=(500,) * 100)
    try:
        server = await webhook_server(make_server, store_kind, receiver)
        await one_player_game(connect(server))
        await receiver.until(3)
        await asyncio.sleep(0.3)
        assert len(receiver.posts) == 3
        assert await server.store.outbox_size() == 0
        assert server.webhooks is not None
        assert server.webhooks.dropped == 1
    finally:
        receiver.close()


async def test_games_of_bots_only_send_nothing(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    receiver: Receiver,
) -> None:
    server = await webhook_server(make_server, store_kind, receiver)
    hearts = connect(server)
    bots = {seat: HEURISTIC for seat in range(4)}
    created = await hearts.create(bots=bots, target_score=30)
    await hearts.until_game_over(created.view.table.name)
    assert await server.store.outbox_size() == 0
    assert receiver.posts == []


@pytest.mark.redis
async def test_replicas_send_a_game_once(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    receiver: Receiver,
) -> None:
    one = await webhook_server(make_server, "redis", receiver)
    await webhook_server(make_server, "redis", receiver)  # a second sender on the outbox
    await one_player_game(connect(one))
    await receiver.until(1)
    await asyncio.sleep(1.5)  # both senders poll the outbox meanwhile
    assert len(receiver.posts) == 1


async def test_an_item_whose_sender_died_is_sent_once_its_lease_runs_out(
    receiver: Receiver,
) -> None:
    store = MemoryStore()
    await store.create("01table", b"{}", [], open_seats=False)
    item = OutboxItem("01table.game_over", b'{"id": "01table.game_over"}')
    await store.commit("01table", expected_version=1, data=b"{}", events=[], outbox=(item, 0))
    now = [1_000.0]
    # A sender claims it and dies before posting: the item is leased to it.
    [claimed] = await store.outbox_claim(now_ms=1_000_000, lease_ms=60_000, limit=1)
    assert (claimed.id, claimed.attempts) == (item.id, 1)
    sender = WebhookSender(store, url=receiver.url, secret=b"s" * 32, clock=lambda: now[0])
    try:
        assert await sender.send_due() == 0  # still leased
        now[0] += 61
        assert await sender.send_due() == 1
    finally:
        await sender.aclose()
    assert [body for _, body in receiver.posts] == [item.payload]
    headers, _ = receiver.posts[0]
    assert headers["hearts-signature"] == signature(b"s" * 32, 1_061, item.payload)
    # The dead sender's delivery counts: the receiver may have had it (and this is its retry).
    assert headers["hearts-webhook-attempt"] == "2"
    assert await store.outbox_size() == 0


async def test_no_answer_from_a_receiver_stops_the_sender(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    quick: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A redirect to nowhere (not followed: a failed attempt), then a post that takes longer
    # than its limit (cut, a failed attempt), then 200.
    monkeypatch.setattr(WebhookSender, "TIMEOUT_SECONDS", 0.5)
    receiver = Receiver(statuses=(302, 200), delays=(0, 5))
    try:
        server = await webhook_server(make_server, "memory", receiver)
        hearts = connect(server)
        started = time.monotonic()
        await one_player_game(hearts)
        await receiver.until(3)
        assert time.monotonic() - started < 5  # the slow post was cut at its limit
        attempts = [headers["hearts-webhook-attempt"] for headers, _ in receiver.posts]
        assert attempts == ["1", "2", "3"]
        await asyncio.sleep(0.3)
        assert await server.store.outbox_size() == 0
        # The sender lives on: the next game is sent too.
        await one_player_game(hearts)
        await receiver.until(4)
    finally:
        receiver.close()


def _turn_item(table: str, made_s: float) -> OutboxItem:
    made = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(made_s)) + ".000Z"
    item_id = f"{table}.5.turn.9"
    return OutboxItem(
        item_id, json.dumps({"id": item_id, "type": "turn.started", "time": made}).encode()
    )


async def test_a_turn_notice_over_a_minute_old_is_dropped_unsent(receiver: Receiver) -> None:
    # Behind a receiver that hangs, the sender falls behind the turns (each post takes its whole
    # 10 s): a notice that comes up more than a minute after its turn began is dropped, so the
    # outbox stays bounded. Before, 896 items were queued after 150 s, none ever dropped.
    store = MemoryStore()
    now = 1_800_000_000.0
    for table, age in (("01stale", 61.0), ("01fresh", 59.0)):
        await store.create(table, b"{}", [], open_seats=False)
        item = _turn_item(table, now - age)
        await store.commit(table, expected_version=1, data=b"{}", events=[], outbox=(item, 0))
    sender = WebhookSender(store, url=receiver.url, secret=b"s" * 32, clock=lambda: now)
    try:
        assert await sender.send_due() == 1  # the fresh one only
    finally:
        await sender.aclose()
    assert [json.loads(body)["id"] for _, body in receiver.posts] == ["01fresh.5.turn.9"]
    assert (sender.delivered, sender.dropped) == (1, 1)
    assert await store.outbox_size() == 0


async def test_a_post_that_hangs_does_not_hold_up_the_next_items(quick: None) -> None:
    # Up to 16 posts are in flight, and each that ends makes room at once: before, the sender
    # waited for its whole batch, so one hanging post held up every item behind it.
    receiver = Receiver(delays=(3,))
    store = MemoryStore()
    for number in range(3):
        table = f"01table{number}"
        await store.create(table, b"{}", [], open_seats=False)
        item = OutboxItem(f"{table}.game_over", b'{"n": %d}' % number)
        await store.commit(table, expected_version=1, data=b"{}", events=[], outbox=(item, 0))
    sender = WebhookSender(store, url=receiver.url, secret=b"s" * 32)
    try:
        sender.start()
        await receiver.until(1)  # the first post hangs for 3 s
        for number in (3, 4):  # games that end meanwhile
            table = f"01table{number}"
            await store.create(table, b"{}", [], open_seats=False)
            item = OutboxItem(f"{table}.game_over", b'{"n": %d}' % number)
            await store.commit(table, expected_version=1, data=b"{}", events=[], outbox=(item, 0))
            sender.wake()
        started = time.monotonic()
        await receiver.until(5)
        assert time.monotonic() - started < 1.5  # not after the hanging post's 3 s
    finally:
        await sender.aclose()
        receiver.close()


async def test_an_error_in_a_post_is_a_failed_attempt(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = MemoryStore()
    await store.create("01table", b"{}", [], open_seats=False)
    item = OutboxItem("01table.game_over", b"{}")
    await store.commit("01table", expected_version=1, data=b"{}", events=[], outbox=(item, 0))
    sender = WebhookSender(store, url=receiver.url, secret=b"s" * 32)

    def broken(*args: object) -> None:
        raise RuntimeError("something nobody expected")

    monkeypatch.setattr(sender, "_post", broken)
    try:
        assert await sender.send_due() == 1
        assert (sender.delivered, sender.retried) == (0, 1)
        assert await store.outbox_size() == 1  # due again later
    finally:
        await sender.aclose()
