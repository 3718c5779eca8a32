"""Refused actions: illegal (a well-formed move the rules forbid now) versus malformed input.

A malformed value raises :class:`MalformedError` whatever the state; a well-formed action that
the rules forbid raises :class:`IllegalActionError`. Neither ever changes the state it was given.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest

from hearts_engine import (
    DECK,
    Deal,
    IllegalActionError,
    MalformedError,
    MalformedReason,
    PassCards,
    Phase,
    PlayCard,
    Reason,
    Rules,
    State,
    apply,
    is_legal,
    legal_passes,
    legal_plays,
    new_game,
    seeded_deck,
    spectator_view,
    state_from_dict,
    state_to_dict,
    step,
    view,
)

from .conftest import HOLD, cards, deal, pass_all, play, play_game, start_round

SPLIT = (
    "2C 5C 9C 2D 3D 4D 5D 2H 3H 4H 2S 3S 4S",
    "3C 6C TC 6D 7D 8D 5H 6H 7H 5S 6S 7S 8S",
    "4C 7C JC 9D TD JD 8H 9H TH 9S TS JS QS",
    "8C QC KC AC QD KD AD JH QH KH AH KS AS",
)


def playing() -> State:
    return play(deal(SPLIT), "2C 3C")


def passing() -> State:
    return deal(SPLIT, rules=Rules())


def game_over() -> State:
    state = play_game(11, Rules(target_score=30))
    assert state.phase == Phase.GAME_OVER
    return state


def assert_refused(state: State, action: object, error: type[Exception], reason: str) -> None:
    """The action raises, the given state is unchanged, and step() agrees with apply()."""
    before = copy.deepcopy(state)
    stored = state_to_dict(state)
    with pytest.raises(error) as raised:
        apply(state, action)  # type: ignore[arg-type]
    assert raised.value.reason == reason  # type: ignore[attr-defined]
    with pytest.raises(error):
        step(state, action)  # type: ignore[arg-type]
    assert not is_legal(state, action)  # type: ignore[arg-type]
    assert state == before
    assert state_to_dict(state) == stored
    assert state_from_dict(stored) == state


# --------------------------------------------------------------------------- illegal actions

ILLEGAL: list[tuple[str, Callable[[], State], object, Reason]] = [
    ("not_your_turn", playing, PlayCard(0, cards("5C")[0]), Reason.NOT_YOUR_TURN),
    ("not_your_turn_even_for_a_card_not_held", playing, PlayCard(3, cards("5C")[0]),
     Reason.NOT_YOUR_TURN),
    ("card_not_in_hand", playing, PlayCard(2, cards("AS")[0]), Reason.CARD_NOT_IN_HAND),
    ("card_already_played", playing, PlayCard(2, cards("3C")[0]), Reason.CARD_NOT_IN_HAND),
    ("must_follow_suit", playing, PlayCard(2, cards("QS")[0]), Reason.MUST_FOLLOW_SUIT),
    ("play_during_passing", passing, PlayCard(0, cards("2C")[0]), Reason.WRONG_PHASE),
    ("play_before_the_deal", lambda: start_round(HOLD), PlayCard(0, cards("2C")[0]),
     Reason.WRONG_PHASE),
    ("pass_during_playing", playing, PassCards(2, cards("4C 7C JC")), Reason.WRONG_PHASE),
    ("deal_during_playing", playing, Deal(DECK), Reason.WRONG_PHASE),
    ("deal_during_passing", passing, Deal(DECK), Reason.WRONG_PHASE),
    ("pass_two_cards", passing, PassCards(0, cards("2C 5C")), Reason.WRONG_PASS_COUNT),
    ("pass_four_cards", passing, PassCards(0, cards("2C 5C 9C 2D")), Reason.WRONG_PASS_COUNT),
    ("pass_a_card_twice", passing, PassCards(0, cards("2C 2C 9C")), Reason.DUPLICATE_CARD),
    ("pass_a_card_not_held", passing, PassCards(0, cards("2C 5C AS")), Reason.CARD_NOT_IN_HAND),
    ("pass_twice", lambda: apply(passing(), PassCards(1, cards("3C 6C TC"))),
     PassCards(1, cards("6D 7D 8D")), Reason.ALREADY_PASSED),
    ("deal_after_game_over", game_over, Deal(DECK), Reason.GAME_OVER),
    ("pass_after_game_over", game_over, PassCards(0, cards("2C 3C 4C")), Reason.GAME_OVER),
    ("play_after_game_over", game_over, PlayCard(0, cards("2C")[0]), Reason.GAME_OVER),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "action", "reason"), [row[1:] for row in ILLEGAL], ids=[row[0] for row in ILLEGAL]
)
def test_illegal_action_is_refused_with_its_reason(
    make: Callable[[], State], action: object, reason: Reason
) -> None:
    assert_refused(make(), action, IllegalActionError, reason)


def test_nothing_is_legal_after_game_over() -> None:
    state = game_over()
    assert all(legal_plays(state, seat) == () for seat in range(4))
    assert all(legal_passes(state, seat) == () for seat in range(4))
    assert view(state, 0).legal == ()


# --------------------------------------------------------------------------- malformed input

MALFORMED: list[tuple[str, Callable[[], State], object, MalformedReason]] = [
    ("seat_4", playing, PlayCard(4, cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("seat_minus_1", playing, PlayCard(-1, cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("seat_x", playing, PlayCard("x", cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("seat_none", playing, PlayCard(None, cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("seat_bool", playing, PlayCard(True, cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("seat_float", playing, PlayCard(2.0, cards("4C")[0]), MalformedReason.INVALID_SEAT),
    ("pass_seat_4", passing, PassCards(4, cards("2C 5C 9C")), MalformedReason.INVALID_SEAT),
    ("pass_seat_x", passing, PassCards("x", cards("2C 5C 9C")), MalformedReason.INVALID_SEAT),
    ("play_non_card_text", playing, PlayCard(2, "ZZ"), MalformedReason.INVALID_CARD),
    ("play_card_index", playing, PlayCard(2, 5), MalformedReason.INVALID_CARD),
    ("play_none", playing, PlayCard(2, None), MalformedReason.INVALID_CARD),
    ("pass_non_card", passing, PassCards(0, ("2C", "5C", "XX")), MalformedReason.INVALID_CARD),
    ("pass_int_cards", passing, PassCards(0, (0, 1, 2)), MalformedReason.INVALID_CARD),
    ("pass_text_not_sequence", passing, PassCards(0, "2C 5C 9C"),
     MalformedReason.INVALID_ACTION),
    ("pass_none", passing, PassCards(0, None), MalformedReason.INVALID_ACTION),
    ("deck_of_51", new_game, Deal(DECK[:51]), MalformedReason.INVALID_DECK),
    ("deck_of_53", new_game, Deal((*DECK, DECK[0])), MalformedReason.INVALID_DECK),
    ("deck_with_duplicate", new_game, Deal((DECK[0], *DECK[:51])),
     MalformedReason.INVALID_DECK),
    ("deck_not_a_sequence", new_game, Deal(None), MalformedReason.INVALID_DECK),
    ("deck_as_text", new_game, Deal(" ".join(map(str, DECK))),
     MalformedReason.INVALID_DECK),
    ("deck_with_non_card", new_game, Deal(("XX", *DECK[1:])),
     MalformedReason.INVALID_CARD),
    ("deck_of_51_during_play", playing, Deal(DECK[:51]), MalformedReason.INVALID_DECK),
    ("unknown_action_none", playing, None, MalformedReason.INVALID_ACTION),
    ("unknown_action_tuple", playing, (2, cards("4C")[0]), MalformedReason.INVALID_ACTION),
    ("unknown_action_text", playing, "play 4C", MalformedReason.INVALID_ACTION),
]  # fmt: skip


@pytest.mark.parametrize(
    ("make", "action", "reason"),
    [row[1:] for row in MALFORMED],
    ids=[row[0] for row in MALFORMED],
)
def test_malformed_input_raises_malformed_error(
    make: Callable[[], State], action: object, reason: MalformedReason
) -> None:
    state = make()
    assert_refused(state, action, MalformedError, reason)
    with pytest.raises(MalformedError):
        apply(state, action)  # type: ignore[arg-type]


def test_malformed_error_is_not_an_illegal_action_error() -> None:
    with pytest.raises(MalformedError) as error:
        apply(playing(), PlayCard(9, cards("4C")[0]))
    assert not isinstance(error.value, IllegalActionError)
    assert isinstance(error.value, ValueError)


def test_deck_may_be_given_as_notation() -> None:
    deck = seeded_deck(3)
    assert apply(new_game(), Deal(tuple(str(c) for c in deck))) == apply(new_game(), Deal(deck))
    assert apply(new_game(), Deal(list(deck))) == apply(new_game(), Deal(deck))


def test_cards_may_be_given_as_notation() -> None:
    state = playing()
    assert apply(state, PlayCard(2, "4c")) == apply(state, PlayCard(2, cards("4C")[0]))
    state = passing()
    assert apply(state, PassCards(0, ["2C", "5C", "9C"])) == apply(
        state, PassCards(0, cards("2C 5C 9C"))
    )


@pytest.mark.parametrize("seat", [4, -1, "x", None, True])
def test_queries_refuse_a_bad_seat(seat: object) -> None:
    state = playing()
    for query in (legal_plays, legal_passes, view):
        with pytest.raises(MalformedError) as error:
            query(state, seat)  # type: ignore[operator]
        assert error.value.reason == MalformedReason.INVALID_SEAT


@pytest.mark.parametrize("first_dealer", [4, -1, "0", None])
def test_new_game_refuses_a_bad_first_dealer(first_dealer: object) -> None:
    with pytest.raises(MalformedError) as error:
        new_game(first_dealer=first_dealer)  # type: ignore[arg-type]
    assert error.value.reason == MalformedReason.INVALID_SEAT


@pytest.mark.parametrize("rules", [{"pass_cards": False}, "default", 1])
def test_new_game_refuses_rules_that_are_not_a_rules_value(rules: object) -> None:
    with pytest.raises(MalformedError) as error:
        new_game(rules)  # type: ignore[arg-type]
    assert error.value.reason == MalformedReason.INVALID_RULES


# --------------------------------------------------------------------------- immutability


def test_state_is_immutable() -> None:
    state = playing()
    with pytest.raises(AttributeError):
        state.turn = 3  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.hands[0] = 0  # type: ignore[index]


def test_legal_actions_do_not_change_the_old_state() -> None:
    state = deal(SPLIT, rules=Rules())
    before = copy.deepcopy(state)
    passed = pass_all(state, ("2C 5C 9C", "3C 6C TC", "4C 7C JC", "8C QC KC"))
    assert state == before
    assert passed != state
    mid = play(passed, passed.hand(passed.turn)[0].__str__())
    snapshot = copy.deepcopy(passed)
    assert passed == snapshot
    assert mid != passed


def test_spectator_view_and_views_do_not_change_the_state() -> None:
    state = playing()
    before = copy.deepcopy(state)
    for seat in range(4):
        view(state, seat)
        legal_plays(state, seat)
    spectator_view(state)
    assert state == before
