"""Domain events, each marked with its audience: everyone, or one seat only.

The engine decides here, in one place, who may see what: an event whose ``audience`` is a seat
number carries that seat's secrets (its dealt hand, the cards it passed or received) and must be
shown to that seat alone; an event whose audience is ``None`` is public. The server stores events
and streams each one only to the audience it names, so a leak is impossible without a bug here.

Events are frozen values with a ``kind`` string that is stable across versions.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from hearts_engine.cards import Card
from hearts_engine.rules import PassDirection

__all__ = [
    "CardPlayed",
    "CardsPassed",
    "CardsReceived",
    "Event",
    "GameOver",
    "HandDealt",
    "HeartsBroken",
    "RoundScored",
    "RoundStarted",
    "SeatPassed",
    "TrickWon",
    "visible_to",
]


@dataclasses.dataclass(frozen=True, slots=True)
class Event:
    """Base of all events."""

    kind: ClassVar[str] = "EVENT"

    @property
    def audience(self) -> int | None:
        """The one seat that may see this event, or ``None`` when everyone may."""
        return None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-compatible dict; cards as notation."""
        data: dict[str, Any] = {"kind": self.kind}
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            data[field.name] = _plain(value)
        return data


def _plain(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, tuple):
        return [_plain(item) for item in value]
    if isinstance(value, PassDirection):
        return value.name
    return value


@dataclasses.dataclass(frozen=True, slots=True)
class RoundStarted(Event):
    """A round was dealt; passing (or play, in a hold round) begins."""

    kind: ClassVar[str] = "ROUND_STARTED"
    round_index: int
    dealer: int
    pass_direction: PassDirection


@dataclasses.dataclass(frozen=True, slots=True)
class HandDealt(Event):
    """The 13 cards dealt to one seat. Private to that seat."""

    kind: ClassVar[str] = "HAND_DEALT"
    seat: int
    cards: tuple[Card, ...]

    @property
    def audience(self) -> int | None:
        """Only the seat that holds the cards."""
        return self.seat


@dataclasses.dataclass(frozen=True, slots=True)
class CardsPassed(Event):
    """The three cards one seat chose to pass. Private to that seat."""

    kind: ClassVar[str] = "CARDS_PASSED"
    seat: int
    to_seat: int
    cards: tuple[Card, ...]

    @property
    def audience(self) -> int | None:
        """Only the seat that passed them."""
        return self.seat


@dataclasses.dataclass(frozen=True, slots=True)
class SeatPassed(Event):
    """A seat has made its pass (public: who, never what)."""

    kind: ClassVar[str] = "SEAT_PASSED"
    seat: int


@dataclasses.dataclass(frozen=True, slots=True)
class CardsReceived(Event):
    """The three cards a seat received when all passes were made. Private to that seat."""

    kind: ClassVar[str] = "CARDS_RECEIVED"
    seat: int
    from_seat: int
    cards: tuple[Card, ...]

    @property
    def audience(self) -> int | None:
        """Only the seat that received them."""
        return self.seat


@dataclasses.dataclass(frozen=True, slots=True)
class CardPlayed(Event):
    """A seat played a card to the current trick."""

    kind: ClassVar[str] = "CARD_PLAYED"
    seat: int
    card: Card
    trick_index: int


@dataclasses.dataclass(frozen=True, slots=True)
class HeartsBroken(Event):
    """Hearts may be led from the next trick on."""

    kind: ClassVar[str] = "HEARTS_BROKEN"
    seat: int
    card: Card


@dataclasses.dataclass(frozen=True, slots=True)
class TrickWon(Event):
    """A trick is complete; ``cards`` are in play order from ``leader``."""

    kind: ClassVar[str] = "TRICK_WON"
    trick_index: int
    leader: int
    cards: tuple[Card, ...]
    winner: int
    points: int


@dataclasses.dataclass(frozen=True, slots=True)
class RoundScored(Event):
    """A round is over: each seat's points for the round and the new totals."""

    kind: ClassVar[str] = "ROUND_SCORED"
    round_index: int
    points: tuple[int, ...]
    totals: tuple[int, ...]
    moon_shooter: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class GameOver(Event):
    """Someone reached the target score. Winners have the lowest total."""

    kind: ClassVar[str] = "GAME_OVER"
    totals: tuple[int, ...]
    winners: tuple[int, ...]
    losers: tuple[int, ...]


def visible_to(event: Event, seat: int | None) -> bool:
    """Whether ``seat`` (``None`` for a spectator) may see ``event``."""
    audience = event.audience
    return audience is None or audience == seat
