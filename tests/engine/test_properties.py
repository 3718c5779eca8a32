"""Property tests: whole random games under random rules keep every invariant.

Hypothesis draws a seed and a set of rule flags; ``random.Random(seed)`` picks every action, so a
failure is reproduced from the seed and rules that :func:`hypothesis.note` prints. The examples
are derandomized (the same games every run, as CI wants); set ``HEARTS_PROPERTY_EXAMPLES`` to run
more, freshly drawn, games.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Iterator

from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from hearts_engine import (
    DECK,
    SEATS,
    Action,
    Event,
    IllegalActionError,
    MoonScoring,
    PassCards,
    Phase,
    PlayCard,
    Reason,
    RoundRecord,
    Rules,
    State,
    apply,
    legal_actions,
    legal_passes,
    legal_plays,
    replay_game,
    seats_to_act,
    spectator_view,
    state_from_dict,
    state_to_dict,
    view,
)

from .conftest import (
    assert_events_hide_others,
    assert_view_hides_others,
    game_steps,
)

_EXTRA = os.environ.get("HEARTS_PROPERTY_EXAMPLES")
games = settings(
    max_examples=int(_EXTRA) if _EXTRA else 50,
    derandomize=not _EXTRA,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

seeds = st.integers(min_value=0, max_value=2**32 - 1)
rules_flags = st.builds(
    Rules,
    pass_cards=st.booleans(),
    no_points_on_first_trick=st.booleans(),
    can_lead_any_club=st.booleans(),
    must_break_hearts=st.booleans(),
    queen_breaks_hearts=st.booleans(),
    can_lead_hearts_instead_of_queen=st.booleans(),
    jack_of_diamonds_bonus=st.booleans(),
    avoid_all_tricks_bonus=st.booleans(),
    target_score=st.integers(min_value=1, max_value=100),
    moon_scoring=st.sampled_from(list(MoonScoring)),
)
FULL = (1 << 52) - 1
MAX_ROUNDS = 60  # a subtract-from-shooter game could in principle go on for ever


def play_through(
    seed: int, rules: Rules, *, with_events: bool = False
) -> Iterator[tuple[State, Action, State, tuple[Event, ...]]]:
    """Yield (state before, action, state after, events) for a whole seeded game."""
    note(f"seed={seed} rules={rules!r}")
    return game_steps(
        seed, rules, first_dealer=seed % 4, with_events=with_events, max_rounds=MAX_ROUNDS
    )


def check_cards_conserved(state: State, where: str) -> None:
    if state.phase in (Phase.DEALING, Phase.GAME_OVER):
        assert state.hands == (0, 0, 0, 0), where
        assert state.trick == (), where
        assert state.tricks == (), where
        return
    trick = 0
    for card in state.trick:
        trick |= 1 << card
    masks = [*state.hands, trick, *state.taken]
    assert sum(mask.bit_count() for mask in masks) == 52, where
    union = 0
    for mask in masks:
        union |= mask
    assert union == FULL, where
    taken = [0, 0, 0, 0]
    for done in state.tricks:
        for card in done.cards:
            taken[done.winner] |= 1 << card
    assert tuple(taken) == state.taken, where
    played_now = {(state.leader + i) % 4 for i in range(len(state.trick))}
    for seat in SEATS:
        held = state.hands[seat].bit_count() + (seat in played_now)
        assert held == 13 - len(state.tricks), where


def check_actions(state: State, where: str) -> None:
    """A legal action exists, every legal action applies, every other card is refused."""
    owing = seats_to_act(state)
    assert owing, where
    if state.phase == Phase.PASSING:
        for seat in SEATS:
            assert bool(legal_passes(state, seat)) == (seat in owing), where
        seat = owing[0]
        hand = legal_passes(state, seat)
        assert len(hand) == 13, where
        apply(state, PassCards(seat, hand[:3]))
        apply(state, PassCards(seat, hand[-3:]))
        # legal_actions lists every 3-card subset of each owing hand, by seat, lazily.
        choices = legal_actions(state)
        assert len(choices) == 286 * len(owing), where
        subsets = [
            PassCards(other, cards)
            for other in owing
            for cards in itertools.combinations(legal_passes(state, other), 3)
        ]
        for index in (0, 1, 285, len(subsets) - 1, len(subsets) // 2):
            assert choices[index] == subsets[index], where
            assert choices[index - len(subsets)] == subsets[index], where
        assert list(legal_actions(state, seat)) == subsets[:286], where
        return
    assert owing == (state.turn,), where
    seat = state.turn
    legal = legal_plays(state, seat)
    assert legal, where
    assert set(legal) <= set(state.hand(seat)), where
    plays = tuple(PlayCard(seat, card) for card in legal)
    assert legal_actions(state) == plays, where
    assert legal_actions(state, seat) == plays, where
    assert all(legal_actions(state, other) == () for other in SEATS if other != seat), where
    for card in DECK:
        if card in legal:
            after = apply(state, PlayCard(seat, card))
            assert after.hand(seat) == tuple(c for c in state.hand(seat) if c != card), where
            continue
        reason = refusal(state, PlayCard(seat, card))
        assert isinstance(reason, Reason), f"{where}: {card} is not legal but {reason!r}"
        if card not in state.hand(seat):
            assert reason == Reason.CARD_NOT_IN_HAND, where
    for other in SEATS:
        if other != seat:
            card = (*state.hand(other), DECK[0])[0]  # the last trick may leave a hand empty
            reason = refusal(state, PlayCard(other, card))
            assert reason == Reason.NOT_YOUR_TURN, where


def refusal(state: State, action: PlayCard) -> object:
    """The reason ``action`` is refused, or the state it leads to if it is accepted."""
    try:
        return apply(state, action)
    except IllegalActionError as error:
        return error.reason


def expected_round_total(rules: Rules, record: RoundRecord) -> int:
    """What a round's points must add up to, from the rules alone."""
    jack = -10 if rules.jack_of_diamonds_bonus else 0
    if record.moon_shooter is not None:
        base = 78 if rules.moon_scoring == MoonScoring.ADD_TO_OTHERS else -26
        return base + jack
    winners = {trick.winner for trick in record.tricks}
    avoid = -5 * (4 - len(winners)) if rules.avoid_all_tricks_bonus else 0
    return 26 + jack + avoid


@games
@given(seed=seeds, rules=rules_flags)
def test_random_games_keep_cards_and_always_offer_a_legal_action(seed: int, rules: Rules) -> None:
    final = None
    for index, (before, _, after, _) in enumerate(play_through(seed, rules)):
        where = f"seed={seed} step={index} rules={rules!r}"
        check_cards_conserved(after, where)
        if before.phase != Phase.DEALING:
            check_actions(before, where)
        final = after
    assert final is not None
    assert final.phase == Phase.GAME_OVER or final.round_index == MAX_ROUNDS


@games
@given(seed=seeds, rules=rules_flags)
def test_every_round_hands_out_its_points(seed: int, rules: Rules) -> None:
    final = None
    for _, _, after, _ in play_through(seed, rules):
        final = after
    assert final is not None
    totals = [0, 0, 0, 0]
    for record in final.rounds:
        where = f"seed={seed} round={record.round_index} rules={rules!r}"
        assert sum(record.points) == expected_round_total(rules, record), where
        shooters = [
            s
            for s in SEATS
            if sum(c.points for t in record.tricks if t.winner == s for c in t.cards) == 26
        ]
        assert record.moon_shooter == (shooters[0] if shooters else None), where
        for seat in SEATS:
            totals[seat] += record.points[seat]
    assert tuple(totals) == final.totals
    if final.phase == Phase.GAME_OVER:
        assert max(final.totals) >= rules.target_score
    rebuilt = replay_game(rules, final.rounds, first_dealer=final.first_dealer)
    assert rebuilt == final, f"seed={seed}"


@settings(games, max_examples=max(10, games.max_examples // 2))
@given(seed=seeds, rules=rules_flags)
def test_no_view_or_event_shows_another_seats_hand(seed: int, rules: Rules) -> None:
    for index, (_, _, after, events) in enumerate(play_through(seed, rules, with_events=True)):
        where = f"seed={seed} step={index}"
        assert_events_hide_others(after, events, where)
        for seat in SEATS:
            seat_view = view(after, seat)
            assert seat_view.hand == after.hand(seat), where
            assert_view_hides_others(after, seat_view, where)
        seen = spectator_view(after)
        assert seen.hand == seen.passed == seen.received == seen.legal == (), where
        assert_view_hides_others(after, seen, where)


@games
@given(seed=seeds, rules=rules_flags)
def test_serialized_states_round_trip(seed: int, rules: Rules) -> None:
    # Every fifth step and every step outside play keep this affordable; the other steps differ
    # from the checked ones by a card or two.
    final = None
    for index, (before, _, after, _) in enumerate(play_through(seed, rules)):
        if index % 5 == 0 or before.phase != Phase.PLAYING:
            restored = state_from_dict(json.loads(json.dumps(state_to_dict(before))))
            assert restored == before, f"seed={seed} step={index}"
        final = after
    assert final is not None
    assert state_from_dict(json.loads(json.dumps(state_to_dict(final)))) == final
