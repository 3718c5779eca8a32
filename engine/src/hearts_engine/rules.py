"""The table of variant flags, one frozen value with the German rules as defaults.

Names follow OpenSpiel's Hearts where it has the same option (``qs_breaks_hearts`` there is
``queen_breaks_hearts`` here), so results can be compared. Options are keyword-only so that a
call never reads as a row of unexplained booleans.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Any

from hearts_engine.errors import MalformedError, MalformedReason

__all__ = ["MoonScoring", "PassDirection", "Rules"]


class MoonScoring(enum.StrEnum):
    """How shooting the moon is scored."""

    ADD_TO_OTHERS = "ADD_TO_OTHERS"
    """The shooter scores 0 and each other player 26 (the German rules)."""
    SUBTRACT_FROM_SHOOTER = "SUBTRACT_FROM_SHOOTER"
    """The shooter scores -26 and the others 0."""


class PassDirection(enum.IntEnum):
    """Where passed cards go; the value is the seat offset clockwise (HOLD passes nothing)."""

    HOLD = 0
    LEFT = 1
    ACROSS = 2
    RIGHT = 3


_CYCLE = (PassDirection.LEFT, PassDirection.ACROSS, PassDirection.RIGHT, PassDirection.HOLD)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class Rules:
    """Every option of the rules page, with the German rules as defaults.

    >>> Rules().queen_breaks_hearts
    False
    >>> Rules(target_score=50).pass_direction(3)
    <PassDirection.HOLD: 0>
    """

    pass_cards: bool = True
    no_points_on_first_trick: bool = True
    can_lead_any_club: bool = False
    must_break_hearts: bool = True
    queen_breaks_hearts: bool = False
    can_lead_hearts_instead_of_queen: bool = False
    jack_of_diamonds_bonus: bool = False
    avoid_all_tricks_bonus: bool = False
    target_score: int = 100
    moon_scoring: MoonScoring = MoonScoring.ADD_TO_OTHERS

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type == "bool" and not isinstance(value, bool):
                raise MalformedError(
                    MalformedReason.INVALID_RULES, f"{field.name} must be true or false"
                )
        if (
            isinstance(self.target_score, bool)
            or not isinstance(self.target_score, int)
            or not 1 <= self.target_score <= 10_000
        ):
            raise MalformedError(
                MalformedReason.INVALID_RULES, "target_score must be a whole number 1..10000"
            )
        if not isinstance(self.moon_scoring, MoonScoring):
            try:
                object.__setattr__(self, "moon_scoring", MoonScoring(self.moon_scoring))
            except ValueError:
                raise MalformedError(
                    MalformedReason.INVALID_RULES, f"unknown moon_scoring {self.moon_scoring!r}"
                ) from None

    def pass_direction(self, round_index: int) -> PassDirection:
        """The pass direction of a round (0-based): left, across, right, hold, repeat."""
        if not self.pass_cards:
            return PassDirection.HOLD
        return _CYCLE[round_index % 4]

    def to_dict(self) -> dict[str, Any]:
        """The options as a JSON-compatible dict."""
        data = dataclasses.asdict(self)
        data["moon_scoring"] = str(self.moon_scoring)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        """Rules from a dict such as :meth:`to_dict` gives; missing keys take their defaults."""
        if not isinstance(data, dict):
            raise MalformedError(MalformedReason.INVALID_RULES, "rules must be an object")
        names = {field.name for field in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise MalformedError(
                MalformedReason.INVALID_RULES, f"unknown rules options: {sorted(unknown)}"
            )
        return cls(**data)
