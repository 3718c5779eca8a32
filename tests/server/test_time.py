"""Time: table ids and event times in order, a table that expires mid-command, token lifetimes.

In-process, on the memory store with clocks the tests move: replicas are two ``TableApp``s over
one store, each with its own (possibly skewed) wall clock.
"""

from __future__ import annotations

from typing import Any

import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1.table_event_pb2 import TableEvent
from hearts_server.errors import ServiceError
from hearts_server.service import TableApp, new_table_id
from hearts_server.store.memory import MemoryStore
from hearts_server.tokens import TokenCodec, TokenError

SECRET = b"time-tests-secret-0123456789abcdef"


def _app(store: MemoryStore, clock: Any) -> TableApp:
    return TableApp(store, TokenCodec(SECRET, clock=clock), clock=clock)


async def test_tables_created_in_one_millisecond_list_newest_first() -> None:
    app = _app(MemoryStore(), lambda: 1_800_000_000.0)  # the clock stands still
    created = [(await app.create_table(pb.Table(), "")).view.table for _ in range(8)]
    listed = await app.list_tables(0, "", has_free_seat=False)
    assert [t.name for t in listed.tables] == [t.name for t in created[::-1]]
    # The order is the ids'; the tables' times stay the clock's.
    assert {t.create_time.ToMilliseconds() for t in created} == {1_800_000_000_000}


async def test_an_unlisted_tables_id_does_not_follow_from_its_neighbours() -> None:
    # Listed ids made in one millisecond count up from a random start, so a listed id's
    # neighbours are guessable; an unlisted table's name is all that keeps strangers out.
    app = _app(MemoryStore(), lambda: 1_800_000_000.0)  # the clock stands still
    ids = []
    for unlisted in (False, True, False, True, False):
        created = await app.create_table(pb.Table(unlisted=unlisted), "")
        ids.append(int(created.view.table.name.removeprefix("tables/")[12:], 16))
    listed, unlisted_ids = ids[0::2], ids[1::2]
    assert listed == [listed[0], listed[0] + 1, listed[0] + 2]  # the listed ones count up
    for hidden in unlisted_ids:
        assert all(abs(hidden - other) > 1_000 for other in ids if other != hidden)


def test_an_id_made_in_the_same_millisecond_or_after_a_clock_step_back_sorts_later() -> None:
    first = new_table_id(1000)
    same = new_table_id(1000, first)
    back = new_table_id(999, same)  # the clock stepped back
    assert first < same < back
    assert same[:12] == back[:12] == f"{1000:012x}"
    assert int(same[12:], 16) == int(first[12:], 16) + 1
    full = f"{1000:012x}" + "f" * 10  # the random part cannot grow: the next millisecond
    assert new_table_id(1000, full)[:12] == f"{1001:012x}"
    assert all(len(i) == 22 for i in (first, same, back, new_table_id(1000, full)))


async def test_event_times_never_go_back_when_a_slower_clock_writes_next() -> None:
    store = MemoryStore()
    ahead = _app(store, lambda: 1_800_000_060.0)  # a replica a minute ahead
    behind = _app(store, lambda: 1_800_000_000.0)
    name = (await ahead.create_table(pb.Table(), "")).view.table.name
    await ahead.join_table(name, 0, "a", etag="", request_id="")
    await behind.join_table(name, 1, "b", etag="", request_id="")
    table_id = name.removeprefix("tables/")
    page = await store.read_events(table_id, after=0)
    times = [TableEvent.FromString(e.payload).event_time.ToMilliseconds() for e in page.events]
    assert times == sorted(times), times
    view = (await behind.get_table(name, None)).view
    assert view.table.update_time.seconds == 1_800_000_060


async def test_a_reaction_through_a_slower_clock_is_not_timed_before_the_tables_last_event() -> (
    None
):
    store = MemoryStore()
    ahead = _app(store, lambda: 1_800_000_060.0)  # a replica a minute ahead
    behind = _app(store, lambda: 1_800_000_000.0)
    name = (await ahead.create_table(pb.Table(), "")).view.table.name
    joined = await ahead.join_table(name, 0, "a", etag="", request_id="")
    published = []
    publish = store.publish_ephemeral

    async def keep(table_id: str, payload: bytes, **options: Any) -> Any:
        published.append(TableEvent.FromString(payload))
        return await publish(table_id, payload, **options)

    store.publish_ephemeral = keep  # type: ignore[method-assign]
    await behind.send_reaction(name, joined.seat_token, pb.REACTION_CLAP)
    [reaction] = published
    assert reaction.event_time.seconds == 1_800_000_060  # as late as the join, not before it


async def test_a_table_that_expires_during_a_command_is_not_found_with_or_without_etag() -> None:
    now = [1_800_000_000.0]
    store = MemoryStore(clock=lambda: now[0], idle_ttl_seconds=60)
    app = TableApp(store, TokenCodec(SECRET, clock=lambda: now[0]), clock=lambda: now[0],
                   record_cache_size=0)  # fmt: skip
    load = store.load

    async def load_then_expire(table_id: str, **options: Any) -> Any:
        loaded = await load(table_id, **options)
        now[0] += 61  # the table expires between this read and the commit
        return loaded

    store.load = load_then_expire  # type: ignore[method-assign]
    for etag in ("", "1"):
        name = (await app.create_table(pb.Table(), "")).view.table.name
        with pytest.raises(ServiceError) as refused:
            await app.join_table(name, 0, "p", etag=etag, request_id="")
        assert refused.value.reason == "TABLE_NOT_FOUND", (etag, refused.value)


def test_a_token_lives_at_least_its_ttl() -> None:
    now = [1_800_000_000.9]
    codec = TokenCodec(SECRET, ttl_seconds=1, clock=lambda: now[0])
    token = codec.issue("t", 0, 0)
    now[0] += 0.99  # not yet a second old
    assert codec.verify(token).seat == 0
    now[0] += 1.2
    with pytest.raises(TokenError) as refused:
        codec.verify(token)
    assert refused.value.reason == "TOKEN_EXPIRED"
