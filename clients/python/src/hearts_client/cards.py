"""Card notation for the client: ``"QS"`` to a ``hearts.v1.Card`` and back.

The notation is the project's (``docs/api.md``): rank then suit, ranks ``2``-``9``, ``T``, ``J``,
``Q``, ``K``, ``A``, suits ``C``, ``D``, ``H``, ``S``. On input ``10`` is accepted for ``T``, case
does not matter, and the suit may be a symbol (``Q♠``). Parsing never guesses: anything else
raises :class:`InvalidCardError`. This module must stay free of I/O and of the server's engine:
the client distribution does not depend on it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeAlias

from hearts.v1 import table_pb2 as pb

__all__ = [
    "SUIT_SYMBOLS",
    "CardLike",
    "InvalidCardError",
    "card",
    "card_label",
    "card_str",
    "cards",
    "format_cards",
    "sort_cards",
]

CardLike: TypeAlias = str | pb.Card
"""What the client accepts wherever a card is wanted: notation such as ``"QS"``, or a message."""

_RANKS: Final = "23456789TJQKA"
_SUITS: Final = "CDHS"
_SUIT_VALUES: Final = (pb.SUIT_CLUBS, pb.SUIT_DIAMONDS, pb.SUIT_HEARTS, pb.SUIT_SPADES)

SUIT_SYMBOLS: Final[dict[pb.Suit.ValueType, str]] = {
    pb.SUIT_CLUBS: "♣",
    pb.SUIT_DIAMONDS: "♦",
    pb.SUIT_HEARTS: "♥",
    pb.SUIT_SPADES: "♠",
}
"""The unicode symbol of each ``hearts.v1.Suit`` value."""

_SUIT_BY_TEXT: Final[dict[str, pb.Suit.ValueType]] = {
    **{letter: value for letter, value in zip(_SUITS, _SUIT_VALUES, strict=True)},
    **{symbol: value for value, symbol in SUIT_SYMBOLS.items()},
    # The outline symbols, which some keyboards and fonts produce instead.
    "♧": pb.SUIT_CLUBS,
    "♢": pb.SUIT_DIAMONDS,
    "♡": pb.SUIT_HEARTS,
    "♤": pb.SUIT_SPADES,
}


class InvalidCardError(ValueError):
    """Text that is not a card in the notation (``"XX"``, ``"1H"``, ``""``).

    ``reason`` is ``INVALID_CARD``, the string the server uses for a malformed card.
    """

    reason: Final = "INVALID_CARD"


def card(text: CardLike) -> pb.Card:
    """The ``hearts.v1.Card`` for notation such as ``"QS"``, ``"TD"``, ``"10h"`` or ``"Q♠"``.

    A ``Card`` message is returned as a copy, so callers may mutate the result.

    >>> card("QS") == pb.Card(suit=pb.SUIT_SPADES, rank=pb.RANK_QUEEN)
    True
    >>> card("10h") == card("TH")
    True
    >>> card("1H")
    Traceback (most recent call last):
    ...
    hearts_client.cards.InvalidCardError: not a card: '1H' (write rank then suit, like QS or 10H)
    """
    if isinstance(text, pb.Card):
        if text.suit not in SUIT_SYMBOLS or not pb.RANK_TWO <= text.rank <= pb.RANK_ACE:
            raise InvalidCardError(f"not a card: suit {text.suit}, rank {text.rank}")
        copy = pb.Card()
        copy.CopyFrom(text)
        return copy
    if not isinstance(text, str):
        raise InvalidCardError(f"a card is notation like 'QS', not {text!r}")
    cleaned = text.strip().upper()
    rank_text, suit_text = cleaned[:-1], cleaned[-1:]
    if rank_text == "10":
        rank_text = "T"
    if len(rank_text) != 1 or rank_text not in _RANKS or suit_text not in _SUIT_BY_TEXT:
        raise InvalidCardError(f"not a card: {text!r} (write rank then suit, like QS or 10H)")
    rank = pb.Rank.ValueType(_RANKS.index(rank_text) + 2)
    return pb.Card(suit=_SUIT_BY_TEXT[suit_text], rank=rank)


def cards(text: str | Iterable[CardLike]) -> list[pb.Card]:
    """Several cards: space- or comma-separated notation, or an iterable of card-likes.

    >>> [card_str(c) for c in cards("QS, KS 10h")]
    ['QS', 'KS', 'TH']
    """
    parts: Iterable[CardLike] = text.replace(",", " ").split() if isinstance(text, str) else text
    return [card(part) for part in parts]


def card_str(message: pb.Card) -> str:
    """The notation of a card message, as the server writes it.

    >>> card_str(card("10S"))
    'TS'
    """
    if message.suit not in SUIT_SYMBOLS or not pb.RANK_TWO <= message.rank <= pb.RANK_ACE:
        raise InvalidCardError(f"not a card: suit {message.suit}, rank {message.rank}")
    return _RANKS[message.rank - 2] + _SUITS[message.suit - 1]


def card_label(message: pb.Card, *, symbols: bool = True) -> str:
    """A card for people to read: ``"Q♠"`` (or ``"QS"`` with ``symbols=False``).

    >>> card_label(card("TH"))
    'T♥'
    """
    if not symbols:
        return card_str(message)
    return card_str(message)[0] + SUIT_SYMBOLS[message.suit]


def format_cards(messages: Iterable[pb.Card], *, symbols: bool = False) -> str:
    """Cards as space-separated text, in the order given.

    >>> format_cards(cards("2C QS"))
    '2C QS'
    """
    return " ".join(card_label(m, symbols=symbols) for m in messages)


def sort_cards(messages: Iterable[pb.Card]) -> list[pb.Card]:
    """Cards sorted by suit (clubs, diamonds, hearts, spades), then rank, low to high.

    >>> format_cards(sort_cards(cards("AS 2H KC 3C")))
    '3C KC 2H AS'
    """
    return sorted(messages, key=lambda m: (m.suit, m.rank))
