"""What one seat, or a spectator, may know: the only way state leaves the engine for a player.

The rules page lists it: a seat sees its own hand, the cards it passed and received, every card
played so far and who played it, who won each trick, the scores, whose turn it is and who has
passed (not what). It never sees another hand or another seat's passes. A spectator sees only the
public part. After the game is over the full history of every round is revealed to everyone.

Bots decide from a :class:`SeatView` alone; :func:`determinize` rebuilds a full state from a view
plus a guess of the hidden hands, which is how the Monte Carlo bot samples worlds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from hearts_engine.cards import HEARTS_MASK, JACK_OF_DIAMONDS, QUEEN_OF_SPADES, Card, cards_of
from hearts_engine.errors import MalformedError, MalformedReason
from hearts_engine.game import (
    _FULL,
    _HAS_PASSED,
    PASS_COUNT,
    GameResult,
    Phase,
    RoundRecord,
    State,
    Trick,
    _assemble,
    _passed_code,
    _seat,
    legal_plays,
    result,
)
from hearts_engine.rules import PassDirection, Rules

__all__ = ["SeatView", "determinize", "spectator_view", "view"]


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class SeatView:
    """Everything ``seat`` may know (``seat`` is ``None`` for a spectator)."""

    seat: int | None
    rules: Rules
    phase: Phase
    round_index: int
    dealer: int
    pass_direction: PassDirection
    hand: tuple[Card, ...]
    """This seat's cards now; empty for a spectator."""
    passed: tuple[Card, ...]
    """The cards this seat passed this round, once it has passed."""
    received: tuple[Card, ...]
    """The cards this seat received, once every seat has passed."""
    has_passed: tuple[bool, ...]
    """Per seat, whether it has made its pass this round."""
    turn: int | None
    leader: int | None
    trick: tuple[Card, ...]
    """The current trick in play order, starting with ``leader``."""
    tricks: tuple[Trick, ...]
    """This round's completed tricks."""
    hearts_broken: bool
    round_points: tuple[int, ...]
    """Points each seat has taken in tricks this round so far (before moon rules)."""
    tricks_won: tuple[int, ...]
    hand_sizes: tuple[int, ...]
    totals: tuple[int, ...]
    round_scores: tuple[tuple[int, ...], ...]
    """Each finished round's points per seat."""
    moon_shooters: tuple[int | None, ...]
    """Each finished round's moon shooter, or None."""
    legal: tuple[Card, ...]
    """The cards this seat may play now, or may pass from; empty if it owes nothing."""
    pass_count: int
    """How many cards this seat must pass now (3 or 0)."""
    result: GameResult | None
    history: tuple[RoundRecord, ...]
    """Every finished round in full, revealed to everyone once the game is over; else empty."""

    @property
    def to_act(self) -> bool:
        """Whether this seat owes an action now."""
        return bool(self.legal)


def _points_taken(mask: int, rules: Rules) -> int:
    points = (mask & HEARTS_MASK).bit_count() + (13 if mask >> QUEEN_OF_SPADES & 1 else 0)
    if rules.jack_of_diamonds_bonus and mask >> JACK_OF_DIAMONDS & 1:
        points -= 10
    return points


_NONE: tuple[Card, ...] = ()


def _view(state: State, seat: int | None) -> SeatView:
    # Read straight from the state's slots (see State): the server builds a view for every
    # command, and the public properties would split the same masks again and again.
    phase, turn, hands, trick, tricks, breaking, taken, fixed = state
    rules, round_index, first_dealer, _, passed_bits, totals, rounds = fixed
    direction = rules.pass_direction(round_index)
    playing = phase is Phase.PLAYING
    hand = passed = received = legal = _NONE
    pass_count = 0
    if seat is not None and (playing or phase is Phase.PASSING):
        shift = 52 * seat
        hand = cards_of(hands >> shift & _FULL)
        own_pass = passed_bits >> shift & _FULL
        if own_pass:
            passed = cards_of(own_pass)
        if playing:
            if direction != PassDirection.HOLD:
                received = cards_of(passed_bits >> 52 * ((seat - direction) & 3) & _FULL)
            if turn == seat:
                legal = legal_plays(state, seat)
        elif not own_pass:
            legal, pass_count = hand, PASS_COUNT
    won = [0, 0, 0, 0]
    for completed in tricks:
        won[completed.winner] += 1
    over = phase is Phase.GAME_OVER
    return SeatView(
        seat=seat,
        rules=rules,
        phase=phase,
        round_index=round_index,
        dealer=(first_dealer + round_index) & 3,
        pass_direction=direction,
        hand=hand,
        passed=passed,
        received=received,
        has_passed=_HAS_PASSED[_passed_code(passed_bits)],
        turn=turn if playing else None,
        leader=(turn - len(trick)) & 3 if playing else None,
        trick=trick,
        tricks=tricks,
        hearts_broken=not breaking,
        round_points=(
            _points_taken(taken & _FULL, rules),
            _points_taken(taken >> 52 & _FULL, rules),
            _points_taken(taken >> 104 & _FULL, rules),
            _points_taken(taken >> 156, rules),
        ),
        tricks_won=(won[0], won[1], won[2], won[3]),
        hand_sizes=(
            (hands & _FULL).bit_count(),
            (hands >> 52 & _FULL).bit_count(),
            (hands >> 104 & _FULL).bit_count(),
            (hands >> 156).bit_count(),
        ),
        totals=totals,
        round_scores=tuple([record.points for record in rounds]),
        moon_shooters=tuple([record.moon_shooter for record in rounds]),
        legal=legal,
        pass_count=pass_count,
        result=result(state) if over else None,
        history=rounds if over else (),
    )


def view(state: State, seat: int) -> SeatView:
    """What ``seat`` may know of ``state``."""
    return _view(state, _seat(seat))


def spectator_view(state: State) -> SeatView:
    """What anyone may know of ``state``: no hand, no pass."""
    return _view(state, None)


def determinize(seat_view: SeatView, hands: Mapping[int, tuple[Card, ...]]) -> State:
    """A full state that agrees with ``seat_view`` and gives the other seats ``hands``.

    ``hands`` must give every other seat exactly as many cards as the view says it holds, and no
    card the viewer can account for. Only for the playing phase; the result's round record is not
    meaningful (the deck is unknown), but play and scoring from it follow the rules exactly.
    """
    if seat_view.seat is None or seat_view.phase != Phase.PLAYING:
        raise MalformedError(MalformedReason.INVALID_STATE, "determinize a seat's playing view")
    seat = seat_view.seat
    masks = [0, 0, 0, 0]
    for card in seat_view.hand:
        masks[seat] |= 1 << card
    for other, cards in hands.items():
        if other == seat:
            continue
        for card in cards:
            masks[other] |= 1 << card
        if len(cards) != seat_view.hand_sizes[other]:
            raise MalformedError(MalformedReason.INVALID_STATE, f"seat {other} holds wrong count")
    taken = [0, 0, 0, 0]
    for trick in seat_view.tricks:
        for card in trick.cards:
            taken[trick.winner] |= 1 << card
    seen = masks[0] | masks[1] | masks[2] | masks[3] | taken[0] | taken[1] | taken[2] | taken[3]
    for card in seat_view.trick:
        seen |= 1 << card
    if (
        seen != (1 << 52) - 1
        or sum(m.bit_count() for m in masks)
        + sum(m.bit_count() for m in taken)
        + len(seat_view.trick)
        != 52
    ):
        raise MalformedError(MalformedReason.INVALID_STATE, "the hands do not complete the deck")
    turn = seat_view.turn if seat_view.turn is not None else -1
    leader = seat_view.leader if seat_view.leader is not None else -1
    return _assemble(
        rules=seat_view.rules,
        phase=Phase.PLAYING,
        round_index=seat_view.round_index,
        first_dealer=(seat_view.dealer - seat_view.round_index) & 3,
        deck=(),
        hands=masks,
        passed=(0, 0, 0, 0),
        turn=turn,
        leader=leader,
        trick=seat_view.trick,
        tricks=seat_view.tricks,
        hearts_broken=seat_view.hearts_broken,
        taken=taken,
        totals=seat_view.totals,
        rounds=(),
    )
