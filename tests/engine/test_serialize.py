"""Serialization: states and round records to JSON-compatible dicts and back, exactly."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hearts_engine import (
    SCHEMA_VERSION,
    MalformedError,
    MalformedReason,
    MoonScoring,
    Phase,
    Rules,
    State,
    new_game,
    record_from_dict,
    record_to_dict,
    state_from_dict,
    state_to_dict,
)

from .conftest import game_steps, play_game

VARIANTS = [
    Rules(target_score=50),
    Rules(
        pass_cards=False,
        can_lead_any_club=True,
        queen_breaks_hearts=True,
        jack_of_diamonds_bonus=True,
        avoid_all_tricks_bonus=True,
        target_score=40,
        moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER,
    ),
    Rules(no_points_on_first_trick=False, must_break_hearts=False, target_score=30),
]


def through_json(state: State) -> State:
    return state_from_dict(json.loads(json.dumps(state_to_dict(state))))


@pytest.mark.parametrize("rules", VARIANTS, ids=["default", "changed", "loose"])
def test_state_round_trips_exactly_through_json(rules: Rules) -> None:
    phases = set()
    for seed in range(3):
        for before, _, _, _ in game_steps(seed, rules, first_dealer=seed):
            assert through_json(before) == before, f"seed={seed}"
            phases.add(before.phase)
        final = play_game(seed, rules, first_dealer=seed)
        assert through_json(final) == final, f"seed={seed}"
        phases.add(final.phase)
    assert phases >= {Phase.DEALING, Phase.PLAYING, Phase.GAME_OVER}


def test_new_game_round_trips() -> None:
    for first_dealer in range(4):
        state = new_game(Rules(target_score=7), first_dealer=first_dealer)
        assert through_json(state) == state


def test_state_dict_is_readable_notation() -> None:
    state = None
    for state, _, _, _ in game_steps(0, Rules()):
        if state.phase == Phase.PLAYING and state.trick:
            break
    assert state is not None
    data = state_to_dict(state)
    assert data["schema"] == SCHEMA_VERSION
    assert data["phase"] == "PLAYING"
    assert isinstance(data["hands"][0], str)
    assert len(data["hands"][0].split()) == len(state.hand(0))
    assert data["rules"] == Rules().to_dict()


def test_round_records_round_trip() -> None:
    final = play_game(1, Rules(target_score=60))
    for record in final.rounds:
        data = json.loads(json.dumps(record_to_dict(record)))
        assert record_from_dict(data) == record


@pytest.mark.parametrize("schema", [None, 0, SCHEMA_VERSION + 1, "1"])
def test_unknown_schema_is_refused(schema: object) -> None:
    data = state_to_dict(new_game())
    data["schema"] = schema
    with pytest.raises(MalformedError) as error:
        state_from_dict(data)
    assert error.value.reason == MalformedReason.INVALID_STATE


def test_missing_schema_is_refused() -> None:
    data = state_to_dict(new_game())
    del data["schema"]
    with pytest.raises(MalformedError) as error:
        state_from_dict(data)
    assert error.value.reason == MalformedReason.INVALID_STATE


@pytest.mark.parametrize("data", [None, [], "state", 1])
def test_a_state_must_be_an_object(data: object) -> None:
    with pytest.raises(MalformedError) as error:
        state_from_dict(data)  # type: ignore[arg-type]
    assert error.value.reason == MalformedReason.INVALID_STATE


def corrupt(key: str, value: Any) -> dict[str, Any]:
    data = state_to_dict(next(iter(game_steps(0, Rules())))[2])
    data[key] = value
    return data


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("phase", "SLEEPING"),
        ("hands", ["2C"]),
        ("hands", "2C"),
        ("totals", [0, 0, 0]),
        ("turn", "north"),
        ("rules", {"bogus": True}),
        ("tricks", [{"leader": 0}]),
        ("rounds", [{"round_index": 0}]),
    ],
)
def test_corrupt_state_is_refused(key: str, value: Any) -> None:
    with pytest.raises(MalformedError):
        state_from_dict(corrupt(key, value))


def test_corrupt_card_is_refused() -> None:
    data = corrupt("trick", "2C ZZ")
    with pytest.raises(MalformedError):
        state_from_dict(data)


def test_missing_field_is_refused() -> None:
    data = state_to_dict(new_game())
    del data["hands"]
    with pytest.raises(MalformedError) as error:
        state_from_dict(data)
    assert error.value.reason == MalformedReason.INVALID_STATE
