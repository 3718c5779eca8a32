"""The game as a value: ``apply(state, action) -> state``.

Design notes.

* A :class:`State` is an immutable named tuple. Nothing in it is ever mutated; every action
  returns a new state, so a state can be shared, cached, stored and compared freely.
* No clock, randomness or I/O. The shuffled deck of each round is an input (the :class:`Deal`
  action), like a chance node in OpenSpiel.
* Hands are 52-bit masks (``1 << card``), which makes legal-move generation a handful of bit
  operations. Public accessors turn masks back into sorted card tuples.
* Legal plays are written as ordered rule clauses (follow suit; the first-trick rules; leading
  hearts), once, in :func:`_legal_mask`. A play is checked against that mask, and a refused play
  is explained by :func:`_play_rejection`, which walks the same clauses to name the reason.
* There is no unchecked path: :func:`apply` and :func:`step` validate every action. Events are
  built only by :func:`step`; :func:`apply` skips them, which keeps playouts fast. Bots that play
  many rounds out can use :mod:`hearts_engine.playout`, which runs the same clauses, trick and
  scoring functions on mutable values and still checks every chosen card.
* Passing is simultaneous and secret: each seat submits its three cards in any order; the
  exchange happens when the fourth pass arrives.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from itertools import compress
from operator import itemgetter, not_
from typing import NamedTuple, Protocol

from hearts_engine.cards import (
    _SUIT_TABLES,
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
# Per-card tables: a subscript is quicker than the arithmetic, and shares the ints and tuples.
_BITS = tuple(1 << card for card in range(52))
_SUIT_MASK_OF = tuple(SUIT_MASKS[card // 13] for card in range(52))
_ALONE = tuple((card,) for card in DECK)  # to extend a trick by one card
# isinstance is quicker with a tuple of types than with a union
_DECK_CONTAINERS = (tuple, list)
_PASS_CONTAINERS = (tuple, list, frozenset, set)
_FULL = (1 << 52) - 1


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


class State(NamedTuple):
    """The whole game. Treat it as opaque and read it through the functions of this package.

    Fields hold masks and tuples, never mutable containers. ``turn`` is -1 when no single seat is
    to act. ``passed[seat]`` is 0 until that seat has passed, then the mask of its three cards
    (kept for the round record after the exchange).
    """

    rules: Rules
    phase: Phase
    round_index: int
    first_dealer: int
    deck: tuple[Card, ...]
    hands: tuple[int, int, int, int]
    passed: tuple[int, int, int, int]
    turn: int
    leader: int
    trick: tuple[Card, ...]
    tricks: tuple[Trick, ...]
    hearts_broken: bool
    taken: tuple[int, int, int, int]
    totals: tuple[int, int, int, int]
    rounds: tuple[RoundRecord, ...]

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
        return cards_of(self.hands[_seat(seat)])


class GameResult(NamedTuple):
    """The end of a game: final totals, the winner(s) with the lowest total, the loser(s)."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    losers: tuple[int, ...]


_ZERO4 = (0, 0, 0, 0)
# Module constants: an enum attribute look-up costs more than the compare. States only ever hold
# Phase members, so the hot paths compare phases by identity.
_DEALING = Phase.DEALING
_PASSING = Phase.PASSING
_PLAYING = Phase.PLAYING
_GAME_OVER = Phase.GAME_OVER
# Building a State through tuple.__new__ skips the generated __new__'s Python frame; the argument
# order is the field order above.
_new_state = tuple.__new__


def new_game(rules: Rules | None = None, *, first_dealer: int = 0) -> State:
    """A game waiting for its first deal.

    >>> new_game().phase
    <Phase.DEALING: 0>
    """
    if rules is None:
        rules = Rules()
    elif not isinstance(rules, Rules):
        raise MalformedError(MalformedReason.INVALID_RULES, "rules must be a Rules value")
    return _new_state(State, (
        rules, Phase.DEALING, 0, _seat(first_dealer), (), _ZERO4, _ZERO4, -1, -1, (), (),
        False, _ZERO4, _ZERO4, (),
    ))  # fmt: skip


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


# Per dealer, per seat, the 13 deck positions deal_hands gives that seat, read off by dealing the
# ordered DECK (card i is at position i). _deal gathers a validated deck's hands with these at C
# speed; its cards are distinct, so adding their bits is the same as or-ing them.
_HAND_POSITIONS = tuple(
    tuple(itemgetter(*(p for p in range(52) if mask >> p & 1)) for mask in deal_hands(DECK, dealer))
    for dealer in SEATS
)


# --------------------------------------------------------------------------- legal moves


class _Position(Protocol):
    """What :func:`_legal_mask` reads: a :class:`State`, or the mutable stand-in for one that
    :mod:`hearts_engine.playout` updates in place."""

    @property
    def rules(self) -> Rules: ...
    @property
    def hands(self) -> Sequence[int]: ...
    @property
    def trick(self) -> tuple[Card, ...]: ...
    @property
    def tricks(self) -> Sequence[Trick]: ...
    @property
    def hearts_broken(self) -> bool: ...


def _legal_mask(state: _Position, seat: int) -> int:
    """The mask of cards ``seat`` may play now; the caller has checked phase and turn."""
    hand = state.hands[seat]
    trick = state.trick
    if trick:
        follow = hand & _SUIT_MASK_OF[trick[0]]
        if follow:  # the common case: answered before reading the rules
            return follow
        if not state.tricks and state.rules.no_points_on_first_trick:
            safe = hand & ~_POINT_CARDS
            if safe:
                return safe
        return hand
    rules = state.rules
    if not state.tricks:
        return hand & _CLUBS if rules.can_lead_any_club else _2C_BIT
    if rules.must_break_hearts and not state.hearts_broken:
        no_hearts = hand & ~HEARTS_MASK
        if no_hearts:
            if no_hearts == _QS_BIT and rules.can_lead_hearts_instead_of_queen:
                return hand
            return no_hearts
    return hand


def _play_rejection(state: State, seat: int, card: Card) -> IllegalActionError:
    """Name the first rule clause that forbids ``card``; mirrors :func:`_legal_mask`."""
    hand = state.hands[seat]
    bit = 1 << card
    if not hand & bit:
        return IllegalActionError(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {card}")
    trick = state.trick
    if trick:
        led = trick[0] // 13
        if hand & SUIT_MASKS[led]:
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


# The last (state, legal mask) that legal_plays computed. A player almost always asks for its legal
# cards and then plays one, so _play can reuse the mask instead of deriving it again. States are
# immutable, so an identity match is always correct; the pair is replaced in one assignment, so
# threads can only ever see a stale pair, which simply misses.
_memo: tuple[State | None, int] = (None, 0)


def seats_to_act(state: State) -> tuple[int, ...]:
    """The seats that owe an action: every seat yet to pass, the seat to play, or none."""
    phase = state.phase
    if phase is _PLAYING:
        return (state.turn,)
    if phase is _PASSING:
        return tuple(compress(SEATS, map(not_, state.passed)))  # the seats whose mask is still 0
    return ()


def legal_plays(state: State, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` may play now, sorted; empty when it is not that seat's turn.

    >>> from hearts_engine.cards import seeded_deck
    >>> s = apply(new_game(Rules(pass_cards=False)), Deal(seeded_deck(1)))
    >>> legal_plays(s, s.turn)
    (Card.parse('2C'),)
    """
    global _memo  # noqa: PLW0603 -- see _memo
    if state.turn != seat or state.phase is not _PLAYING:
        _seat(seat)
        return ()
    mask = _legal_mask(state, seat)
    _memo = (state, mask)
    c, d, h, s = _SUIT_TABLES  # cards_of(mask), inlined: this runs once per card played
    return c[mask & 0x1FFF] + d[mask >> 13 & 0x1FFF] + h[mask >> 26 & 0x1FFF] + s[mask >> 39]


def legal_passes(state: State, seat: int) -> tuple[Card, ...]:
    """The cards ``seat`` may choose its three passes from (its hand), or empty."""
    seat = _seat(seat)
    if state.phase is not _PASSING or state.passed[seat]:
        return ()
    return cards_of(state.hands[seat])


# Every PlayCard there can be, built once: legal_actions hands out these shared immutable values
# instead of constructing new ones for every card of every playout.
_PLAYS = tuple(tuple(PlayCard(seat, card) for card in DECK) for seat in SEATS)
# The index triples of the 3-card subsets of a 13-card hand, in lexicographic order.
_TRIPLES = tuple((i, j, k) for i in range(13) for j in range(i + 1, 13) for k in range(j + 1, 13))


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

    __slots__ = ("_hands",)

    def __init__(self, hands: Sequence[tuple[int, tuple[Card, ...]]]) -> None:
        self._hands = tuple(hands)

    def __len__(self) -> int:
        return len(_TRIPLES) * len(self._hands)

    def __getitem__(self, index: int) -> PassCards:  # type: ignore[override]
        if not isinstance(index, int):
            raise TypeError("PassChoices takes an int index")
        size = len(_TRIPLES)
        if index < 0:
            index += size * len(self._hands)
        if not 0 <= index < size * len(self._hands):
            raise IndexError(index)
        seat, hand = self._hands[index // size]
        i, j, k = _TRIPLES[index % size]
        return PassCards(seat, (hand[i], hand[j], hand[k]))

    def __repr__(self) -> str:
        return f"PassChoices(seats={[seat for seat, _ in self._hands]}, count={len(self)})"


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
    global _memo  # noqa: PLW0603 -- see _memo
    phase = state.phase
    if phase is _PLAYING:
        turn = state.turn
        if seat is not None and seat != turn:
            _seat(seat)
            return ()
        mask = _legal_mask(state, turn)
        _memo = (state, mask)
        c, d, h, s = _SUIT_TABLES
        return tuple(
            map(
                _PLAYS[turn].__getitem__,
                c[mask & 0x1FFF] + d[mask >> 13 & 0x1FFF] + h[mask >> 26 & 0x1FFF] + s[mask >> 39],
            )
        )
    if phase is _PASSING:
        seats = SEATS if seat is None else (_seat(seat),)
        return PassChoices([(s, cards_of(state.hands[s])) for s in seats if not state.passed[s]])
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
    if action.__class__ is PlayCard:  # the hot path of every playout: one call less
        return _play(state, action[0], action[1], None)
    return _step(state, action, None)


def step(state: State, action: Action) -> tuple[State, tuple[Event, ...]]:
    """Like :func:`apply`, and also the events the action caused, in order."""
    events: list[Event] = []
    return _step(state, action, events), tuple(events)


def _step(state: State, action: Action, events: list[Event] | None) -> State:
    cls = action.__class__
    if cls is PlayCard:
        return _play(state, action.seat, action.card, events)  # type: ignore[union-attr]
    if cls is PassCards:
        return _pass(state, action.seat, action.cards, events)  # type: ignore[union-attr]
    if cls is Deal:
        return _deal(state, action.deck, events)  # type: ignore[union-attr]
    raise MalformedError(MalformedReason.INVALID_ACTION, f"not an action: {action!r}")


def _check_deck(deck: object) -> tuple[Card, ...]:
    if not isinstance(deck, _DECK_CONTAINERS) or len(deck) != 52:
        raise MalformedError(MalformedReason.INVALID_DECK, "a deck is a sequence of 52 cards")
    # The common case, all Card already, is checked at C speed.
    cards = tuple(deck) if set(map(type, deck)) == {Card} else tuple(_card(c) for c in deck)
    if len(set(cards)) != 52:
        raise MalformedError(MalformedReason.INVALID_DECK, "a deck holds each card exactly once")
    return cards


def _deal(state: State, deck: object, events: list[Event] | None) -> State:
    cards = _check_deck(deck)  # malformed before illegal, as for passes and plays
    if state.phase is not _DEALING:
        _raise_phase(state, "deal")
    dealer = state.dealer
    g0, g1, g2, g3 = _HAND_POSITIONS[dealer]  # deal_hands(cards, dealer), at C speed
    hands = (
        sum(map(_BITS.__getitem__, g0(cards))),
        sum(map(_BITS.__getitem__, g1(cards))),
        sum(map(_BITS.__getitem__, g2(cards))),
        sum(map(_BITS.__getitem__, g3(cards))),
    )
    direction = state.pass_direction
    if direction == PassDirection.HOLD:
        phase, turn = Phase.PLAYING, _holder(hands, TWO_OF_CLUBS)
    else:
        phase, turn = Phase.PASSING, -1
    if events is not None:
        events.append(RoundStarted(state.round_index, dealer, direction))
        for seat in SEATS:
            events.append(HandDealt(seat, cards_of(hands[seat])))
    return _new_state(State, (
        state.rules, phase, state.round_index, state.first_dealer, cards, hands, _ZERO4, turn,
        turn, (), (), False, _ZERO4, state.totals, state.rounds,
    ))  # fmt: skip


def _holder(hands: Sequence[int], card: Card) -> int:
    bit = 1 << card
    for seat in SEATS:
        if hands[seat] & bit:
            return seat
    raise AssertionError(f"nobody holds {card}")  # unreachable: every card is dealt


def _raise_phase(state: State, what: str) -> None:
    if state.phase == Phase.GAME_OVER:
        raise IllegalActionError(Reason.GAME_OVER, "the game is over")
    raise IllegalActionError(
        Reason.WRONG_PHASE, f"cannot {what} while the game is {state.phase.name}"
    )


def _pass(state: State, seat: object, cards: object, events: list[Event] | None) -> State:
    seat = _seat(seat)
    if not isinstance(cards, _PASS_CONTAINERS):
        raise MalformedError(MalformedReason.INVALID_ACTION, "pass a sequence of cards")
    parsed = tuple(map(_card, cards))
    (
        rules, phase, round_index, first_dealer, deck, hands, passed, turn, leader, trick, tricks,
        broken, taken, totals, rounds,
    ) = state  # fmt: skip
    if phase is not _PASSING:
        _raise_phase(state, "pass")
    if passed[seat]:
        raise IllegalActionError(Reason.ALREADY_PASSED, f"seat {seat} has already passed")
    if len(parsed) != PASS_COUNT:
        raise IllegalActionError(
            Reason.WRONG_PASS_COUNT, f"pass exactly {PASS_COUNT} cards, not {len(parsed)}"
        )
    first, second, third = parsed
    mask = 1 << first | 1 << second | 1 << third
    if mask.bit_count() != PASS_COUNT:  # the card named a second time, in the order given
        duplicate = second if second == first else third
        raise IllegalActionError(Reason.DUPLICATE_CARD, f"{duplicate} is named twice")
    hand = hands[seat]
    if mask & ~hand:
        missing = cards_of(mask & ~hand)[0]
        raise IllegalActionError(Reason.CARD_NOT_IN_HAND, f"seat {seat} does not hold {missing}")
    new_passed = list(passed)
    new_passed[seat] = mask
    p0, p1, p2, p3 = new_passed
    passed = (p0, p1, p2, p3)
    direction = rules.pass_direction(round_index)
    if events is not None:
        events.append(SeatPassed(seat))
        events.append(CardsPassed(seat, (seat + direction) & 3, cards_of(mask)))
    if not (p0 and p1 and p2 and p3):
        return _new_state(State, (
            rules, phase, round_index, first_dealer, deck, hands, passed, turn, leader, trick,
            tricks, broken, taken, totals, rounds,
        ))  # fmt: skip
    # The fourth pass: every seat gives its three cards and takes the three passed to it.
    new_hands = [0, 0, 0, 0]
    for giver in SEATS:
        taker = (giver + direction) & 3
        new_hands[taker] = hands[taker] & ~passed[taker] | passed[giver]
    hands = (new_hands[0], new_hands[1], new_hands[2], new_hands[3])
    if events is not None:
        for taker in SEATS:
            giver = (taker - direction) & 3
            events.append(CardsReceived(taker, giver, cards_of(passed[giver])))
    turn = _holder(hands, TWO_OF_CLUBS)
    return _new_state(State, (
        rules, _PLAYING, round_index, first_dealer, deck, hands, passed, turn, turn, (), (),
        False, _ZERO4, totals, rounds,
    ))  # fmt: skip


def _play(state: State, seat: int, card: Card, events: list[Event] | None) -> State:
    if card.__class__ is not Card:
        card = _card(card)
    # One unpacking instead of an attribute load per field: the new state needs nearly all of them.
    (
        rules, phase, round_index, first_dealer, deck, hands, passed, turn, leader, trick, tricks,
        broken, taken, totals, rounds,
    ) = state  # fmt: skip
    # Identity, not equality: CPython shares the small ints, so a plain int seat that is the turn
    # is the same object. Anything else (a bool, an int subclass, not a seat) takes this branch.
    if seat is not turn or phase is not _PLAYING:
        seat = _seat(seat)  # not a seat, or a seat given as an int subclass (converted here)
        if phase is not _PLAYING:
            _raise_phase(state, "play")
        if seat != turn:
            raise IllegalActionError(Reason.NOT_YOUR_TURN, f"it is seat {turn}'s turn")
    bit = _BITS[card]
    memo_state, legal = _memo
    if memo_state is not state:
        legal = _legal_mask(state, seat)
    if not legal & bit:
        raise _play_rejection(state, seat, card)
    h0, h1, h2, h3 = hands
    if seat == 0:
        hands = (h0 ^ bit, h1, h2, h3)
    elif seat == 1:
        hands = (h0, h1 ^ bit, h2, h3)
    elif seat == 2:
        hands = (h0, h1, h2 ^ bit, h3)
    else:
        hands = (h0, h1, h2, h3 ^ bit)
    if events is not None:
        events.append(CardPlayed(seat, card, len(tricks)))
    if not broken and (bit & HEARTS_MASK or (bit == _QS_BIT and rules.queen_breaks_hearts)):
        broken = True
        if events is not None:
            events.append(HeartsBroken(seat, card))
    trick += _ALONE[card]
    if len(trick) < 4:
        return _new_state(State, (
            rules, _PLAYING, round_index, first_dealer, deck, hands, passed, (seat + 1) & 3,
            leader, trick, tricks, broken, taken, totals, rounds,
        ))  # fmt: skip
    winner, trick_mask = _take(trick, leader)
    t0, t1, t2, t3 = taken
    if winner == 0:
        taken = (t0 | trick_mask, t1, t2, t3)
    elif winner == 1:
        taken = (t0, t1 | trick_mask, t2, t3)
    elif winner == 2:
        taken = (t0, t1, t2 | trick_mask, t3)
    else:
        taken = (t0, t1, t2, t3 | trick_mask)
    tricks += (_new_state(Trick, (leader, trick, winner)),)
    if events is not None:
        events.append(
            TrickWon(len(tricks) - 1, leader, trick, winner, _mask_points(trick_mask, rules))
        )
    if len(tricks) < 13:
        return _new_state(State, (
            rules, _PLAYING, round_index, first_dealer, deck, hands, passed, winner, winner, (),
            tricks, broken, taken, totals, rounds,
        ))  # fmt: skip
    return _score_round(state, tricks, taken, events)


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
    shooter = None
    for seat in SEATS:
        if taken[seat] & _POINT_CARDS == _POINT_CARDS:
            shooter = seat
    if shooter is None:
        points = [
            (taken[seat] & HEARTS_MASK).bit_count() + (13 if taken[seat] & _QS_BIT else 0)
            for seat in SEATS
        ]
    elif rules.moon_scoring == MoonScoring.ADD_TO_OTHERS:
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


def _score_round(
    state: State,
    tricks: tuple[Trick, ...],
    taken: tuple[int, int, int, int],
    events: list[Event] | None,
) -> State:
    points, shooter = round_points(state.rules, taken, tricks)
    totals = (
        state.totals[0] + points[0],
        state.totals[1] + points[1],
        state.totals[2] + points[2],
        state.totals[3] + points[3],
    )
    record = _new_state(RoundRecord, (
        state.round_index, state.dealer, state.deck, tuple(map(cards_of, state.passed)), tricks,
        points, shooter,
    ))  # fmt: skip
    over = max(totals) >= state.rules.target_score
    if events is not None:
        events.append(RoundScored(state.round_index, points, totals, shooter))
    nxt = _new_state(State, (
        state.rules, _GAME_OVER if over else _DEALING,
        state.round_index if over else state.round_index + 1, state.first_dealer, (), _ZERO4,
        _ZERO4, -1, -1, (), (), False, _ZERO4, totals, (*state.rounds, record),
    ))  # fmt: skip
    if over and events is not None:
        final = result(nxt)
        assert final is not None
        events.append(GameOver(final.totals, final.winners, final.losers))
    return nxt


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
