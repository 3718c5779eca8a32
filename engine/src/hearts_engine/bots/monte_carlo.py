"""Perfect-information Monte Carlo: guess the hidden hands, play every candidate out, keep the best.

For one decision the bot draws deals of the hidden cards that agree with everything its seat
knows (:mod:`hearts_engine.bots.sampling`), rebuilds a full state from each with
:func:`~hearts_engine.views.determinize`, and for each candidate card plays the rest of the round
out with the heuristic's card rules for all four seats (no moon blocking inside a playout),
scored by the engine. Every candidate is tried on the
same deals, so their difference is measured with little noise. Half the budget goes to every
candidate, the rest to those not clearly worse than the best so far. It plays the card with the
lowest mean points for itself.

Cards that are interchangeable are tried once: two cards of a suit with no card between them
left in another hand win and lose exactly the same tricks (the queen of spades, and the jack of
diamonds when it scores, are never merged).

The budget is a number of playouts per decision (spread over the candidates), which keeps the bot
deterministic. A ``time_budget_ms`` instead samples until the time is up; the decision then
depends on the machine's speed and load, so it is no longer reproducible from the seed.
"""

from __future__ import annotations

import enum
import functools
import math
import statistics
import time

from hearts_engine.bots.base import Bot, BotLevel, decision_rng
from hearts_engine.bots.heuristic import (
    choose_heuristic_pass,
    choose_heuristic_play,
    ends_the_game_for_another,
    play_card,
)
from hearts_engine.bots.sampling import Knowledge, infer, sample_hands
from hearts_engine.cards import JACK_OF_DIAMONDS, QUEEN_OF_SPADES, Card, Suit
from hearts_engine.game import PlayCard, State, apply
from hearts_engine.playout import play_out
from hearts_engine.views import SeatView, determinize

__all__ = ["DEFAULT_PLAYOUTS", "MonteCarloBot", "Objective"]

DEFAULT_PLAYOUTS = 240
"""Playouts per decision by default: about 25 ms of CPU a decision on average, 63 ms at the 99th
percentile, on a 2.1 GHz Xeon core (see ``docs/bots.md``)."""

_PRUNE_MARGIN = 0.25  # points: a candidate this close to the best is never dropped early


class Objective(enum.StrEnum):
    """What a playout's result is worth to the bot (lower is better)."""

    POINTS = "POINTS"
    """The bot's own points this round."""
    DIFFERENCE = "DIFFERENCE"
    """The bot's points minus the mean of the others' (values the moon shot for the table)."""


def playout(state: State, played: int) -> tuple[int, ...]:
    """Play ``state`` to the end of the round with the heuristic's card rules for every seat
    (without its moon blocking).

    ``played`` is the mask of the cards played so far this round (the heuristic reads it); the
    result is the round's points per seat after moon and bonus rules. It runs on
    :func:`~hearts_engine.playout.play_out`, which plays the engine's rules on mutable values
    and gives what ``apply``-ing the same cards would (playouts about 2.4 times as fast, a decision
    about 1.4 times).
    """
    choose = _play_card_with_jack if state.rules.jack_of_diamonds_bonus else play_card
    return play_out(state, choose, played)


_play_card_with_jack = functools.partial(play_card, jack=True)


def candidates(seat_view: SeatView, played: int) -> list[Card]:
    """One card of each set of interchangeable legal cards, lowest first.

    Two cards of a suit are interchangeable when every card between them is in this hand or
    gone in a completed trick. A card of the current trick is not gone: one of the two may beat
    it and the other not.
    """
    hand = 0
    for card in seat_view.hand:
        hand |= 1 << card
    in_trick = 0
    for card in seat_view.trick:
        in_trick |= 1 << card
    elsewhere = ~(hand | (played & ~in_trick))
    special = {QUEEN_OF_SPADES}
    if seat_view.rules.jack_of_diamonds_bonus:
        special.add(JACK_OF_DIAMONDS)
    chosen: list[Card] = []
    previous = -1
    for card in seat_view.legal:
        between = ((1 << card) - 1) & ~((1 << (previous + 1)) - 1)
        if (
            previous >= 0
            and previous // 13 == card // 13
            and card not in special
            and previous not in special
            and not between & elsewhere
        ):
            previous = card
            continue
        chosen.append(card)
        previous = card
    return chosen


class _Search:
    """The playout values of each candidate card, deal by deal, for one decision."""

    def __init__(
        self,
        seat_view: SeatView,
        knowledge: Knowledge,
        options: list[Card],
        objective: Objective,
        seed: int,
    ) -> None:
        self.seat_view = seat_view
        self.knowledge = knowledge
        self.options = options
        self.difference = objective == Objective.DIFFERENCE
        self.rng = decision_rng(seed, seat_view, "monte-carlo")
        self.use_voids = True
        self.values: list[list[float]] = [[] for _ in options]

    def _deal(self) -> State:
        try:
            hands = sample_hands(self.knowledge, self.rng, use_voids=self.use_voids)
        except ValueError:
            self.use_voids = False  # unreachable after legal play; never crash a table over it
            hands = sample_hands(self.knowledge, self.rng, use_voids=False)
        return determinize(self.seat_view, hands)

    def run(self, alive: list[int], *, deals: int, until: float | None = None) -> None:
        """Play every candidate in ``alive`` out on ``deals`` new deals (or until ``until``)."""
        seat = self.knowledge.seat
        played = self.knowledge.played
        for _ in range(deals):
            world = self._deal()
            for index in alive:
                card = self.options[index]
                points = playout(apply(world, PlayCard(seat, card)), played | 1 << card)
                value = float(points[seat])
                if self.difference:
                    value -= (sum(points) - points[seat]) / 3
                self.values[index].append(value)
            if until is not None and time.perf_counter() >= until:
                break

    def survivors(self, alive: list[int]) -> list[int]:
        """The candidates not clearly worse than the best: paired difference beyond 2 SE."""
        deals = len(self.values[alive[0]])
        best = min(alive, key=lambda i: math.fsum(self.values[i]))
        kept = []
        for index in alive:
            diffs = [a - b for a, b in zip(self.values[index], self.values[best], strict=True)]
            mean = math.fsum(diffs) / deals
            spread = statistics.pstdev(diffs) if deals > 1 else 0.0
            if mean - 2 * spread / math.sqrt(deals) <= _PRUNE_MARGIN:
                kept.append(index)
        return kept


class MonteCarloBot(Bot):
    """Samples hidden hands and plays each candidate out with the heuristic; see the module."""

    level = BotLevel.MONTE_CARLO

    def __init__(
        self,
        *,
        seed: int,
        playouts: int = DEFAULT_PLAYOUTS,
        time_budget_ms: float | None = None,
        objective: Objective | str = Objective.POINTS,
    ) -> None:
        super().__init__(seed=seed)
        if isinstance(playouts, bool) or not isinstance(playouts, int) or playouts < 1:
            raise ValueError(f"playouts must be a positive int, not {playouts!r}")
        if time_budget_ms is not None and not 0 < time_budget_ms < math.inf:
            # An infinite budget would never end a decision (NaN fails the test too).
            raise ValueError(f"time_budget_ms must be positive and finite, not {time_budget_ms!r}")
        self.playouts = playouts
        self.time_budget_ms = time_budget_ms
        self.objective = Objective(str(objective).upper())

    def __repr__(self) -> str:
        budget = (
            f"time_budget_ms={self.time_budget_ms}"
            if self.time_budget_ms is not None
            else f"playouts={self.playouts}"
        )
        return f"MonteCarloBot(seed={self.seed}, {budget}, objective={self.objective!s})"

    def choose_pass(self, seat_view: SeatView) -> tuple[Card, Card, Card]:
        """The heuristic's pass: sampling before any card is played tells little."""
        return choose_heuristic_pass(seat_view)

    def choose_play(self, seat_view: SeatView) -> Card:
        """The candidate with the lowest mean value over the sampled deals."""
        if len(seat_view.legal) == 1:
            return seat_view.legal[0]
        seat = seat_view.seat
        assert seat is not None
        knowledge = infer(seat_view)
        options = candidates(seat_view, knowledge.played)
        if ends_the_game_for_another(seat_view):
            # Playouts score this round only: points that end the game with another seat
            # winning it look as cheap as anywhere else there.
            clean = [
                card for card in options if card.suit is not Suit.HEARTS and card != QUEEN_OF_SPADES
            ]
            options = clean or options
        if len(options) == 1:
            return options[0]
        search = _Search(seat_view, knowledge, options, self.objective, self.seed)
        # Two stages: half the budget on every candidate, then the rest on the candidates that
        # are not clearly worse than the best so far (all of them tried on the same deals).
        everyone = list(range(len(options)))
        if self.time_budget_ms is None:
            first = max(2, math.ceil(self.playouts / (2 * len(options))))
            search.run(everyone, deals=first)
            alive = search.survivors(everyone)
            if len(alive) > 1:
                rest = self.playouts - first * len(options)
                search.run(alive, deals=max(0, rest // len(alive)))
        else:
            start = time.perf_counter()
            half = self.time_budget_ms / 2000
            search.run(everyone, deals=1 << 30, until=start + half)
            alive = search.survivors(everyone)
            if len(alive) > 1:
                search.run(alive, deals=1 << 30, until=start + 2 * half)
        totals = [math.fsum(search.values[i]) if i in alive else math.inf for i in everyone]
        # Ties go to the heuristic's card, then to the lowest card; within the chosen set of
        # interchangeable cards, the heuristic's own card if it is one of them.
        preferred = choose_heuristic_play(seat_view)
        home = max(i for i, card in enumerate(options) if card <= preferred or i == 0)
        if options[home] // 13 != preferred // 13:
            home = -1
        best = min(range(len(options)), key=lambda i: (totals[i], i != home, i))
        if best == home:
            return preferred
        return options[best]
