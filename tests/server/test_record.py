"""The stored table record: schema 3 (and 2, written during upgrades) round trips, and schema 1
and 2 records are still read."""

from __future__ import annotations

import dataclasses
import json
import random
import tracemalloc
from typing import Any

import pytest

from hearts_engine import (
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
    seats_to_act,
    seeded_deck,
    state_to_dict,
)
from hearts_engine.bots import BotLevel
from hearts_server import convert
from hearts_server import record as record_module
from hearts_server.record import Occupant, SeatRecord, TableRecord, UnreadableRecordError


def _random_game(seed: int, moves: int) -> State:
    rng = random.Random(seed)
    state = new_game(Rules(target_score=60, jack_of_diamonds_bonus=bool(seed % 2)))
    for _ in range(moves):
        if state.phase is Phase.GAME_OVER:
            break
        state = _step(state, rng, seed)
    return state


def _step(state: State, rng: random.Random, seed: int) -> State:
    """The state after one random legal move (the deal from ``seed``); the same once over."""
    if state.phase is Phase.DEALING:
        return apply(state, Deal(seeded_deck(seed, state.round_index)))
    if state.phase is Phase.PASSING:
        seat = seats_to_act(state)[0]
        return apply(state, PassCards(seat, tuple(rng.sample(legal_passes(state, seat), 3))))
    if state.phase is Phase.PLAYING:
        return apply(state, PlayCard(state.turn, rng.choice(legal_plays(state, state.turn))))
    return state


def _record(game: State | None) -> TableRecord:
    return TableRecord(
        table_id="0190abc",
        display_name="Table",
        rules=Rules(target_score=60),
        first_dealer=0,
        seats=(SeatRecord(Occupant.HUMAN, "Ann", None, 2),) + (SeatRecord(),) * 3,
        create_ms=1,
        update_ms=2,
        sequence=40,
        deck_seed=7,
        bot_seed=9,
        creator_epoch=1,
        game=game,
    )


@pytest.mark.parametrize("schema", [2, 3])
def test_records_round_trip_at_every_stage_of_random_games(schema: int) -> None:
    for seed in range(12):
        for moves in (0, 1, 5, 30, 70, 200, 2000):
            record = _record(_random_game(seed, moves))
            raw = record.to_json(schema=schema)
            assert TableRecord.from_json(raw) == record, f"seed {seed}, {moves} moves"
            assert record.to_json(schema=schema) == raw  # the per-round cache: the same bytes


def test_schema_3_keeps_the_finished_rounds_on_a_second_line_and_schema_2_inline() -> None:
    for seed in range(4):
        game = _random_game(seed, 2000)
        assert len(game.rounds) >= 3
        record = _record(game)
        first, newline, second = record.to_json().partition(b"\n")
        assert newline
        assert json.loads(first)["schema"] == 3
        assert json.loads(first)["game"][-1] == len(game.rounds)
        assert len(json.loads(second)) == len(game.rounds)
        # Schema 2: one line, the same game with the rounds where schema 3 counts them.
        old = json.loads(record.to_json(schema=2))
        assert old["schema"] == 2
        assert b"\n" not in record.to_json(schema=2)
        assert old["game"][:-1] == json.loads(first)["game"][:-1]
        assert old["game"][-1] == json.loads(second)
        # The first line does not grow with the game: every round's first cards write about
        # as much as the first round's.
        early = _record(_random_game(seed, 20)).to_json().partition(b"\n")[0]
        assert len(first) < len(early) + 100


def test_a_record_whose_rounds_do_not_match_its_count_is_damaged() -> None:
    raw = _record(_random_game(2, 2000)).to_json()
    first, _, second = raw.partition(b"\n")
    rounds = json.loads(second)
    for damaged in (
        first,  # the second line lost
        first + b"\n" + json.dumps(rounds[:-1]).encode(),  # a round short
        first + b"\n{}",
    ):
        with pytest.raises(UnreadableRecordError) as caught:
            TableRecord.from_json(damaged)
        assert not caught.value.newer


@pytest.mark.parametrize("schema", [2, 3])
def test_a_summary_reads_the_first_line_and_lists_the_table_as_the_whole_record(
    schema: int,
) -> None:
    for seed in range(6):
        for moves in (0, 30, 400, 2000):
            record = _record(_random_game(seed, moves))
            first = record.to_json(schema=schema).partition(b"\n")[0]
            summary = TableRecord.from_json(first, summary=True)
            assert convert.table_to_pb(summary, 5) == convert.table_to_pb(record, 5)
            assert dataclasses.replace(summary, game=None) == dataclasses.replace(record, game=None)
            if schema == 2 or record.game is None:
                assert summary == record  # nothing apart to leave out
                continue
            assert summary.game is not None
            assert summary.game.rounds == ()
            assert summary.game.totals == record.game.totals
            assert summary.game.round_index == record.game.round_index
            # The second line is never read: damaged, it changes nothing.
            assert TableRecord.from_json(first + b"\n{}", summary=True) == summary
    # The first line itself is still checked: its count of finished rounds, say.
    first = _record(_random_game(2, 2000)).to_json().partition(b"\n")[0]
    assert first.endswith(b",6]}")
    with pytest.raises(UnreadableRecordError):
        TableRecord.from_json(first[: -len(b"6]}")] + b'"6"]}', summary=True)


def test_a_schema_2_record_is_read_without_a_stale_second_line() -> None:
    # A version that writes schema 2 only leaves a second part it never wrote in place; the
    # store hands the record back with it.
    record = _record(_random_game(4, 400))
    stale = _record(_random_game(4, 100)).to_json().partition(b"\n")[2]
    assert TableRecord.from_json(record.to_json(schema=2) + b"\n" + stale) == record


def test_only_known_schemas_are_written() -> None:
    with pytest.raises(ValueError, match="schema"):
        dataclasses.replace(_record(None), table_id="other").to_json(schema=4)


@pytest.mark.parametrize("schema", [2, 3])
def test_a_record_without_a_game_round_trips(schema: int) -> None:
    record = _record(None)
    assert TableRecord.from_json(record.to_json(schema=schema)) == record


def test_schema_1_records_are_still_read() -> None:
    game = _random_game(3, 150)
    record = _record(game)
    old = _head(record)
    old["schema"] = 1
    old["game"] = state_to_dict(game)
    assert TableRecord.from_json(json.dumps(old).encode()) == record


def _head(record: TableRecord) -> dict[str, Any]:
    """The first line of the record's JSON: everything but the finished rounds."""
    head: dict[str, Any] = json.loads(record.to_json().partition(b"\n")[0])
    return head


def _fresh_json(record: TableRecord) -> bytes:
    """The record's JSON encoded from nothing: the per-table encoding slot emptied first."""
    record_module._ENCODED.clear()
    return record.to_json()


def test_the_per_table_encoding_never_reuses_another_records_parts() -> None:
    # Each command encodes the next state of a game, reusing what the table's last record
    # encoded (its head, the round's parts, the finished rounds, the completed tricks). Two
    # games under one table id, played a move each in turn through several rounds, with a
    # seating change halfway, must each encode exactly as they would from nothing.
    rngs = [random.Random(1), random.Random(2)]
    states = [new_game(Rules(target_score=60)), new_game(Rules(target_score=60))]
    seated = _record(None)
    reseated = dataclasses.replace(
        seated, seats=(SeatRecord(Occupant.HUMAN, "Bob", None, 3),) + (SeatRecord(),) * 3
    )
    encoded = []
    for move in range(600):
        for index in (0, 1):
            states[index] = _step(states[index], rngs[index], index)
            record = (seated if move < 300 else reseated).evolve(states[index], move, move)
            encoded.append((record, record.to_json()))
    assert len({record.game.round_index for record, _ in encoded if record.game}) > 3
    for record, raw in encoded:
        assert raw == _fresh_json(record)


def test_a_turn_timeout_and_its_clock_round_trip_and_restart_with_each_new_move() -> None:
    rng = random.Random(5)
    record = dataclasses.replace(_record(None), turn_timeout_ms=30_000, turn_ms=2)
    assert TableRecord.from_json(record.to_json()) == record
    assert record.turn_deadline_ms is None  # no game: nobody owes a move
    dealt = apply(new_game(Rules(target_score=60)), Deal(seeded_deck(5, 0)))
    record = record.evolve(dealt, 41, 100)
    assert (record.turn_ms, record.turn_deadline_ms) == (100, 30_100)  # the deal asks for passes
    assert record.timed_out(30_099) == ()
    assert record.timed_out(30_100) == (0,)  # only the human seat; the others are empty here
    # A pass leaves the others' time running, whoever passes.
    for seat, at in ((1, 200), (0, 300)):
        chosen = tuple(rng.sample(legal_passes(record.game, seat), 3))
        record = record.evolve(apply(record.game, PassCards(seat, chosen)), 42, at)
        assert record.turn_ms == 100
    assert record.turn_deadline_ms is None  # the human passed: only empty seats owe passes
    while record.game.phase is Phase.PASSING:
        seat = seats_to_act(record.game)[0]
        chosen = tuple(rng.sample(legal_passes(record.game, seat), 3))
        record = record.evolve(apply(record.game, PassCards(seat, chosen)), 43, 400)
    assert record.turn_ms == 400  # the exchange: the first card is asked for
    for at in range(500, 600, 10):  # every card played restarts it
        state = record.game
        record = record.evolve(
            apply(state, PlayCard(state.turn, legal_plays(state, state.turn)[0])), 44, at
        )
        assert record.turn_ms == at
        expected = at + 30_000 if record.game.turn == 0 else None
        assert record.turn_deadline_ms == expected
        assert TableRecord.from_json(record.to_json()) == record
    # A table without a timeout writes records exactly as before the setting existed.
    plain = _record(record.game)
    assert b"turn" not in plain.to_json()
    assert plain.evolve(record.game, 45, 700).turn_ms == 0


def test_an_unlisted_tables_record_round_trips_and_others_do_not_mention_it() -> None:
    game = _random_game(4, 30)
    unlisted = dataclasses.replace(_record(game), unlisted=True)
    assert TableRecord.from_json(unlisted.to_json()) == unlisted
    assert unlisted.evolve(game, 50, 9).unlisted
    assert b"unlisted" not in _record(game).to_json()


def test_turn_notifications_round_trip_and_records_without_them_do_not_mention_them() -> None:
    game = _random_game(4, 30)
    notifying = dataclasses.replace(_record(game), turn_notifications=True)
    assert TableRecord.from_json(notifying.to_json()) == notifying
    assert notifying.evolve(game, 50, 9).turn_notifications
    assert b"turn_notifications" not in _record(game).to_json()
    data = _head(notifying)
    data["turn_notifications"] = 1
    with pytest.raises(UnreadableRecordError):
        TableRecord.from_json(json.dumps(data).encode())


def test_a_fill_wait_round_trips_and_records_without_one_do_not_mention_it() -> None:
    game = _random_game(4, 30)
    waiting = dataclasses.replace(_record(None), fill_after_ms=5000)
    assert TableRecord.from_json(waiting.to_json()) == waiting
    assert waiting.evolve(game, 50, 9).fill_after_ms == 5000
    assert b"fill_after_ms" not in _record(game).to_json()
    data = _head(waiting)
    data["fill_after_ms"] = "5000"
    with pytest.raises(UnreadableRecordError):
        TableRecord.from_json(json.dumps(data).encode())


def test_the_fill_deadline_runs_from_the_last_change_while_a_player_waits() -> None:
    empty = dataclasses.replace(_record(None), fill_after_ms=5000, update_ms=1000)
    empty = dataclasses.replace(empty, seats=(SeatRecord(),) * 4)
    assert empty.fill_deadline_ms is None  # nobody to wait for
    one = dataclasses.replace(
        empty, seats=(SeatRecord(Occupant.HUMAN, "Ann"),) + (SeatRecord(),) * 3
    )
    assert one.fill_deadline_ms == one.timer_deadline_ms == 6000
    assert dataclasses.replace(one, fill_after_ms=0).fill_deadline_ms is None
    full = dataclasses.replace(one, seats=(SeatRecord(Occupant.HUMAN, "Ann"),) * 4)
    assert full.fill_deadline_ms is None
    assert dataclasses.replace(one, game=_random_game(4, 0)).fill_deadline_ms is None


def test_stand_ins_that_name_no_bot_seat_make_a_damaged_record() -> None:
    bots = (SeatRecord(Occupant.HUMAN, "Ann", None, 2),) + (
        SeatRecord(Occupant.BOT, "Bo (bot)", BotLevel.HEURISTIC, 1, stand_in=True),
    ) * 3
    record = dataclasses.replace(_record(_random_game(4, 30)), seats=bots)
    assert TableRecord.from_json(record.to_json()) == record
    data = _head(record)
    assert data["stand_ins"] == [1, 2, 3]
    for damaged in ([-1], [0], [4], [True], "1", [1.0]):
        data["stand_ins"] = damaged
        with pytest.raises(UnreadableRecordError):
            TableRecord.from_json(json.dumps(data).encode())


def test_rematch_links_and_rematched_seats_round_trip_and_others_do_not_mention_them() -> None:
    game = _random_game(4, 30)
    seats = (
        SeatRecord(Occupant.HUMAN, "Ann", None, 2, rematched=True),
        SeatRecord(Occupant.HUMAN, "Bea", None, 0),
        SeatRecord(Occupant.BOT, "Bot", BotLevel.HEURISTIC),
        SeatRecord(Occupant.HUMAN, "Cy", None, 1, rematched=True),
    )
    record = dataclasses.replace(
        _record(game), seats=seats, rematch_id="01J0001", rematch_of="01J0000"
    )
    assert TableRecord.from_json(record.to_json()) == record
    evolved = record.evolve(game, 50, 9)
    assert (evolved.rematch_id, evolved.rematch_of, evolved.seats) == ("01J0001", "01J0000", seats)
    data = _head(record)
    assert (data["rematched"], data["rematch"], data["rematch_of"]) == (
        [0, 3],
        "01J0001",
        "01J0000",
    )
    plain = _record(game).to_json()
    assert b"rematch" not in plain
    for key, damaged in [
        ("rematched", [2]),  # a bot's seat
        ("rematched", [4]),
        ("rematched", [True]),
        ("rematch", 7),
        ("rematch_of", None),
    ]:
        broken = dict(data, **{key: damaged})
        with pytest.raises(UnreadableRecordError):
            TableRecord.from_json(json.dumps(broken).encode())


def test_player_ids_round_trip_and_are_left_out_when_nobody_has_one() -> None:
    game = _random_game(4, 30)
    seats = (
        SeatRecord(Occupant.HUMAN, "Ann", None, 2, player_id="auth0|abc"),
        SeatRecord(Occupant.HUMAN, "Bea", None, 0),
        SeatRecord(Occupant.BOT, "Bot", BotLevel.HEURISTIC),
        SeatRecord(Occupant.HUMAN, "Cy", None, 1, rematched=True, player_id="uid-9"),
    )
    record = dataclasses.replace(_record(game), seats=seats)
    assert TableRecord.from_json(record.to_json()) == record
    data = _head(record)
    assert data["player_ids"] == ["auth0|abc", "", "", "uid-9"]
    assert b"player_ids" not in _record(game).to_json()
    for damaged in (["", "", "x", ""], ["a", "", ""], "a", [1, "", "", ""], None):
        broken = dict(data, player_ids=damaged)
        with pytest.raises(UnreadableRecordError):
            TableRecord.from_json(json.dumps(broken).encode())


def _rounds_of(record: TableRecord) -> tuple[Any, ...]:
    assert record.game is not None
    return record.game.rounds


def test_a_record_read_again_takes_the_rounds_this_process_encoded_and_decodes_the_rest() -> None:
    # A table whose players are connected to different replicas is read for nearly every
    # command; its finished rounds, most of the record, are decoded only once.
    rng = random.Random(8)
    state = new_game(Rules(target_score=60))
    while len(state.rounds) < 3:
        state = _step(state, rng, 8)
    mine = _record(state)
    mine.to_json()  # this process encodes the table's record: its rounds are known now
    again = TableRecord.from_json(mine.to_json())
    assert again == mine
    assert _rounds_of(again) is _rounds_of(mine)  # not decoded again
    # Another replica moved the game on by rounds: only those are decoded.
    while len(state.rounds) < 5:
        state = _step(state, rng, 8)
    theirs = dataclasses.replace(mine, game=state).to_json()
    mine.to_json()  # back to this process's last encoding
    later = TableRecord.from_json(theirs)
    assert later == TableRecord.from_json(_fresh_json(dataclasses.replace(mine, game=state)))
    assert all(a is b for a, b in zip(_rounds_of(later), _rounds_of(mine), strict=False))
    assert len(_rounds_of(later)) == 5


def _mid_game(seed: int, rounds: int) -> TableRecord:
    """A record of a game in play with ``rounds`` finished rounds (a finished game's encoding
    is not kept, so it would not test what is)."""
    rng = random.Random(seed)
    state = new_game(Rules(target_score=60))
    while len(state.rounds) < rounds or state.phase is not Phase.PLAYING:
        state = _step(state, rng, seed)
    return _record(state)


def _decoded(raw: bytes) -> TableRecord | str:
    try:
        return TableRecord.from_json(raw)
    except UnreadableRecordError:
        return "refused"


def _cold(raw: bytes) -> TableRecord | str:
    """What a process that holds nothing of the table decodes."""
    record_module._ENCODED.clear()
    record_module._SEATINGS.clear()
    return _decoded(raw)


def test_a_record_decodes_alike_whatever_this_process_encoded_before() -> None:
    # Another game under the same table id (a table made again), other rounds of the same
    # length, a round more, and damaged second lines: with the table's rounds encoded here
    # (warm), the decoding is what a process holding nothing would decode (cold).
    mine, longer = _mid_game(2, 3), _mid_game(2, 4)
    assert mine.game is not None
    assert longer.game is not None
    first_round = mine.game.rounds[0]
    changed = first_round._replace(dealer=(first_round.dealer + 1) % 4)  # same length
    head, _, second = mine.to_json().partition(b"\n")
    raws = [
        _mid_game(5, 3).to_json(),
        longer.to_json(),
        dataclasses.replace(
            mine, game=mine.game._replace(rounds=(changed, *mine.game.rounds[1:]))
        ).to_json(),
        dataclasses.replace(
            longer, game=longer.game._replace(rounds=(changed, *longer.game.rounds[1:]))
        ).to_json(),
        *(
            head + b"\n" + damaged
            for damaged in (
                second[:-1] + b",]",
                second[:-1] + b", ]",
                b"x" + second[1:],
                second + b"]",
                second + b"x",
                second[:-1] + b",[1]]",
                second[:-1] + b"}",
            )
        ),
    ]
    refused = 0
    for raw in raws:
        expected = _cold(raw)
        refused += expected == "refused"
        mine.to_json()  # warm: this process encoded the table's rounds last
        assert record_module._ENCODED[mine.table_id].round
        assert _decoded(raw) == expected, raw[-40:]
    assert refused == 7


def test_a_seating_decodes_to_its_own_seats_whatever_was_decoded_before() -> None:
    base = _mid_game(3, 1)
    ann = SeatRecord(Occupant.HUMAN, "Ann", None, 2)
    bot = SeatRecord(Occupant.BOT, "Bot", BotLevel.HEURISTIC, 0)
    seatings = [(ann, bot, ann, bot)]
    for flag, value, seats in (
        ("left", True, (0, 2)),
        ("rematched", True, (0, 2)),
        ("player_id", "p", (0, 2)),
        ("player_id", "q", (0, 2)),
        ("stand_in", True, (1, 3)),
    ):
        for index in seats:
            seating = list(seatings[0])
            seating[index] = dataclasses.replace(seating[index], **{flag: value})
            seatings.append(tuple(seating))
    raws = [dataclasses.replace(base, seats=seats).to_json() for seats in seatings]
    expected = [_cold(raw) for raw in raws]
    assert "refused" not in expected
    for raw, decoded in zip(raws + raws[::-1], expected + expected[::-1], strict=True):
        assert _decoded(raw) == decoded  # one table id: each seating follows another
    # An explicit null is damage, whatever seating was decoded before.
    for field in (b"stand_ins", b"rematched", b"left", b"player_ids"):
        damaged = raws[0].replace(b',"create_ms"', b',"%s":null,"create_ms"' % field, 1)
        assert _cold(damaged) == "refused"
        TableRecord.from_json(raws[0])
        assert _decoded(damaged) == "refused", field


def test_what_the_per_table_caches_keep_is_sized_to_its_bytes() -> None:
    # orjson returns its output in a buffer of at least 4 KiB; kept as it is, the caches that
    # hold a table's seating key, tricks and rounds cost some 4 KiB a table each.
    game = _random_game(5, 80)  # into the second round: a finished round and some tricks
    assert game.rounds
    assert game.tricks
    tables = 200
    records = [
        dataclasses.replace(_record(game), table_id=f"tight{index:04d}") for index in range(tables)
    ]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for record in records:
            TableRecord.from_json(record.to_json())
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
        for record in records:
            record_module.forget(record.table_id)
    # Measured 4.1 KiB a table with the buffers trimmed, 19.3 KiB without.
    assert kept / tables < 6 * 1024, f"{kept / tables:.0f} bytes a table"
