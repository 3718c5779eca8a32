"""Views: what a seat, or a spectator, may know of the game, and nothing more."""

from __future__ import annotations

import random

import pytest

from hearts_engine import (
    SEATS,
    Card,
    MalformedError,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    apply,
    determinize,
    legal_plays,
    points_of,
    result,
    spectator_view,
    view,
)

from .conftest import (
    assert_view_hides_others,
    card_set,
    cards,
    deal,
    game_steps,
    pass_all,
    play_game,
    random_policy,
)

HANDS = (
    "4D 5D 6D 7D 8D 8H 9H TH JH JS QS KS AS",
    "2C 3C 4C 5C 6C 9D TD JD QD QH KH AH 2S",
    "7C 8C 9C TC JC KD AD 2H 3H 3S 4S 5S 6S",
    "QC KC AC 2D 3D 4H 5H 6H 7H 7S 8S 9S TS",
)
PASSES = ("QS KS AS", "2C QH AH", "TC JC AD", "QC KC AC")


def test_a_seat_sees_its_own_hand_only() -> None:
    state = deal(HANDS, rules=Rules())
    for seat in SEATS:
        seat_view = view(state, seat)
        assert seat_view.seat == seat
        assert seat_view.hand == state.hand(seat)
        assert_view_hides_others(state, seat_view)
    assert view(state, 0).hand_sizes == (13, 13, 13, 13)


def test_spectator_sees_no_hand_and_no_pass() -> None:
    state = apply(deal(HANDS, rules=Rules()), PassCards(0, cards("QS KS AS")))
    for current in (state, pass_all(deal(HANDS, rules=Rules()), PASSES)):
        seen = spectator_view(current)
        assert seen.seat is None
        assert (seen.hand, seen.passed, seen.received, seen.legal) == ((), (), (), ())
        assert seen.pass_count == 0
        assert not seen.to_act
        assert_view_hides_others(current, seen)


def test_passing_is_visible_as_who_not_what() -> None:
    state = apply(deal(HANDS, rules=Rules()), PassCards(0, cards("QS KS AS")))
    assert view(state, 0).passed == cards("QS KS AS")
    assert view(state, 0).legal == ()
    assert view(state, 0).pass_count == 0
    for seat in (1, 2, 3):
        seat_view = view(state, seat)
        assert seat_view.passed == ()
        assert seat_view.pass_count == 3
        assert seat_view.legal == seat_view.hand
        assert seat_view.to_act
    for seat_view in (*(view(state, s) for s in SEATS), spectator_view(state)):
        assert seat_view.has_passed == (True, False, False, False)
        assert not card_set("QS KS AS") & set(seat_view.received)


def test_received_cards_appear_only_after_all_four_passed() -> None:
    state = deal(HANDS, rules=Rules())
    for seat in (0, 1, 2):
        state = apply(state, PassCards(seat, cards(PASSES[seat])))
        assert all(view(state, s).received == () for s in SEATS)
        assert all(view(state, s).hand == state.hand(s) for s in SEATS)
    state = apply(state, PassCards(3, cards(PASSES[3])))
    for seat in SEATS:
        giver = (seat - 1) % 4
        assert set(view(state, seat).received) == card_set(PASSES[giver])
        assert set(view(state, seat).passed) == card_set(PASSES[seat])
        assert_view_hides_others(state, view(state, seat))


def test_a_seat_may_know_where_its_passed_cards_went() -> None:
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    seat_view = view(state, 0)
    assert card_set("QS KS AS") <= set(state.hand(1))
    assert set(seat_view.passed) == card_set("QS KS AS")
    assert not card_set("QS KS AS") & set(view(state, 2).passed + view(state, 3).passed)


def test_legal_in_the_view_equals_legal_plays() -> None:
    for seed in range(3):
        for before, _, _, _ in game_steps(seed, Rules(target_score=40)):
            if before.phase != Phase.PLAYING:
                continue
            for seat in SEATS:
                assert view(before, seat).legal == legal_plays(before, seat), f"seed={seed}"
                assert view(before, seat).to_act == (seat == before.turn)
            assert view(before, before.turn).turn == before.turn
            assert spectator_view(before).legal == ()


def test_turn_and_leader_are_shown_only_during_play() -> None:
    state = deal(HANDS, rules=Rules())
    assert view(state, 0).turn is None
    assert view(state, 0).leader is None
    state = pass_all(state, PASSES)
    assert view(state, 0).turn == state.turn == 2
    assert spectator_view(state).leader == 2


def test_public_progress_is_shown_to_everyone() -> None:
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    for card in cards("2C JC QC"):
        state = apply(state, PlayCard(state.turn, card))
    for seat_view in (*(view(state, s) for s in SEATS), spectator_view(state)):
        assert seat_view.trick == cards("2C JC QC")
        assert seat_view.hand_sizes == (12, 13, 12, 12)  # seats 2, 3 then 0 played
        assert seat_view.leader == 2
        assert seat_view.totals == (0, 0, 0, 0)
        assert not seat_view.hearts_broken


def test_history_is_revealed_only_when_the_game_is_over() -> None:
    for before, _, _, _ in game_steps(5, Rules(target_score=40)):
        assert spectator_view(before).history == ()
        assert all(view(before, s).history == () for s in SEATS)
        assert spectator_view(before).result is None
    final = play_game(5, Rules(target_score=40))
    assert final.phase == Phase.GAME_OVER
    for seat_view in (*(view(final, s) for s in SEATS), spectator_view(final)):
        assert seat_view.history == final.rounds
        assert seat_view.result == result(final)
        assert seat_view.hand == ()
        assert seat_view.round_scores == tuple(r.points for r in final.rounds)


@pytest.mark.parametrize("rules", [Rules(target_score=40), Rules(jack_of_diamonds_bonus=True)])
def test_tricks_won_and_points_taken_are_counted_from_the_completed_tricks(rules: Rules) -> None:
    for seed in range(2):
        for _, _, after, _ in game_steps(seed, rules):
            won = [0, 0, 0, 0]
            taken: list[list[Card]] = [[], [], [], []]
            for trick in after.tricks:
                won[trick.winner] += 1
                taken[trick.winner] += trick.cards
            points = tuple(points_of(cards_taken, rules) for cards_taken in taken)
            for seat_view in (*(view(after, s) for s in SEATS), spectator_view(after)):
                assert seat_view.tricks_won == tuple(won), f"seed={seed}"
                assert seat_view.round_points == points, f"seed={seed}"
                assert seat_view.round_scores == tuple(r.points for r in after.rounds)
                assert seat_view.moon_shooters == tuple(r.moon_shooter for r in after.rounds)


def test_views_never_show_another_seats_hand() -> None:
    for seed in range(3):
        for _, _, after, _ in game_steps(seed, Rules(target_score=40)):
            for seat in SEATS:
                assert_view_hides_others(after, view(after, seat), f"seed={seed}")
            assert_view_hides_others(after, spectator_view(after), f"seed={seed}")


# --------------------------------------------------------------------------- determinize


def test_determinize_with_the_true_hands_rebuilds_the_position() -> None:
    rng = random.Random(0)
    for seed in range(5):
        for before, _, _, _ in game_steps(seed, Rules(target_score=30)):
            if before.phase != Phase.PLAYING or rng.random() > 0.2:
                continue
            seat = before.turn
            others = {s: before.hand(s) for s in SEATS if s != seat}
            rebuilt = determinize(view(before, seat), others)
            assert rebuilt.hands == before.hands, f"seed={seed}"
            assert (rebuilt.trick, rebuilt.tricks, rebuilt.taken) == (
                before.trick,
                before.tricks,
                before.taken,
            )
            assert (rebuilt.turn, rebuilt.leader, rebuilt.hearts_broken) == (
                before.turn,
                before.leader,
                before.hearts_broken,
            )
            assert rebuilt.dealer == before.dealer
            assert legal_plays(rebuilt, seat) == legal_plays(before, seat)
            # Playing both out the same way scores the round the same way.
            a, b = before, rebuilt
            play_rng_a, play_rng_b = random.Random(seed), random.Random(seed)
            while a.phase == Phase.PLAYING and a.round_index == before.round_index:
                a = apply(a, random_policy(a, play_rng_a))
                b = apply(b, random_policy(b, play_rng_b))
            assert a.totals == b.totals, f"seed={seed}"


def test_determinize_refuses_what_does_not_fit() -> None:
    state = pass_all(deal(HANDS, rules=Rules()), PASSES)
    seat_view = view(state, 2)
    with pytest.raises(MalformedError):
        determinize(spectator_view(state), {})
    with pytest.raises(MalformedError):
        determinize(view(deal(HANDS, rules=Rules()), 0), {})
    with pytest.raises(MalformedError):  # a seat with too few cards
        determinize(seat_view, {0: state.hand(0)[:12], 1: state.hand(1), 3: state.hand(3)})
    with pytest.raises(MalformedError):  # the hands do not complete the deck
        determinize(seat_view, {0: state.hand(1), 1: state.hand(1), 3: state.hand(3)})
