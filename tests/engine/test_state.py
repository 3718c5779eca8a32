"""The State value itself: its public fields, copies, equality, and what it is refused from.

A state is stored compactly (see the design notes of ``hearts_engine.game``); these tests pin the
public face of it: the named fields, ``_replace`` with those names, pickling, and that a state
read from a dict must be consistent where the compact form leaves no room for disagreement.
"""

from __future__ import annotations

import copy
import pickle

import pytest

from hearts_engine import (
    SEATS,
    MalformedError,
    MalformedReason,
    PassCards,
    Phase,
    Rules,
    apply,
    legal_actions,
    new_game,
    state_from_dict,
    state_to_dict,
)

from .conftest import HOLD, deal, game_steps, play, play_game

SPLIT = (
    "2C 5C 9C 2D 3D 4D 5D 2H 3H 4H 2S 3S 4S",
    "3C 6C TC 6D 7D 8D 5H 6H 7H 5S 6S 7S 8S",
    "4C 7C JC 9D TD JD 8H 9H TH 9S TS JS QS",
    "8C QC KC AC QD KD AD JH QH KH AH KS AS",
)
FIELDS = (
    "rules",
    "phase",
    "round_index",
    "first_dealer",
    "deck",
    "hands",
    "passed",
    "turn",
    "leader",
    "trick",
    "tricks",
    "hearts_broken",
    "taken",
    "totals",
    "rounds",
)


def test_every_public_field_reads_back_from_a_dict_of_it() -> None:
    for state, _, _, _ in game_steps(3, Rules(target_score=40)):
        data = state_to_dict(state)
        assert state.hands == tuple(sum(1 << card for card in state.hand(seat)) for seat in SEATS)
        assert state.leader == data["leader"]
        assert state.hearts_broken == data["hearts_broken"]
        assert len(state.passed) == len(state.taken) == len(state.totals) == 4


def test_replace_takes_the_public_field_names() -> None:
    state = new_game(Rules(target_score=40))
    later = state._replace(round_index=2, totals=(1, 2, 3, 4))
    assert (later.round_index, later.totals, later.dealer) == (2, (1, 2, 3, 4), 2)
    assert later.rules == state.rules
    assert state.round_index == 0  # the original is untouched
    with pytest.raises(ValueError, match="no fields"):
        state._replace(colour="red")


def test_replace_keeps_a_playing_state_playable() -> None:
    state = play(deal(SPLIT), "2C 3C")
    broken = state._replace(hearts_broken=True)
    assert broken.hearts_broken
    assert not state.hearts_broken
    assert (broken.hands, broken.leader) == (state.hands, state.leader)
    assert legal_actions(broken) == legal_actions(state)


def test_repr_names_the_fields() -> None:
    text = repr(new_game())
    assert text.startswith("State(rules=Rules(")
    for name in FIELDS:
        assert f"{name}=" in text


def test_states_compare_hash_copy_and_pickle_by_value() -> None:
    final = play_game(2, Rules(target_score=30))
    mid = play(deal(SPLIT), "2C 3C 4C")
    for state in (new_game(), mid, final):
        assert copy.deepcopy(state) == state
        assert pickle.loads(pickle.dumps(state)) == state
        assert hash(state_from_dict(state_to_dict(state))) == hash(state)
    assert mid != play(deal(SPLIT), "2C 3C 7C")


def test_a_state_whose_leader_does_not_fit_its_turn_is_refused() -> None:
    data = state_to_dict(play(deal(SPLIT), "2C 3C"))
    assert (data["leader"], data["turn"]) == (0, 2)
    data["leader"] = 1
    with pytest.raises(MalformedError) as error:
        state_from_dict(data)
    assert error.value.reason == MalformedReason.INVALID_STATE


def test_pass_choices_index_like_a_sequence() -> None:
    state = deal(SPLIT, rules=Rules())
    choices = legal_actions(state)
    assert len(choices) == 4 * 286
    assert choices[0] == PassCards(0, state.hand(0)[:3])
    assert choices[-1] == PassCards(3, state.hand(3)[-3:])
    assert choices[True] == choices[1]
    with pytest.raises(IndexError):
        choices[4 * 286]
    with pytest.raises(IndexError):
        choices[-4 * 286 - 1]
    with pytest.raises(TypeError):
        choices["0"]  # type: ignore[index]
    assert "count=1144" in repr(choices)
    after = apply(state, choices[300])  # seat 1's pass
    assert [choice.seat for choice in (legal_actions(after)[0], legal_actions(after)[286])] == [
        0,
        2,
    ]
    assert len(legal_actions(after, 1)) == 0


def test_a_hold_round_starts_playing_without_passes() -> None:
    state = deal(SPLIT, rules=HOLD)
    assert state.phase == Phase.PLAYING
    assert state.passed == (0, 0, 0, 0)
    assert state.leader == state.turn == 0
