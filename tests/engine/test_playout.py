"""The fast playout plays exactly the rules of ``apply``: same cards asked for, same points.

Each case is a seeded random round under random rule flags, stopped at a random card; from there
the round is played to its end twice with the same chooser, once by ``apply`` one card at a time
and once by :func:`hearts_engine.playout.play_out`. The chooser records every question it is
asked (hand, legal cards, trick, cards played), so the two runs must agree card for card, not
only in the final points.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from hearts_engine import (
    DECK,
    Card,
    Deal,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    State,
    apply,
    cards_of,
    legal_passes,
    legal_plays,
    new_game,
    seats_to_act,
    seeded_deck,
)
from hearts_engine.playout import Chooser, play_out

FLAGS = (
    "pass_cards",
    "no_points_on_first_trick",
    "can_lead_any_club",
    "must_break_hearts",
    "queen_breaks_hearts",
    "can_lead_hearts_instead_of_queen",
    "jack_of_diamonds_bonus",
    "avoid_all_tricks_bonus",
)

Question = tuple[int, int, tuple[Card, ...], int]


def random_rules(rng: random.Random) -> Rules:
    return Rules(
        **{flag: rng.random() < 0.5 for flag in FLAGS},
        moon_scoring=rng.choice(list(MoonScoring)),
    )


def recording(strategy: Callable[[Question], int]) -> tuple[Chooser, list[Question]]:
    """A chooser that answers with ``strategy`` and keeps every question it was asked."""
    asked: list[Question] = []

    def choose(hand: int, legal: int, trick: tuple[Card, ...], played: int) -> int:
        question = (hand, legal, tuple(trick), played)
        asked.append(question)
        return strategy(question)

    return choose, asked


def seeded_strategy(seed: int) -> Callable[[Question], int]:
    rng = random.Random(seed)
    return lambda question: rng.choice(cards_of(question[1]))


def highest(question: Question) -> int:
    return question[1].bit_length() - 1


def lowest(question: Question) -> int:
    legal = question[1]
    return (legal & -legal).bit_length() - 1


def played_mask(state: State) -> int:
    mask = 0
    for card in (*[c for trick in state.tricks for c in trick.cards], *state.trick):
        mask |= 1 << card
    return mask


def finish(state: State, choose: Chooser, played: int) -> State:
    """The reference: the same chooser driven through the public API, one card at a time."""
    while state.phase is Phase.PLAYING:
        seat = seats_to_act(state)[0]
        legal = legal_plays(state, seat)
        if len(legal) == 1:
            card = legal[0]
        else:
            mask = 0
            for option in legal:
                mask |= 1 << option
            card = DECK[choose(state.hands[seat], mask, state.trick, played)]
        played |= 1 << card
        state = apply(state, PlayCard(seat, card))
    return state


def by_apply(state: State, choose: Chooser, played: int) -> tuple[int, ...]:
    return finish(state, choose, played).rounds[-1].points


def random_position(seed: int) -> State:
    """A round under random rules, dealt, passed and played at random up to a random card."""
    rng = random.Random(seed)
    state = apply(new_game(random_rules(rng)), Deal(seeded_deck(seed)))
    for seat in seats_to_act(state):
        if hand := legal_passes(state, seat):
            state = apply(state, PassCards(seat, tuple(rng.sample(hand, 3))))
    for _ in range(rng.randrange(52)):
        seat = seats_to_act(state)[0]
        state = apply(state, PlayCard(seat, rng.choice(legal_plays(state, seat))))
    return state


@pytest.mark.parametrize("strategy", ["random", "highest", "lowest"])
def test_play_out_matches_apply_card_for_card(strategy: str) -> None:
    for seed in range(300):
        state = random_position(seed)
        assert state.phase is Phase.PLAYING
        played = played_mask(state)
        runs = []
        for engine in (by_apply, play_out):
            pick = {"random": seeded_strategy(seed), "highest": highest, "lowest": lowest}
            choose, asked = recording(pick[strategy])
            runs.append((engine(state, choose, played), asked))
        (expected, expected_asked), (points, asked) = runs
        assert asked == expected_asked, f"seed {seed}: the two runs asked different questions"
        assert points == expected, f"seed {seed}, rules {state.rules}"


def test_moon_shots_score_as_apply() -> None:
    # The seat to play takes every trick it can while the others duck, so that some rounds end
    # in a moon shot. The chooser is not told the seat; it knows the shooter by its cards.
    moons = 0
    for seed in range(300):
        state = random_position(seed)
        shooter_cards = state.hands[state.turn]

        def greedy(question: Question, shooter_cards: int = shooter_cards) -> int:
            return highest(question) if question[0] & shooter_cards else lowest(question)

        played = played_mask(state)
        end = finish(state, recording(greedy)[0], played)
        points = play_out(state, recording(greedy)[0], played)
        assert points == end.rounds[-1].points, f"seed {seed}, rules {state.rules}"
        moons += end.rounds[-1].moon_shooter is not None
    assert moons >= 3, f"only {moons} moon shots: too few to test their scoring"


def test_a_finished_round_gives_its_points() -> None:
    state = random_position(5)
    end = state
    while end.phase is Phase.PLAYING:
        seat = seats_to_act(end)[0]
        end = apply(end, PlayCard(seat, legal_plays(end, seat)[0]))
    assert end.phase is Phase.DEALING
    assert play_out(end, lowest_chooser, 0) == end.rounds[-1].points


def lowest_chooser(hand: int, legal: int, trick: tuple[Card, ...], played: int) -> int:
    return (legal & -legal).bit_length() - 1


def test_nothing_to_play_out_before_play() -> None:
    with pytest.raises(ValueError, match="no round"):
        play_out(new_game(), lowest_chooser, 0)
    passing = apply(new_game(), Deal(seeded_deck(1)))
    assert passing.phase is Phase.PASSING
    with pytest.raises(ValueError, match="no round"):
        play_out(passing, lowest_chooser, 0)


def test_an_illegal_choice_raises() -> None:
    state = random_position(11)
    while True:
        seat = seats_to_act(state)[0]
        legal = legal_plays(state, seat)
        if len(legal) > 1 and len(legal) < len(cards_of(state.hands[seat])):
            break
        state = apply(state, PlayCard(seat, legal[0]))
    held_not_legal = cards_of(state.hands[seat] & ~sum(1 << card for card in legal))[0]

    def stubborn(hand: int, legal: int, trick: tuple[Card, ...], played: int) -> int:
        return held_not_legal

    with pytest.raises(ValueError, match="may not play"):
        play_out(state, stubborn, played_mask(state))
