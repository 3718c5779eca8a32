"""State and round records to and from plain JSON-compatible dicts, never pickle.

The dict carries ``schema`` (:data:`SCHEMA_VERSION`); cards are written in notation so a stored
game is readable by a person and by any language. :func:`state_from_dict` validates what it reads
and rebuilds an equal state (``state_from_dict(state_to_dict(s)) == s``). A schema change bumps the
version and adds a migration here; an unknown version is refused, not guessed at.
"""

from __future__ import annotations

from typing import Any

from hearts_engine.cards import Card, cards_of, format_cards, mask_of, parse_cards
from hearts_engine.errors import HeartsError, MalformedError, MalformedReason
from hearts_engine.game import Phase, RoundRecord, State, Trick, _assemble
from hearts_engine.rules import Rules

__all__ = [
    "SCHEMA_VERSION",
    "record_from_dict",
    "record_to_dict",
    "state_from_dict",
    "state_to_dict",
]

SCHEMA_VERSION = 1


def _trick_to_dict(trick: Trick) -> dict[str, Any]:
    return {"leader": trick.leader, "cards": format_cards(trick.cards), "winner": trick.winner}


def _trick_from_dict(data: dict[str, Any]) -> Trick:
    return Trick(int(data["leader"]), parse_cards(data["cards"]), int(data["winner"]))


def record_to_dict(record: RoundRecord) -> dict[str, Any]:
    """A round record as a JSON-compatible dict."""
    return {
        "round_index": record.round_index,
        "dealer": record.dealer,
        "deck": format_cards(record.deck),
        "passes": [format_cards(cards) for cards in record.passes],
        "tricks": [_trick_to_dict(trick) for trick in record.tricks],
        "points": list(record.points),
        "moon_shooter": record.moon_shooter,
    }


def record_from_dict(data: dict[str, Any]) -> RoundRecord:
    """The inverse of :func:`record_to_dict`."""
    try:
        return RoundRecord(
            int(data["round_index"]),
            int(data["dealer"]),
            parse_cards(data["deck"]),
            tuple(parse_cards(cards) for cards in data["passes"]),
            tuple(_trick_from_dict(trick) for trick in data["tricks"]),
            tuple(int(p) for p in data["points"]),
            None if data["moon_shooter"] is None else int(data["moon_shooter"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, HeartsError):
            raise
        raise MalformedError(MalformedReason.INVALID_STATE, f"bad round record: {error}") from None


def state_to_dict(state: State) -> dict[str, Any]:
    """A state as a JSON-compatible dict with a schema version."""
    return {
        "schema": SCHEMA_VERSION,
        "rules": state.rules.to_dict(),
        "phase": state.phase.name,
        "round_index": state.round_index,
        "first_dealer": state.first_dealer,
        "deck": format_cards(state.deck),
        "hands": [format_cards(cards_of(mask)) for mask in state.hands],
        "passed": [format_cards(cards_of(mask)) for mask in state.passed],
        "turn": state.turn,
        "leader": state.leader,
        "trick": format_cards(state.trick),
        "tricks": [_trick_to_dict(trick) for trick in state.tricks],
        "hearts_broken": state.hearts_broken,
        "taken": [format_cards(cards_of(mask)) for mask in state.taken],
        "totals": list(state.totals),
        "rounds": [record_to_dict(record) for record in state.rounds],
    }


def _four_masks(values: Any) -> tuple[int, int, int, int]:
    if not isinstance(values, list) or len(values) != 4:
        raise MalformedError(MalformedReason.INVALID_STATE, "expected four seats' cards")
    m = [mask_of(parse_cards(v)) for v in values]
    return (m[0], m[1], m[2], m[3])


def state_from_dict(data: dict[str, Any]) -> State:
    """The inverse of :func:`state_to_dict`; refuses unknown schema versions."""
    if not isinstance(data, dict):
        raise MalformedError(MalformedReason.INVALID_STATE, "a state is an object")
    if data.get("schema") != SCHEMA_VERSION:
        raise MalformedError(
            MalformedReason.INVALID_STATE, f"unsupported state schema {data.get('schema')!r}"
        )
    try:
        totals = tuple(int(t) for t in data["totals"])
        if len(totals) != 4:
            raise ValueError("four totals")
        deck: tuple[Card, ...] = parse_cards(data["deck"])
        return _assemble(
            rules=Rules.from_dict(data["rules"]),
            phase=Phase[data["phase"]],
            round_index=int(data["round_index"]),
            first_dealer=int(data["first_dealer"]),
            deck=deck,
            hands=_four_masks(data["hands"]),
            passed=_four_masks(data["passed"]),
            turn=int(data["turn"]),
            leader=int(data["leader"]),
            trick=parse_cards(data["trick"]),
            tricks=tuple(_trick_from_dict(trick) for trick in data["tricks"]),
            hearts_broken=bool(data["hearts_broken"]),
            taken=_four_masks(data["taken"]),
            totals=totals,
            rounds=tuple(record_from_dict(record) for record in data["rounds"]),
        )
    except (KeyError, TypeError, ValueError) as error:
        if isinstance(error, HeartsError):
            raise
        raise MalformedError(MalformedReason.INVALID_STATE, f"bad state: {error!r}") from None
