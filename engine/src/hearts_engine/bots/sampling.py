"""Guessing the hidden hands: what a seat can infer, and deals drawn consistent with it.

From a playing-phase view a seat knows its own hand, every card played and who played it, the
cards it passed (they sit with the seat it passed them to until that seat plays them) and how
many cards each seat holds. Play also reveals holes in other hands:

* a seat that did not follow suit holds none of the led suit;
* on the first trick, a seat that played a heart or the queen of spades (when the rules forbid
  points there) held nothing but hearts and the queen;
* a seat that led a heart before hearts were broken held nothing but hearts (and, under
  ``can_lead_hearts_instead_of_queen``, perhaps the queen of spades);
* the holder of the two of clubs leads the first trick, so when the first lead is another club
  (``can_lead_any_club``), the two is in the leader's hand until it is played.

:func:`sample_hands` deals the unknown cards to the other seats respecting all of that. It assigns
the most constrained cards first and, before each choice, checks Hall's condition for the three
seats (every set of seats can still absorb the cards only it may take), so it never dead-ends and
never retries. Unconstrained cards are shuffled and dealt last, which makes the deal uniform when
nothing constrains it.
"""

from __future__ import annotations

import dataclasses
import random

from hearts_engine.cards import (
    HEARTS_MASK,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    TWO_OF_CLUBS,
    Card,
    cards_of,
)
from hearts_engine.views import SeatView

__all__ = ["Knowledge", "infer", "sample_hands"]

_FULL = (1 << 52) - 1
_QS_BIT = 1 << QUEEN_OF_SPADES
_POINTS = HEARTS_MASK | _QS_BIT


@dataclasses.dataclass(frozen=True, slots=True)
class Knowledge:
    """What one seat knows about where the cards it cannot see are."""

    seat: int
    others: tuple[int, int, int]
    """The other three seats, clockwise from the viewer's left."""
    unknown: int
    """Mask of the cards whose holder the seat does not know."""
    fixed: tuple[int, int, int, int]
    """Per seat, the cards known to be in its hand (the viewer's passes it still holds)."""
    allowed: tuple[int, int, int, int]
    """Per seat, the cards it may still hold given what play has shown."""
    need: tuple[int, int, int, int]
    """Per seat, how many unknown cards it holds."""
    played: int
    """Every card played this round, the current trick included."""


def infer(seat_view: SeatView) -> Knowledge:
    """What ``seat_view``'s seat knows about the hidden hands (playing phase only)."""
    seat = seat_view.seat
    assert seat is not None
    rules = seat_view.rules
    allowed = [_FULL, _FULL, _FULL, _FULL]
    played = 0
    broken = False
    plays = [(trick.leader, trick.cards) for trick in seat_view.tricks]
    if seat_view.trick and seat_view.leader is not None:
        plays.append((seat_view.leader, seat_view.trick))
    for number, (leader, cards) in enumerate(plays):
        led = cards[0] // 13
        if led == 2 and not broken and rules.must_break_hearts and number > 0:
            only = HEARTS_MASK | (_QS_BIT if rules.can_lead_hearts_instead_of_queen else 0)
            allowed[leader] &= only
        for index, card in enumerate(cards):
            player = (leader + index) & 3
            played |= 1 << card
            if card // 13 != led:
                allowed[player] &= ~SUIT_MASKS[led]
                if number == 0 and rules.no_points_on_first_trick and (1 << card) & _POINTS:
                    allowed[player] &= _POINTS
            if card // 13 == 2 or (card == QUEEN_OF_SPADES and rules.queen_breaks_hearts):
                broken = True
    fixed = [0, 0, 0, 0]
    hand = 0
    for card in seat_view.hand:
        hand |= 1 << card
    direction = int(seat_view.pass_direction)
    if direction and seat_view.passed:
        passed = 0
        for card in seat_view.passed:
            passed |= 1 << card
        fixed[(seat + direction) & 3] = passed & ~played
    fixed[seat] = hand
    two = 1 << TWO_OF_CLUBS
    if plays and not (hand | played | fixed[0] | fixed[1] | fixed[2] | fixed[3]) & two:
        fixed[plays[0][0]] |= two  # its holder led the first trick, with another club
    known = hand | played | fixed[0] | fixed[1] | fixed[2] | fixed[3]
    need = [0, 0, 0, 0]
    for other in range(4):
        if other != seat:
            need[other] = seat_view.hand_sizes[other] - fixed[other].bit_count()
    allowed[seat] = hand
    return Knowledge(
        seat,
        ((seat + 1) & 3, (seat + 2) & 3, (seat + 3) & 3),
        _FULL & ~known,
        (fixed[0], fixed[1], fixed[2], fixed[3]),
        (allowed[0], allowed[1], allowed[2], allowed[3]),
        (need[0], need[1], need[2], need[3]),
        played,
    )


def _feasible(counts: list[int], caps: list[int]) -> bool:
    """Hall's condition: every seat set can absorb the cards only it may take."""
    for subset in range(1, 8):
        capacity = 0
        for i in range(3):
            if subset >> i & 1:
                capacity += caps[i]
        demand = 0
        for pattern in range(1, 8):
            if pattern & subset == pattern:
                demand += counts[pattern]
        if demand > capacity:
            return False
    return True


def sample_hands(
    knowledge: Knowledge, rng: random.Random, *, use_voids: bool = True
) -> dict[int, tuple[Card, ...]]:
    """One guess of the other seats' hands, consistent with ``knowledge``.

    With ``use_voids=False`` only hand sizes and the viewer's passes constrain the deal (a
    fallback for a view whose inferences contradict each other, which legal play never yields).
    Raises ``ValueError`` if no deal fits.
    """
    others = knowledge.others
    caps = [knowledge.need[s] for s in others]
    by_pattern: list[list[int]] = [[] for _ in range(8)]
    unknown = knowledge.unknown
    for hidden in cards_of(unknown):
        pattern = 0
        if use_voids:
            for i, other in enumerate(others):
                if knowledge.allowed[other] >> hidden & 1:
                    pattern |= 1 << i
        else:
            pattern = 7
        by_pattern[pattern].append(hidden)
    counts = [len(cards) for cards in by_pattern]
    if counts[0] or sum(caps) != unknown.bit_count() or not _feasible(counts, caps):
        raise ValueError("no deal of the hidden cards fits what the seat knows")
    hands = [knowledge.fixed[s] for s in others]
    # Constrained cards first (one or two possible seats), then the free ones.
    for pattern in (1, 2, 4, 3, 5, 6):
        cards = by_pattern[pattern]
        if not cards:
            continue
        rng.shuffle(cards)
        for card in cards:
            counts[pattern] -= 1
            options: list[int] = []
            weights: list[int] = []
            for i in range(3):
                if pattern >> i & 1 and caps[i]:
                    caps[i] -= 1
                    if _feasible(counts, caps):
                        options.append(i)
                        weights.append(caps[i] + 1)
                    caps[i] += 1
            pick = options[0] if len(options) == 1 else rng.choices(options, weights)[0]
            caps[pick] -= 1
            hands[pick] |= 1 << card
    free = by_pattern[7]
    rng.shuffle(free)
    position = 0
    for i in range(3):
        for card in free[position : position + caps[i]]:
            hands[i] |= 1 << card
        position += caps[i]
    return {other: cards_of(hands[i]) for i, other in enumerate(others)}
