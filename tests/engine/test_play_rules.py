"""The rules of play, table-driven over scripted deals, under the default and changed flags.

Every row names a rule. A row is a scripted deal (four hands in notation, seat 0 first, dealt by
seat 0 in a hold round), the cards played so far, the rules, and what the seat to act may play:
exactly ``legal``, and each card of ``refused`` is refused with that reason.
"""

from __future__ import annotations

import dataclasses

import pytest

from hearts_engine import (
    IllegalActionError,
    PlayCard,
    Reason,
    Rules,
    apply,
    format_cards,
    is_legal,
    legal_plays,
    view,
)

from .conftest import HOLD, card_set, cards, deal, play

# Clubs, diamonds, hearts and spades spread over all four seats; seat 0 holds the 2C.
SPLIT = (
    "2C 5C 9C 2D 3D 4D 5D 2H 3H 4H 2S 3S 4S",
    "3C 6C TC 6D 7D 8D 5H 6H 7H 5S 6S 7S 8S",
    "4C 7C JC 9D TD JD 8H 9H TH 9S TS JS QS",
    "8C QC KC AC QD KD AD JH QH KH AH KS AS",
)
# Seat 0 holds every club, so the others discard on the first trick; seat 1 holds the QS and
# seat 3 nothing but hearts.
ALL_CLUBS_QS = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
    "2D 3D 4D 5D 6D 7D QS 2S 3S 4S 5S 6S 7S",
    "8D 9D TD JD QD KD AD 8S 9S TS JS KS AS",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
)
# As above, but seat 1 holds a heart and seat 3 nothing but hearts and the QS.
ALL_CLUBS_HEARTS_QUEEN = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
    "2D 3D 4D 5D 6D 7D 2H 2S 3S 4S 5S 6S 7S",
    "8D 9D TD JD QD KD AD 8S 9S TS JS KS AS",
    "3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH QS",
)
# Seat 3 is void in clubs and diamonds and holds the QS: it discards on those leads.
BREAK = (
    "2C 3C 4C 5C 2D 3D 4D 5D 6D 2S 3S 4S 5S",
    "6C 7C 8C 9C 7D 8D 9D TD 2H 3H 4H 5H 6H",
    "TC JC QC KC AC JD QD KD AD 7H 8H 9H TH",
    "6S 7S 8S 9S TS JS QS KS AS JH QH KH AH",
)
# Seat 3 takes the first trick with its only club and then holds nothing but hearts.
ONLY_HEARTS = (
    "2C 3C 4C 5C 2D 3D 4D 5D 6D 2S 3S 4S AH",
    "6C 7C 8C 9C TC 7D 8D 9D TD 5S 6S 7S 8S",
    "JC QC KC JD QD KD AD 9S TS JS QS KS AS",
    "AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH",
)
# Seat 3 takes the first trick with its only club and then holds only hearts and the QS.
HEARTS_AND_QUEEN = (
    "2C 3C 4C 5C 2D 3D 4D 5D 6D 2S 3S KH AH",
    "6C 7C 8C 9C TC 7D 8D 9D TD 4S 5S 6S 7S",
    "JC QC KC JD QD KD AD 8S 9S TS JS KS AS",
    "AC QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
)


@dataclasses.dataclass(frozen=True)
class Row:
    rule: str
    hands: tuple[str, str, str, str]
    plays: str
    rules: Rules
    seat: int
    legal: str
    refused: dict[str, Reason] = dataclasses.field(default_factory=dict)


def changed(**options: object) -> Rules:
    return dataclasses.replace(HOLD, **options)  # type: ignore[arg-type]


N2C, NLC = Reason.MUST_LEAD_TWO_OF_CLUBS, Reason.MUST_LEAD_CLUB
FOLLOW, FIRST = Reason.MUST_FOLLOW_SUIT, Reason.NO_POINTS_ON_FIRST_TRICK
UNBROKEN, NOT_HELD = Reason.HEARTS_NOT_BROKEN, Reason.CARD_NOT_IN_HAND

ROWS = [
    Row("must_lead_two_of_clubs", SPLIT, "", HOLD, 0, "2C",
        {"5C": N2C, "9C": N2C, "2D": N2C, "2H": N2C, "AS": NOT_HELD}),
    Row("can_lead_any_club", SPLIT, "", changed(can_lead_any_club=True), 0, "2C 5C 9C",
        {"2D": NLC, "2H": NLC, "2S": NLC}),
    Row("must_follow_suit", SPLIT, "2C", HOLD, 1, "3C 6C TC",
        {"6D": FOLLOW, "5H": FOLLOW, "8S": FOLLOW, "4C": NOT_HELD}),
    Row("must_follow_suit_of_the_lead_not_of_the_highest", SPLIT, "2C 3C 4C 8C QD", HOLD, 0,
        "2D 3D 4D 5D", {"5C": FOLLOW, "2H": FOLLOW}),
    Row("cannot_lead_hearts_before_broken", SPLIT, "2C 3C 4C 8C", HOLD, 3,
        "QC KC AC QD KD AD KS AS", {"JH": UNBROKEN, "AH": UNBROKEN}),
    Row("may_lead_hearts_anytime_without_must_break_hearts", SPLIT, "2C 3C 4C 8C",
        changed(must_break_hearts=False), 3, "QC KC AC QD KD AD JH QH KH AH KS AS"),
    Row("no_queen_of_spades_on_first_trick", ALL_CLUBS_QS, "2C", HOLD, 1,
        "2D 3D 4D 5D 6D 7D 2S 3S 4S 5S 6S 7S", {"QS": FIRST}),
    Row("queen_of_spades_allowed_on_first_trick_when_flag_off", ALL_CLUBS_QS, "2C",
        changed(no_points_on_first_trick=False), 1, ALL_CLUBS_QS[1]),
    Row("hand_of_only_hearts_may_play_any_heart_on_first_trick", ALL_CLUBS_QS, "2C 2D 8D", HOLD,
        3, ALL_CLUBS_QS[3]),
    Row("no_hearts_on_first_trick", ALL_CLUBS_HEARTS_QUEEN, "2C", HOLD, 1,
        "2D 3D 4D 5D 6D 7D 2S 3S 4S 5S 6S 7S", {"2H": FIRST}),
    Row("hearts_allowed_on_first_trick_when_flag_off", ALL_CLUBS_HEARTS_QUEEN, "2C",
        changed(no_points_on_first_trick=False), 1, ALL_CLUBS_HEARTS_QUEEN[1]),
    Row("hand_of_only_hearts_and_queen_may_play_any_on_first_trick", ALL_CLUBS_HEARTS_QUEEN,
        "2C 2D 8D", HOLD, 3, ALL_CLUBS_HEARTS_QUEEN[3]),
    Row("void_on_first_trick_discards_no_points", BREAK, "2C 6C TC", HOLD, 3,
        "6S 7S 8S 9S TS JS KS AS", {"QS": FIRST, "JH": FIRST, "AH": FIRST}),
    Row("cannot_lead_hearts_before_broken_after_first_trick", BREAK, "2C 6C TC 6S", HOLD, 2,
        "JC QC KC AC JD QD KD AD", {"7H": UNBROKEN, "TH": UNBROKEN}),
    Row("void_on_later_trick_may_play_anything", BREAK, "2C 6C TC 6S JD", HOLD, 3,
        "7S 8S 9S TS JS QS KS AS JH QH KH AH"),
    Row("heart_discard_breaks_hearts", BREAK, "2C 6C TC 6S JD AH 2D 7D", HOLD, 2,
        "JC QC KC AC QD KD AD 7H 8H 9H TH"),
    Row("queen_does_not_break_hearts_by_default", BREAK, "2C 6C TC 6S JC QS 3C 7C", HOLD, 2,
        "QC KC AC JD QD KD AD", {"7H": UNBROKEN}),
    Row("queen_breaks_hearts_when_flag_on", BREAK, "2C 6C TC 6S JC QS 3C 7C",
        changed(queen_breaks_hearts=True), 2, "QC KC AC JD QD KD AD 7H 8H 9H TH"),
    Row("heart_on_first_trick_breaks_hearts_when_allowed", BREAK, "2C 6C TC AH",
        changed(no_points_on_first_trick=False), 2, "JC QC KC AC JD QD KD AD 7H 8H 9H TH"),
    Row("hand_of_only_hearts_may_lead_a_heart", ONLY_HEARTS, "2C 6C JC AC", HOLD, 3,
        "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"),
    Row("hearts_and_queen_must_lead_the_queen", HEARTS_AND_QUEEN, "2C 6C JC AC", HOLD, 3,
        "QS", {"2H": UNBROKEN, "QH": UNBROKEN, "AC": NOT_HELD}),
    Row("can_lead_hearts_instead_of_queen", HEARTS_AND_QUEEN, "2C 6C JC AC",
        changed(can_lead_hearts_instead_of_queen=True), 3,
        "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"),
    Row("hearts_instead_of_queen_needs_unbroken_hearts_only", HEARTS_AND_QUEEN, "2C 6C JC AC",
        changed(must_break_hearts=False), 3, "QS 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"),
]  # fmt: skip


@pytest.mark.parametrize("row", ROWS, ids=lambda row: row.rule)
def test_rule(row: Row) -> None:
    state = play(deal(row.hands, rules=row.rules), row.plays)
    assert state.turn == row.seat
    legal = legal_plays(state, row.seat)
    assert format_cards(legal) == format_cards(sorted(cards(row.legal)))
    assert view(state, row.seat).legal == legal
    for card in legal:
        assert is_legal(state, PlayCard(row.seat, card)), card
        apply(state, PlayCard(row.seat, card))
    for text, reason in row.refused.items():
        with pytest.raises(IllegalActionError) as error:
            apply(state, PlayCard(row.seat, cards(text)[0]))
        assert error.value.reason == reason, text
        assert not is_legal(state, PlayCard(row.seat, cards(text)[0]))
    held = set(state.hand(row.seat))
    for card in held - set(legal):
        with pytest.raises(IllegalActionError):
            apply(state, PlayCard(row.seat, card))


def test_queen_discard_breaks_hearts_only_with_the_flag() -> None:
    plays = "2C 6C TC 6S JC QS"
    assert not play(deal(BREAK), plays).hearts_broken
    assert play(deal(BREAK, rules=changed(queen_breaks_hearts=True)), plays).hearts_broken


def test_hearts_are_broken_by_the_first_heart_played() -> None:
    state = play(deal(BREAK), "2C 6C TC 6S JD")
    assert not state.hearts_broken
    assert play(state, "AH").hearts_broken


def test_hand_of_only_hearts_leads_without_breaking_first() -> None:
    state = play(deal(ONLY_HEARTS), "2C 6C JC AC")
    assert not state.hearts_broken
    assert play(state, "5H").hearts_broken


def test_highest_card_of_the_led_suit_wins() -> None:
    state = play(deal(SPLIT), "2C 3C 4C 8C")
    assert state.tricks[-1].winner == 3
    assert state.tricks[-1].cards == cards("2C 3C 4C 8C")


def test_hearts_are_not_trumps() -> None:
    # Seat 3 discards the AH on seat 2's diamond lead; the jack of diamonds still wins.
    state = play(deal(BREAK), "2C 6C TC 6S JD AH 2D 7D")
    trick = state.tricks[-1]
    assert (trick.leader, trick.winner) == (2, 2)
    assert trick.cards == cards("JD AH 2D 7D")


def test_off_suit_ace_does_not_win() -> None:
    state = play(deal(BREAK), "2C 6C TC AS")
    assert state.tricks[0].winner == 2


def test_winner_leads_the_next_trick() -> None:
    state = play(deal(BREAK), "2C 6C TC 6S")
    assert state.tricks[-1].winner == state.turn == state.leader == 2
    state = play(state, "JD AH 2D 7D")
    assert state.tricks[-1].winner == state.turn == state.leader == 2
    state = play(state, "7H JH 5S 2H")
    assert state.tricks[-1].winner == state.turn == state.leader == 3
    assert legal_plays(state, 3) == state.hand(3)


def test_play_moves_clockwise_from_the_leader() -> None:
    state = deal(SPLIT)
    seats = []
    for card in cards("2C 3C 4C 8C QD 2D 6D 9D"):
        seats.append(state.turn)
        state = apply(state, PlayCard(state.turn, card))
    assert seats == [0, 1, 2, 3, 3, 0, 1, 2]


def test_completed_trick_records_leader_cards_and_winner() -> None:
    state = play(deal(SPLIT), "2C 3C 4C 8C QD 2D 6D 9D")
    assert [(t.leader, format_cards(t.cards), t.winner) for t in state.tricks] == [
        (0, "2C 3C 4C 8C", 3),
        (3, "QD 2D 6D 9D", 3),
    ]
    assert [state.tricks[1].seat_of(i) for i in range(4)] == [3, 0, 1, 2]
    assert state.trick == ()


def test_it_is_nobody_elses_turn() -> None:
    state = deal(SPLIT)
    for seat in (1, 2, 3):
        assert legal_plays(state, seat) == ()
        with pytest.raises(IllegalActionError) as error:
            apply(state, PlayCard(seat, state.hand(seat)[0]))
        assert error.value.reason == Reason.NOT_YOUR_TURN


def test_two_of_clubs_holder_leads_whoever_dealt() -> None:
    for first_dealer in range(4):
        state = deal(SPLIT, first_dealer=first_dealer)
        assert state.turn == 0, first_dealer
        assert card_set(SPLIT[0]) == set(state.hand(0))


def test_hold_round_of_the_default_rules_plays_by_the_same_rules() -> None:
    # Round index 3 is the fourth round of a cycle: no passing under the German defaults either.
    state = deal(SPLIT, rules=Rules(), round_index=3)
    assert state.dealer == 3
    assert legal_plays(state, 0) == cards("2C")
    state = play(state, "2C 3C 4C 8C")
    assert format_cards(legal_plays(state, 3)) == "QC KC AC QD KD AD KS AS"
