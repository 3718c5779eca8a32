"""Differential test: the engine and OpenSpiel's Hearts agree on random deals.

OpenSpiel plays one round per game, so each case is one round: the same deck, the same pass
direction, the same passes and the same plays are fed to both, and at every step they must agree
on whose turn it is and on the exact set of legal cards; at the end the round's points must be
equal. The variant flags are drawn at random per deal (OpenSpiel has no subtract-from-shooter
moon, so the moon is always scored the German way).

Skipped unless ``pyspiel`` is importable (``pip install open_spiel``). It imports nothing from
``conftest.py``, so it also runs where the project's other test dependencies are missing::

    uv run --with open_spiel==2.0.2 pytest tests/engine/test_against_openspiel.py

Translating between the two:

* OpenSpiel's card is ``rank * 4 + suit`` (rank 0 is the two; suits clubs, diamonds, hearts,
  spades as here); the engine's is ``suit * 13 + rank - 2``.
* Its first chance action is the pass direction: 0 no pass, 1 left, 2 across, 3 right; the
  engine's :class:`PassDirection` values are the same clockwise offsets.
* Its deal gives the n-th chance card to player ``n % 4``; we feed each seat's engine hand.
* Its passes are three single-card actions per player, players 0, 1, 2, 3 in order.
* ``returns()`` are ``26 - points`` (hearts.cc ``Returns()``), so points are ``26 - returns``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

pyspiel = pytest.importorskip("pyspiel")

from hearts_engine import (  # noqa: E402 -- only once pyspiel is known to be there
    DECK,
    Card,
    Deal,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    State,
    apply,
    legal_passes,
    legal_plays,
    new_game,
)

BATCHES = 25
DEALS_PER_BATCH = 100  # 2,500 random deals in all
FLAGS = {
    # engine option: OpenSpiel parameter
    "pass_cards": "pass_cards",
    "no_points_on_first_trick": "no_pts_on_first_trick",
    "can_lead_any_club": "can_lead_any_club",
    "must_break_hearts": "must_break_hearts",
    "queen_breaks_hearts": "qs_breaks_hearts",
    "can_lead_hearts_instead_of_queen": "can_lead_hearts_instead_of_qs",
    "jack_of_diamonds_bonus": "jd_bonus",
    "avoid_all_tricks_bonus": "avoid_all_tricks_bonus",
}
_GAMES: dict[tuple[bool, ...], object] = {}


def to_osp(card: Card) -> int:
    return (card % 13) * 4 + card // 13


def from_osp(action: int) -> Card:
    return DECK[(action % 4) * 13 + action // 4]


def osp_game(rules: Rules) -> object:
    key = tuple(getattr(rules, name) for name in FLAGS)
    if key not in _GAMES:
        params = {FLAGS[name]: getattr(rules, name) for name in FLAGS}
        _GAMES[key] = pyspiel.load_game("hearts", params)
    return _GAMES[key]


Chooser = Callable[[State, random.Random], Card]


def random_card(state: State, rng: random.Random) -> Card:
    return rng.choice(legal_plays(state, state.turn))


def shooter(seat: int) -> Chooser:
    """One seat always plays its highest legal card, the others their lowest: moons happen."""

    def choose(state: State, rng: random.Random) -> Card:
        legal = legal_plays(state, state.turn)
        return max(legal, key=lambda c: c % 13) if state.turn == seat else legal[0]

    return choose


def random_rules(rng: random.Random) -> Rules:
    return Rules(**{name: rng.random() < 0.5 for name in FLAGS})


def play_both(seed: int) -> tuple[tuple[int, ...], int | None]:
    """Play one random round on both engines, checking agreement at every step."""
    rng = random.Random(seed)
    rules = random_rules(rng)
    round_index = rng.randrange(4)
    state = new_game(rules, first_dealer=rng.randrange(4))._replace(round_index=round_index)
    deck = list(DECK)
    rng.shuffle(deck)
    state = apply(state, Deal(tuple(deck)))
    where = f"seed={seed} rules={rules!r} round_index={round_index}"

    osp = osp_game(rules).new_initial_state()  # type: ignore[attr-defined]
    assert osp.is_chance_node()
    direction = int(state.pass_direction)
    assert direction in osp.legal_actions(), where
    osp.apply_action(direction)
    hands = [state.hand(seat) for seat in range(4)]
    for n in range(52):
        osp.apply_action(to_osp(hands[n % 4][n // 4]))

    if state.phase == Phase.PASSING:
        chosen = [tuple(rng.sample(legal_passes(state, seat), 3)) for seat in range(4)]
        for seat in range(4):
            for k, card in enumerate(chosen[seat]):
                assert osp.current_player() == seat, where
                offered = {from_osp(a) for a in osp.legal_actions()}
                assert offered == set(legal_passes(state, seat)) - set(chosen[seat][:k]), where
                osp.apply_action(to_osp(card))
        for seat in rng.sample(range(4), 4):  # the engine takes passes in any order
            state = apply(state, PassCards(seat, chosen[seat]))
    assert state.phase == Phase.PLAYING, where

    choose = random_card if rng.random() < 0.5 else shooter(rng.randrange(4))
    while not osp.is_terminal():
        assert osp.current_player() == state.turn, f"{where} trick={len(state.tricks)}"
        ours = legal_plays(state, state.turn)
        theirs = sorted(from_osp(a) for a in osp.legal_actions())
        assert theirs == list(ours), f"{where} trick={len(state.tricks)} seat={state.turn}"
        card = choose(state, rng)
        state = apply(state, PlayCard(state.turn, card))
        osp.apply_action(to_osp(card))
    assert state.phase == Phase.DEALING, where
    record = state.rounds[-1]
    points = tuple(26 - r for r in osp.returns())
    assert points == record.points, f"{where}: OpenSpiel {points} engine {record.points}"
    return record.points, record.moon_shooter


def test_card_numbering_matches_hearts_h() -> None:
    # hearts.h: Card(suit, rank) = rank * kNumSuits + suit; the QS is Card(kSpades, 10).
    assert to_osp(Card.parse("2C")) == 0
    assert to_osp(Card.parse("2S")) == 3
    assert to_osp(Card.parse("QS")) == 10 * 4 + 3
    assert to_osp(Card.parse("JD")) == 9 * 4 + 1
    assert to_osp(Card.parse("AH")) == 12 * 4 + 2
    assert sorted(to_osp(card) for card in DECK) == list(range(52))
    assert all(from_osp(to_osp(card)) is card for card in DECK)
    state = pyspiel.load_game("hearts").new_initial_state()
    state.apply_action(0)
    assert state.action_to_string(0, to_osp(Card.parse("QS"))) == "QS"


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_deals_agree_with_openspiel(batch: int) -> None:
    for seed in range(batch * DEALS_PER_BATCH, (batch + 1) * DEALS_PER_BATCH):
        play_both(seed)


def test_moons_agree_with_openspiel() -> None:
    moons = 0
    seed = 1_000_000
    while moons < 50 and seed < 1_100_000:
        _, shooter_seat = play_both(seed)
        moons += shooter_seat is not None
        seed += 1
    assert moons >= 50, f"only {moons} moons in {seed - 1_000_000} deals"
