"""Shared helpers for the engine tests: scripted deals in card notation and seeded random games.

Scripted positions are built the way a real table builds them: a deck whose 5-4-4 deal gives the
hands we want (:func:`deck_for_hands` inverts :func:`hearts_engine.deal_hands`), dealt by an
ordinary :class:`Deal` action. Random games are driven by ``random.Random(seed)`` only, so every
failure can be reproduced from the seed that the assertion message prints.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Iterable, Iterator, Sequence

from hearts_engine import (
    DECK,
    SEATS,
    Action,
    Card,
    Deal,
    Event,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    SeatView,
    State,
    apply,
    cards_of,
    deal_hands,
    format_cards,
    legal_passes,
    legal_plays,
    new_game,
    parse_cards,
    seats_to_act,
    seeded_deck,
    step,
)

HOLD = Rules(pass_cards=False)
"""Rules without passing, so that a scripted deal goes straight to play."""

Policy = Callable[[State, random.Random], Action]


def cards(text: str | Iterable[Card]) -> tuple[Card, ...]:
    """Cards from notation (``"2C QS TH"``), or a tuple of the given cards."""
    return parse_cards(text) if isinstance(text, str) else tuple(text)


def card_set(text: str | Iterable[Card]) -> frozenset[Card]:
    """A set of cards from notation, for order-free comparisons."""
    return frozenset(cards(text))


def deck_for_hands(hands: Sequence[str | Iterable[Card]], dealer: int) -> tuple[Card, ...]:
    """The deck order whose 5-4-4 deal by ``dealer`` gives ``hands[seat]`` to each seat.

    Each hand's cards are dealt in the order written. Refuses anything that is not four hands of
    13 distinct cards covering the whole deck, so a typo in a scripted deal fails loudly here.
    """
    parsed = [list(cards(hand)) for hand in hands]
    assert len(parsed) == 4, "four hands"
    for seat, hand in enumerate(parsed):
        assert len(hand) == 13, f"seat {seat} has {len(hand)} cards: {format_cards(hand)}"
    everything = [card for hand in parsed for card in hand]
    assert sorted(everything) == list(DECK), "the hands must hold each of the 52 cards once"
    deck: list[Card] = []
    for packet in (5, 4, 4):
        for offset in (1, 2, 3, 4):
            seat = (dealer + offset) % 4
            deck.extend(parsed[seat][:packet])
            del parsed[seat][:packet]
    assert tuple(cards_of(m) for m in deal_hands(deck, dealer)) == tuple(
        tuple(sorted(cards(h))) for h in hands
    )
    return tuple(deck)


def start_round(
    rules: Rules | None = None, *, round_index: int = 0, first_dealer: int = 0
) -> State:
    """A game waiting for the deal of round ``round_index`` (0-based) with zero totals.

    A later round index picks that round's pass direction and dealer without playing the rounds
    before it (index 3 is the hold round of the first cycle).
    """
    return new_game(rules, first_dealer=first_dealer)._replace(round_index=round_index)


def deal(
    hands: Sequence[str | Iterable[Card]],
    *,
    rules: Rules = HOLD,
    round_index: int = 0,
    first_dealer: int = 0,
) -> State:
    """The state right after dealing exactly ``hands`` (seat 0 first)."""
    state = start_round(rules, round_index=round_index, first_dealer=first_dealer)
    return apply(state, Deal(deck_for_hands(hands, state.dealer)))


def play(state: State, plays: str) -> State:
    """Play the cards in order, each by the seat whose turn it is."""
    for card in cards(plays):
        state = apply(state, PlayCard(state.turn, card))
    return state


def pass_all(state: State, passes: Sequence[str]) -> State:
    """Every seat passes the three cards written for it, seat 0 first."""
    for seat in SEATS:
        state = apply(state, PassCards(seat, cards(passes[seat])))
    return state


def hand_text(state: State, seat: int) -> str:
    """A seat's hand in notation, sorted."""
    return format_cards(state.hand(seat))


# --------------------------------------------------------------------------- random games


def random_policy(state: State, rng: random.Random) -> Action:
    """A uniformly random legal action for the next seat to act (the first deals are seeded)."""
    if state.phase == Phase.PASSING:
        seat = rng.choice(seats_to_act(state))
        return PassCards(seat, tuple(rng.sample(legal_passes(state, seat), 3)))
    return PlayCard(state.turn, rng.choice(legal_plays(state, state.turn)))


def seeded_deal(seed: int, state: State) -> Deal:
    """The deal of the current round in a seeded game."""
    return Deal(seeded_deck(seed, state.round_index))


def game_steps(
    seed: int,
    rules: Rules | None = None,
    *,
    first_dealer: int = 0,
    policy: Policy = random_policy,
    with_events: bool = False,
    max_rounds: int | None = None,
) -> Iterator[tuple[State, Action, State, tuple[Event, ...]]]:
    """Every step of a whole seeded game: (state before, action, state after, events).

    Events are only computed (through :func:`step`) when ``with_events`` is set. With
    ``max_rounds`` the game stops after that many rounds even if nobody reached the target.
    """
    rng = random.Random(seed)
    state = new_game(rules, first_dealer=first_dealer)
    while state.phase != Phase.GAME_OVER and (max_rounds is None or state.round_index < max_rounds):
        if state.phase == Phase.DEALING:
            action: Action = seeded_deal(seed, state)
        else:
            action = policy(state, rng)
        if with_events:
            after, events = step(state, action)
        else:
            after, events = apply(state, action), ()
        yield state, action, after, events
        state = after


def play_game(
    seed: int, rules: Rules | None = None, *, first_dealer: int = 0, policy: Policy = random_policy
) -> State:
    """The final state of a whole seeded game."""
    state = new_game(rules, first_dealer=first_dealer)
    for _, _, after, _ in game_steps(seed, rules, first_dealer=first_dealer, policy=policy):
        state = after
    return state


def priority_policy(orders: Sequence[str]) -> Policy:
    """Each seat plays the first card of its written order that is legal now."""
    parsed = [cards(order) for order in orders]

    def choose(state: State, rng: random.Random) -> Action:
        legal = set(legal_plays(state, state.turn))
        for card in parsed[state.turn]:
            if card in legal:
                return PlayCard(state.turn, card)
        raise AssertionError(f"seat {state.turn}'s order has no legal card: {legal}")

    return choose


def play_round(state: State, policy: Policy, seed: int = 0) -> State:
    """Play from ``state`` until the round is scored (the next deal, or game over)."""
    rng = random.Random(seed)
    round_index = state.round_index
    while state.phase in (Phase.PASSING, Phase.PLAYING) and state.round_index == round_index:
        state = apply(state, policy(state, rng))
    return state


def lowest_policy(state: State, rng: random.Random) -> Action:
    """Always the lowest legal card (in the engine's order), or the first three to pass."""
    if state.phase == Phase.PASSING:
        seat = seats_to_act(state)[0]
        return PassCards(seat, legal_passes(state, seat)[:3])
    return PlayCard(state.turn, legal_plays(state, state.turn)[0])


# --------------------------------------------------------------------------- secrecy checks


def cards_in(value: object) -> set[Card]:
    """Every card that appears anywhere inside ``value`` (tuples, dataclasses, named tuples)."""
    found: set[Card] = set()
    if isinstance(value, Card):
        found.add(value)
    elif isinstance(value, Rules):
        pass
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            found |= cards_in(getattr(value, field.name))
    elif isinstance(value, tuple | list | set | frozenset):
        for item in value:
            found |= cards_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            found |= cards_in(item)
    return found


def others_hidden_cards(state: State, seat: int | None) -> set[Card]:
    """Cards held by seats other than ``seat`` that ``seat`` may not know about.

    The one exception the rules allow: once the pass is made, a seat knows the cards it passed,
    which now sit in another hand.
    """
    hidden: set[Card] = set()
    for other in SEATS:
        if other != seat:
            hidden |= set(state.hand(other))
    if seat is not None:
        hidden -= set(cards_of(state.passed[seat]))
    return hidden


def assert_view_hides_others(state: State, seat_view: SeatView, note: str = "") -> None:
    """A view shows no card of another seat's hand (beyond what the seat passed itself)."""
    leaked = cards_in(seat_view) & others_hidden_cards(state, seat_view.seat)
    assert not leaked, f"{note} view of seat {seat_view.seat} leaks {format_cards(sorted(leaked))}"


def assert_events_hide_others(state: State, events: Sequence[Event], note: str = "") -> None:
    """Each event shows its audience no card of another seat's hand (``state`` is after it)."""
    for event in events:
        leaked = cards_in(event) & others_hidden_cards(state, event.audience)
        assert not leaked, f"{note} {event!r} leaks {format_cards(sorted(leaked))}"
