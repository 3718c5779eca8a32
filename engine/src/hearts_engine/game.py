"""The game as a value: ``apply(state, action) -> state``.

Design notes.

* A :class:`State` is an immutable tuple with named, read-only fields. Nothing in it is ever
  mutated; every action returns a new state, so a state can be shared, cached, stored and compared
  freely.
* No clock, randomness or I/O. The shuffled deck of each round is an input (the :class:`Deal`
  action), like a chance node in OpenSpiel.
* The representation is compact because playouts build a state per card. A state is eight slots;
  a card played changes three of them (turn, hands, trick). All four hands are one int of 4 × 52
  bits (bit ``52 * seat + card``), so playing a card is one xor with a precomputed bit; the cards
  each seat passed and has taken are kept the same way. What stays fixed while a round is played
  (the rules, round index, deck, passes, totals, finished rounds) is one sub-tuple that plays pass
  on untouched. The public fields (``hands``, ``taken``, ``leader``, ``rules``, ...) are
  properties computed from the slots; :func:`_assemble` builds a state from them.
* Legal plays are written as ordered rule clauses (follow suit; the first-trick rules; leading
  hearts), once, in :func:`_legal_mask`. :func:`legal_actions` answers the common case, following
  suit, from small per-seat tables of ready-made :class:`PlayCard` tuples (two look-ups, one per
  half of the suit) and asks the clauses otherwise; a whole hand is seven look-ups, one per byte
  of its mask. The tables are kept small on purpose (a few hundred KB, built at import): random
  hands index them at random, and look-ups in larger tables would mostly miss the processor's
  caches, which costs more than the concatenations.
  :func:`apply` accepts without asking the clauses what they would certainly allow (a card of the
  led suit; a card of another suit from a seat that has none of it, after the first trick; a
  non-heart lead, or any lead once hearts are broken, after the first trick) and asks them about
  everything else. A refused play is explained by :func:`_play_rejection`, which walks the same
  clauses to name the reason.
* There is no unchecked path: :func:`apply` and :func:`step` validate every action. :func:`step`
  is :func:`apply` plus the events, which it reads off the states before and after the action, so
  the rules are implemented once and :func:`apply` builds no events, which keeps playouts fast.
  Bots that play many rounds out can use :mod:`hearts_engine.playout`, which runs the same
  clauses, trick and scoring functions on mutable values and still checks every chosen card.
* Passing is simultaneous and secret: each seat submits its three cards in any order; the
  exchange happens when the fourth pass arrives.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from operator import getitem, itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from hearts_engine.cards import (
    DECK,
    HEARTS_MASK,
    JACK_OF_DIAMONDS,
    QUEEN_OF_SPADES,
    SUIT_MASKS,
    TWO_OF_CLUBS,
    Card,
    cards_of,
)
from hearts_engine.errors import IllegalActionError, MalformedError, MalformedReason, Reason
from hearts_engine.events import (
    CardPlayed,
    CardsPassed,
    CardsReceived,
    Event,
    GameOver,
    HandDealt,
    HeartsBroken,
    RoundScored,
    RoundStarted,
    SeatPassed,
    TrickWon,
)
from hearts_engine.rules import MoonScoring, PassDirection, Rules

if not TYPE_CHECKING:
    try:  # namedtuple's field accessor: a C descriptor, quicker than a property
        from collections import _tuplegetter
    except ImportError:  # pragma: no cover -- another implementation of the standard library

        def _tuplegetter(index, doc):
            return property(itemgetter(index), doc=doc)


__all__ = [
    "PASS_COUNT",
    "SEATS",
    "Action",
    "Deal",
    "GameResult",
    "PassCards",
    "PassChoices",
    "Phase",
    "PlayCard",
    "RoundRecord",
    "State",
    "Trick",
    "apply",
    "deal_hands",
    "is_legal",
    "legal_actions",
    "legal_passes",
    "legal_plays",
    "new_game",
    "points_of",
    "result",
    "round_points",
    "seats_to_act",
    "step",
]

SEATS = (0, 1, 2, 3)
PASS_COUNT = 3
_QS_BIT = 1 << QUEEN_OF_SPADES
_2C_BIT = 1 << TWO_OF_CLUBS
_JD_BIT = 1 << JACK_OF_DIAMONDS
_CLUBS = SUIT_MASKS[0]
_POINT_CARDS = HEARTS_MASK | _QS_BIT
_FULL = (1 << 52) - 1
# Per-card tables: a subscript is quicker than the arithmetic, and shares the ints and tuples.
_BITS = tuple(1 << card for card in range(52))
_SUIT_OF = tuple(card // 13 for card in range(52))  # small ints: compared by identity
_SUIT_MASK_OF = tuple(SUIT_MASKS[card // 13] for card in range(52))
_HEART_BIT = tuple(bit & HEARTS_MASK for bit in _BITS)  # the card's bit if it is a heart, else 0
_ALONE = tuple((card,) for card in DECK)  # to extend a trick by one card
_NEXT = (1, 2, 3, 0)  # the seat to the left
# The four hands (and the four seats' passed and taken cards) are one int: seat s's cards are
# bits 52*s .. 52*s+51, its part. _HAND_BIT[seat][card] is that card's bit in that seat's part.
_SHIFT = (0, 52, 104, 156)
_HAND_BIT = tuple(tuple(1 << (52 * seat + card) for card in range(52)) for seat in SEATS)
_SEAT_ONES = 1 | 1 << 52 | 1 << 104 | 1 << 156  # bit 0 of each seat's part
_PART = tuple(_FULL << shift for shift in _SHIFT)  # each seat's part
_ALL_SEATS = (1 << 208) - 1
# The seats yet to pass, by which have passed (bit s set: seat s has): _WAITING[code].
_WAITING = tuple(tuple(seat for seat in SEATS if not code >> seat & 1) for code in range(16))
# Per seat, whether it has passed, by the same code: _HAS_PASSED[code].
_HAS_PASSED = tuple(tuple(bool(code >> seat & 1) for seat in SEATS) for code in range(16))
# isinstance is quicker with a tuple of types than with a union
_DECK_CONTAINERS = (tuple, list)
_PASS_CONTAINERS = (tuple, list, frozenset, set)


class Phase(enum.IntEnum):
    """Where a game stands."""

    DEALING = 0
    """Waiting for the next round's deck (a :class:`Deal` action)."""
    PASSING = 1
    """Seats that have not passed yet each owe three cards."""
    PLAYING = 2
    """The seat whose turn it is owes a card."""
    GAME_OVER = 3
    """Someone reached the target score; nothing more can happen."""


class Deal(NamedTuple):
    """Deal the next round from this deck order (52 distinct cards, top first)."""

    deck: tuple[Card, ...]


class PassCards(NamedTuple):
    """A seat's secret choice of three cards to pass."""

    seat: int
    cards: tuple[Card, ...]


class PlayCard(NamedTuple):
    """A seat plays one card to the current trick."""

    seat: int
    card: Card


Action = Deal | PassCards | PlayCard


class Trick(NamedTuple):
    """A completed trick: its leader, its cards in play order, and who took it."""

    leader: int
    cards: tuple[Card, ...]
    winner: int

    def seat_of(self, index: int) -> int:
        """The seat that played ``cards[index]``."""
        return (self.leader + index) & 3


class RoundRecord(NamedTuple):
    """Everything that happened in one round, enough to replay it.

    ``passes[seat]`` is the three cards that seat passed (empty in a hold round); ``points`` is
    the round's score per seat after moon and bonus rules.
    """

    round_index: int
    dealer: int
    deck: tuple[Card, ...]
    passes: tuple[tuple[Card, ...], ...]
    tricks: tuple[Trick, ...]
    points: tuple[int, ...]
    moon_shooter: int | None


class _Round(NamedTuple):
    """The slot of a :class:`State` that a card played never changes."""

    rules: Rules
    round_index: int
    first_dealer: int
    deck: tuple[Card, ...]
    passed: int  # the cards each seat passed: bit 52 * seat + card, like State._hands
    totals: tuple[int, int, int, int]
    rounds: tuple[RoundRecord, ...]


class State(tuple[Any, ...]):
    """The whole game. Treat it as opaque and read it through the functions of this package.

    Its fields hold ints, masks and tuples, never mutable containers. ``turn`` and ``leader`` are
    -1 when no single seat is to act. ``hands[seat]`` and ``taken[seat]`` are masks of cards;
    ``passed[seat]`` is 0 until that seat has passed, then the mask of its three cards (kept for
    the round record after the exchange).

    The tuple itself is eight slots, in this order (see the module's design notes): ``phase``,
    ``turn``, ``_hands`` (all four hands in one int), ``trick``, ``tricks``, ``_breaking`` (the
    cards whose play breaks hearts; 0 once they are broken), ``_taken`` (like ``_hands``) and
    ``_round`` (a :class:`_Round`). It is built by calling ``State`` with that tuple, which goes
    straight to ``tuple``'s constructor: a state is built for every card played.
    """

    __slots__ = ()

    if TYPE_CHECKING:

        @property
        def phase(self) -> Phase: ...
        @property
        def turn(self) -> int: ...
        @property
        def _hands(self) -> int: ...
        @property
        def trick(self) -> tuple[Card, ...]: ...
        @property
        def tricks(self) -> tuple[Trick, ...]: ...
        @property
        def _breaking(self) -> int: ...
        @property
        def _taken(self) -> int: ...
        @property
        def _round(self) -> _Round: ...

    else:
        phase = _tuplegetter(0, "Where the game stands.")
        turn = _tuplegetter(1, "The seat that owes a card, or -1.")
        _hands = _tuplegetter(2, "All four hands: bit 52 * seat + card.")
        trick = _tuplegetter(3, "The current trick's cards in play order, from the leader.")
        tricks = _tuplegetter(4, "This round's completed tricks.")
        _breaking = _tuplegetter(5, "The cards whose play breaks hearts; 0 once broken.")
        _taken = _tuplegetter(6, "The cards each seat took this round: bit 52 * seat + card.")
        _round = _tuplegetter(7, "What stays fixed while the round is played.")

    @property
    def rules(self) -> Rules:
        """The game's rules."""
        return self._round.rules

    @property
    def round_index(self) -> int:
        """The current round, from 0 (the next one while dealing; the last once over)."""
        return self._round.round_index

    @property
    def first_dealer(self) -> int:
        """The dealer of round 0."""
        return self._round.first_dealer

    @property
    def deck(self) -> tuple[Card, ...]:
        """This round's deck as dealt; empty while waiting for the deal."""
        return self._round.deck

    @property
    def passed(self) -> tuple[int, int, int, int]:
        """Per seat, 0 until it has passed this round, then the mask of its three cards."""
        return _split(self._round.passed)

    @property
    def totals(self) -> tuple[int, int, int, int]:
        """Each seat's points over the finished rounds."""
        return self._round.totals

    @property
    def rounds(self) -> tuple[RoundRecord, ...]:
        """The finished rounds."""
        return self._round.rounds

    @property
    def hands(self) -> tuple[int, int, int, int]:
        """Each seat's hand as a mask of cards."""
        hands = self._hands  # _split, written out: bots read this once per card they consider
        return (hands & _FULL, hands >> 52 & _FULL, hands >> 104 & _FULL, hands >> 156)

    @property
    def taken(self) -> tuple[int, int, int, int]:
        """The cards each seat has taken in tricks this round, as masks."""
        return _split(self._taken)

    @property
    def hearts_broken(self) -> bool:
        """Whether a heart (or the queen of spades, if the rules say so) was played this round."""
        return not self._breaking

    @property
    def leader(self) -> int:
        """The seat that led the current trick, or -1 when no round is being played."""
        if self.phase is not _PLAYING:
            return -1
        return (self.turn - len(self.trick)) & 3

    @property
    def dealer(self) -> int:
        """This round's dealer: the first dealer, moved one seat clockwise per round."""
        return (self.first_dealer + self.round_index) & 3

    @property
    def pass_direction(self) -> PassDirection:
        """This round's pass direction."""
        return self.rules.pass_direction(self.round_index)

    def hand(self, seat: int) -> tuple[Card, ...]:
        """The cards ``seat`` holds now."""
        return cards_of(self._hands >> _SHIFT[_seat(seat)] & _FULL)

    def _replace(self, **changes: Any) -> State:
        """A copy with some public fields changed, like a named tuple's ``_replace``."""
        fields = {name: getattr(self, name) for name in _PUBLIC_FIELDS}
        unknown = set(changes) - set(fields)
        if unknown:
            raise ValueError(f"State has no fields {sorted(unknown)}")
        fields.update(changes)
        return _assemble(**fields)

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _PUBLIC_FIELDS)
        return f"State({fields})"


_PUBLIC_FIELDS = (
    "rules",
    "phase",
    "round_index",
    "first_dealer",
    "deck",
    "hands",
    "passed",
    "turn",
    "leader",
    "trick",
    "tricks",
    "hearts_broken",
    "taken",
    "totals",
    "rounds",
)


class GameResult(NamedTuple):
    """The end of a game: final totals, the winner(s) with the lowest total, the loser(s)."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    losers: tuple[int, ...]


_ZERO4 = (0, 0, 0, 0)
_NO_PASSES: tuple[tuple[Card, ...], ...] = ((), (), (), ())
# Module constants: an enum attribute look-up costs more than the compare. States only ever hold
# Phase members, so the hot paths compare phases by identity.
_DEALING = Phase.DEALING
_PASSING = Phase.PASSING
_PLAYING = Phase.PLAYING
_GAME_OVER = Phase.GAME_OVER
# Named tuples other than State are built through tuple.__new__, which skips the generated
# __new__'s Python frame; the argument order is the field order.
_new = tuple.__new__


def _split(bits: int) -> tuple[int, int, int, int]:
    """Four seats' masks from one int of 4 × 52 bits."""
    return (bits & _FULL, bits >> 52 & _FULL, bits >> 104 & _FULL, bits >> 156)


def _join(masks: Sequence[int]) -> int:
    """The inverse of :func:`_split`."""
    return masks[0] | masks[1] << 52 | masks[2] << 104 | masks[3] << 156


def _passed_code(passed: int) -> int:
    """Bit ``seat`` set for each seat whose part of ``passed`` (a :class:`_Round`'s) is set."""
    p0, p1, p2, p3 = _PART
    return (
        (passed & p0 != 0)
        | (passed & p1 != 0) << 1
        | (passed & p2 != 0) << 2
        | (passed & p3 != 0) << 3
    )


def _yet_to_pass(passed: int) -> tuple[int, ...]:
    """The seats whose part of ``passed`` (a :class:`_Round`'s) is still empty."""
    return _WAITING[_passed_code(passed)]


def _breaking_cards(rules: Rules) -> int:
    """The cards whose play breaks hearts under ``rules``."""
    return HEARTS_MASK | _QS_BIT if rules.queen_breaks_hearts else HEARTS_MASK


def _holder(hands: int, card: Card) -> int:
    """The seat whose part of ``hands`` holds ``card`` (exactly one does)."""
    return ((hands >> card & _SEAT_ONES).bit_length() - 1) // 52


def new_game(rules: Rules | None = None, *, first_dealer: int = 0) -> State:
    """A game waiting for its first deal.

    >>> new_game().phase
    <Phase.DEALING: 0>
    """
    if rules is None:
        rules = Rules()
    elif not isinstance(rules, Rules):
        raise MalformedError(MalformedReason.INVALID_RULES, "rules must be a Rules value")
    fixed = _new(_Round, (rules, 0, _seat(first_dealer), (), 0, _ZERO4, ()))
    return State((_DEALING, -1, 0, (), (), _breaking_cards(rules), 0, fixed))


def _assemble(
    *,
    rules: Rules,
    phase: Phase,
    round_index: int,
    first_dealer: int,
    deck: tuple[Card, ...],
    hands: Sequence[int],
    passed: Sequence[int],
    turn: int,
    leader: int,
    trick: tuple[Card, ...],
    tricks: tuple[Trick, ...],
    hearts_broken: bool,
    taken: Sequence[int],
    totals: Sequence[int],
    rounds: tuple[RoundRecord, ...],
) -> State:
    """A state from its public fields (for :mod:`~hearts_engine.serialize`, views, ``_replace``).

    ``leader`` is not stored: it follows from the turn and the trick, and must agree with them.
    """
    totals4 = (totals[0], totals[1], totals[2], totals[3])
    fixed = _Round(rules, round_index, first_dealer, deck, _join(passed), totals4, rounds)
    breaking = 0 if hearts_broken else _breaking_cards(rules)
    state = State((phase, turn, _join(hands), trick, tricks, breaking, _join(taken), fixed))
    if state.leader != leader:
        raise MalformedError(
            MalformedReason.INVALID_STATE,
            f"leader {leader} does not fit turn {turn} after {len(trick)} cards of the trick",
        )
    return state


def _seat(seat: object) -> int:
    if seat.__class__ is not int or not 0 <= seat <= 3:
        if isinstance(seat, int) and not isinstance(seat, bool) and 0 <= seat <= 3:
            return int(seat)
        raise MalformedError(MalformedReason.INVALID_SEAT, f"not a seat: {seat!r}")
    return seat


def _card(card: object) -> Card:
    if card.__class__ is Card:
        return card
    if isinstance(card, str):
        return Card.parse(card)
    raise MalformedError(MalformedReason.INVALID_CARD, f"not a card: {card!r}")


def deal_hands(deck: Sequence[Card], dealer: int) -> tuple[int, int, int, int]:
    """Hand masks from a deck dealt 5-4-4 clockwise, starting at the dealer's left.

    >>> from hearts_engine.cards import DECK, cards_of
    >>> [str(c) for c in cards_of(deal_hands(DECK, dealer=3)[0])][:6]
    ['2C', '3C', '4C', '5C', '6C', '9D']
    """
    hands = [0, 0, 0, 0]
    position = 0
    for packet in (5, 4, 4):
        for offset in (1, 2, 3, 4):
            seat = (dealer + offset) & 3
            for card in deck[position : position + packet]:
                hands[seat] |= 1 << card
            position += packet
    return (hands[0], hands[1], hands[2], hands[3])


# Per dealer, per deck position, the bit of each card in State._hands when it is dealt from that
# position: _DEAL_BITS[dealer][position][card]. The seat of each position is read off by dealing
# the ordered DECK (card i is at position i), so deal_hands stays the definition of the deal.
_DEAL_BITS = tuple(
    tuple(
        next(_HAND_BIT[seat] for seat in SEATS if masks[seat] >> position & 1)
        for position in range(52)
    )
    for masks in (deal_hands(DECK, dealer) for dealer in SEATS)
)


# --------------------------------------------------------------------------- legal moves


def _legal_mask(
    rules: Rules, hand: int, trick: tuple[Card, ...], first_trick: bool, broken: bool
) -> int:
    """The mask of the cards a seat holding ``hand`` may play now: the rule clauses, in order.

    ``first_trick`` says no trick of the round is complete yet, ``broken`` that hearts are
    broken. Both :class:`State` and :mod:`hearts_engine.playout` ask this function.
    """
    if trick:
        follow = hand & _SUIT_MASK_OF[trick[0]]
        if follow:  # the common case: answered before reading the rules
            return follow
        if first_trick and rules.no_points_on_first_trick:
            safe = hand & ~_POINT_CARDS
            if safe:
                return safe
        return hand
    if first_trick:
        return hand & _CLUBS if rules.can_lead_any_club else _2C_BIT
    if rules.must_break_hearts and not broken:
        no_hearts = hand & ~HEARTS_MASK
        if no_hearts:
            if no_hearts == _QS_BIT and rules.can_lead_hearts_instead_of_queen:
                return hand
            return no_hearts
    return hand


def _seat_legal_mask(state: State, seat: int) -> int:
    """:func:`_legal_mask` for ``seat`` in ``state``; the caller has checked phase and turn."""
    return _legal_mask(
        state._round.rules,
        state._hands >> _SHIFT[seat] & _FULL,
        state.trick,
        not state.tricks,
        not state._breaking,
    )


def _play_rejection(state: State, seat: int, card: Card) -> IllegalActionError:
    """Name the first rule clause that forbids ``card``; mirrors :func:`_legal_mask`."""
    hand = state._hands >> _SHIFT[seat] & _FULL
    if not hand & _BITS[card]:
        return IllegalActionError(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
    trick = state.trick
    if trick:
        if hand & _SUIT_MASK_OF[trick[0]]:
            return IllegalActionError(
                Reason.MUST_FOLLOW_SUIT, f"seat {seat} must follow {trick[0].suit.name.lower()}"
            )
        return IllegalActionError(
            Reason.NO_POINTS_ON_FIRST_TRICK,
            "no heart and not the queen of spades on the first trick while another card is held",
        )
    if not state.tricks:
        if state.rules.can_lead_any_club:
            return IllegalActionError(Reason.MUST_LEAD_CLUB, "the first lead must be a club")
        return IllegalActionError(Reason.MUST_LEAD_TWO_OF_CLUBS, "the first lead is the 2C")
    return IllegalActionError(
        Reason.HEARTS_NOT_BROKEN, "hearts may not be led before a heart has been played"
    )


def seats_to_act(state: State) -> tuple[int, ...]:
    """The seats that owe an action: every seat yet to pass, the seat to play, or none."""
    phase = state.phase
    if phase is _PLAYING:
        return (state.turn,)
    if phase is _PASSING:  # the seats whose pass mask is still 0
        return _yet_to_pass(state._round.passed)
    return ()


def legal_plays(state: State, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` may play now, sorted; empty when it is not that seat's turn.

    >>> from hearts_engine.cards import seeded_deck
    >>> s = apply(new_game(Rules(pass_cards=False)), Deal(seeded_deck(1)))
    >>> legal_plays(s, s.turn)
    (Card.parse('2C'),)
    """
    if state.turn != seat or state.phase is not _PLAYING:
        _seat(seat)
        return ()
    hand = state._hands >> _SHIFT[seat] & _FULL
    trick = state.trick
    if trick and hand & _SUIT_MASK_OF[trick[0]]:  # following suit: no rule to read
        return cards_of(hand & _SUIT_MASK_OF[trick[0]])
    rules = state._round.rules
    return cards_of(_legal_mask(rules, hand, trick, not state.tricks, not state._breaking))


def legal_passes(state: State, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` may choose its three passes from (its hand), or empty."""
    seat = _seat(seat)
    if state.phase is not _PASSING or state._round.passed & _PART[seat]:
        return ()
    return cards_of(state._hands >> _SHIFT[seat] & _FULL)


# Every PlayCard there can be, built once: legal_actions hands out these shared immutable values
# instead of constructing new ones for every card of every playout.
_PLAYS = tuple(tuple(_new(PlayCard, (seat, card)) for card in DECK) for seat in SEATS)
# The legal actions as ready-made tuples, per seat, per half of a suit: a suit's 13 bits are
# split into its 7 low ranks (2..8) and its 6 high ones (9..A), and _HALVES[seat][2 * suit] and
# _HALVES[seat][2 * suit + 1] are indexed by those 7 and 6 bits of the seat's hand. A seat's cards
# of one suit are two look-ups and a concatenation (whole hands use _BYTES, below). Whole 13-bit
# tables would save the concatenation but hold 4 * 4 * 8192 tuples, about 12 MB: random hands hit
# them at random, so each look-up would miss the processor's caches, which costs more than the
# concatenation. These hold 4 * 4 * 192 tuples (about 250 KB) and are built at import.
_HALVES = tuple(
    tuple(
        tuple(
            tuple(_PLAYS[seat][13 * suit + first + i] for i in range(width) if bits >> i & 1)
            for bits in range(1 << width)
        )
        for suit in range(4)
        for first, width in ((0, 7), (7, 6))
    )
    for seat in SEATS
)
# For a seat that must follow the suit of the card led: where that suit's 13 bits of the seat's
# hand start in State._hands, and the tables of the suit's two halves. _FOLLOW[seat][led card].
_FOLLOW = tuple(
    tuple(
        (52 * seat + 13 * suit, _HALVES[seat][2 * suit], _HALVES[seat][2 * suit + 1])
        for suit in (card // 13 for card in range(52))
    )
    for seat in SEATS
)


# The same per byte of a seat's 52-bit mask, for whole hands (a lead, a discard): the mask's
# seven little-endian bytes index _BYTES[seat][0..6]. Seven look-ups beat the eight of two
# halves per suit, and 4 * (6 * 256 + 16) tuples (about 550 KB) still fit the caches.
_BYTES = tuple(
    tuple(
        tuple(
            tuple(_PLAYS[seat][8 * byte + i] for i in range(min(8, 52 - 8 * byte)) if bits >> i & 1)
            for bits in range(1 << min(8, 52 - 8 * byte))
        )
        for byte in range(7)
    )
    for seat in SEATS
)


def _actions_of(seat: int, mask: int) -> tuple[PlayCard, ...]:
    """The actions of ``seat`` playing the cards in ``mask``, in card order."""
    t0, t1, t2, t3, t4, t5, t6 = _BYTES[seat]
    b0, b1, b2, b3, b4, b5, b6 = mask.to_bytes(7, "little")
    return t0[b0] + t1[b1] + t2[b2] + t3[b3] + t4[b4] + t5[b5] + t6[b6]


# The cards of each byte of a 52-bit mask, like _BYTES: _CARD_BYTES[byte][bits].
_CARD_BYTES = tuple(
    tuple(
        tuple(DECK[8 * byte + i] for i in range(min(8, 52 - 8 * byte)) if bits >> i & 1)
        for bits in range(1 << min(8, 52 - 8 * byte))
    )
    for byte in range(7)
)


def _cards_in(mask: int) -> tuple[Card, ...]:
    """:func:`~hearts_engine.cards.cards_of` from small tables.

    ``cards_of`` takes four look-ups in tables of 8192 tuples per suit, quicker while they are
    in the processor's caches; the engine decodes hands here and there between other work, where
    the small tables of bytes are quicker.
    """
    t0, t1, t2, t3, t4, t5, t6 = _CARD_BYTES
    b0, b1, b2, b3, b4, b5, b6 = mask.to_bytes(7, "little")
    return t0[b0] + t1[b1] + t2[b2] + t3[b3] + t4[b4] + t5[b5] + t6[b6]


# The 3-card subsets of a 13-card hand, in lexicographic order of the cards' indices there.
# Each picks its three cards out of the sorted hand at C speed.
_TRIPLES = tuple(
    itemgetter(i, j, k) for i in range(13) for j in range(i + 1, 13) for k in range(j + 1, 13)
)
_TRIPLE_COUNT = len(_TRIPLES)
# What index i of a PassChoices of up to four seats picks: (i // 286, _TRIPLES[i % 286]).
_PASS_AT = tuple(
    (i // _TRIPLE_COUNT, _TRIPLES[i % _TRIPLE_COUNT]) for i in range(4 * _TRIPLE_COUNT)
)


class PassChoices(Sequence[PassCards]):
    """Every pass the given seats may make: all 3-card subsets of each hand, built on demand.

    There are 286 per seat, so they are not materialised: indexing builds one. The order is by
    seat, then lexicographic over the sorted hand.

    >>> from hearts_engine.cards import seeded_deck
    >>> s = apply(new_game(), Deal(seeded_deck(1)))
    >>> choices = legal_actions(s, 2)
    >>> len(choices), choices[0].seat, len(choices[0].cards)
    (286, 2, 3)
    """

    __slots__ = ("_hands", "_len", "_seats")

    def __init__(self, seats: Sequence[int], hands: int) -> None:
        """The passes of ``seats`` (each holding 13 cards) from ``hands`` (a state's ``_hands``)."""
        self._seats = tuple(seats)
        self._hands = hands
        self._len = _TRIPLE_COUNT * len(self._seats)

    def __len__(self) -> int:
        return self._len

    def __getitem__(self, index: int) -> PassCards:  # type: ignore[override]
        if index.__class__ is not int or not 0 <= index < self._len:
            index = self._index(index)
        which, pick = _PASS_AT[index]
        seat = self._seats[which]
        return _new(PassCards, (seat, pick(_cards_in(self._hands >> _SHIFT[seat] & _FULL))))

    def _index(self, index: object) -> int:
        """``index`` as an int in ``range(len(self))``, or raise as a sequence would."""
        if not isinstance(index, int):
            raise TypeError("PassChoices takes an int index")
        index = int(index)
        if not 0 <= index < self._len:
            if not -self._len <= index < 0:
                raise IndexError(index)
            index += self._len
        return index

    def __repr__(self) -> str:
        return f"PassChoices(seats={list(self._seats)}, count={self._len})"


def legal_actions(state: State, seat: int | None = None) -> Sequence[Action]:
    """Every action :func:`apply` accepts now, or only those of ``seat``.

    While playing: a :class:`PlayCard` per legal card of the seat to play. While passing: every
    3-card pass of every seat yet to pass (a lazy :class:`PassChoices`). While dealing the next
    action is a :class:`Deal` of a shuffled deck, which is the caller's to draw, so there are none
    to list; after the game, none.

    >>> from hearts_engine.cards import seeded_deck
    >>> s = apply(new_game(Rules(pass_cards=False)), Deal(seeded_deck(1)))
    >>> legal_actions(s) == (PlayCard(s.turn, Card.parse("2C")),)
    True
    """
    phase = state.phase
    if phase is _PLAYING:
        turn = state.turn
        if seat is not None and seat != turn:
            _seat(seat)
            return ()
        trick = state.trick
        if trick:
            shift, low, high = _FOLLOW[turn][trick[0]]
            bits = state._hands >> shift & 0x1FFF
            if bits:  # following suit: exactly the seat's cards of the led suit, no rule to read
                return low[bits & 0x7F] + high[bits >> 7]
        hand = state._hands >> _SHIFT[turn] & _FULL
        if state.tricks and (trick or not state._breaking):
            return _actions_of(turn, hand)  # a discard, or a lead once hearts are broken: any card
        rules = state._round.rules
        return _actions_of(
            turn, _legal_mask(rules, hand, trick, not state.tricks, not state._breaking)
        )
    if phase is _PASSING:
        passed = state._round.passed
        if seat is None:
            seats = _yet_to_pass(passed)
        else:
            seat = _seat(seat)
            seats = () if passed & _PART[seat] else (seat,)
        return PassChoices(seats, state._hands)
    if seat is not None:
        _seat(seat)
    return ()


def is_legal(state: State, action: Action) -> bool:
    """Whether ``action`` would be accepted by :func:`apply`."""
    try:
        apply(state, action)
    except (IllegalActionError, MalformedError):
        return False
    return True


# --------------------------------------------------------------------------- applying actions


def apply(state: State, action: Action) -> State:
    """The state after ``action``; raises if the action is malformed or illegal."""
    cls = action.__class__
    if cls is not PlayCard:
        if cls is PassCards:
            return _pass(state, action.seat, action.cards)  # type: ignore[union-attr]
        if cls is Deal:
            return _deal(state, action.deck)  # type: ignore[union-attr]
        raise MalformedError(MalformedReason.INVALID_ACTION, f"not an action: {action!r}")
    # Playing a card: the hot path of every playout, written out here so that it costs one
    # Python call. The slots are those of State, in order.
    seat, card = action  # type: ignore[misc]  # a PlayCard: its class is checked above
    phase, turn, hands, trick, tricks, breaking, taken, fixed = state
    # Identity, not equality: CPython shares the small ints, so a plain int seat that is the turn
    # is the same object. Anything else (a bool, an int subclass, not a seat) takes this branch,
    # as does a card given in notation.
    if seat is not turn or phase is not _PLAYING or card.__class__ is not Card:
        seat, card = _check_play(state, seat, card)
    bit = _HAND_BIT[seat][card]
    if not hands & bit:
        raise _play_rejection(state, seat, card)
    if trick:
        led = trick[0]
        # Another suit than the one led is fine from a seat that holds none of it, except on
        # the first trick, where the clauses decide (no points while something else is held).
        if _SUIT_OF[card] is not _SUIT_OF[led] and (
            hands >> _FOLLOW[seat][led][0] & 0x1FFF or not tricks
        ):
            _check_by_clauses(state, seat, card)
    elif not tricks or breaking & _HEART_BIT[card]:  # the first lead, or a heart while unbroken
        _check_by_clauses(state, seat, card)
    hands ^= bit
    if breaking and breaking & _BITS[card]:
        breaking = 0  # hearts are broken
    trick += _ALONE[card]
    if len(trick) < 4:
        return State((_PLAYING, _NEXT[seat], hands, trick, tricks, breaking, taken, fixed))
    leader = _NEXT[seat]  # the fourth card was played by the seat to the leader's right
    # _take, written out (a call is a good part of its cost): the top card of the led suit wins.
    c0, c1, c2, c3 = trick
    trick_mask = _BITS[c0] | _BITS[c1] | _BITS[c2] | _BITS[c3]
    winner = (leader + trick.index((trick_mask & _SUIT_MASK_OF[c0]).bit_length() - 1)) & 3
    taken |= trick_mask << _SHIFT[winner]
    tricks += (_new(Trick, (leader, trick, winner)),)
    if len(tricks) < 13:
        return State((_PLAYING, winner, hands, (), tricks, breaking, taken, fixed))
    return _score_round(fixed, tricks, taken)


def _check_play(state: State, seat: object, card: object) -> tuple[int, Card]:
    """The seat and card of a play that is not plainly this seat's (both normalised), or raise.

    Malformed values are refused before illegal ones: the card, the seat, then phase and turn.
    """
    card = _card(card)
    seat = _seat(seat)
    if state.phase is not _PLAYING:
        _raise_phase(state, "play")
    if seat != state.turn:
        raise IllegalActionError(Reason.NOT_YOUR_TURN, f"it is seat {state.turn}'s turn")
    return seat, card


def _check_by_clauses(state: State, seat: int, card: Card) -> None:
    """Raise unless the rule clauses allow ``seat`` to play ``card`` (a card it holds)."""
    if not _seat_legal_mask(state, seat) & _BITS[card]:
        raise _play_rejection(state, seat, card)


def step(state: State, action: Action) -> tuple[State, tuple[Event, ...]]:
    """Like :func:`apply`, and also the events the action caused, in order.

    The events are read off the states before and after the action: :func:`apply` is the one
    implementation of the rules.
    """
    after = apply(state, action)
    cls = action.__class__
    if cls is PlayCard:
        return after, _play_events(state, after)
    if cls is PassCards:
        return after, _pass_events(state, after, _seat(action.seat))  # type: ignore[union-attr]
    return after, _deal_events(after)


def _deal_events(after: State) -> tuple[Event, ...]:
    return (
        RoundStarted(after.round_index, after.dealer, after.pass_direction),
        *(HandDealt(seat, after.hand(seat)) for seat in SEATS),
    )


def _pass_events(before: State, after: State, seat: int) -> tuple[Event, ...]:
    direction = before.pass_direction
    passed = after.passed
    events: list[Event] = [
        SeatPassed(seat),
        CardsPassed(seat, (seat + direction) & 3, cards_of(passed[seat])),
    ]
    if after.phase is _PLAYING:  # the fourth pass: the exchange
        for taker in SEATS:
            giver = (taker - direction) & 3
            events.append(CardsReceived(taker, giver, cards_of(passed[giver])))
    return tuple(events)


def _play_events(before: State, after: State) -> tuple[Event, ...]:
    seat, trick_index, rules = before.turn, len(before.tricks), before.rules
    done: Trick | None = None
    record: RoundRecord | None = None
    if len(before.trick) < 3:
        card = after.trick[-1]
    else:  # the trick is complete, and maybe the round
        if after.phase is _PLAYING:
            done = after.tricks[-1]
        else:
            record = after.rounds[-1]
            done = record.tricks[-1]
        card = done.cards[-1]
    events: list[Event] = [CardPlayed(seat, card, trick_index)]
    if before._breaking & _BITS[card]:
        events.append(HeartsBroken(seat, card))
    if done is not None:
        points = points_of(done.cards, rules)
        events.append(TrickWon(trick_index, done.leader, done.cards, done.winner, points))
    if record is not None:
        events.append(
            RoundScored(record.round_index, record.points, after.totals, record.moon_shooter)
        )
        final = result(after)
        if final is not None:
            events.append(GameOver(final.totals, final.winners, final.losers))
    return tuple(events)


def _check_deck(deck: object) -> tuple[Card, ...]:
    if not isinstance(deck, _DECK_CONTAINERS) or len(deck) != 52:
        raise MalformedError(MalformedReason.INVALID_DECK, "a deck is a sequence of 52 cards")
    # The common case, all Card already, is checked at C speed.
    return tuple(deck) if set(map(type, deck)) == {Card} else tuple(_card(c) for c in deck)


def _deal(state: State, deck: object) -> State:
    cards = _check_deck(deck)  # malformed before illegal, as for passes and plays
    rules, round_index, first_dealer, _, _, totals, rounds = state._round
    # deal_hands(cards, dealer) as one int, at C speed: each position's table gives its card's bit
    hands = sum(map(getitem, _DEAL_BITS[(first_dealer + round_index) & 3], cards))
    # The sum of 52 distinct bits has 52 bits set; a card dealt twice to one seat carries into
    # another bit, and one dealt to two seats leaves a card out of the union of the hands.
    if hands.bit_count() != 52 or _fold(hands) != _FULL:
        raise MalformedError(MalformedReason.INVALID_DECK, "a deck holds each card exactly once")
    if state.phase is not _DEALING:
        _raise_phase(state, "deal")
    if rules.pass_direction(round_index) == PassDirection.HOLD:
        phase, turn = _PLAYING, _holder(hands, TWO_OF_CLUBS)
    else:
        phase, turn = _PASSING, -1
    fixed = _new(_Round, (rules, round_index, first_dealer, cards, 0, totals, rounds))
    return State((phase, turn, hands, (), (), _breaking_cards(rules), 0, fixed))


def _fold(bits: int) -> int:
    """The union of the four seats' masks in one int of 4 × 52 bits."""
    return (bits | bits >> 52 | bits >> 104 | bits >> 156) & _FULL


def _raise_phase(state: State, what: str) -> None:
    if state.phase == Phase.GAME_OVER:
        raise IllegalActionError(Reason.GAME_OVER, "the game is over")
    raise IllegalActionError(
        Reason.WRONG_PHASE, f"cannot {what} while the game is {state.phase.name}"
    )


def _pass(state: State, seat: Any, cards: Any) -> State:
    if seat.__class__ is not int or not 0 <= seat <= 3:
        seat = _seat(seat)
    # Three cards in a tuple, the usual pass, are taken as they are; anything else is parsed.
    if (
        cards.__class__ is tuple
        and len(cards) == PASS_COUNT
        and cards[0].__class__ is Card
        and cards[1].__class__ is Card
        and cards[2].__class__ is Card
    ):
        parsed = cards
    elif isinstance(cards, _PASS_CONTAINERS):
        parsed = tuple(map(_card, cards))
    else:
        raise MalformedError(MalformedReason.INVALID_ACTION, "pass a sequence of cards")
    phase, turn, hands, trick, tricks, breaking, taken, fixed = state
    if phase is not _PASSING:
        _raise_phase(state, "pass")
    rules, round_index, first_dealer, deck, passed, totals, rounds = fixed
    if passed & _PART[seat]:
        raise IllegalActionError(Reason.ALREADY_PASSED, f"seat {seat} has already passed")
    if len(parsed) != PASS_COUNT:
        raise IllegalActionError(
            Reason.WRONG_PASS_COUNT, f"pass exactly {PASS_COUNT} cards, not {len(parsed)}"
        )
    first, second, third = parsed
    bits = _HAND_BIT[seat]
    mask = bits[first] | bits[second] | bits[third]  # the three cards in the seat's part
    if mask.bit_count() != PASS_COUNT:  # the card named a second time, in the order given
        duplicate = second if second == first else third
        raise IllegalActionError(Reason.DUPLICATE_CARD, f"{duplicate} is named twice")
    if mask & ~hands:
        missing = " ".join(map(str, cards_of((mask & ~hands) >> _SHIFT[seat])))
        raise IllegalActionError(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {missing}")
    passed |= mask
    fixed = _new(_Round, (rules, round_index, first_dealer, deck, passed, totals, rounds))
    if passed.bit_count() < 4 * PASS_COUNT:
        return State((phase, turn, hands, trick, tricks, breaking, taken, fixed))
    # The fourth pass: every seat gives its three cards and takes the three passed to it. The
    # passes sit in the givers' parts of ``passed``; rotated by the direction, in the takers'.
    shift = 52 * rules.pass_direction(round_index)
    hands ^= passed
    hands |= (passed << shift | passed >> (208 - shift)) & _ALL_SEATS
    turn = _holder(hands, TWO_OF_CLUBS)
    return State((_PLAYING, turn, hands, (), (), breaking, 0, fixed))


def _take(trick: tuple[Card, ...], leader: int) -> tuple[int, int]:
    """The seat that takes a complete trick led by ``leader``, and the trick's cards as a mask.

    The highest card of the led suit takes it. Cards are numbered in rank order within a suit, so
    that card is the top bit of the trick's led-suit cards.
    """
    c0, c1, c2, c3 = trick
    trick_mask = _BITS[c0] | _BITS[c1] | _BITS[c2] | _BITS[c3]
    high = (trick_mask & _SUIT_MASK_OF[c0]).bit_length() - 1
    return (leader + trick.index(high)) & 3, trick_mask


def _mask_points(mask: int, rules: Rules) -> int:
    points = (mask & HEARTS_MASK).bit_count()
    if mask & _QS_BIT:
        points += 13
    if rules.jack_of_diamonds_bonus and mask & _JD_BIT:
        points -= 10
    return points


def points_of(cards: Sequence[Card], rules: Rules) -> int:
    """The points ``cards`` are worth when taken, before moon rules (the jack by the rules).

    >>> from hearts_engine.cards import parse_cards
    >>> points_of(parse_cards("QS 2H JD"), Rules(jack_of_diamonds_bonus=True))
    4
    """
    mask = 0
    for card in cards:
        mask |= 1 << card
    return _mask_points(mask, rules)


def round_points(
    rules: Rules, taken: Sequence[int], tricks: Sequence[Trick]
) -> tuple[tuple[int, int, int, int], int | None]:
    """A finished round's points per seat and the moon shooter, if any.

    ``taken[seat]`` is the mask of cards that seat took. The moon needs all 13 hearts and the
    queen of spades; the jack of diamonds never counts toward it.
    """
    # Hearts and the queen; 26 of them are all 13 hearts and the queen: the moon. (Written out
    # per seat: a comprehension is a function call of its own.)
    t0, t1, t2, t3 = taken
    points = [
        (t0 & HEARTS_MASK).bit_count() + (13 if t0 & _QS_BIT else 0),
        (t1 & HEARTS_MASK).bit_count() + (13 if t1 & _QS_BIT else 0),
        (t2 & HEARTS_MASK).bit_count() + (13 if t2 & _QS_BIT else 0),
        (t3 & HEARTS_MASK).bit_count() + (13 if t3 & _QS_BIT else 0),
    ]
    shooter = points.index(26) if 26 in points else None
    if shooter is not None:
        if rules.moon_scoring == MoonScoring.ADD_TO_OTHERS:
            points = [0 if seat == shooter else 26 for seat in SEATS]
        else:
            points = [-26 if seat == shooter else 0 for seat in SEATS]
    if rules.jack_of_diamonds_bonus:
        for seat in SEATS:
            if taken[seat] & _JD_BIT:
                points[seat] -= 10
    if rules.avoid_all_tricks_bonus and shooter is None:
        winners = {trick.winner for trick in tricks}
        for seat in SEATS:
            if seat not in winners:
                points[seat] -= 5
    return (points[0], points[1], points[2], points[3]), shooter


def _score_round(fixed: _Round, tricks: tuple[Trick, ...], taken: int) -> State:
    """The state after the last card of a round: scored, and waiting for the next deal."""
    rules, round_index, first_dealer, deck, passed, totals, rounds = fixed
    split = (taken & _FULL, taken >> 52 & _FULL, taken >> 104 & _FULL, taken >> 156)  # _split
    points, shooter = round_points(rules, split, tricks)
    totals = (
        totals[0] + points[0],
        totals[1] + points[1],
        totals[2] + points[2],
        totals[3] + points[3],
    )
    dealer = (first_dealer + round_index) & 3
    passes: tuple[tuple[Card, ...], ...]
    if passed:
        passes = (
            _cards_in(passed & _FULL),
            _cards_in(passed >> 52 & _FULL),
            _cards_in(passed >> 104 & _FULL),
            _cards_in(passed >> 156),
        )
    else:  # a hold round
        passes = _NO_PASSES
    record = _new(RoundRecord, (round_index, dealer, deck, passes, tricks, points, shooter))
    over = max(totals) >= rules.target_score
    fixed = _new(_Round, (
        rules, round_index if over else round_index + 1, first_dealer, (), 0, totals,
        (*rounds, record),
    ))  # fmt: skip
    phase = _GAME_OVER if over else _DEALING
    return State((phase, -1, 0, (), (), _breaking_cards(rules), 0, fixed))


def result(state: State) -> GameResult | None:
    """The game's result once it is over, else ``None``.

    The winners are the seats with the lowest total (ties share the win). The loser is the seat
    that reached the target; when several reached it in the same round, the highest total loses
    (ties share the loss).
    """
    if state.phase != Phase.GAME_OVER:
        return None
    totals = state.totals
    low, high = min(totals), max(totals)
    return GameResult(
        totals,
        tuple(seat for seat in SEATS if totals[seat] == low),
        tuple(seat for seat in SEATS if totals[seat] == high),
    )
