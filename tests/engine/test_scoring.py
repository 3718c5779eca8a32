"""Scoring: 26 points a round, shooting the moon, the bonus flags, game over and the result."""

from __future__ import annotations

import dataclasses
import random

import pytest

from hearts_engine import (
    GameOver,
    GameResult,
    MoonScoring,
    Phase,
    RoundRecord,
    RoundScored,
    Rules,
    State,
    Suit,
    new_game,
    result,
    step,
)

from .conftest import (
    HOLD,
    Policy,
    deal,
    lowest_policy,
    play_game,
    play_round,
    priority_policy,
)

# Seat 0 holds every club and leads a club to every trick that nobody else can follow, so it takes
# all 13 tricks: every heart and the queen of spades.
MOON = (
    "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
    "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD",
    "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH",
    "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
)
# Seat 0 takes the first twelve tricks (every heart and the QS fall on its clubs), then leads the
# 2D to the last trick, which seat 1 takes with the jack of diamonds and no points.
MOON_WITHOUT_JACK = (
    "3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC 2D",
    "2C JD 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH",
    "KD KH AH QS QD TD 9D 8D 7D 6D 5D 4D 3D",
    "AD AS KS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
)
MOON_WITHOUT_JACK_ORDER = (
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2D",
    "2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH JD",
    MOON_WITHOUT_JACK[2],
    MOON_WITHOUT_JACK[3],
)
# Seats 0 and 1 hold all clubs and hearts, seats 2 and 3 only diamonds and spades: every lead is
# a club or a heart, so seats 2 and 3 never take a trick. Played lowest card first, seat 1 takes
# the first seven tricks and seat 0 the last six: no moon.
AVOID = (
    "2C 3C 4C 5C 6C 7C 2H 4H 6H 8H TH QH AH",
    "8C 9C TC JC QC KC AC 3H 5H 7H 9H JH KH",
    "2D 3D 4D 5D 6D 7D 8D 2S 3S 4S 5S 6S 7S",
    "9D TD JD QD KD AD 8S 9S TS JS QS KS AS",
)


def hold(**options: object) -> Rules:
    return dataclasses.replace(HOLD, **options)  # type: ignore[arg-type]


def scored(
    hands: tuple[str, ...], rules: Rules, policy: Policy = lowest_policy
) -> tuple[State, RoundRecord]:
    """Deal, play the round out with ``policy``, and return the state and the round's record."""
    state = play_round(deal(hands, rules=rules), policy)
    return state, state.rounds[-1]


def test_every_round_hands_out_26_points() -> None:
    for seed in range(10):
        final = play_game(seed, Rules())
        for record in final.rounds:
            expected = 26 if record.moon_shooter is None else 78
            assert sum(record.points) == expected, f"seed={seed} round={record.round_index}"


def test_points_are_one_per_heart_and_thirteen_for_the_queen() -> None:
    for seed in range(10):
        final = play_game(seed, Rules())
        for record in final.rounds:
            if record.moon_shooter is not None:
                continue
            taken = [0, 0, 0, 0]
            for trick in record.tricks:
                for card in trick.cards:
                    if card.suit == Suit.HEARTS:
                        taken[trick.winner] += 1
                    elif str(card) == "QS":
                        taken[trick.winner] += 13
            assert tuple(taken) == record.points, f"seed={seed} round={record.round_index}"


def test_shooting_the_moon_adds_26_to_the_others() -> None:
    state, record = scored(MOON, HOLD)
    assert {trick.winner for trick in record.tricks} == {0}
    assert record.moon_shooter == 0
    assert record.points == (0, 26, 26, 26)
    assert state.totals == (0, 26, 26, 26)


def test_shooting_the_moon_may_subtract_from_the_shooter() -> None:
    state, record = scored(MOON, hold(moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER))
    assert record.moon_shooter == 0
    assert record.points == (-26, 0, 0, 0)
    assert state.totals == (-26, 0, 0, 0)


def test_jack_of_diamonds_bonus_is_minus_ten() -> None:
    _, record = scored(AVOID, hold(jack_of_diamonds_bonus=True))
    _, plain = scored(AVOID, HOLD)
    jack_taker = next(t.winner for t in record.tricks if "JD" in map(str, t.cards))
    assert record.points[jack_taker] == plain.points[jack_taker] - 10
    assert sum(record.points) == 16


def test_jack_of_diamonds_is_not_needed_for_the_moon() -> None:
    policy = priority_policy(MOON_WITHOUT_JACK_ORDER)
    _, record = scored(MOON_WITHOUT_JACK, hold(jack_of_diamonds_bonus=True), policy)
    assert [t.winner for t in record.tricks] == [0] * 12 + [1]
    assert record.moon_shooter == 0
    assert record.points == (0, 16, 26, 26)


def test_jack_of_diamonds_still_counts_for_the_shooter() -> None:
    _, record = scored(MOON, hold(jack_of_diamonds_bonus=True))
    assert record.points == (-10, 26, 26, 26)
    rules = hold(jack_of_diamonds_bonus=True, moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER)
    _, record = scored(MOON, rules)
    assert record.points == (-36, 0, 0, 0)


def test_moon_without_jack_and_without_the_bonus_flag() -> None:
    policy = priority_policy(MOON_WITHOUT_JACK_ORDER)
    _, record = scored(MOON_WITHOUT_JACK, HOLD, policy)
    assert record.moon_shooter == 0
    assert record.points == (0, 26, 26, 26)


def test_avoiding_all_tricks_scores_minus_five() -> None:
    _, plain = scored(AVOID, HOLD)
    assert {t.winner for t in plain.tricks} == {0, 1}
    assert plain.moon_shooter is None
    assert plain.points == (25, 1, 0, 0)
    _, record = scored(AVOID, hold(avoid_all_tricks_bonus=True))
    assert record.points == (25, 1, -5, -5)


def test_avoid_all_tricks_bonus_is_not_given_in_a_moon_round() -> None:
    _, record = scored(MOON, hold(avoid_all_tricks_bonus=True))
    assert record.moon_shooter == 0
    assert record.points == (0, 26, 26, 26)


def test_round_scored_event_matches_the_record() -> None:
    state = deal(AVOID, rules=hold(avoid_all_tricks_bonus=True, jack_of_diamonds_bonus=True))
    events = []
    while state.phase == Phase.PLAYING:
        state, new = step(state, lowest_policy(state, random.Random(0)))
        events.extend(new)
    (scored_event,) = [e for e in events if isinstance(e, RoundScored)]
    record = state.rounds[-1]
    assert scored_event.points == record.points
    assert scored_event.totals == state.totals
    assert scored_event.moon_shooter is None


# --------------------------------------------------------------------------- game over


def test_game_ends_when_someone_reaches_the_target() -> None:
    state, _ = scored(MOON, hold(target_score=26))
    assert state.phase == Phase.GAME_OVER
    assert state.totals == (0, 26, 26, 26)
    final = result(state)
    assert final == GameResult((0, 26, 26, 26), (0,), (1, 2, 3))


def test_game_goes_on_below_the_target() -> None:
    state, _ = scored(MOON, hold(target_score=27))
    assert state.phase == Phase.DEALING
    assert state.round_index == 1
    assert result(state) is None


def test_game_over_event_carries_the_result() -> None:
    state = deal(MOON, rules=hold(target_score=26))
    events = []
    while state.phase == Phase.PLAYING:
        state, new = step(state, lowest_policy(state, random.Random(0)))
        events.extend(new)
    assert isinstance(events[-1], GameOver)
    assert isinstance(events[-2], RoundScored)
    final = result(state)
    assert final is not None
    assert (events[-1].totals, events[-1].winners, events[-1].losers) == final


def test_negative_totals_never_end_the_game() -> None:
    rules = hold(target_score=1, moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER)
    state, _ = scored(MOON, rules)
    assert state.totals == (-26, 0, 0, 0)
    assert state.phase == Phase.DEALING


@pytest.mark.parametrize(
    ("totals", "winners", "losers"),
    [
        ((40, 60, 100, 55), (0,), (2,)),
        ((40, 40, 100, 55), (0, 1), (2,)),
        ((101, 110, 110, 3), (3,), (1, 2)),
        ((100, 100, 100, 100), (0, 1, 2, 3), (0, 1, 2, 3)),
        ((-26, 0, 120, -26), (0, 3), (2,)),
    ],
)
def test_lowest_total_wins_and_ties_share(
    totals: tuple[int, ...], winners: tuple[int, ...], losers: tuple[int, ...]
) -> None:
    state = new_game()._replace(phase=Phase.GAME_OVER, totals=totals)
    assert result(state) == GameResult(totals, winners, losers)


def test_whole_games_end_at_the_target_with_the_lowest_total_winning() -> None:
    for seed in range(10):
        rules = Rules(target_score=60 + seed * 5)
        final = play_game(seed, rules)
        assert final.phase == Phase.GAME_OVER
        assert max(final.totals) >= rules.target_score, f"seed={seed}"
        before_last = [t - p for t, p in zip(final.totals, final.rounds[-1].points, strict=True)]
        assert max(before_last) < rules.target_score, f"seed={seed}"
        outcome = result(final)
        assert outcome is not None
        assert outcome.winners == tuple(s for s in range(4) if final.totals[s] == min(final.totals))
        assert all(final.totals[s] >= rules.target_score for s in outcome.losers), seed
