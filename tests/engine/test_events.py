"""Events: the sequence a round produces, and who may see each one."""

from __future__ import annotations

import dataclasses
import json
import random

import pytest

from hearts_engine import (
    DECK,
    SEATS,
    CardPlayed,
    CardsPassed,
    CardsReceived,
    Deal,
    Event,
    GameOver,
    HandDealt,
    HeartsBroken,
    PassCards,
    PassDirection,
    Phase,
    PlayCard,
    RoundScored,
    RoundStarted,
    Rules,
    SeatPassed,
    State,
    TrickWon,
    new_game,
    step,
    visible_to,
)

from .conftest import (
    HOLD,
    assert_events_hide_others,
    cards,
    deal,
    deck_for_hands,
    game_steps,
    lowest_policy,
)

HANDS = (
    "4D 5D 6D 7D 8D 8H 9H TH JH JS QS KS AS",
    "2C 3C 4C 5C 6C 9D TD JD QD QH KH AH 2S",
    "7C 8C 9C TC JC KD AD 2H 3H 3S 4S 5S 6S",
    "QC KC AC 2D 3D 4H 5H 6H 7H 7S 8S 9S TS",
)
PASSES = ("QS KS AS", "2C QH AH", "TC JC AD", "QC KC AC")
PRIVATE = (HandDealt, CardsPassed, CardsReceived)


def stepped(state: State, action: object) -> tuple[State, tuple[Event, ...]]:
    return step(state, action)  # type: ignore[arg-type]


def test_deal_events_start_the_round_and_give_each_seat_its_hand() -> None:
    state, events = stepped(new_game(), Deal(DECK))
    assert events[0] == RoundStarted(0, 0, PassDirection.LEFT)
    assert events[1:] == tuple(HandDealt(seat, state.hand(seat)) for seat in SEATS)


def test_pass_events_reveal_who_to_everyone_and_what_to_the_passer_only() -> None:
    state = deal(HANDS, rules=Rules())
    state, events = stepped(state, PassCards(2, cards(PASSES[2])))
    assert events == (SeatPassed(2), CardsPassed(2, 3, cards("TC JC AD")))
    assert events[0].audience is None
    assert events[0].to_dict() == {"kind": "SEAT_PASSED", "seat": 2}
    assert [f.name for f in dataclasses.fields(SeatPassed)] == ["seat"]
    assert events[1].audience == 2


def test_fourth_pass_delivers_the_cards_to_each_seat_privately() -> None:
    state = deal(HANDS, rules=Rules(), round_index=1)  # across
    for seat in (0, 1, 2):
        state, _ = stepped(state, PassCards(seat, cards(PASSES[seat])))
    state, events = stepped(state, PassCards(3, cards(PASSES[3])))
    assert events[:2] == (SeatPassed(3), CardsPassed(3, 1, cards(PASSES[3])))
    received = events[2:]
    assert received == tuple(
        CardsReceived(seat, (seat + 2) % 4, tuple(sorted(cards(PASSES[(seat + 2) % 4]))))
        for seat in SEATS
    )
    assert [event.audience for event in received] == [0, 1, 2, 3]


def test_private_events_are_visible_to_their_seat_only() -> None:
    for _, _, after, events in game_steps(4, Rules(target_score=40), with_events=True):
        for event in events:
            if isinstance(event, PRIVATE):
                assert event.audience == event.seat
                assert [visible_to(event, s) for s in SEATS] == [s == event.seat for s in SEATS]
                assert not visible_to(event, None)
            else:
                assert event.audience is None
                assert all(visible_to(event, s) for s in (*SEATS, None))
        assert_events_hide_others(after, events, "seed=4")


def test_round_event_sequence() -> None:
    state = new_game(Rules())
    kinds: list[str] = []
    state, events = stepped(state, Deal(deck_for_hands(HANDS, 0)))
    kinds += [e.kind for e in events]
    for seat in SEATS:
        state, events = stepped(state, PassCards(seat, cards(PASSES[seat])))
        kinds += [e.kind for e in events]
    played: list[Event] = []
    while state.phase == Phase.PLAYING:
        state, events = stepped(state, lowest_policy(state, random.Random(0)))
        played.extend(events)
    kinds += [e.kind for e in played]
    expected = ["ROUND_STARTED"] + ["HAND_DEALT"] * 4
    expected += ["SEAT_PASSED", "CARDS_PASSED"] * 4 + ["CARDS_RECEIVED"] * 4
    assert kinds[: len(expected)] == expected
    rest = [k for k in kinds[len(expected) :] if k != "HEARTS_BROKEN"]
    assert rest == (["CARD_PLAYED"] * 4 + ["TRICK_WON"]) * 13 + ["ROUND_SCORED"]
    assert kinds.count("HEARTS_BROKEN") == 1
    tricks = [e for e in played if isinstance(e, TrickWon)]
    assert [(t.leader, t.cards, t.winner) for t in tricks] == [
        (t.leader, t.cards, t.winner) for t in state.rounds[-1].tricks
    ]
    assert [t.trick_index for t in tricks] == list(range(13))
    plays = [e for e in played if isinstance(e, CardPlayed)]
    assert [p.trick_index for p in plays] == [i // 4 for i in range(52)]


def test_hearts_broken_event_follows_the_first_heart() -> None:
    state = deal(
        (
            "2C 3C 4C 5C 2D 3D 4D 5D 6D 2S 3S 4S 5S",
            "6C 7C 8C 9C 7D 8D 9D TD 2H 3H 4H 5H 6H",
            "TC JC QC KC AC JD QD KD AD 7H 8H 9H TH",
            "6S 7S 8S 9S TS JS QS KS AS JH QH KH AH",
        )
    )
    events: list[Event] = []
    for card in cards("2C 6C TC 6S JD AH"):
        state, new = stepped(state, PlayCard(state.turn, card))
        events.extend(new)
    assert events[-2:] == [CardPlayed(3, cards("AH")[0], 1), HeartsBroken(3, cards("AH")[0])]


def test_queen_breaks_hearts_event_only_with_the_flag() -> None:
    hands = (
        "2C 3C 4C 5C 2D 3D 4D 5D 6D 2S 3S 4S 5S",
        "6C 7C 8C 9C 7D 8D 9D TD 2H 3H 4H 5H 6H",
        "TC JC QC KC AC JD QD KD AD 7H 8H 9H TH",
        "6S 7S 8S 9S TS JS QS KS AS JH QH KH AH",
    )
    for flag in (False, True):
        state = deal(hands, rules=dataclasses.replace(HOLD, queen_breaks_hearts=flag))
        kinds = []
        for card in cards("2C 6C TC 6S JC QS"):
            state, new = stepped(state, PlayCard(state.turn, card))
            kinds += [e.kind for e in new]
        assert ("HEARTS_BROKEN" in kinds) is flag


def test_game_over_is_the_last_event() -> None:
    last: tuple[Event, ...] = ()
    for _, _, _, events in game_steps(2, Rules(target_score=30), with_events=True):
        last = events
    assert isinstance(last[-1], GameOver)
    assert isinstance(last[-2], RoundScored)


@pytest.mark.parametrize("seed", [0, 1])
def test_events_are_json_dicts_with_a_stable_kind(seed: int) -> None:
    kinds = set()
    for _, _, _, events in game_steps(seed, Rules(target_score=30), with_events=True):
        for event in events:
            data = event.to_dict()
            assert json.loads(json.dumps(data)) == data
            assert data["kind"] == event.kind
            kinds.add(event.kind)
    assert kinds >= {
        "ROUND_STARTED",
        "HAND_DEALT",
        "SEAT_PASSED",
        "CARDS_PASSED",
        "CARDS_RECEIVED",
        "CARD_PLAYED",
        "HEARTS_BROKEN",
        "TRICK_WON",
        "ROUND_SCORED",
        "GAME_OVER",
    }


def test_event_cards_are_written_in_notation() -> None:
    event = CardsPassed(0, 1, cards("QS KS AS"))
    assert event.to_dict() == {
        "kind": "CARDS_PASSED",
        "seat": 0,
        "to_seat": 1,
        "cards": ["QS", "KS", "AS"],
    }
    assert RoundStarted(3, 3, PassDirection.HOLD).to_dict()["pass_direction"] == "HOLD"


def test_events_are_frozen() -> None:
    event = SeatPassed(1)
    with pytest.raises(dataclasses.FrozenInstanceError):
        event.seat = 2  # type: ignore[misc]
