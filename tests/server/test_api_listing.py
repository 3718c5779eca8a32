"""ListTables: newest first, paginated (AIP-158), filtered to tables with a free seat."""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import grpc
import pytest
import redis.asyncio

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.store import keys

from .conftest import failure

pytestmark = pytest.mark.timeout(60)


async def list_all(hearts, *, page_size: int, has_free_seat: bool = False) -> list[list[str]]:
    pages = []
    token = ""
    while True:
        response = await hearts.stub.ListTables(
            api.ListTablesRequest(
                page_size=page_size, page_token=token, has_free_seat=has_free_seat
            )
        )
        pages.append([table.name for table in response.tables])
        token = response.next_page_token
        if not token:
            return pages


async def test_tables_are_listed_newest_first_page_by_page(hearts) -> None:
    created = []
    for index in range(5):
        full = index % 2 == 0
        bots = {seat: pb.BOT_LEVEL_RANDOM for seat in range(4)} if full else None
        created.append((await hearts.create(bots=bots)).view.table.name)
        await asyncio.sleep(0.002)  # ids sort by creation millisecond
    pages = await list_all(hearts, page_size=2)
    assert [name for page in pages for name in page] == created[::-1]
    assert all(len(page) <= 2 for page in pages)
    open_pages = await list_all(hearts, page_size=1, has_free_seat=True)
    assert [name for page in open_pages for name in page] == [created[3], created[1]]


async def test_an_unlisted_table_is_found_by_its_name_only(hearts) -> None:
    listed = (await hearts.create()).view.table.name
    created = await hearts.create(unlisted=True, bots={1: pb.BOT_LEVEL_RANDOM})
    name = created.view.table.name
    assert created.view.table.unlisted

    async def names() -> set[str]:
        return {n for page in await list_all(hearts, page_size=10) for n in page} | {
            n for page in await list_all(hearts, page_size=10, has_free_seat=True) for n in page
        }

    assert await names() == {listed}
    # Anyone with the name (an invite) joins and plays; the table stays out of every listing
    # through its seating changes.
    first = await hearts.join(name, 0, player="host")
    assert first.view.table.unlisted
    await hearts.join(name, 2, player="friend")
    assert await names() == {listed}
    await hearts.leave(name, first.seat_token)
    assert await names() == {listed}
    view = await hearts.view(name)
    assert view.table.unlisted
    assert view.table.seats[2].player_display_name == "friend"


async def test_a_bad_page_token_is_invalid_argument(hearts) -> None:
    # Not base64; "1:nota" for the other query; "0:é" and "0:" (no table id); "2:abc".
    tokens = ["not base64 !", "MTpub3Rh"]
    tokens += [base64.urlsafe_b64encode(t.encode()).decode() for t in ("0:é", "0:", "2:abc")]
    for token in tokens:
        refusal = await failure(hearts.stub.ListTables(api.ListTablesRequest(page_token=token)))
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_PAGE_TOKEN",
        )


async def test_a_listed_tables_etag_is_current(hearts) -> None:
    created = await hearts.create()
    listed = await hearts.stub.ListTables(api.ListTablesRequest(has_free_seat=True))
    table = next(t for t in listed.tables if t.name == created.view.table.name)
    assert table.etag == created.etag
    await hearts.join(table.name, etag=table.etag)


@pytest.mark.parametrize(
    ("pass_cards", "direction"),
    [(True, pb.PASS_DIRECTION_LEFT), (False, pb.PASS_DIRECTION_HOLD)],
)
async def test_a_table_waiting_for_players_shows_its_first_pass_direction(
    hearts, pass_cards: bool, direction: int
) -> None:
    created = (await hearts.create(pass_cards=pass_cards)).view.table
    assert created.phase == pb.PHASE_WAITING_FOR_PLAYERS
    listed = (await hearts.stub.ListTables(api.ListTablesRequest())).tables[0]
    got = (await hearts.view(created.name)).table
    assert created.pass_direction == listed.pass_direction == got.pass_direction == direction


@pytest.mark.redis
async def test_an_unlisted_table_in_a_listing_index_by_mistake_is_still_not_listed(
    make_server, connect, redis_url
) -> None:
    # An older replica that does not know the setting commits open-seat hints for it.
    hearts = connect(await make_server(store="redis"))
    name = (await hearts.create(unlisted=True)).view.table.name
    admin = redis.asyncio.Redis.from_url(redis_url)
    try:
        table_id = name.removeprefix("tables/")
        await admin.zadd(keys.INDEX_OPEN, {table_id: 0})
        await admin.zadd(keys.INDEX_ALL, {table_id: 0})
    finally:
        await admin.aclose()
    for has_free_seat in (False, True):
        pages = await list_all(hearts, page_size=10, has_free_seat=has_free_seat)
        assert name not in [n for page in pages for n in page]


async def test_a_listing_decoded_cold_shows_the_table_as_get_table_does(
    store_kind: str, make_server: Any, connect: Any
) -> None:
    # Without the record cache, a listing decodes each record's first line (a summary):
    # a finished game, whose rounds are not read, is listed as GetTable shows it.
    server = await make_server(store=store_kind, record_cache_size=0)
    hearts = connect(server)
    bots = {seat: pb.BOT_LEVEL_RANDOM for seat in range(4)}
    created = await hearts.create(bots=bots, target_score=40)
    finished = await hearts.until_game_over(created.view.table.name)
    [listed] = (await hearts.stub.ListTables(api.ListTablesRequest())).tables
    assert listed == finished
    assert listed.round_number > 1
    assert listed.result.winners
