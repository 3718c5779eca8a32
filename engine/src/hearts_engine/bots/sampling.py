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

:func:`sample_hands` deals the unknown cards to the other seats respecting all of that, and draws
every deal that does with the same probability: nothing the seat knows favours one of them. Each
hidden card may go to some of the three other seats (its *pattern*), so a deal is fixed, up to
which cards of a pattern go where, by how many cards of each two-seat pattern go to each of its
seats (cards of a one-seat pattern have no choice, and the cards any seat may hold fill what is
left). The deals of one such split are counted in closed form (binomials, and a multinomial for
the free cards), so a split is drawn with the weight of its deals, and then the cards within it
uniformly: exact, with no retries and no dead ends. The splits and their weights depend only on
what the seat knows, so they are worked out once for all the deals a decision draws.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import math
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


@dataclasses.dataclass(frozen=True, slots=True)
class _Plan:
    """The deals of the hidden cards that fit a :class:`Knowledge`, by split (see the module)."""

    cards: tuple[tuple[int, ...], ...]
    """The hidden cards of each pattern (bit ``i`` set: ``others[i]`` may hold it), by pattern."""
    splits: tuple[tuple[int, int, int, int, int, int], ...]
    """Per split: how many cards of patterns 3, 5 and 6 go to the first seat of the pattern (the
    rest to the second), then how many free cards each of the three seats takes."""
    bounds: tuple[int, ...]
    """The running total of the splits' numbers of deals, to draw a split by its weight."""


# The two seats (indexes into Knowledge.others) of each two-seat pattern.
_PAIRS = ((3, 0, 1), (5, 0, 2), (6, 1, 2))


@functools.lru_cache(maxsize=64)
def _plan(knowledge: Knowledge, use_voids: bool) -> _Plan:
    """Every split of the hidden cards that fits ``knowledge``, with its number of deals."""
    others = knowledge.others
    by_pattern: list[list[int]] = [[] for _ in range(8)]
    for hidden in cards_of(knowledge.unknown):
        pattern = 7
        if use_voids:
            pattern = 0
            for i, other in enumerate(others):
                if knowledge.allowed[other] >> hidden & 1:
                    pattern |= 1 << i
        by_pattern[pattern].append(hidden)
    n = [len(cards) for cards in by_pattern]
    # What each seat has room for once the cards only it may hold are in.
    room = [knowledge.need[s] - n[1 << i] for i, s in enumerate(others)]
    splits = []
    bounds = []
    total = 0
    if not n[0] and min(room) >= 0 and sum(room) == n[3] + n[5] + n[6] + n[7]:
        for k3 in range(n[3] + 1):
            for k5 in range(n[5] + 1):
                for k6 in range(n[6] + 1):
                    free = (
                        room[0] - k3 - k5,
                        room[1] - (n[3] - k3) - k6,
                        room[2] - (n[5] - k5) - (n[6] - k6),
                    )
                    if min(free) < 0:
                        continue
                    deals = (
                        math.comb(n[3], k3)
                        * math.comb(n[5], k5)
                        * math.comb(n[6], k6)
                        * math.factorial(n[7])
                        // (
                            math.factorial(free[0])
                            * math.factorial(free[1])
                            * math.factorial(free[2])
                        )
                    )
                    total += deals
                    splits.append((k3, k5, k6, *free))
                    bounds.append(total)
    if not splits:
        raise ValueError("no deal of the hidden cards fits what the seat knows")
    return _Plan(tuple(map(tuple, by_pattern)), tuple(splits), tuple(bounds))


def sample_hands(
    knowledge: Knowledge, rng: random.Random, *, use_voids: bool = True
) -> dict[int, tuple[Card, ...]]:
    """One guess of the other seats' hands, consistent with ``knowledge``, each such deal as
    likely as any other.

    With ``use_voids=False`` only hand sizes and the viewer's passes constrain the deal (a
    fallback for a view whose inferences contradict each other, which legal play never yields).
    Raises ``ValueError`` if no deal fits.
    """
    plan = _plan(knowledge, use_voids)
    split = plan.splits[bisect.bisect_right(plan.bounds, rng.randrange(plan.bounds[-1]))]
    others = knowledge.others
    hands = [knowledge.fixed[s] for s in others]
    for i in range(3):
        for card in plan.cards[1 << i]:
            hands[i] |= 1 << card
    for (pattern, first, second), count in zip(_PAIRS, split[:3], strict=True):
        cards = list(plan.cards[pattern])
        rng.shuffle(cards)
        for index, card in enumerate(cards):
            hands[first if index < count else second] |= 1 << card
    free = list(plan.cards[7])
    rng.shuffle(free)
    position = 0
    for i, count in enumerate(split[3:]):
        for card in free[position : position + count]:
            hands[i] |= 1 << card
        position += count
    return {other: cards_of(hands[i]) for i, other in enumerate(others)}
