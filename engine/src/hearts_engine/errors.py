"""The engine's two error types and their stable reason codes.

:class:`MalformedError` means the input is not a well-formed value at all (not a card, a seat out
of range, a deck that is not 52 distinct cards). :class:`IllegalActionError` means a well-formed
action that the rules forbid now. Each carries a reason from a ``StrEnum``; the reason strings are
part of the public contract: the server puts them unchanged into API errors, and clients match on
them. Never rename a member; add new ones.
"""

from __future__ import annotations

import enum

__all__ = ["HeartsError", "IllegalActionError", "MalformedError", "MalformedReason", "Reason"]


class Reason(enum.StrEnum):
    """Why a well-formed action was refused."""

    WRONG_PHASE = "WRONG_PHASE"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    CARD_NOT_IN_HAND = "CARD_NOT_IN_HAND"
    MUST_LEAD_TWO_OF_CLUBS = "MUST_LEAD_TWO_OF_CLUBS"
    MUST_LEAD_CLUB = "MUST_LEAD_CLUB"
    MUST_FOLLOW_SUIT = "MUST_FOLLOW_SUIT"
    NO_POINTS_ON_FIRST_TRICK = "NO_POINTS_ON_FIRST_TRICK"
    HEARTS_NOT_BROKEN = "HEARTS_NOT_BROKEN"
    WRONG_PASS_COUNT = "WRONG_PASS_COUNT"
    DUPLICATE_CARD = "DUPLICATE_CARD"
    ALREADY_PASSED = "ALREADY_PASSED"
    GAME_OVER = "GAME_OVER"


class MalformedReason(enum.StrEnum):
    """Why an input is not a well-formed value."""

    INVALID_CARD = "INVALID_CARD"
    INVALID_SEAT = "INVALID_SEAT"
    INVALID_DECK = "INVALID_DECK"
    INVALID_ACTION = "INVALID_ACTION"
    INVALID_RULES = "INVALID_RULES"
    INVALID_STATE = "INVALID_STATE"


class HeartsError(Exception):
    """Base of the engine's errors; ``reason`` is a stable machine-readable code."""

    reason: str

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.reason!s}, {str(self)!r})"

    def __reduce__(self) -> tuple[type[HeartsError], tuple[str, str]]:
        # Errors cross process boundaries (bot workers); the default pickling of an exception
        # calls __init__ with the message alone.
        return (type(self), (self.reason, str(self)))


class MalformedError(HeartsError, ValueError):
    """The input is not a well-formed card, seat, deck, action, rules or state."""

    reason: MalformedReason

    def __init__(self, reason: MalformedReason, message: str) -> None:
        super().__init__(reason, message)


class IllegalActionError(HeartsError):
    """A well-formed action that the rules do not allow in this state."""

    reason: Reason

    def __init__(self, reason: Reason, message: str) -> None:
        super().__init__(reason, message)
