"""No seat ever receives a card of another seat's hand before that card is played.

Seeded games with four human seats are played through the API while the test records every
message each seat receives: its GetTable views, its mutation responses, the MoveRejection of
its refused moves, and every message of its own WatchTable stream (plus a spectator's stream).
At game over, ``game_history`` reveals each round's deals and passes: the ground truth. Every
``hearts.v1.Card`` inside each recorded message is then found by walking the message's fields and
checked according to where it sits:

* in a hand, passed/received cards, legal cards, a MoveRejection, or a private event
  (``hand_dealt``, ``cards_passed``, ``cards_received``): it must be the receiving seat's own card
  of that round (dealt to it, or passed to it), and a private event must be addressed to it;
* in a trick or a ``card_played`` / ``hearts_broken`` event: the seat named must have played it
  in that round;
* in ``game_history``: only once the game is over;
* anywhere else: the test fails, so a new field that carries cards must be classified here.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from hearts.v1 import table_pb2 as pb

from .conftest import event_kind, key, read_until, rejected

pytestmark = pytest.mark.timeout(120)

Card = tuple[int, int]
PRIVATE_FIELDS = {
    ("TableView", "hand"),
    ("TableView", "passed_cards"),
    ("TableView", "received_cards"),
    ("TableView", "legal_cards"),
    ("MoveRejection", "legal_cards"),
    ("HandDealtEvent", "cards"),
    ("CardsPassedEvent", "cards"),
    ("CardsReceivedEvent", "cards"),
}
PLAYED_FIELDS = {("PlayedCard", "card"), ("CardPlayedEvent", "card"), ("HeartsBrokenEvent", "card")}
HISTORY_FIELDS = {("SeatCards", "cards"), ("CardPass", "cards")}


@dataclasses.dataclass
class Received:
    """One message a seat (None: the spectator) received, and the round it belongs to."""

    source: str
    message: Message
    round_number: int


@dataclasses.dataclass
class Truth:
    """What the game history says about one round."""

    dealt: dict[int, set[Card]]
    passed: dict[int, set[Card]]
    received: dict[int, set[Card]]
    plays: set[tuple[int, Card]]


def ground_truth(history: list[pb.RoundHistory]) -> dict[int, Truth]:
    truth = {}
    for round_history in history:
        dealt = {deal.seat: {key(c) for c in deal.cards} for deal in round_history.deals}
        passed = {seat: set() for seat in range(4)}
        received = {seat: set() for seat in range(4)}
        for give in round_history.passes:
            passed[give.from_seat] |= {key(c) for c in give.cards}
            received[give.to_seat] |= {key(c) for c in give.cards}
        plays = {
            (played.seat, key(played.card))
            for trick in round_history.tricks
            for played in trick.cards
        }
        assert len(plays) == 52
        truth[round_history.round_number] = Truth(dealt, passed, received, plays)
    return truth


def cards_in(
    message: Message, parents: tuple[Message, ...] = ()
) -> Iterator[tuple[tuple[Message, ...], str, pb.Card]]:
    """Every Card inside ``message``: its ancestors, the field holding it, and the card."""
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        for item in value if field.is_repeated else (value,):
            if field.message_type.full_name == "hearts.v1.Card":
                yield (*parents, message), field.name, item
            else:
                yield from cards_in(item, (*parents, message))


def check_message(seat: int | None, received: Received, truth: dict[int, Truth]) -> int:
    """Check every card of one received message; returns how many cards it held."""
    where = f"seat {seat} {received.source} round {received.round_number}: {received.message}"
    count = 0
    for parents, field, found in cards_in(received.message):
        count += 1
        holder = parents[-1]
        place = (holder.DESCRIPTOR.name, field)
        card = key(found)
        round_number = received.round_number
        in_history = False
        for ancestor in parents:
            if isinstance(ancestor, pb.RoundHistory):
                round_number, in_history = ancestor.round_number, True
            elif isinstance(ancestor, pb.TableView):
                round_number = ancestor.table.round_number
        facts = truth[round_number]
        if in_history:
            assert place in HISTORY_FIELDS | PLAYED_FIELDS, where
            view = next(a for a in reversed(parents) if isinstance(a, pb.TableView))
            assert view.table.phase == pb.PHASE_GAME_OVER, f"history before the end: {where}"
        elif place in PRIVATE_FIELDS:
            assert seat is not None, f"a spectator got a private card {found}: {where}"
            own = facts.dealt[seat] | facts.received[seat]
            assert card in own, f"{found} is not seat {seat}'s card: {where}"
            if place in {("TableView", "passed_cards"), ("CardsPassedEvent", "cards")}:
                assert card in facts.passed[seat], where
            if place in {("TableView", "received_cards"), ("CardsReceivedEvent", "cards")}:
                assert card in facts.received[seat], where
            if place == ("HandDealtEvent", "cards"):
                assert card in facts.dealt[seat], where
            if holder.DESCRIPTOR.name.endswith("Event"):
                assert holder.seat == seat, f"a private event for seat {holder.seat}: {where}"
        elif place in PLAYED_FIELDS:
            assert (holder.seat, card) in facts.plays, (
                f"seat {holder.seat} never played it: {where}"
            )
        else:
            raise AssertionError(f"a card in an unclassified field {place}: {where}")
    return count


def check_views_hide_history(received: Received) -> None:
    views = []
    if isinstance(received.message, pb.TableView):
        views.append(received.message)
    elif hasattr(received.message, "view"):
        views.append(received.message.view)
    elif getattr(received.message, "snapshot", None) is not None and received.message.HasField(
        "snapshot"
    ):
        views.append(received.message.snapshot)
    for view in views:
        if view.table.phase != pb.PHASE_GAME_OVER:
            assert not view.game_history, f"game_history before the end: {received.source}"
            assert not view.table.HasField("deck_seed"), f"deck_seed before the end: {view}"


def stream_rounds(messages: list[Any]) -> list[Received]:
    """Watch messages, each with the round it belongs to (from snapshots and round_started)."""
    out = []
    current = 0
    for message in messages:
        if message.HasField("snapshot"):
            current = message.snapshot.table.round_number
        elif event_kind(message) == "round_started":
            current = message.event.round_started.round_number
        out.append(Received("stream", message, current))
    return out


async def play_recorded_game(hearts, seed: int, target_score: int):
    """Play one seeded game; returns (final history, what each seat received)."""
    created = await hearts.create(deck_seed=seed, target_score=target_score)
    name = created.view.table.name
    inbox: dict[int | None, list[Received]] = {seat: [] for seat in (None, 0, 1, 2, 3)}
    inbox[None].append(Received("create", created, 0))
    tokens = {}
    watchers = {}
    for seat in range(4):
        joined = await hearts.join(name, seat, player=f"p{seat}")
        tokens[seat] = joined.seat_token
        inbox[seat].append(Received("join", joined, joined.view.table.round_number))
        # From the very first event: a resume from 0 replays the log through the seat's filter.
        watchers[seat] = hearts.watch(name, joined.seat_token, after_sequence=0)
    watchers[None] = hearts.watch(name)
    rng = random.Random(seed)

    def on_response(seat: int, message: Any) -> None:
        view = message if isinstance(message, pb.TableView) else message.view
        inbox[seat].append(Received(type(message).__name__, message, view.table.round_number))

    async def try_illegal(seat: int, view: pb.TableView) -> None:
        if rng.random() > 0.2:
            return
        if view.table.phase == pb.PHASE_PASSING:
            call = hearts.pass_cards(name, tokens[seat], view.hand[:2])
        else:
            legal = {key(c) for c in view.legal_cards}
            illegal = [c for c in view.hand if key(c) not in legal]
            if not illegal:
                return
            call = hearts.play(name, tokens[seat], rng.choice(illegal))
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        refusal = rejected(caught.value)
        assert refusal.move is not None
        inbox[seat].append(Received("MoveRejection", refusal.move, view.table.round_number))

    await hearts.play_out(name, tokens, rng=rng, before_move=try_illegal, on_response=on_response)
    for seat, watcher in watchers.items():
        messages = await read_until(watcher, lambda m: event_kind(m) == "game_over")
        watcher.cancel()
        inbox[seat].extend(stream_rounds(messages))
    for seat in (None, 0, 1, 2, 3):
        final = await hearts.view(name, None if seat is None else tokens[seat])
        inbox[seat].append(Received("final", final, final.table.round_number))
    history = list(final.game_history)
    return history, inbox


@pytest.mark.parametrize(
    ("store", "games"),
    [("memory", 20), pytest.param("redis", 1, marks=pytest.mark.redis)],
)
async def test_no_seat_sees_another_seats_cards_before_they_are_played(
    store, games, make_server, connect
) -> None:
    hearts = connect(await make_server(store=store))
    checked = 0
    for seed in range(games):
        history, inbox = await play_recorded_game(hearts, 1000 + seed, target_score=30)
        truth = ground_truth(history)
        for seat, messages in inbox.items():
            kinds = {event_kind(m.message) for m in messages if m.source == "stream"}
            assert "game_over" in kinds
            if seat is not None:
                assert "hand_dealt" in kinds, f"seed {1000 + seed}: seat {seat} got no deal"
            for received in messages:
                check_views_hide_history(received)
                try:
                    checked += check_message(seat, received, truth)
                except AssertionError as error:
                    raise AssertionError(f"deck seed {1000 + seed}: {error}") from None
    assert checked > games * 1000
