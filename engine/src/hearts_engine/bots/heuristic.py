"""Rule-of-thumb Hearts: pass danger, duck under the winner, dump the queen, block the moon.

The rules of thumb work on 52-bit masks (``1 << card``) so that the same functions serve two
callers: :class:`HeuristicBot`, which reads them off a seat's view, and the Monte Carlo bot's
playouts, which call :func:`play_card` for every seat some hundred thousand times a second and
cannot afford to build views. Everything a function here reads is what the seat itself may know:
its hand, the cards played so far, the current trick and the points taken.

The heuristic plays no moon shot of its own and keeps no memory; it is deterministic, so its seed
only exists to satisfy the common bot interface.
"""

from __future__ import annotations

from hearts_engine.bots.base import Bot, BotLevel
from hearts_engine.cards import DECK, HEARTS_MASK, SPADES_MASK, SUIT_MASKS, Card, mask_of
from hearts_engine.views import SeatView

__all__ = ["MOON_HEARTS", "MOON_THRESHOLD", "HeuristicBot", "pass_cards", "play_card"]

_QS = 49  # the queen of spades' index: spades start at 39, the queen is rank 12 (index 10)
_QS_BIT = 1 << _QS
_HIGH_SPADES = 1 << 50 | 1 << 51  # the king and ace of spades: they catch the queen
_BELOW_QS = SPADES_MASK & (_QS_BIT - 1)
_POINTS = HEARTS_MASK | _QS_BIT
_JD = 22  # the jack of diamonds: diamonds start at 13, the jack is rank 11 (index 9)
_JD_BIT = 1 << _JD
_DIAMONDS = 1
_HEARTS = 2
_SPADES = 3

MOON_THRESHOLD = 8
"""Points one other seat must hold, alone, before the heuristic spends cards to stop a moon."""

MOON_HEARTS = 3
"""Hearts that seat must have taken too: the queen of spades dumped on a seat, with a heart or
two, is what happens in most rounds, not a moon shot, and blocking it wastes high hearts."""


def _high(mask: int) -> int:
    return mask.bit_length() - 1


def _low(mask: int) -> int:
    return (mask & -mask).bit_length() - 1


def play_card(
    hand: int,
    legal: int,
    trick: tuple[int, ...],
    played: int,
    *,
    block: bool = False,
    shooter_winning: bool = False,
    jack: bool = False,
    spare_winner: bool = False,
) -> int:
    """The heuristic's card (as an index 0..51) for a seat that must play now.

    ``hand`` and ``legal`` are masks of the seat's cards and of the ones it may play; ``trick``
    is the current trick in play order; ``played`` is the mask of every card played this round,
    the current trick included. ``block`` asks to take a heart trick to stop a moon shot, and
    ``shooter_winning`` says the would-be shooter is winning the current trick. ``jack`` says
    the jack of diamonds is worth -10 (``Rules.jack_of_diamonds_bonus``): the heuristic then
    takes it when it safely can, and neither follows nor leads with it while another seat may
    win it. ``spare_winner`` asks to discard no points onto the trick's current winner (points
    there would end the game with another seat winning it).

    >>> from hearts_engine import DECK, mask_of, parse_cards
    >>> hand = mask_of(parse_cards("9D 2S QS"))
    >>> str(DECK[play_card(hand, hand, parse_cards("5C"), mask_of(parse_cards("5C")))])
    'QS'
    >>> hand = mask_of(parse_cards("2C 7C 9C KC"))
    >>> str(DECK[play_card(hand, hand, parse_cards("8C"), mask_of(parse_cards("8C")))])
    '7C'
    """
    if not legal & (legal - 1):
        return _low(legal)
    if jack:
        card = _jack_play(hand, legal, trick, played) if trick else -1
        if card >= 0:
            return card
        if legal & _JD_BIT and legal != _JD_BIT and (trick or _higher_out(_JD, hand, played)):
            legal &= ~_JD_BIT  # keep the jack: played now, it could go to another seat
    if trick:
        return _follow(
            hand, legal, trick, played, block=block, spare_winner=spare_winner or shooter_winning
        )
    return _lead(hand, legal, played, block)


def _higher_out(card: int, hand: int, played: int) -> int:
    """The cards of ``card``'s suit above it that other seats may still hold."""
    return SUIT_MASKS[card // 13] & ~((1 << (card + 1)) - 1) & ~played & ~hand


def _jack_play(hand: int, legal: int, trick: tuple[int, ...], played: int) -> int:
    """A diamond that surely wins a trick worth taking for the jack's -10, or -1.

    A trick of diamonds with the jack in it (or to come from this seat) is worth taking while
    its hearts and queen are worth less than 10; it is sure when this seat plays last, or when
    every higher diamond is in this hand or played.
    """
    if trick[0] // 13 != _DIAMONDS or not legal & SUIT_MASKS[_DIAMONDS]:
        return -1
    high, in_trick = trick[0], 0
    for card in trick:
        in_trick |= 1 << card
        if card // 13 == _DIAMONDS and card > high:
            high = card
    if (in_trick & HEARTS_MASK).bit_count() + (13 if in_trick & _QS_BIT else 0) >= 10:
        return -1
    if in_trick & _JD_BIT:
        above = legal & ~((1 << (high + 1)) - 1)  # diamonds that beat the trick's best
        card = _low(above) if above else -1
    elif legal & _JD_BIT and high < _JD:
        card = _JD
    else:
        return -1
    if card < 0:
        return -1
    return card if len(trick) == 3 or not _higher_out(card, hand, played) else -1


def _follow(
    hand: int,
    legal: int,
    trick: tuple[int, ...],
    played: int,
    *,
    block: bool,
    spare_winner: bool,
) -> int:
    led = trick[0] // 13
    high = trick[0]
    in_trick = 0
    for card in trick:
        in_trick |= 1 << card
        if card // 13 == led and card > high:
            high = card
    if legal & SUIT_MASKS[led]:  # following suit: every legal card is of the led suit
        if legal & _QS_BIT and high > _QS and not spare_winner:
            return _QS  # the king or ace of spades is on the trick: the queen goes under it
        safe = legal & ~_QS_BIT or legal
        if block and led == _HEARTS:
            if legal >> (high + 1):
                return _high(legal)  # take a heart so that the shooter cannot have them all
            return _low(legal)  # this trick is lost anyway: keep the high hearts to stop later
        if len(trick) == 3 and not in_trick & _POINTS:
            return _high(safe)  # last to a clean trick: take it with, or shed, the highest card
        below = (safe if spare_winner else legal) & ((1 << high) - 1)
        if below:
            return _high(below)  # duck: the highest card that still loses
        if len(trick) < 3 and (
            led == _HEARTS or (led == _SPADES and not (played | hand) & _QS_BIT)
        ):
            # Winning for now, with seats still to play: the lowest card may yet be beaten,
            # while the highest would surely take the hearts, or the queen dropped under it.
            return _low(safe)
        return _high(safe)  # forced to win: win with the highest card
    # Void in the led suit: discard.
    if spare_winner:
        clean = legal & ~_POINTS
        if clean:
            # No points for the would-be shooter, or for a seat they would push over the target
            # while another seat is lowest.
            return _discard(hand, clean, played)
    if legal & _QS_BIT:
        return _QS
    if not (played | hand) & _QS_BIT and legal & _HIGH_SPADES:
        return _high(legal & _HIGH_SPADES)  # the queen is still out: shed what would catch it
    hearts = legal & HEARTS_MASK
    if hearts:
        return _high(hearts)
    return _discard(hand, legal, played)


def _discard(hand: int, legal: int, played: int) -> int:
    """The most dangerous card: high, in a short suit, not a low spade guarding the queen."""
    queen_out = not (played | hand) & _QS_BIT
    best, best_key = -1, -100
    for suit in range(4):
        cards = legal & SUIT_MASKS[suit]
        if not cards:
            continue
        card = _high(cards)
        key = card - 13 * suit - (hand & SUIT_MASKS[suit]).bit_count()
        if suit == _SPADES and queen_out and card < _QS:
            key -= 6  # low spades protect against being forced to take the queen
        if key > best_key:
            best, best_key = card, key
    return best


def _lead(hand: int, legal: int, played: int, block: bool) -> int:
    if block and legal & HEARTS_MASK:
        return _high(legal & HEARTS_MASK)
    queen_out = not (played | hand) & _QS_BIT
    best, best_key = -1, 1 << 30
    for suit in range(4):
        mask = SUIT_MASKS[suit]
        cards = legal & mask
        if not cards:
            continue
        card = _low(cards)
        out = mask & ~played & ~hand
        if out:
            n_out = out.bit_count()
            under = (out & ((1 << card) - 1)).bit_count()  # cards that could duck my lead
            key = 4 * under + (40 if under == n_out else 0) + (6 if n_out <= 2 else 0)
        else:
            key = 200  # nobody can follow: a sure win that everybody discards points onto
        if suit == _SPADES:
            if hand & _QS_BIT:
                key += 60 if card >= _QS else 12
            elif queen_out:
                key += 80 if card > _QS else -4  # flush the queen out with low spades
        elif suit == _HEARTS:
            key += 2
        key = key * 16 + card % 13
        if key < best_key:
            best, best_key = card, key
    return best


def pass_cards(hand: int) -> tuple[int, int, int]:
    """The three card indices the heuristic passes from ``hand`` (a mask of 13 cards or more).

    Dangerous high spades go first when the hand holds fewer than three low spades to guard
    them; then greedily the most dangerous card, where high hearts are dangerous, low spades and
    low hearts are safe, and a club or diamond that empties (voids) a short suit earns a bonus.
    """
    chosen: list[int] = []
    if (hand & _BELOW_QS).bit_count() < 3:
        for card in (_QS, 51, 50):
            if hand >> card & 1:
                chosen.append(card)
    rest = hand & ~mask_of(DECK[card] for card in chosen)
    while len(chosen) < 3:
        slots = 3 - len(chosen)
        best, best_key = -1, -1000
        for card in range(52):
            if not rest >> card & 1:
                continue
            suit, rank = divmod(card, 13)
            length = (rest & SUIT_MASKS[suit]).bit_count()
            if suit == _HEARTS:
                key = rank + 1
            elif suit == _SPADES:
                key = rank - 2 if card > _QS else -20  # low spades guard the queen
            else:
                key = rank + (12 - 3 * length if length <= slots else 0)
            if key > best_key:
                best, best_key = card, key
        chosen.append(best)
        rest &= ~(1 << best)
    a, b, c = sorted(chosen[:3])
    return a, b, c


def moon_threat(seat_view: SeatView) -> int | None:
    """The other seat that has taken every point so far, if enough to be a moon threat.

    None when points are spread, when the viewer holds some, or when the shooter has too few
    points to worry about yet.
    """
    seat = seat_view.seat
    # The moon counts hearts and the queen only: round_points would also count the jack of
    # diamonds' -10, hiding a shooter who took it, or the points of a seat that did.
    taken = [0, 0, 0, 0]
    for trick in seat_view.tricks:
        taken[trick.winner] |= mask_of(trick.cards) & _POINTS
    holders = [s for s, mask in enumerate(taken) if mask]
    if len(holders) != 1 or holders[0] == seat:
        return None
    shooter = holders[0]
    hearts = (taken[shooter] & HEARTS_MASK).bit_count()
    points = hearts + (13 if taken[shooter] & _QS_BIT else 0)
    if points < MOON_THRESHOLD or hearts < MOON_HEARTS:
        return None
    return shooter


def _trick_winner(seat_view: SeatView) -> int | None:
    trick = seat_view.trick
    if not trick or seat_view.leader is None:
        return None
    led = trick[0] // 13
    best = 0
    for index, card in enumerate(trick):
        if card // 13 == led and card > trick[best]:
            best = index
    return (seat_view.leader + best) & 3


def played_mask(seat_view: SeatView) -> int:
    """Every card played this round, the current trick included."""
    played = mask_of(seat_view.trick)
    for trick in seat_view.tricks:
        played |= mask_of(trick.cards)
    return played


def ends_the_game_for_another(seat_view: SeatView) -> bool:
    """Whether the points this seat could discard onto the current trick would push its winner
    to the target, ending the game at the round's end, while the lowest total (the game's
    winner) would not be this seat's.

    Totals are read as they would stand with the round's points so far (the jack of diamonds'
    -10 included, on the trick too); a seat that ends the game while this one is lowest is
    welcome to the points. Moon shots and the bonus for taking no trick are left out: a rule of
    thumb, not a forecast of the round.
    """
    seat = seat_view.seat
    winner = _trick_winner(seat_view)
    if seat is None or winner is None or winner == seat:
        return False
    legal = mask_of(seat_view.legal)
    worst = 13 if legal & _QS_BIT else 1 if legal & HEARTS_MASK else 0
    if not worst:
        return False
    totals = [t + p for t, p in zip(seat_view.totals, seat_view.round_points, strict=True)]
    target = seat_view.rules.target_score
    if max(totals) >= target:
        return False  # the game ends with this round whatever this seat plays
    in_trick = mask_of(seat_view.trick)
    on_trick = (in_trick & HEARTS_MASK).bit_count() + (13 if in_trick & _QS_BIT else 0)
    if seat_view.rules.jack_of_diamonds_bonus and in_trick & _JD_BIT:
        on_trick -= 10
    if totals[winner] + on_trick >= target or totals[winner] + on_trick + worst < target:
        return False  # the trick ends the game anyway, or this discard does not
    totals[winner] += on_trick + worst
    return totals[seat] > min(totals)


def choose_heuristic_play(seat_view: SeatView) -> Card:
    """The heuristic's card for a seat whose turn it is."""
    shooter = moon_threat(seat_view)
    card = play_card(
        mask_of(seat_view.hand),
        mask_of(seat_view.legal),
        seat_view.trick,
        played_mask(seat_view),
        block=shooter is not None,
        shooter_winning=shooter is not None and _trick_winner(seat_view) == shooter,
        jack=seat_view.rules.jack_of_diamonds_bonus,
        spare_winner=ends_the_game_for_another(seat_view),
    )
    return DECK[card]


def choose_heuristic_pass(seat_view: SeatView) -> tuple[Card, Card, Card]:
    """The heuristic's three cards to pass."""
    a, b, c = pass_cards(mask_of(seat_view.legal))
    return DECK[a], DECK[b], DECK[c]


class HeuristicBot(Bot):
    """Sound, fast, deterministic play by rules of thumb; see the module docstring."""

    level = BotLevel.HEURISTIC

    def choose_pass(self, seat_view: SeatView) -> tuple[Card, Card, Card]:
        """Pass unguarded high spades, high hearts, and the cards of a short suit."""
        return choose_heuristic_pass(seat_view)

    def choose_play(self, seat_view: SeatView) -> Card:
        """Duck, dump the queen, void short suits, block a visible moon shot."""
        return choose_heuristic_play(seat_view)
