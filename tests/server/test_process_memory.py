"""What a process keeps of the tables it serves, once they are over or out of its cache.

A replica runs for weeks; every game ends and every table expires. The encodings kept to write
a table's next record and view quickly (``record._ENCODED``, ``convert._TRICK_BLOCKS``) live as
long as the table's cached record, and a finished game's, hundreds of KiB for a long one, is
not kept at all.
"""

from __future__ import annotations

import asyncio

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_server import convert, record
from hearts_server.service import RecordCache, TableApp, parse_table_name
from hearts_server.store.memory import MemoryStore
from hearts_server.tokens import TokenCodec


def _app(record_cache_size: int = 4096) -> TableApp:
    codec = TokenCodec(b"x" * 32, ttl_seconds=3600)
    return TableApp(MemoryStore(), codec, record_cache_size=record_cache_size)


async def test_a_finished_game_keeps_no_record_encoding() -> None:
    app = _app()
    seats = [pb.Seat(seat=s, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM)
             for s in range(4)]  # fmt: skip
    created = await app.create_table(pb.Table(seats=seats, deck_seed=3), "")
    name = created.view.table.name
    table_id = parse_table_name(name)
    seen_in_play = False
    async with asyncio.timeout(20):
        while (view := (await app.get_table(name, None)).view).table.phase != pb.PHASE_GAME_OVER:
            seen_in_play = seen_in_play or table_id in record._ENCODED
            await asyncio.sleep(0)  # the driver commits a round at a time
    assert seen_in_play  # kept while the game is played
    assert view.table.phase == pb.PHASE_GAME_OVER
    assert table_id not in record._ENCODED
    await app.aclose()


async def test_only_the_newest_finished_games_records_are_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A cache of 4,096 finished games of a target of 1,000 held about 1.1 GB (285 KB each),
    # past the replica's 1 GiB memory limit. The newest few finished games are kept apart
    # (their results are read right after), the rest leave the cache.
    monkeypatch.setattr(RecordCache, "FINISHED", 2)
    app = _app()
    seats = [pb.Seat(seat=s, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM)
             for s in range(4)]  # fmt: skip
    one_round = pb.Rules(target_score=1)
    ids = []
    for seed in range(3):
        created = await app.create_table(pb.Table(seats=seats, deck_seed=seed, rules=one_round), "")
        name = created.view.table.name
        ids.append(parse_table_name(name))
        async with asyncio.timeout(20):
            for _ in range(100_000):  # the driver commits a round at a time
                if (await app.get_table(name, None)).view.table.phase == pb.PHASE_GAME_OVER:
                    break
                await asyncio.sleep(0)
    assert [app.records.get(i) is not None for i in ids] == [False, True, True]
    assert len(app.records) == 2
    await app.get_table(convert.table_name(ids[0]), None)  # a read of an older one: kept again
    assert [app.records.get(i) is not None for i in ids] == [True, False, True]
    await app.aclose()


async def test_encodings_leave_with_the_record_from_the_cache() -> None:
    app = _app(record_cache_size=2)
    ids = []
    no_passing = pb.Rules(pass_cards=False)
    for index in range(5):
        created = await app.create_table(pb.Table(deck_seed=index, rules=no_passing), "")
        name = created.view.table.name
        ids.append(parse_table_name(name))
        tokens = [
            (await app.join_table(name, s, f"p{s}", etag="", request_id="")).seat_token
            for s in range(4)
        ]
        for _ in range(5):  # the first trick and a card of the second
            turn = (await app.get_table(name, None)).view.table.turn_seat
            view = (await app.get_table(name, tokens[turn])).view
            await app.play_card(name, tokens[turn], view.legal_cards[0], etag="", request_id="")
        assert ids[-1] in record._ENCODED
        assert ids[-1] in convert._TRICK_BLOCKS
    # The two newest tables are cached; the three before them left the cache, and with it
    # their encodings.
    assert [i in record._ENCODED for i in ids] == [False, False, False, True, True]
    assert [i in convert._TRICK_BLOCKS for i in ids] == [False, False, False, True, True]
    await app.aclose()


async def test_a_finished_game_keeps_no_trick_block_of_its_views() -> None:
    app = _app()
    rules = pb.Rules(pass_cards=False, target_score=1)  # one round
    name = (await app.create_table(pb.Table(deck_seed=4, rules=rules), "")).view.table.name
    table_id = parse_table_name(name)
    tokens = [
        (await app.join_table(name, s, f"p{s}", etag="", request_id="")).seat_token
        for s in range(4)
    ]
    for played in range(52):
        turn = (await app.get_table(name, None)).view.table.turn_seat
        view = (await app.get_table(name, tokens[turn])).view
        if played == 51:
            assert table_id in convert._TRICK_BLOCKS  # twelve tricks done, kept for the views
        await app.play_card(name, tokens[turn], view.legal_cards[0], etag="", request_id="")
    view = (await app.get_table(name, None)).view
    assert view.table.phase == pb.PHASE_GAME_OVER
    assert table_id not in convert._TRICK_BLOCKS
    assert table_id not in record._ENCODED
    await app.aclose()
