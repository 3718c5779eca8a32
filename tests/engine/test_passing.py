"""Passing: exactly three cards, secret and simultaneous, left/across/right/hold."""

from __future__ import annotations

import pytest

from hearts_engine import (
    DECK,
    SEATS,
    Deal,
    IllegalActionError,
    PassCards,
    PassDirection,
    Phase,
    PlayCard,
    Reason,
    Rules,
    apply,
    cards_of,
    deal_hands,
    legal_passes,
    legal_plays,
    seats_to_act,
    view,
)

from .conftest import card_set, cards, deal, hand_text, pass_all, start_round

# DECK in order dealt by seat 0 (see test_dealing).
HANDS = (
    "4D 5D 6D 7D 8D 8H 9H TH JH JS QS KS AS",
    "2C 3C 4C 5C 6C 9D TD JD QD QH KH AH 2S",
    "7C 8C 9C TC JC KD AD 2H 3H 3S 4S 5S 6S",
    "QC KC AC 2D 3D 4H 5H 6H 7H 7S 8S 9S TS",
)
PASSES = ("QS KS AS", "2C QH AH", "TC JC AD", "QC KC AC")


@pytest.mark.parametrize(
    ("round_index", "direction"),
    [(0, PassDirection.LEFT), (1, PassDirection.ACROSS), (2, PassDirection.RIGHT)],
)
def test_passed_cards_go_to_the_seat_in_the_rounds_direction(
    round_index: int, direction: PassDirection
) -> None:
    state = deal(HANDS, rules=Rules(), round_index=round_index)
    assert state.pass_direction == direction
    state = pass_all(state, PASSES)
    assert state.phase == Phase.PLAYING
    for giver in SEATS:
        taker = (giver + direction) % 4
        assert card_set(PASSES[giver]) <= set(state.hand(taker)), (giver, taker)
    for seat in SEATS:
        giver = (seat - direction) % 4
        expected = (card_set(HANDS[seat]) - card_set(PASSES[seat])) | card_set(PASSES[giver])
        assert set(state.hand(seat)) == expected, seat


def test_left_is_the_next_seat_clockwise() -> None:
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    # Seat 0 passed QS KS AS to seat 1 and got QC KC AC from seat 3.
    assert hand_text(state, 1) == "3C 4C 5C 6C 9D TD JD QD KH 2S QS KS AS"
    assert hand_text(state, 0) == "QC KC AC 4D 5D 6D 7D 8D 8H 9H TH JH JS"


def test_nothing_is_exchanged_until_the_fourth_pass() -> None:
    state = deal(HANDS, rules=Rules())
    order = (2, 0, 3, 1)
    for count, seat in enumerate(order[:3], start=1):
        state = apply(state, PassCards(seat, cards(PASSES[seat])))
        assert state.phase == Phase.PASSING
        assert [hand_text(state, s) for s in SEATS] == list(HANDS), f"after {count} passes"
        assert seats_to_act(state) == tuple(s for s in SEATS if s not in order[:count])
        assert all(view(state, s).received == () for s in SEATS)
    state = apply(state, PassCards(1, cards(PASSES[1])))
    assert state.phase == Phase.PLAYING
    assert [hand_text(state, s) for s in SEATS] != list(HANDS)


def test_passes_may_come_in_any_order() -> None:
    forward = pass_all(deal(HANDS, rules=Rules()), PASSES)
    state = deal(HANDS, rules=Rules())
    for seat in (3, 1, 2, 0):
        state = apply(state, PassCards(seat, cards(PASSES[seat])))
    assert state == forward


def test_pass_card_order_does_not_matter() -> None:
    a = apply(deal(HANDS, rules=Rules()), PassCards(0, cards("QS KS AS")))
    b = apply(deal(HANDS, rules=Rules()), PassCards(0, cards("AS QS KS")))
    assert a == b


def test_hold_round_goes_straight_to_play() -> None:
    state = deal(HANDS, rules=Rules(), round_index=3)
    assert state.pass_direction == PassDirection.HOLD
    assert state.phase == Phase.PLAYING
    assert seats_to_act(state) == (1,)
    assert legal_passes(state, 0) == ()
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, cards("QS KS AS")))
    assert error.value.reason == Reason.WRONG_PHASE


def test_two_of_clubs_holder_after_the_pass_leads() -> None:
    # Seat 1 passes the 2C left to seat 2, which then leads it.
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    assert state.turn == state.leader == 2
    assert legal_plays(state, 2) == cards("2C")
    # Across: seat 1's 2C goes to seat 3.
    state = pass_all(deal(HANDS, rules=Rules(), round_index=1), PASSES)
    assert state.turn == 3


def test_kept_two_of_clubs_still_leads() -> None:
    passes = ("QS KS AS", "QH KH AH", "TC JC AD", "QC KC AC")
    state = pass_all(deal(HANDS, rules=Rules()), passes)
    assert state.turn == 1


def test_everyone_owes_a_pass_then_nobody() -> None:
    state = deal(HANDS, rules=Rules())
    assert seats_to_act(state) == (0, 1, 2, 3)
    assert state.turn == -1
    for seat in SEATS:
        assert legal_passes(state, seat) == cards_of(deal_hands(DECK, 0)[seat])
    state = apply(state, PassCards(1, cards(PASSES[1])))
    assert legal_passes(state, 1) == ()
    assert seats_to_act(state) == (0, 2, 3)


@pytest.mark.parametrize("count", [0, 1, 2, 4, 13])
def test_must_pass_exactly_three_cards(count: int) -> None:
    state = deal(HANDS, rules=Rules())
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, state.hand(0)[:count]))
    assert error.value.reason == Reason.WRONG_PASS_COUNT


def test_cannot_pass_a_card_twice() -> None:
    state = deal(HANDS, rules=Rules())
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, cards("QS QS AS")))
    assert error.value.reason == Reason.DUPLICATE_CARD


def test_cannot_pass_a_card_not_held() -> None:
    state = deal(HANDS, rules=Rules())
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, cards("QS KS 2C")))
    assert error.value.reason == Reason.CARD_NOT_IN_HAND


def test_a_pass_of_cards_not_held_names_each_of_them() -> None:
    # A player typing three cards they do not hold learns of all three at once, not one a try.
    state = deal(HANDS, rules=Rules())
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, cards("AH QS 2C")))
    assert str(error.value).endswith("seat 0 does not hold 2C AH")


def test_cannot_pass_twice() -> None:
    state = apply(deal(HANDS, rules=Rules()), PassCards(0, cards("QS KS AS")))
    for second in ("QS KS AS", "4D 5D 6D"):
        with pytest.raises(IllegalActionError) as error:
            apply(state, PassCards(0, cards(second)))
        assert error.value.reason == Reason.ALREADY_PASSED


def test_cannot_play_during_passing() -> None:
    state = deal(HANDS, rules=Rules())
    with pytest.raises(IllegalActionError) as error:
        apply(state, PlayCard(1, cards("2C")[0]))
    assert error.value.reason == Reason.WRONG_PHASE


def test_cannot_pass_during_play() -> None:
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    with pytest.raises(IllegalActionError) as error:
        apply(state, PassCards(0, state.hand(0)[:3]))
    assert error.value.reason == Reason.WRONG_PHASE


def test_cannot_deal_during_passing() -> None:
    with pytest.raises(IllegalActionError) as error:
        apply(deal(HANDS, rules=Rules()), Deal(DECK))
    assert error.value.reason == Reason.WRONG_PHASE


def test_cannot_pass_before_the_deal() -> None:
    with pytest.raises(IllegalActionError) as error:
        apply(start_round(Rules()), PassCards(0, cards("2C 3C 4C")))
    assert error.value.reason == Reason.WRONG_PHASE


def test_without_passing_no_round_passes() -> None:
    rules = Rules(pass_cards=False)
    for round_index in range(4):
        state = deal(HANDS, rules=rules, round_index=round_index)
        assert state.phase == Phase.PLAYING, round_index
        assert state.pass_direction == PassDirection.HOLD
