"""Golden playthroughs: whole games pinned action by action, like perft files pin a move generator.

Each ``golden/seed_*.json`` holds a seeded game played by a fixed random policy (the one in
``conftest.random_policy``, driven by ``random.Random(seed)``): every deck, pass and play, how many
legal cards each play had to choose from, and every round's points. If the deal, the legal moves
or the scoring change, the policy chooses differently or scores differently and these tests fail.

Regenerate deliberately, after a rules change that is meant to change them, with
``HEARTS_REGENERATE_GOLDEN=1 uv run pytest tests/engine/test_golden_playthroughs.py`` (or run this
file as a script), and review the diff.
"""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path
from typing import Any

import pytest

from hearts_engine import (
    Deal,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    apply,
    cards_of,
    format_cards,
    legal_plays,
    new_game,
    parse_cards,
    result,
    seeded_deck,
)

from .conftest import random_policy

GOLDEN = Path(__file__).parent / "golden"
GAMES: dict[int, tuple[Rules, int]] = {
    1: (Rules(), 0),
    2: (
        Rules(
            can_lead_any_club=True,
            queen_breaks_hearts=True,
            jack_of_diamonds_bonus=True,
            avoid_all_tricks_bonus=True,
        ),
        1,
    ),
    3: (
        Rules(
            pass_cards=False,
            no_points_on_first_trick=False,
            must_break_hearts=False,
            can_lead_hearts_instead_of_queen=True,
            moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER,
            target_score=150,
        ),
        3,
    ),
}
POLICY = (
    "random.Random(seed); passing: rng.choice(seats_to_act) then rng.sample(legal_passes, 3); "
    "playing: rng.choice(legal_plays(state, state.turn)); round r is dealt seeded_deck(seed, r)"
)


def playthrough(seed: int, rules: Rules, first_dealer: int) -> dict[str, Any]:
    """Play the seeded game with the fixed policy and write down everything."""
    rng = random.Random(seed)
    state = new_game(rules, first_dealer=first_dealer)
    rounds: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    plays: list[str] = []
    while state.phase != Phase.GAME_OVER:
        if state.phase == Phase.DEALING:
            deck = seeded_deck(seed, state.round_index)
            current = {
                "round_index": state.round_index,
                "dealer": state.dealer,
                "pass_direction": state.pass_direction.name,
                "deck": format_cards(deck),
                "pass_order": [],
                "passes": ["", "", "", ""],
                "plays": "",
                "legal_counts": [],
            }
            plays = []
            state = apply(state, Deal(deck))
            continue
        action = random_policy(state, rng)
        if isinstance(action, PassCards):
            current["pass_order"].append(action.seat)
            current["passes"][action.seat] = format_cards(action.cards)
        else:
            assert isinstance(action, PlayCard)
            current["legal_counts"].append(len(legal_plays(state, state.turn)))
            plays.append(str(action.card))
        round_index = state.round_index
        state = apply(state, action)
        if state.phase == Phase.GAME_OVER or state.round_index != round_index:
            record = state.rounds[-1]
            current["plays"] = " ".join(plays)
            current["points"] = list(record.points)
            current["moon_shooter"] = record.moon_shooter
            current["totals"] = list(state.totals)
            rounds.append(current)
    final = result(state)
    assert final is not None
    return {
        "seed": seed,
        "first_dealer": first_dealer,
        "rules": rules.to_dict(),
        "policy": POLICY,
        "rounds": rounds,
        "totals": list(final.totals),
        "winners": list(final.winners),
        "losers": list(final.losers),
    }


def golden_path(seed: int) -> Path:
    return GOLDEN / f"seed_{seed}.json"


def regenerate() -> None:
    GOLDEN.mkdir(exist_ok=True)
    for seed, (rules, first_dealer) in GAMES.items():
        data = playthrough(seed, rules, first_dealer)
        golden_path(seed).write_text(dump(data))


def dump(data: dict[str, Any]) -> str:
    """Indented JSON with every list of plain values on one line, so a diff reads by round."""
    text = json.dumps(data, indent=1)
    flat = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: f"[{' '.join(m.group(1).split())}]", text)
    return flat + "\n"


def load(seed: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(golden_path(seed).read_text())
    return data


@pytest.fixture(scope="module", autouse=True)
def _maybe_regenerate() -> None:
    if os.environ.get("HEARTS_REGENERATE_GOLDEN") == "1":
        regenerate()


@pytest.mark.parametrize("seed", sorted(GAMES))
def test_policy_reproduces_the_golden_playthrough(seed: int) -> None:
    rules, first_dealer = GAMES[seed]
    expected = load(seed)
    actual = playthrough(seed, rules, first_dealer)
    assert Rules.from_dict(expected["rules"]) == rules
    for want, got in zip(expected["rounds"], actual["rounds"], strict=False):
        assert got == want, f"seed={seed} round={want['round_index']}"
    assert actual == expected, f"seed={seed}"


@pytest.mark.parametrize("seed", sorted(GAMES))
def test_golden_actions_replay_to_the_golden_scores(seed: int) -> None:
    """The stored actions alone, without the policy, give the stored legal counts and points."""
    data = load(seed)
    rules = Rules.from_dict(data["rules"])
    state = new_game(rules, first_dealer=data["first_dealer"])
    for stored in data["rounds"]:
        where = f"seed={seed} round={stored['round_index']}"
        assert state.round_index == stored["round_index"], where
        assert state.dealer == stored["dealer"], where
        assert state.pass_direction.name == stored["pass_direction"], where
        state = apply(state, Deal(parse_cards(stored["deck"])))
        for seat in stored["pass_order"]:
            state = apply(state, PassCards(seat, parse_cards(stored["passes"][seat])))
        counts = []
        for card in parse_cards(stored["plays"]):
            counts.append(len(legal_plays(state, state.turn)))
            state = apply(state, PlayCard(state.turn, card))
        assert counts == stored["legal_counts"], where
        record = state.rounds[-1]
        assert list(record.points) == stored["points"], where
        assert record.moon_shooter == stored["moon_shooter"], where
        assert list(state.totals) == stored["totals"], where
        assert [format_cards(cards) for cards in record.passes] == [
            format_cards(sorted(parse_cards(p))) for p in stored["passes"]
        ], where
        assert format_cards(record.deck) == stored["deck"], where
        assert cards_of(0) == ()
    assert state.phase == Phase.GAME_OVER
    final = result(state)
    assert final is not None
    assert [list(final.totals), list(final.winners), list(final.losers)] == [
        data["totals"],
        data["winners"],
        data["losers"],
    ]


if __name__ == "__main__":
    regenerate()
