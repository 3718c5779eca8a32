"""The views and tables that convert builds from bytes equal those built field by field.

``convert`` assembles a ``TableView`` (and a ``Table``) as serialized bytes from cached fragments,
each serialized by protobuf from a partial message, and parses it once (or the service merges it
into a response), because that is much cheaper than setting fields from Python. This module
keeps the straightforward field-by-field builder as the reference and checks, over every state of
seeded random games (passing, mid-trick, trick and round boundaries, game over with its history),
for every seat and for spectators, under several rules and table records, that both give equal
messages with byte-identical deterministic serializations. The caches are shared by every table
of a process, so the games are viewed interleaved, and also with caches too small to hold them.
Events are joined from fragments the same way, and checked against the event messages.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

import pytest
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from hearts.v1 import table_event_pb2 as events_pb
from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_engine import (
    Card,
    Deal,
    MoonScoring,
    PassDirection,
    Phase,
    RoundRecord,
    Rules,
    SeatView,
    State,
    Trick,
    TrickWon,
    apply,
    cards_of,
    deal_hands,
    legal_actions,
    mask_of,
    new_game,
    points_of,
    seeded_deck,
    spectator_view,
    step,
    view,
)
from hearts_engine.bots import BotLevel
from hearts_server import convert
from hearts_server import record as record_module
from hearts_server.record import Occupant, SeatRecord, TableRecord
from hearts_server.service import _move_response

# --------------------------------------------------------------------------- the reference
#
# The field-by-field builder convert used before it assembled bytes, kept here verbatim in
# substance and independent of convert's caches and encoders (it uses only rules_to_pb).

_PASS_DIRECTIONS = {
    PassDirection.LEFT: pb.PASS_DIRECTION_LEFT,
    PassDirection.ACROSS: pb.PASS_DIRECTION_ACROSS,
    PassDirection.RIGHT: pb.PASS_DIRECTION_RIGHT,
    PassDirection.HOLD: pb.PASS_DIRECTION_HOLD,
}
_BOT_LEVELS = {
    BotLevel.RANDOM: pb.BOT_LEVEL_RANDOM,
    BotLevel.HEURISTIC: pb.BOT_LEVEL_HEURISTIC,
    BotLevel.MONTE_CARLO: pb.BOT_LEVEL_MONTE_CARLO,
}
_OCCUPANTS = {
    Occupant.EMPTY: pb.SEAT_OCCUPANT_EMPTY,
    Occupant.HUMAN: pb.SEAT_OCCUPANT_HUMAN,
    Occupant.BOT: pb.SEAT_OCCUPANT_BOT,
}
_PHASES = {
    Phase.DEALING: pb.PHASE_PLAYING,
    Phase.PASSING: pb.PHASE_PASSING,
    Phase.PLAYING: pb.PHASE_PLAYING,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}


def _card(card: Card) -> pb.Card:
    return pb.Card(suit=card.suit + 1, rank=card.rank)  # type: ignore[arg-type]


def _cards(cards: Iterable[Card]) -> list[pb.Card]:
    return [_card(card) for card in cards]


def _timestamp(ms: int) -> Timestamp:
    return Timestamp(seconds=ms // 1000, nanos=ms % 1000 * 1_000_000)


def reference_view_of(record: TableRecord, seat: int | None) -> SeatView | None:
    if record.game is None:
        return None
    return spectator_view(record.game) if seat is None else view(record.game, seat)


def reference_table(
    record: TableRecord, version: int, seat_view: SeatView | None = None
) -> pb.Table:
    if seat_view is None:
        seat_view = reference_view_of(record, None)
    table = pb.Table(
        name=f"tables/{record.table_id}",
        display_name=record.display_name,
        rules=convert.rules_to_pb(record.rules),
        create_time=_timestamp(record.create_ms),
        update_time=_timestamp(record.update_ms),
        etag=str(version),
        dealer=record.first_dealer if seat_view is None else seat_view.dealer,
    )
    if record.turn_timeout_ms:
        table.turn_timeout.FromMilliseconds(record.turn_timeout_ms)
    table.unlisted = record.unlisted
    table.seeded = record.deck_seed is not None
    if record.rematch_id:
        table.rematch_table = f"tables/{record.rematch_id}"
    if record.rematch_of:
        table.rematch_of = f"tables/{record.rematch_of}"
    for index, seat in enumerate(record.seats):
        table.seats.append(
            pb.Seat(
                seat=index,
                occupant=_OCCUPANTS[seat.occupant],
                player_display_name=seat.name,
                player_id=seat.player_id,
                bot_level=(
                    _BOT_LEVELS[seat.bot_level] if seat.bot_level else pb.BOT_LEVEL_UNSPECIFIED
                ),
                has_passed=bool(seat_view and seat_view.has_passed[index]),
                stand_in=seat.stand_in,
            )
        )
    if seat_view is None:
        table.phase = pb.PHASE_WAITING_FOR_PLAYERS
        table.pass_direction = _PASS_DIRECTIONS[record.rules.pass_direction(0)]
        table.total_scores.extend((0, 0, 0, 0))
        return table
    table.phase = _PHASES[seat_view.phase]
    table.round_number = seat_view.round_index + 1
    table.pass_direction = _PASS_DIRECTIONS[seat_view.pass_direction]
    if seat_view.turn is not None:
        table.turn_seat = seat_view.turn
    table.total_scores.extend(seat_view.totals)
    if seat_view.result is not None:
        table.result.winners.extend(seat_view.result.winners)
        table.result.losers.extend(seat_view.result.losers)
        if record.deck_seed is not None:
            table.deck_seed = record.deck_seed
    if record.turn_timeout_ms:
        owing = (
            (seat_view.turn,)
            if seat_view.phase is Phase.PLAYING
            else tuple(s for s in range(4) if not seat_view.has_passed[s])
            if seat_view.phase is Phase.PASSING
            else ()
        )
        if any(record.seats[s].occupant is Occupant.HUMAN for s in owing):
            table.turn_deadline.FromMilliseconds(record.turn_ms + record.turn_timeout_ms)
    return table


def _trick(number: int, trick: Trick, points: int) -> pb.Trick:
    message = pb.Trick(number=number, leader=trick.leader, winner=trick.winner, points=points)
    for index, card in enumerate(trick.cards):
        message.cards.append(pb.PlayedCard(seat=trick.seat_of(index), card=_card(card)))
    return message


def _round_score(
    round_index: int, points: Iterable[int], totals: Iterable[int], moon_shooter: int | None
) -> pb.RoundScore:
    score = pb.RoundScore(
        round_number=round_index + 1, points=list(points), total_scores=list(totals)
    )
    if moon_shooter is not None:
        score.moon_shooter = moon_shooter
    return score


def _round_history(record: RoundRecord, rules: Rules, totals: list[int]) -> pb.RoundHistory:
    hands = deal_hands(record.deck, record.dealer)
    direction = rules.pass_direction(record.round_index)
    message = pb.RoundHistory(
        round_number=record.round_index + 1,
        dealer=record.dealer,
        pass_direction=_PASS_DIRECTIONS[direction],
    )
    for seat in range(4):
        message.deals.append(pb.SeatCards(seat=seat, cards=_cards(cards_of(hands[seat]))))
        if record.passes[seat]:
            message.passes.append(
                pb.CardPass(
                    from_seat=seat,
                    to_seat=(seat + direction) % 4,
                    cards=_cards(cards_of(mask_of(record.passes[seat]))),
                )
            )
    for number, trick in enumerate(record.tricks, start=1):
        message.tricks.append(_trick(number, trick, points_of(trick.cards, rules)))
    for seat in range(4):
        totals[seat] += record.points[seat]
    message.score.CopyFrom(
        _round_score(record.round_index, record.points, totals, record.moon_shooter)
    )
    return message


def reference_view(record: TableRecord, version: int, seat: int | None) -> pb.TableView:
    seat_view = reference_view_of(record, seat)
    message = pb.TableView(
        table=reference_table(record, version, seat_view), sequence=record.sequence
    )
    if seat is not None:
        message.viewer_seat = seat
    if seat_view is None:
        message.round_points.extend((0, 0, 0, 0))
        message.tricks_won.extend((0, 0, 0, 0))
        return message
    rules = seat_view.rules
    message.hand.extend(_cards(seat_view.hand))
    message.passed_cards.extend(_cards(seat_view.passed))
    message.received_cards.extend(_cards(seat_view.received))
    trick_number = len(seat_view.tricks) + 1
    if seat_view.leader is not None:
        current = message.current_trick
        current.number = trick_number
        current.leader = seat_view.leader
        for index, card in enumerate(seat_view.trick):
            current.cards.append(
                pb.PlayedCard(seat=(seat_view.leader + index) % 4, card=_card(card))
            )
        current.points = points_of(seat_view.trick, rules)
    for number, trick in enumerate(seat_view.tricks, 1):
        message.completed_tricks.append(_trick(number, trick, points_of(trick.cards, rules)))
    message.hearts_broken = seat_view.hearts_broken
    message.round_points.extend(seat_view.round_points)
    message.tricks_won.extend(seat_view.tricks_won)
    totals = [0, 0, 0, 0]
    for index, (points, shooter) in enumerate(
        zip(seat_view.round_scores, seat_view.moon_shooters, strict=True)
    ):
        for s in range(4):
            totals[s] += points[s]
        message.score_history.append(_round_score(index, points, totals, shooter))
    message.legal_cards.extend(_cards(seat_view.legal))
    message.cards_to_pass = seat_view.pass_count
    if seat_view.history:
        running = [0, 0, 0, 0]
        for round_record in seat_view.history:
            message.game_history.append(_round_history(round_record, rules, running))
    return message


# --------------------------------------------------------------------------- games and records

_RULES = (
    Rules(target_score=40),
    Rules(target_score=40, jack_of_diamonds_bonus=True),
    Rules(target_score=30, pass_cards=False, avoid_all_tricks_bonus=True),  # every round holds
    Rules(
        target_score=50,
        moon_scoring=MoonScoring.SUBTRACT_FROM_SHOOTER,
        queen_breaks_hearts=True,
        can_lead_any_club=True,
        no_points_on_first_trick=False,
        must_break_hearts=False,
        jack_of_diamonds_bonus=True,
    ),
)

_SEATINGS = (
    (
        SeatRecord(Occupant.HUMAN, "Ann", None, 2, player_id="auth0|5f7c8ec7c33c6c004bbafe82"),
        SeatRecord(Occupant.BOT, "Bot Bo", BotLevel.RANDOM),
        SeatRecord(Occupant.BOT, "Ann (bot)", BotLevel.HEURISTIC, 3, stand_in=True),
        SeatRecord(Occupant.BOT, "Bot Di", BotLevel.MONTE_CARLO),
    ),
    tuple(SeatRecord(Occupant.HUMAN, name, None, 0) for name in ("Éva", "Ünal", "Zoë", "李")),
)


def _game_states(seed: int, rules: Rules, first_dealer: int) -> Iterator[State]:
    """Every state of a seeded random game with uniformly random legal moves."""
    rng = random.Random(seed)
    state = new_game(rules, first_dealer=first_dealer)
    while state.phase is not Phase.GAME_OVER:
        if state.phase is Phase.DEALING:
            state = apply(state, Deal(seeded_deck(seed, state.round_index)))
        else:
            actions = legal_actions(state)
            state = apply(state, actions[rng.randrange(len(actions))])
        yield state


def _record(
    game: State | None, index: int, rules: Rules, *, deck_seed: int | None = 77
) -> TableRecord:
    """A record whose every field varies with ``index`` (names, times, sequence, seats)."""
    return TableRecord(
        table_id=f"01J{index % 5:04d}",
        display_name=("Friday table", "", "Très long nom " * 5)[index % 3],
        rules=rules,
        first_dealer=index % 4,
        seats=_SEATINGS[index % 2],
        create_ms=(0, 1_700_000_000_000, 1_234)[index % 3],
        update_ms=1_700_000_000_000 + index * 137,
        sequence=(0, 1, 127, 128, 2**40 + index)[index % 5],
        deck_seed=deck_seed,
        bot_seed=9,
        game=game,
        turn_timeout_ms=(0, 30_000, 1_000, 86_400_000)[index % 4],
        turn_ms=1_700_000_000_000 + index * 131,
        unlisted=index % 3 == 1,
        rematch_id=("01J9999", "")[index % 2],
        rematch_of=("", "", "01J7777")[index % 3],
    )


def _versions(index: int) -> int:
    return (1, 127, 128, 10**12)[index % 4] + index


def _assert_equal(actual: Message, expected: Message, context: object) -> None:
    assert actual == expected, context
    assert actual.SerializeToString(deterministic=True) == expected.SerializeToString(
        deterministic=True
    ), context


def assert_same(record: TableRecord, version: int) -> None:
    for seat in (None, 0, 1, 2, 3):
        expected = reference_view(record, version, seat)
        _assert_equal(convert.view_to_pb(record, version, seat), expected, (record, seat))
    table = convert.table_to_pb(record, version)
    _assert_equal(table, reference_table(record, version), record)


def assert_same_bytes(record: TableRecord, version: int) -> None:
    """view_bytes and table_bytes parse to the reference, also wrapped into a response."""
    for seat in (None, 0, 1, 2, 3):
        expected = reference_view(record, version, seat)
        seat_view = reference_view_of(record, seat)
        for data in (
            convert.view_bytes(record, version, seat),
            convert.view_bytes(record, version, seat, seat_view=seat_view),
        ):
            _assert_equal(pb.TableView.FromString(data), expected, (record, seat))
            # A move's response as the service sends it: the view's bytes wrapped, not parsed.
            payload = _move_response(data, version)
            for response_type in (api.PlayCardResponse, api.PassCardsResponse):
                reference = response_type(view=expected, etag=str(version))
                _assert_equal(response_type.FromString(payload), reference, (record, seat))
    expected_table = reference_table(record, version)
    for data in (
        convert.table_bytes(record, version),
        convert.table_bytes(record, version, reference_view_of(record, None)),
    ):
        _assert_equal(pb.Table.FromString(data), expected_table, record)


def _interleaved_records() -> Iterator[TableRecord]:
    """The states of several games, one state of each in turn, as one server would see them."""
    # Games 0 and 1 (and 4 and 5) differ only in the jack of diamonds bonus: same tricks, other
    # points.
    seeds = (3, 3, 11, 5, 12, 12, 2, 1)
    rules_of = _RULES + _RULES
    games = [
        _game_states(seed, rules, seed % 4) for seed, rules in zip(seeds, rules_of, strict=True)
    ]
    index = 0
    for states in itertools.zip_longest(*games):
        for game, rules in zip(states, rules_of, strict=True):
            if game is not None:
                index += 1
                yield _record(game, index, rules)


# --------------------------------------------------------------------------- the tests

T = TypeVar("T")


def test_every_state_of_random_games_views_as_the_reference() -> None:
    phases = set()
    count = 0
    for index, record in enumerate(_interleaved_records()):
        count += 1
        assert record.game is not None
        phases.add(record.game.phase)
        assert_same(record, _versions(index))
    assert count > 2000
    # DEALING: a round is over and the next one is not dealt yet (the server deals at once).
    assert phases == {Phase.DEALING, Phase.PASSING, Phase.PLAYING, Phase.GAME_OVER}


def _as_elsewhere(work: Callable[[], T]) -> T:
    """``work()`` as a process that holds nothing of any table (another replica) does it."""
    kept = dict(record_module._ENCODED), dict(record_module._SEATINGS)
    record_module._ENCODED.clear()
    record_module._SEATINGS.clear()
    try:
        return work()
    finally:
        record_module._ENCODED.clear()
        record_module._ENCODED.update(kept[0])
        record_module._SEATINGS.clear()
        record_module._SEATINGS.update(kept[1])


def test_records_another_replica_wrote_view_as_the_reference() -> None:
    # Replicas move the tables on in turn: this process encodes some states itself and
    # decodes the others, written elsewhere, sharing what it holds of the table (the finished
    # rounds it encoded, the seating, the completed tricks of its last view) only where they
    # are equal. Table ids are shared by several games here.
    rng = random.Random(5)
    count = 0
    for index, record in enumerate(_interleaved_records()):
        version = _versions(index)
        if rng.random() < 0.5:
            record.to_json()  # this replica moved the table on
            assert_same_bytes(record, version)
            continue
        raw = _as_elsewhere(record.to_json)
        again = TableRecord.from_json(raw)
        assert again == _as_elsewhere(lambda: TableRecord.from_json(raw))  # noqa: B023
        assert_same_bytes(again, version)
        count += 1
    assert count > 900


@pytest.mark.parametrize("moon_scoring", list(MoonScoring))
def test_a_shot_moon_views_as_the_reference(moon_scoring: MoonScoring) -> None:
    # Seed 61 shoots the moon with random play (scoring does not change which moves are legal).
    rules = Rules(target_score=26, moon_scoring=moon_scoring)
    shot = False
    for index, game in enumerate(_game_states(61, rules, 0)):
        shot = shot or any(record.moon_shooter is not None for record in game.rounds)
        assert_same(_record(game, index, rules), _versions(index))
    assert shot


@pytest.mark.parametrize("deck_seed", [None, 0, 1, 2**63 - 1, -(2**63), -5])
def test_a_finished_game_reveals_its_history_as_the_reference(deck_seed: int | None) -> None:
    *_, over = _game_states(8, Rules(target_score=26), first_dealer=1)
    assert over.phase is Phase.GAME_OVER
    record = _record(over, 4, over.rules, deck_seed=deck_seed)
    assert_same(record, 5)
    assert convert.view_to_pb(record, 5, None).game_history  # the history was shown


@pytest.mark.parametrize("rules", _RULES)
def test_tricks_and_round_histories_are_the_bytes_protobuf_writes(rules: Rules) -> None:
    # Raw bytes, not parsed again: a move's response carries them as they are, so their fields
    # must be in protobuf's own order (a parse would accept any order).
    *_, over = _game_states(3, rules, first_dealer=2)
    totals, expected_totals = [0, 0, 0, 0], [0, 0, 0, 0]
    for record in over.rounds:
        expected = _round_history(record, rules, expected_totals)
        assert convert._round_history(record, rules, totals) == expected.SerializeToString(
            deterministic=True
        )
        for number, trick in enumerate(record.tricks, start=1):
            points = points_of(trick.cards, rules)
            reference = _trick(number, trick, points).SerializeToString(deterministic=True)
            assert convert._trick_bytes(number, trick, points) == reference


# Names whose Table is 2, 127, 128, 16,383, 16,384 and 2 MiB + 4 bytes long: the length
# prefix's varint at each of its widths and edges.
@pytest.mark.parametrize("name_size", [0, 125, 126, 16_380, 16_381, 2**21])
def test_a_length_prefix_is_protobufs(name_size: int) -> None:
    table = pb.Table(display_name="x" * name_size)
    embedded = convert.length_prefixed(b"\x0a", table.SerializeToString())  # TableView.table
    assert embedded == pb.TableView(table=table).SerializeToString()


def test_tables_without_a_game_view_as_the_reference() -> None:
    for index in range(12):
        seats = (SeatRecord(Occupant.HUMAN, "Ann"), SeatRecord(), SeatRecord(), SeatRecord())
        record = _record(None, index, _RULES[index % len(_RULES)])
        assert_same(record, _versions(index))
        assert_same(
            TableRecord(
                record.table_id,
                record.display_name,
                record.rules,
                record.first_dealer,
                seats,
                record.create_ms,
                record.update_ms,
                record.sequence,
                None,
                1,
            ),
            _versions(index),
        )


def test_tiny_caches_still_give_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    # With every bound at 2 the caches are cleared again and again, also in the middle of
    # building a block of tricks from the block before it.
    memos = [value for value in vars(convert).values() if isinstance(value, convert._Memo)]
    assert len(memos) >= 5
    for memo in memos:
        memo.clear()
        monkeypatch.setattr(memo, "size", 2)
    for index, record in enumerate(itertools.islice(_interleaved_records(), 0, None, 7)):
        assert_same(record, _versions(index))


def test_view_bytes_parse_and_merge_as_the_reference() -> None:
    # Every 5th state of the interleaved games (all phases), a finished game, tables without one.
    records = list(itertools.islice(_interleaved_records(), 0, None, 5))
    *_, over = _game_states(8, Rules(target_score=26), first_dealer=1)
    records.append(_record(over, 4, over.rules))
    records.extend(_record(None, index, _RULES[index % len(_RULES)]) for index in range(4))
    phases = {record.game.phase for record in records if record.game is not None}
    assert phases == {Phase.DEALING, Phase.PASSING, Phase.PLAYING, Phase.GAME_OVER}
    for index, record in enumerate(records):
        assert_same_bytes(record, _versions(index))


def _reference_event(event: Any) -> events_pb.TableEvent:
    """The API event of an engine event, without its time: convert's own field-by-field
    builder, and this module's reference trick for a TrickWon (which convert joins from
    fragments only)."""
    if isinstance(event, TrickWon):
        played = Trick(event.leader, event.cards, event.winner)
        won = events_pb.TableEvent()
        won.trick_won.trick.CopyFrom(_trick(event.trick_index + 1, played, event.points))
        return won
    return convert._event_body(event)


def test_event_bytes_are_the_events_serialized() -> None:
    # Every event of seeded games (deals, passes, plays, tricks, rounds, game over), at times
    # that share a batch, follow each other and are far apart, also with a tiny time cache.
    times = (0, 999, 1_000, 1_700_000_000_123, 1_700_000_000_123, 2**40 + 7)
    kinds = set()
    count = 0
    for seed, rules in ((1, Rules(target_score=40)), (2, _RULES[-1])):
        state = new_game(rules, first_dealer=seed % 4)
        rng = random.Random(seed)
        while state.phase is not Phase.GAME_OVER:
            if state.phase is Phase.DEALING:
                action: Any = Deal(seeded_deck(seed, state.round_index))
            else:
                actions = legal_actions(state)
                action = actions[rng.randrange(len(actions))]
            state, events = step(state, action)
            for event in events:
                time_ms = times[count % len(times)]
                count += 1
                kinds.add(type(event).__name__)
                expected = _reference_event(event)  # the event built field by field
                expected.event_time.CopyFrom(_timestamp(time_ms))
                payload = convert.engine_event_bytes(event, time_ms)
                assert payload == expected.SerializeToString(deterministic=True), event
                assert events_pb.TableEvent.FromString(payload) == expected, event
                if count % 97 == 0:
                    convert._EVENT_SECONDS.clear()
    assert {"CardPlayed", "TrickWon", "HeartsBroken", "RoundScored", "GameOver"} <= kinds, kinds
    for seat in range(4):
        for time_ms in times:
            turn = events_pb.TableEvent(event_time=_timestamp(time_ms))
            turn.turn_changed.seat = seat
            payload = convert.turn_changed_bytes(seat, time_ms)
            assert payload == turn.SerializeToString(deterministic=True)
    for time_ms in times:
        announced = convert.presence_announcements(time_ms)
        for index, (connected, seat) in enumerate((c, s) for c in (True, False) for s in range(4)):
            presence = events_pb.TableEvent(event_time=_timestamp(time_ms))
            presence.presence_changed.seat = seat
            presence.presence_changed.connected = connected
            assert announced[index] == presence.SerializeToString(deterministic=True)


@pytest.mark.parametrize("hand_size", [0, 1, 5, 13])
@pytest.mark.parametrize("version", [1, 127, 10**12])
def test_a_move_response_is_what_protobuf_writes(hand_size: int, version: int) -> None:
    # Views of about 0, 100, 500 and 1,400 bytes and more: lengths of one, two and three varint
    # bytes (the last with a long name), and etags of one to thirteen digits.
    for name_length in (0, 3, 20_000):
        view = pb.TableView(
            hand=[pb.Card(suit=1 + i % 4, rank=2 + i % 13) for i in range(hand_size)],
            table=pb.Table(display_name="x" * name_length),
            sequence=hand_size,
        )
        data = view.SerializeToString()
        expected = api.PlayCardResponse(view=view, etag=str(version)).SerializeToString()
        assert _move_response(data, version) == expected
