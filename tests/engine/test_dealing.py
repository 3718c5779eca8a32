"""Dealing: 5-4-4 clockwise from the dealer's left; the deal moves one seat each round."""

from __future__ import annotations

import pytest

from hearts_engine import (
    DECK,
    SEATS,
    Deal,
    Phase,
    Rules,
    apply,
    cards_of,
    deal_hands,
    format_cards,
    legal_plays,
    new_game,
    seats_to_act,
    seeded_deck,
)

from .conftest import (
    HOLD,
    card_set,
    deck_for_hands,
    game_steps,
    hand_text,
    lowest_policy,
    play_game,
    play_round,
)

# DECK in order (2C..AC, 2D..AD, 2H..AH, 2S..AS) dealt 5-4-4, written out by hand.
IN_ORDER_BY_DEALER = {
    0: (
        "4D 5D 6D 7D 8D 8H 9H TH JH JS QS KS AS",
        "2C 3C 4C 5C 6C 9D TD JD QD QH KH AH 2S",
        "7C 8C 9C TC JC KD AD 2H 3H 3S 4S 5S 6S",
        "QC KC AC 2D 3D 4H 5H 6H 7H 7S 8S 9S TS",
    ),
    2: (
        "7C 8C 9C TC JC KD AD 2H 3H 3S 4S 5S 6S",
        "QC KC AC 2D 3D 4H 5H 6H 7H 7S 8S 9S TS",
        "4D 5D 6D 7D 8D 8H 9H TH JH JS QS KS AS",
        "2C 3C 4C 5C 6C 9D TD JD QD QH KH AH 2S",
    ),
}


@pytest.mark.parametrize("dealer", sorted(IN_ORDER_BY_DEALER))
def test_deal_is_five_four_four_from_the_dealers_left(dealer: int) -> None:
    hands = deal_hands(DECK, dealer)
    assert [format_cards(cards_of(mask)) for mask in hands] == list(IN_ORDER_BY_DEALER[dealer])


@pytest.mark.parametrize("dealer", sorted(IN_ORDER_BY_DEALER))
def test_deal_action_gives_the_same_hands(dealer: int) -> None:
    state = apply(new_game(first_dealer=dealer), Deal(DECK))
    assert state.dealer == dealer
    assert [hand_text(state, seat) for seat in SEATS] == list(IN_ORDER_BY_DEALER[dealer])


def test_first_packet_goes_to_the_dealers_left() -> None:
    for dealer in SEATS:
        hands = deal_hands(DECK, dealer)
        left = (dealer + 1) % 4
        assert set(DECK[:5]) <= set(cards_of(hands[left])), f"dealer={dealer}"
        assert set(DECK[48:]) <= set(cards_of(hands[dealer])), f"dealer={dealer}"


def test_deck_for_hands_inverts_the_deal() -> None:
    for seed in range(20):
        for dealer in SEATS:
            hands = [cards_of(mask) for mask in deal_hands(seeded_deck(seed), dealer)]
            deck = deck_for_hands(hands, dealer)
            assert deal_hands(deck, dealer) == deal_hands(seeded_deck(seed), dealer), seed


def test_every_seat_gets_thirteen_distinct_cards() -> None:
    for seed in range(20):
        hands = deal_hands(seeded_deck(seed), seed % 4)
        assert [mask.bit_count() for mask in hands] == [13] * 4, f"seed={seed}"
        assert hands[0] | hands[1] | hands[2] | hands[3] == (1 << 52) - 1, f"seed={seed}"


def test_first_dealer_is_seat_zero_by_default() -> None:
    assert new_game().dealer == 0
    assert new_game().first_dealer == 0


def test_nobody_acts_before_the_deal() -> None:
    state = new_game()
    assert state.phase == Phase.DEALING
    assert seats_to_act(state) == ()
    assert all(legal_plays(state, seat) == () for seat in SEATS)


@pytest.mark.parametrize("first_dealer", SEATS)
def test_dealer_moves_one_seat_clockwise_each_round(first_dealer: int) -> None:
    dealers = []
    for before, action, after, _ in game_steps(7, Rules(), first_dealer=first_dealer):
        if isinstance(action, Deal):
            dealers.append(before.dealer)
            assert after.hand(after.dealer) == cards_of(
                deal_hands(action.deck, (first_dealer + before.round_index) % 4)[after.dealer]
            )
    assert len(dealers) >= 4
    assert dealers == [(first_dealer + i) % 4 for i in range(len(dealers))]


def test_round_records_name_the_dealer() -> None:
    final = play_game(3, Rules(), first_dealer=1)
    assert [record.dealer for record in final.rounds] == [
        (1 + i) % 4 for i in range(len(final.rounds))
    ]


def test_hold_round_deals_straight_into_play_led_by_the_two_of_clubs() -> None:
    state = apply(new_game(HOLD), Deal(DECK))
    assert state.phase == Phase.PLAYING
    assert state.turn == 1  # dealer 0 deals 2C..6C to seat 1
    assert card_set("2C") <= set(state.hand(1))


def test_passing_round_deals_into_passing() -> None:
    state = apply(new_game(), Deal(DECK))
    assert state.phase == Phase.PASSING
    assert state.turn == -1


def test_deal_moves_to_the_next_round_after_scoring() -> None:
    state = apply(new_game(HOLD), Deal(seeded_deck(5)))
    state = play_round(state, lowest_policy)
    assert state.phase == Phase.DEALING
    assert state.round_index == 1
    assert state.dealer == 1
    assert state.hands == (0, 0, 0, 0)
