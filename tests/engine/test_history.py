"""History: a round record turns back into the actions that produced it, and replays exactly."""

from __future__ import annotations

import pytest

from hearts_engine import (
    Deal,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    State,
    record_from_dict,
    record_to_dict,
    replay,
    replay_game,
    round_actions,
)

from .conftest import HOLD, game_steps

VARIANTS = {
    "default": Rules(target_score=60),
    "hold": Rules(pass_cards=False, target_score=60),
    "changed": Rules(
        can_lead_any_club=True,
        queen_breaks_hearts=True,
        can_lead_hearts_instead_of_queen=True,
        jack_of_diamonds_bonus=True,
        avoid_all_tricks_bonus=True,
        moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER,
        target_score=45,
    ),
}


def whole_game(seed: int, rules: Rules, first_dealer: int = 0) -> tuple[list[State], State]:
    """The states at each round boundary (waiting for a deal) and the final state."""
    boundaries: list[State] = []
    final = None
    for before, _, after, _ in game_steps(seed, rules, first_dealer=first_dealer):
        if before.phase == Phase.DEALING:
            boundaries.append(before)
        final = after
    assert final is not None
    return boundaries, final


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_round_actions_replayed_give_the_state_after_the_round(name: str) -> None:
    rules = VARIANTS[name]
    for seed in range(3):
        boundaries, final = whole_game(seed, rules)
        ends = [*boundaries[1:], final]
        for start, end, record in zip(boundaries, ends, final.rounds, strict=True):
            assert replay(start, round_actions(record)) == end, f"seed={seed} {name}"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_replay_game_rebuilds_the_whole_game(name: str) -> None:
    for seed in range(3):
        _, final = whole_game(seed, VARIANTS[name], first_dealer=seed % 4)
        rebuilt = replay_game(final.rules, final.rounds, first_dealer=final.first_dealer)
        assert rebuilt == final, f"seed={seed} {name}"


def test_replay_from_stored_records() -> None:
    _, final = whole_game(9, Rules(target_score=50))
    records = [record_from_dict(record_to_dict(record)) for record in final.rounds]
    assert replay_game(final.rules, records) == final


def test_round_actions_are_deal_then_passes_then_plays() -> None:
    _, final = whole_game(2, Rules(target_score=40))
    record = final.rounds[0]
    actions = round_actions(record)
    assert actions[0] == Deal(record.deck)
    assert [type(a) for a in actions[1:5]] == [PassCards] * 4
    assert [a.seat for a in actions[1:5]] == [0, 1, 2, 3]  # type: ignore[union-attr]
    plays = actions[5:]
    assert len(plays) == 52
    assert all(isinstance(a, PlayCard) for a in plays)
    assert [a.seat for a in plays[:4]] == [  # type: ignore[union-attr]
        record.tricks[0].seat_of(i) for i in range(4)
    ]


def test_hold_round_has_no_pass_actions() -> None:
    _, final = whole_game(3, HOLD)
    for record in final.rounds:
        actions = round_actions(record)
        assert not any(isinstance(a, PassCards) for a in actions)
        assert len(actions) == 53
        assert record.passes == ((), (), (), ())


def test_a_tampered_record_does_not_replay() -> None:
    from hearts_engine import HeartsError

    boundaries, final = whole_game(4, Rules(target_score=40))
    record = final.rounds[0]
    first, second = record.tricks[0], record.tricks[1]
    swapped = record._replace(tricks=(second, first, *record.tricks[2:]))
    with pytest.raises(HeartsError):
        replay(boundaries[0], round_actions(swapped))
