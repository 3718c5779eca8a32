"""Turn notifications: at a table created with ``turn_notifications``, a ``turn.started``
webhook for each move the game starts waiting for from a player (for apps that notify players
who are away).

The receiver (an HTTP server on loopback) records the posts; what they must say is read off the
responses of the moves that caused them.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.store.base import OutboxItem
from hearts_server.store.memory import MemoryStore
from hearts_server.webhooks import WebhookSender

from ..webhook_receiver import Receiver
from .conftest import ServerFactory, failure, webhook_server

HEURISTIC = pb.BOT_LEVEL_HEURISTIC
DOCUMENT_KEYS = {
    "id",
    "type",
    "time",
    "table",
    "display_name",
    "create_time",
    "sequence",
    "phase",
    "round_number",
    "deadline",
    "seats",
}


def _rfc3339(stamp: Any) -> str:
    return stamp.ToDatetime().strftime("%Y-%m-%dT%H:%M:%S.") + f"{stamp.nanos // 1_000_000:03d}Z"


def _asked(table: pb.Table, humans: set[int]) -> tuple[str, list[int]] | None:
    """What a move that left ``table`` asks of the players: its phase and their seats."""
    if table.phase == pb.PHASE_PASSING:
        return "PASSING", sorted(seat.seat for seat in table.seats if not seat.has_passed)
    if table.phase == pb.PHASE_PLAYING:
        assert table.turn_seat in humans  # the bots at this table play inside the move
        return "PLAYING", [table.turn_seat]
    return None


async def test_each_move_asked_of_a_player_is_posted_once(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    receiver: Receiver,
) -> None:
    server = await webhook_server(make_server, store_kind, receiver)
    hearts = connect(server)
    humans = {0, 2}
    seated = await hearts.seated(
        sorted(humans),
        bots={1: HEURISTIC, 3: HEURISTIC},
        target_score=1,
        deck_seed=7,
        turn_timeout_ms=600_000,
        turn_notifications=True,
    )
    start = await hearts.view(seated.name)
    assert start.table.turn_notifications
    # The join that filled the table dealt the first round: both players owe their passes.
    expected = [(start.table, _asked(start.table, humans))]
    passes = 0

    def on_response(seat: int, response: Any) -> None:
        nonlocal passes
        if isinstance(response, pb.TableView):
            return  # a read asks nothing
        passes += isinstance(response, api.PassCardsResponse)
        table = response.view.table
        if table.phase == pb.PHASE_PASSING:
            return  # one seat's pass: the others owe what they owed
        asked = _asked(table, humans)
        if asked is not None:
            expected.append((table, asked))

    end = await hearts.play_out(seated.name, seated.tokens, on_response=on_response)
    assert passes == len(humans)
    await receiver.until(len(expected) + 1)  # and the game's result
    await asyncio.sleep(0.3)
    documents = [json.loads(body) for _, body in receiver.posts]
    assert len(documents) == len(expected) + 1
    turns = sorted(
        (document for document in documents if document["type"] == "turn.started"),
        key=lambda document: document["sequence"],
    )
    assert [document["type"] for document in documents].count("game.over") == 1
    assert len(turns) == len(expected)
    table_id, created = seated.name.removeprefix("tables/"), end.create_time.ToMilliseconds()
    for document, (table, (phase, seats)) in zip(turns, expected, strict=True):
        assert set(document) == DOCUMENT_KEYS  # nothing of anyone's cards
        assert document["id"] == f"{table_id}.{created}.turn.{document['sequence']}"
        assert document["table"] == seated.name
        assert document["create_time"] == _rfc3339(end.create_time)
        assert (document["phase"], [seat["seat"] for seat in document["seats"]]) == (phase, seats)
        assert document["seats"][0] == {
            "seat": seats[0],
            "player_id": None,
            "player_display_name": f"human {seats[0]}",
        }
        assert document["round_number"] == table.round_number
        assert document["deadline"] == _rfc3339(table.turn_deadline)
    assert len({document["id"] for document in turns}) == len(turns)
    assert await server.store.outbox_size() == 0

    # The rematch keeps the setting.
    rematch = await hearts.rematch(seated.name, seated.tokens[0])
    assert rematch.view.table.turn_notifications


async def test_tables_without_the_setting_and_bots_send_no_turns(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    receiver: Receiver,
) -> None:
    server = await webhook_server(make_server, "memory", receiver)
    hearts = connect(server)
    plain = await hearts.seated((0,), bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC})
    moves = 0

    def count(seat: int, response: Any) -> None:
        nonlocal moves
        moves += not isinstance(response, pb.TableView)

    await hearts.play_until(plain.name, plain.tokens, lambda table: moves >= 10, on_response=count)
    # Bots only, with the setting: no player is ever asked for a move.
    bots = await hearts.create(
        bots={seat: HEURISTIC for seat in range(4)}, target_score=30, turn_notifications=True
    )
    await hearts.until_game_over(bots.view.table.name)
    await asyncio.sleep(0.3)
    assert receiver.posts == []
    assert await server.store.outbox_size() == 0


async def test_without_webhooks_the_setting_is_refused_and_nothing_is_created(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    hearts = connect(await make_server(store="memory"))
    refusal = await failure(hearts.create(turn_notifications=True))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "WEBHOOKS_DISABLED",
    )
    listed = await hearts.stub.ListTables(api.ListTablesRequest())
    assert list(listed.tables) == []


async def test_a_turn_is_given_up_on_sooner_than_a_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(WebhookSender, "FIRST_WAIT_SECONDS", 0.02)
    monkeypatch.setattr(WebhookSender, "POLL_SECONDS", 0.02)
    monkeypatch.setattr(WebhookSender, "MAX_ATTEMPTS", 6)
    receiver = Receiver(statuses=(500,) * 100)
    store = MemoryStore()
    sender = WebhookSender(store, url=receiver.url, secret=b"s" * 32)
    try:
        await store.create("01table", b"{}", [], open_seats=False)
        for number, item_id in enumerate(("01table.5.turn.9", "01table.5.game_over")):
            item = OutboxItem(item_id, item_id.encode())
            await store.commit(
                "01table", expected_version=number + 1, data=b"{}", events=[], outbox=(item, 0)
            )
        sender.start()
        await receiver.until(WebhookSender.TURN_MAX_ATTEMPTS + WebhookSender.MAX_ATTEMPTS)
        await asyncio.sleep(0.2)
        attempts: dict[str, int] = {}
        for headers, _ in receiver.posts:
            item_id = headers["hearts-webhook-id"]
            attempts[item_id] = attempts.get(item_id, 0) + 1
        assert attempts == {
            "01table.5.turn.9": WebhookSender.TURN_MAX_ATTEMPTS,
            "01table.5.game_over": WebhookSender.MAX_ATTEMPTS,
        }
        assert sender.dropped == 2
        assert await store.outbox_size() == 0
    finally:
        await sender.aclose()
        receiver.close()


async def test_a_player_who_takes_over_the_seat_the_game_waits_for_is_asked(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
    receiver: Receiver,
) -> None:
    server = await webhook_server(make_server, store_kind, receiver)
    hearts = connect(server)
    seated = await hearts.seated(
        (0, 2),
        bots={1: HEURISTIC, 3: HEURISTIC},
        pass_cards=False,
        turn_timeout_ms=600_000,
        turn_notifications=True,
    )
    name = seated.name
    table = (await hearts.view(name)).table
    turn = table.turn_seat
    other = 2 - turn
    await receiver.until(1)  # the first card's
    # Both players leave: the game waits, the seat to play held by its stand-in bot.
    await hearts.leave(name, seated.tokens[other])
    await hearts.leave(name, seated.tokens[turn])
    await asyncio.sleep(0.3)
    assert len(receiver.posts) == 1
    joined = await hearts.join(name, turn, player="back")
    table = joined.view.table
    assert table.turn_seat == turn
    await receiver.until(2)
    document = json.loads(receiver.posts[1][1])
    assert document["seats"] == [{"seat": turn, "player_id": None, "player_display_name": "back"}]
    assert document["deadline"] == _rfc3339(table.turn_deadline)
    # Taking over a seat that owes nothing asks nobody.
    await hearts.join(name, other, player="also back")
    await asyncio.sleep(0.3)
    assert len(receiver.posts) == 2
