"""The stored form of a table: seats, settings, the engine state and the last event sequence.

A record is a frozen value encoded as compact JSON (the engine state inside it uses the engine's
own versioned dict form). It holds secrets (every hand, the deck seed), so it never leaves the
server: responses are built from engine views only (:mod:`hearts_server.convert`).
"""

from __future__ import annotations

import dataclasses
import enum
import json
from typing import Any

from hearts_engine import Phase, Rules, State, state_from_dict, state_to_dict
from hearts_engine.bots import BotLevel

__all__ = ["Occupant", "SeatRecord", "TableRecord"]

RECORD_SCHEMA = 1


class Occupant(enum.StrEnum):
    """Who sits in a seat."""

    EMPTY = "EMPTY"
    HUMAN = "HUMAN"
    BOT = "BOT"


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat. ``epoch`` goes up whenever a human leaves it, revoking its old tokens."""

    occupant: Occupant = Occupant.EMPTY
    name: str = ""
    bot_level: BotLevel | None = None
    epoch: int = 0


@dataclasses.dataclass(frozen=True, slots=True)
class TableRecord:
    """Everything stored about a table."""

    table_id: str
    display_name: str
    rules: Rules
    first_dealer: int
    seats: tuple[SeatRecord, ...]
    create_ms: int
    update_ms: int
    sequence: int
    deck_seed: int | None
    bot_seed: int
    creator_epoch: int = 0
    game: State | None = None

    @property
    def phase_over(self) -> bool:
        """Whether the game has ended."""
        return self.game is not None and self.game.phase == Phase.GAME_OVER

    @property
    def has_free_seat(self) -> bool:
        """Whether a human could still join."""
        return any(seat.occupant == Occupant.EMPTY for seat in self.seats)

    def to_json(self) -> bytes:
        """The record as UTF-8 JSON."""
        data: dict[str, Any] = {
            "schema": RECORD_SCHEMA,
            "id": self.table_id,
            "name": self.display_name,
            "rules": self.rules.to_dict(),
            "first_dealer": self.first_dealer,
            "seats": [
                [
                    seat.occupant.value,
                    seat.name,
                    seat.bot_level and seat.bot_level.value,
                    seat.epoch,
                ]
                for seat in self.seats
            ],
            "create_ms": self.create_ms,
            "update_ms": self.update_ms,
            "seq": self.sequence,
            "deck_seed": self.deck_seed,
            "bot_seed": self.bot_seed,
            "creator_epoch": self.creator_epoch,
            "game": None if self.game is None else state_to_dict(self.game),
        }
        return json.dumps(data, separators=(",", ":")).encode()

    @classmethod
    def from_json(cls, raw: bytes) -> TableRecord:
        """The inverse of :meth:`to_json`."""
        data = json.loads(raw)
        if data.get("schema") != RECORD_SCHEMA:
            raise ValueError(f"unsupported table record schema {data.get('schema')!r}")
        return cls(
            table_id=data["id"],
            display_name=data["name"],
            rules=Rules.from_dict(data["rules"]),
            first_dealer=data["first_dealer"],
            seats=tuple(
                SeatRecord(Occupant(occ), name, BotLevel(level) if level else None, epoch)
                for occ, name, level, epoch in data["seats"]
            ),
            create_ms=data["create_ms"],
            update_ms=data["update_ms"],
            sequence=data["seq"],
            deck_seed=data["deck_seed"],
            bot_seed=data["bot_seed"],
            creator_epoch=data["creator_epoch"],
            game=None if data["game"] is None else state_from_dict(data["game"]),
        )
