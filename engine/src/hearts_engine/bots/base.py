"""What every bot is: a seat's view in, a legal action out, the same action for the same view.

A bot never sees a :class:`~hearts_engine.game.State`: it is handed the
:class:`~hearts_engine.views.SeatView` of the seat it plays, exactly what a human at that seat may
know. It holds no memory between calls, and the randomness of each decision is drawn from a
generator seeded by the bot's seed and the decision point (round, trick, position, seat), so the
same view always gets the same decision, whatever was asked before. The server is stateless and
may build a fresh bot for every call; that must not change how the bot plays.
"""

from __future__ import annotations

import abc
import enum
import hashlib
import random

from hearts_engine.cards import Card
from hearts_engine.errors import IllegalActionError, MalformedError, MalformedReason, Reason
from hearts_engine.game import Action, PassCards, Phase, PlayCard
from hearts_engine.views import SeatView

__all__ = ["Bot", "BotLevel", "decision_rng"]


class BotLevel(enum.StrEnum):
    """How strong a bot plays, weakest first."""

    RANDOM = "RANDOM"
    """Any legal card, any three cards to pass, uniformly at random."""
    HEURISTIC = "HEURISTIC"
    """Rule-of-thumb play: pass danger, duck, dump the queen, block a visible moon shot."""
    MONTE_CARLO = "MONTE_CARLO"
    """Samples the hidden hands and plays each candidate card out with the heuristic."""


def decision_rng(seed: int, seat_view: SeatView, salt: str = "") -> random.Random:
    """A generator that depends only on ``seed`` and where ``seat_view`` stands in the game.

    The key is the round, the number of completed tricks, the number of cards in the current
    trick, the seat and the phase, hashed with SHA-256 so that nearby seeds give unrelated
    streams and the stream is the same on every platform and Python version.
    """
    key = (
        f"hearts-bot:{salt}:{seed}:{seat_view.round_index}:{seat_view.phase.name}:"
        f"{len(seat_view.tricks)}:{len(seat_view.trick)}:{seat_view.seat}"
    )
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:16], "big"))


class Bot(abc.ABC):
    """A player that decides from one seat's view.

    Subclasses implement :meth:`choose_pass` and :meth:`choose_play`; :meth:`decide` wraps the
    choice in the action the engine expects. Every method may be called with any view, in any
    order, by any number of fresh instances: a decision depends only on the seed, the options and
    the view.
    """

    level: BotLevel
    seed: int

    def __init__(self, *, seed: int) -> None:
        if isinstance(seed, bool) or not isinstance(seed, int):
            raise TypeError(f"a bot seed is an int, not {seed!r}")
        self.seed = seed

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"

    @abc.abstractmethod
    def choose_pass(self, seat_view: SeatView) -> tuple[Card, Card, Card]:
        """The three cards to pass; called only while ``seat_view.pass_count`` is 3."""

    @abc.abstractmethod
    def choose_play(self, seat_view: SeatView) -> Card:
        """The card to play, one of ``seat_view.legal``; called only on the seat's turn."""

    def decide(self, seat_view: SeatView) -> Action:
        """The action this seat owes now: :class:`PassCards` or :class:`PlayCard`.

        Raises :class:`~hearts_engine.errors.IllegalActionError` when the seat owes nothing
        (``WRONG_PHASE`` outside passing and play, ``NOT_YOUR_TURN`` during another seat's turn
        or after this seat has passed).
        """
        seat = seat_view.seat
        if seat is None:
            raise MalformedError(
                MalformedReason.INVALID_SEAT, "a bot plays a seat, not a spectator"
            )
        if seat_view.phase == Phase.PASSING and seat_view.pass_count:
            return PassCards(seat, self.choose_pass(seat_view))
        if seat_view.phase == Phase.PLAYING and seat_view.legal:
            return PlayCard(seat, self.choose_play(seat_view))
        if seat_view.phase in (Phase.PASSING, Phase.PLAYING):
            raise IllegalActionError(Reason.NOT_YOUR_TURN, f"seat {seat} owes no action now")
        raise IllegalActionError(
            Reason.WRONG_PHASE, f"nothing to decide while the game is {seat_view.phase.name}"
        )
