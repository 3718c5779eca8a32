"""The weakest bot: uniform over the legal cards, three uniformly random cards to pass."""

from __future__ import annotations

from hearts_engine.bots.base import Bot, BotLevel, decision_rng
from hearts_engine.cards import Card
from hearts_engine.views import SeatView

__all__ = ["RandomBot"]


class RandomBot(Bot):
    """Plays any legal card and passes any three cards, each choice uniform and seeded."""

    level = BotLevel.RANDOM

    def choose_pass(self, seat_view: SeatView) -> tuple[Card, Card, Card]:
        """Three distinct cards of the hand, uniformly at random."""
        a, b, c = sorted(decision_rng(self.seed, seat_view).sample(seat_view.legal, 3))
        return a, b, c

    def choose_play(self, seat_view: SeatView) -> Card:
        """One of the legal cards, uniformly at random."""
        return decision_rng(self.seed, seat_view).choice(seat_view.legal)
