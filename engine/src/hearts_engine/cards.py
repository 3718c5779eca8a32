"""Cards, suits, ranks and the 52-card deck.

A card is a small ``int`` subclass (0..51, ``suit * 13 + rank - 2``) so that hands can be kept as
52-bit masks and a card's bit is ``1 << card``. Every card is a singleton from :data:`DECK`, so
identity, equality and hashing are cheap. Notation is rank then suit: ``2C``, ``TD``, ``QS``,
``AH``; ``10`` is accepted for ``T`` on input. Parsing never guesses: bad notation raises
:class:`~hearts_engine.errors.MalformedError`.

This module must never depend on the rest of the engine except :mod:`hearts_engine.errors`.
"""

from __future__ import annotations

import enum
import hashlib
from collections.abc import Iterable, Iterator
from typing import Final

from hearts_engine.errors import MalformedError, MalformedReason

__all__ = [
    "CLUBS_MASK",
    "DECK",
    "DIAMONDS_MASK",
    "HEARTS_MASK",
    "JACK_OF_DIAMONDS",
    "QUEEN_OF_SPADES",
    "SPADES_MASK",
    "SUIT_MASKS",
    "TWO_OF_CLUBS",
    "Card",
    "Rank",
    "Suit",
    "cards_of",
    "format_cards",
    "mask_of",
    "parse_cards",
    "seeded_deck",
]


class Suit(enum.IntEnum):
    """The four suits, in the engine's order (also the order of a sorted hand)."""

    CLUBS = 0
    DIAMONDS = 1
    HEARTS = 2
    SPADES = 3

    @property
    def symbol(self) -> str:
        """The one-letter notation: ``C``, ``D``, ``H`` or ``S``."""
        return "CDHS"[self]


class Rank(enum.IntEnum):
    """Ranks 2..14; the ace is high."""

    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        """The one-letter notation: ``2``..``9``, ``T``, ``J``, ``Q``, ``K``, ``A``."""
        return "23456789TJQKA"[self - 2]


_RANK_SYMBOLS: Final = "23456789TJQKA"
_SUIT_SYMBOLS: Final = "CDHS"


class Card(int):
    """One of the 52 cards. Build it with :meth:`parse` or :meth:`of`, or take it from DECK.

    >>> Card.parse("QS")
    Card.parse('QS')
    >>> str(Card.of(Rank.TEN, Suit.DIAMONDS))
    'TD'
    >>> Card.parse("10h") == Card.parse("TH")
    True
    >>> Card.parse("2C") < Card.parse("3C") < Card.parse("2D")
    True
    """

    __slots__ = ()

    @property
    def suit(self) -> Suit:
        """The card's suit."""
        return Suit(self // 13)

    @property
    def rank(self) -> Rank:
        """The card's rank."""
        return Rank(self % 13 + 2)

    @property
    def bit(self) -> int:
        """The card's bit in a 52-bit hand mask."""
        return 1 << self

    @property
    def points(self) -> int:
        """Default-rules points: 1 for a heart, 13 for the queen of spades, else 0."""
        if self == QUEEN_OF_SPADES:
            return 13
        return 1 if self // 13 == Suit.HEARTS else 0

    def __str__(self) -> str:
        return _RANK_SYMBOLS[self % 13] + _SUIT_SYMBOLS[self // 13]

    def __repr__(self) -> str:
        return f"Card.parse({str(self)!r})"

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __reduce__(self) -> tuple[object, tuple[int]]:
        # Unpickle to the DECK singleton (views cross process boundaries to bot workers).
        return (Card.from_index, (int(self),))

    @classmethod
    def of(cls, rank: Rank | int, suit: Suit | int) -> Card:
        """The card of that rank and suit."""
        if not (2 <= rank <= 14 and 0 <= suit <= 3):
            raise MalformedError(
                MalformedReason.INVALID_CARD, f"no card of rank {rank} suit {suit}"
            )
        return DECK[suit * 13 + rank - 2]

    @classmethod
    def parse(cls, text: str) -> Card:
        """Parse notation such as ``QS``, ``TD`` or ``10D`` (case-insensitive)."""
        if not isinstance(text, str):
            raise MalformedError(MalformedReason.INVALID_CARD, f"a card is text, not {text!r}")
        card = _BY_NOTATION.get(text.strip().upper())
        if card is None:
            raise MalformedError(MalformedReason.INVALID_CARD, f"not a card: {text!r}")
        return card

    @classmethod
    def from_index(cls, index: int) -> Card:
        """The card with index 0..51 (``suit * 13 + rank - 2``)."""
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < 52:
            raise MalformedError(MalformedReason.INVALID_CARD, f"not a card index: {index!r}")
        return DECK[index]


DECK: Final[tuple[Card, ...]] = tuple(int.__new__(Card, i) for i in range(52))
"""All 52 cards in order: clubs 2..A, diamonds, hearts, spades."""

_BY_NOTATION: Final[dict[str, Card]] = {}
for _card in DECK:
    _BY_NOTATION[str(_card)] = _card
    if _card % 13 == Rank.TEN - 2:
        _BY_NOTATION["10" + _SUIT_SYMBOLS[_card // 13]] = _card

TWO_OF_CLUBS: Final = DECK[0]
JACK_OF_DIAMONDS: Final = DECK[13 + Rank.JACK - 2]
QUEEN_OF_SPADES: Final = DECK[39 + Rank.QUEEN - 2]

CLUBS_MASK: Final = 0x1FFF
DIAMONDS_MASK: Final = 0x1FFF << 13
HEARTS_MASK: Final = 0x1FFF << 26
SPADES_MASK: Final = 0x1FFF << 39
SUIT_MASKS: Final = (CLUBS_MASK, DIAMONDS_MASK, HEARTS_MASK, SPADES_MASK)


def _suit_table(suit: int) -> tuple[tuple[Card, ...], ...]:
    base = suit * 13
    return tuple(
        tuple(DECK[base + i] for i in range(13) if bits >> i & 1) for bits in range(1 << 13)
    )


# Four lookup tables turn a 13-bit slice of a mask into a tuple of cards with one index each:
# decoding a hand costs four lookups instead of a loop over its bits (this is the hot path of
# legal-move generation).
_SUIT_TABLES: Final = tuple(_suit_table(s) for s in range(4))


def cards_of(mask: int) -> tuple[Card, ...]:
    """The cards of a 52-bit mask, sorted (clubs first, low to high)."""
    c, d, h, s = _SUIT_TABLES
    return c[mask & 0x1FFF] + d[mask >> 13 & 0x1FFF] + h[mask >> 26 & 0x1FFF] + s[mask >> 39]


def mask_of(cards: Iterable[Card]) -> int:
    """The 52-bit mask of some cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def parse_cards(text: str | Iterable[str]) -> tuple[Card, ...]:
    """Parse space- or comma-separated notation, or an iterable of notations.

    >>> parse_cards("2C QS, 10H")
    (Card.parse('2C'), Card.parse('QS'), Card.parse('TH'))
    """
    parts = text.replace(",", " ").split() if isinstance(text, str) else list(text)
    return tuple(Card.parse(part) for part in parts)


def format_cards(cards: Iterable[Card]) -> str:
    """Cards as space-separated notation.

    >>> format_cards(parse_cards("AS 2C"))
    'AS 2C'
    """
    return " ".join(str(card) for card in cards)


def _counter_stream(key: bytes) -> Iterator[int]:
    counter = 0
    while True:
        block = hashlib.sha256(key + counter.to_bytes(8, "big")).digest()
        for i in range(0, 32, 8):
            yield int.from_bytes(block[i : i + 8], "big")
        counter += 1


def seeded_deck(seed: int, round_index: int = 0) -> tuple[Card, ...]:
    """A shuffled deck that depends only on ``seed`` and ``round_index``.

    The shuffle is Fisher-Yates driven by SHA-256 of ``"hearts-deck:{seed}:{round_index}"``
    in counter mode, with rejection sampling, so any language can reproduce a seeded game. This
    is a deterministic function, not a source of randomness: the server shuffles unseeded games
    with the operating system's randomness and passes the deck in.

    >>> seeded_deck(7) == seeded_deck(7) != seeded_deck(7, 1)
    True
    """
    stream = _counter_stream(f"hearts-deck:{seed}:{round_index}".encode())
    cards = list(DECK)
    for i in range(51, 0, -1):
        bound = i + 1
        limit = (1 << 64) - (1 << 64) % bound
        value = next(stream)
        while value >= limit:
            value = next(stream)
        j = value % bound
        cards[i], cards[j] = cards[j], cards[i]
    return tuple(cards)
