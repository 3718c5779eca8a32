"""Round records as action lists, and replay.

A :class:`~hearts_engine.game.RoundRecord` (deal, passes, tricks) is exported by
:mod:`hearts_engine.serialize` and turned back into the actions that produced it here. Replaying
a round's actions from the state before the round reproduces the state after it exactly, which
the tests check; a replayed record is a strong audit of a finished game.
"""

from __future__ import annotations

from collections.abc import Iterable

from hearts_engine.game import (
    SEATS,
    Action,
    Deal,
    PassCards,
    PlayCard,
    RoundRecord,
    State,
    apply,
    new_game,
)
from hearts_engine.rules import Rules

__all__ = ["replay", "replay_game", "round_actions"]


def round_actions(record: RoundRecord) -> list[Action]:
    """The actions of one round in an order the engine accepts: deal, passes, plays."""
    actions: list[Action] = [Deal(record.deck)]
    for seat in SEATS:
        if record.passes[seat]:
            actions.append(PassCards(seat, record.passes[seat]))
    for trick in record.tricks:
        for index, card in enumerate(trick.cards):
            actions.append(PlayCard(trick.seat_of(index), card))
    return actions


def replay(state: State, actions: Iterable[Action]) -> State:
    """Apply ``actions`` in order; every one is checked as usual."""
    for action in actions:
        state = apply(state, action)
    return state


def replay_game(rules: Rules, records: Iterable[RoundRecord], *, first_dealer: int = 0) -> State:
    """A game rebuilt from its round records."""
    state = new_game(rules, first_dealer=first_dealer)
    for record in records:
        state = replay(state, round_actions(record))
    return state
