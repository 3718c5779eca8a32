"""Card notation in the client: parse and format pairs, and malformed text refused locally."""

from __future__ import annotations

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import InvalidCardError, card, card_label, card_str, cards, sort_cards

ALL_NOTATIONS = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]


@pytest.mark.parametrize("text", ALL_NOTATIONS)
def test_every_card_round_trips_through_notation(text: str) -> None:
    assert card_str(card(text)) == text


def test_card_builds_the_message_of_rank_then_suit() -> None:
    assert card("QS") == pb.Card(suit=pb.SUIT_SPADES, rank=pb.RANK_QUEEN)
    assert card("2c") == pb.Card(suit=pb.SUIT_CLUBS, rank=pb.RANK_TWO)


def test_ten_may_be_written_10_or_t_and_suits_as_symbols() -> None:
    assert card("10H") == card("TH") == card("t♥") == card(" 10h ")
    assert card("Q♠") == card("QS")


@pytest.mark.parametrize("text", ["", "Q", "QX", "1H", "11S", "QSS", "S Q", "ZZ", "0C"])
def test_malformed_notation_raises_invalid_card(text: str) -> None:
    with pytest.raises(InvalidCardError) as caught:
        card(text)
    assert caught.value.reason == "INVALID_CARD"


def test_a_card_message_that_names_no_card_is_refused() -> None:
    with pytest.raises(InvalidCardError):
        card(pb.Card())
    with pytest.raises(InvalidCardError):
        card_str(pb.Card(suit=pb.SUIT_HEARTS))


def test_card_copies_a_message_so_callers_may_mutate_it() -> None:
    original = card("AH")
    copy = card(original)
    copy.rank = pb.RANK_TWO
    assert card_str(original) == "AH"


def test_cards_splits_on_spaces_and_commas() -> None:
    assert [card_str(c) for c in cards("QS, KS  AH")] == ["QS", "KS", "AH"]
    assert [card_str(c) for c in cards(["2C", card("3C")])] == ["2C", "3C"]


def test_labels_use_suit_symbols_unless_asked_not_to() -> None:
    assert card_label(card("TD")) == "T♦"
    assert card_label(card("TD"), symbols=False) == "TD"


def test_sort_cards_orders_by_suit_then_rank() -> None:
    ordered = sort_cards(cards("AS 2H KC 3C QD"))
    assert [card_str(c) for c in ordered] == ["3C", "KC", "QD", "2H", "AS"]
