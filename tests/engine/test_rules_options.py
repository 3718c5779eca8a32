"""The Rules value: German defaults, validation, the pass-direction cycle, dict round trip."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hearts_engine import MalformedError, MalformedReason, MoonScoring, PassDirection, Rules


def test_defaults_are_the_german_rules() -> None:
    rules = Rules()
    assert rules.pass_cards is True
    assert rules.no_points_on_first_trick is True
    assert rules.can_lead_any_club is False
    assert rules.must_break_hearts is True
    assert rules.queen_breaks_hearts is False
    assert rules.can_lead_hearts_instead_of_queen is False
    assert rules.jack_of_diamonds_bonus is False
    assert rules.avoid_all_tricks_bonus is False
    assert rules.target_score == 100
    assert rules.moon_scoring == MoonScoring.ADD_TO_OTHERS


def test_options_are_keyword_only() -> None:
    with pytest.raises(TypeError):
        Rules(False)  # type: ignore[misc]


@pytest.mark.parametrize(
    "options",
    [
        {"pass_cards": 1},
        {"pass_cards": "yes"},
        {"no_points_on_first_trick": None},
        {"can_lead_any_club": 0},
        {"must_break_hearts": "false"},
        {"queen_breaks_hearts": 1.0},
        {"can_lead_hearts_instead_of_queen": []},
        {"jack_of_diamonds_bonus": "true"},
        {"avoid_all_tricks_bonus": 2},
        {"target_score": 0},
        {"target_score": -5},
        {"target_score": 10_001},
        {"target_score": True},
        {"target_score": 50.0},
        {"target_score": "100"},
        {"moon_scoring": "bogus"},
        {"moon_scoring": 1},
    ],
    ids=repr,
)
def test_bad_option_values_raise_invalid_rules(options: dict[str, Any]) -> None:
    with pytest.raises(MalformedError) as error:
        Rules(**options)
    assert error.value.reason == MalformedReason.INVALID_RULES
    with pytest.raises(MalformedError):
        Rules.from_dict(options)


@pytest.mark.parametrize("data", [{"bogus": True}, {"pass_cards": True, "trumps": "hearts"}])
def test_unknown_options_raise_invalid_rules(data: dict[str, Any]) -> None:
    with pytest.raises(MalformedError) as error:
        Rules.from_dict(data)
    assert error.value.reason == MalformedReason.INVALID_RULES


@pytest.mark.parametrize("data", [None, [], "pass_cards", 3])
def test_rules_must_be_an_object(data: object) -> None:
    with pytest.raises(MalformedError) as error:
        Rules.from_dict(data)  # type: ignore[arg-type]
    assert error.value.reason == MalformedReason.INVALID_RULES


def test_moon_scoring_accepts_its_name() -> None:
    rules = Rules(moon_scoring="SUBTRACT_FROM_SHOOTER")  # type: ignore[arg-type]
    assert rules.moon_scoring is MoonScoring.SUBTRACT_FROM_SHOOTER
    assert rules == Rules(moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER)


def test_pass_direction_cycles_left_across_right_hold() -> None:
    rules = Rules()
    expected = [PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT, PassDirection.HOLD]
    assert [rules.pass_direction(i) for i in range(12)] == expected * 3


def test_pass_direction_values_are_clockwise_offsets() -> None:
    assert [int(d) for d in (PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT)] == [
        1,
        2,
        3,
    ]
    assert PassDirection.HOLD == 0


def test_without_passing_every_round_holds() -> None:
    rules = Rules(pass_cards=False)
    assert {rules.pass_direction(i) for i in range(12)} == {PassDirection.HOLD}


ALL_CHANGED = Rules(
    pass_cards=False,
    no_points_on_first_trick=False,
    can_lead_any_club=True,
    must_break_hearts=False,
    queen_breaks_hearts=True,
    can_lead_hearts_instead_of_queen=True,
    jack_of_diamonds_bonus=True,
    avoid_all_tricks_bonus=True,
    target_score=42,
    moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER,
)


@pytest.mark.parametrize("rules", [Rules(), ALL_CHANGED, Rules(target_score=1)], ids=repr)
def test_rules_round_trip_through_a_json_dict(rules: Rules) -> None:
    data = rules.to_dict()
    assert Rules.from_dict(json.loads(json.dumps(data))) == rules
    assert data["moon_scoring"] == str(rules.moon_scoring)


def test_missing_options_take_their_defaults() -> None:
    assert Rules.from_dict({}) == Rules()
    assert Rules.from_dict({"target_score": 50}) == Rules(target_score=50)


def test_rules_are_frozen_and_hashable() -> None:
    rules = Rules()
    with pytest.raises(AttributeError):
        rules.pass_cards = False  # type: ignore[misc]
    assert {Rules(), Rules()} == {Rules()}
