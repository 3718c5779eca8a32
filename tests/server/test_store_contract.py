"""The storage contract (``hearts_server.store.base``), run against every store.

Each contract test runs twice: on :class:`MemoryStore` (with a fake clock) and on
:class:`RedisStore` against a real Redis (with real, short TTLs). The tests after the contract are
about Redis alone: fan-out across replicas, script reloading, restarts, an unreachable server and
the number of round trips per command.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Protocol

import pytest
import redis
import redis.asyncio.connection

from hearts_server.store import keys, lane
from hearts_server.store import redis as redis_store_module
from hearts_server.store.base import (
    EPHEMERAL_SEQUENCE,
    JOIN_CALLER_PREFIX,
    MAX_CALLERS,
    PLAYER_TABLES_KEPT,
    CommitOutcome,
    OutboxItem,
    Published,
    Store,
    StoredEvent,
    StoreUnavailableError,
    Subscription,
    SubscriptionLaggedError,
    SubscriptionLostError,
)
from hearts_server.store.memory import MemoryStore
from hearts_server.store.redis import RedisStore, decode_batch, encode_batch

TABLE = "0190-table-a"
OTHER = "0190-table-b"


def ev(sequence: int, audience: int | None = None) -> StoredEvent:
    """An event whose payload names its sequence, so mix-ups show in assertion messages."""
    return StoredEvent(sequence, audience, f"event-{sequence}".encode())


def evs(first: int, last: int) -> list[StoredEvent]:
    return [ev(s) for s in range(first, last + 1)]


class MakeStore(Protocol):
    def __call__(
        self,
        *,
        idle_ttl_seconds: float = ...,
        finished_ttl_seconds: float = ...,
        max_events: int = ...,
    ) -> Store: ...


@dataclasses.dataclass
class Backend:
    """How to build a store of one kind, and how to let time pass for it."""

    name: str
    make: MakeStore
    advance: Callable[[float], Awaitable[None]]


@pytest.fixture(params=["memory", pytest.param("redis", marks=pytest.mark.redis)])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    stores: list[Store] = []
    if request.param == "memory":
        now = [1000.0]

        def make_memory(**options: Any) -> Store:
            store = MemoryStore(clock=lambda: now[0], **options)
            stores.append(store)
            return store

        async def advance_clock(seconds: float) -> None:
            now[0] += seconds

        yield Backend("memory", make_memory, advance_clock)
    else:
        url: str = request.getfixturevalue("clean_redis")

        def make_redis(**options: Any) -> Store:
            store = RedisStore.from_url(url, **options)
            stores.append(store)
            return store

        yield Backend("redis", make_redis, asyncio.sleep)
    for store in stores:
        await store.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.make()


async def next_batch(iterator: AsyncIterator[tuple[StoredEvent, ...]]) -> tuple[StoredEvent, ...]:
    return await asyncio.wait_for(anext(iterator), timeout=5)


def live(subscription: Subscription) -> AsyncIterator[tuple[StoredEvent, ...]]:
    return aiter(subscription)


# --- Records and versions ---


async def test_missing_table_loads_as_version_zero(store: Store) -> None:
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data, loaded.replay, loaded.exists) == (0, b"", None, False)


async def test_create_starts_at_version_one(store: Store) -> None:
    assert (await store.create(TABLE, b"data-1", evs(1, 2), open_seats=True)).created
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data, loaded.exists) == (1, b"data-1", True)


async def test_load_leaves_out_the_record_the_reader_already_holds(store: Store) -> None:
    assert (await store.create(TABLE, b"data-1", evs(1, 1), open_seats=True)).created
    same = await store.load(TABLE, known_version=1)
    assert (same.version, same.data, same.exists) == (1, b"", True)
    await store.commit(TABLE, expected_version=1, data=b"data-2", events=evs(2, 2))
    moved = await store.load(TABLE, known_version=1)
    assert (moved.version, moved.data) == (2, b"data-2")
    assert not (await store.load(OTHER, known_version=1)).exists


async def test_a_record_in_two_parts_comes_back_as_it_was_given(backend: Backend) -> None:
    # A record may come in two lines (schema 3: the finished rounds on the second), which the
    # Redis store keeps apart and writes only when they changed; a second replica too.
    store = backend.make()
    replica = backend.make() if backend.name == "redis" else store  # memory stores share nothing
    records = [
        b"head-1\n[]",
        b"head-2\n[]",  # the same second part
        b"head-3\n[round-1]",  # a round finished
        b"head-4\n[round-1]",
        b"head-5",  # one part (schema 2): the second goes
        b"head-6\n",  # an empty second part
        b"head-7\n[round-1,round-2]\nmore",  # only the first newline splits
        b"head-8\n[round-1,round-2]\nmore",
    ]
    assert (await store.create(TABLE, records[0], evs(1, 1), open_seats=True)).created
    for version, data in enumerate(records[1:], start=2):
        writer = replica if version % 3 == 0 else store  # the other replica now and then
        held = await writer.load(TABLE)
        assert held.data == records[version - 2]
        result = await writer.commit(
            TABLE, expected_version=version - 1, data=data, events=evs(version, version)
        )
        assert (result.outcome, result.version) == (CommitOutcome.APPLIED, version)
        for reader in (store, replica):
            assert (await reader.load(TABLE)).data == data
        [(_, listed_version, listed)], _ = await store.list_tables(
            open_only=False, before_id=None, limit=5
        )
        head = data.partition(b"\n")[0]  # listings get the first line: see Store.list_tables
        assert (listed_version, listed) == (version, head)
        await store.player_seat_taken("user-1", TABLE, at_us=version, ttl_ms=60_000)
        for reader in (store, replica):
            assert await reader.player_tables("user-1", ttl_ms=60_000) == [(TABLE, version, head)]


async def test_a_second_part_of_the_same_length_is_no_less_written(store: Store) -> None:
    # Rounds only grow in a game, but the store keeps the bytes it is given, whatever they are.
    assert (await store.create(TABLE, b"head-1\n[a]", evs(1, 1), open_seats=True)).created
    assert (await store.load(TABLE)).data == b"head-1\n[a]"
    await store.commit(TABLE, expected_version=1, data=b"head-2\n[b]", events=[])
    assert (await store.load(TABLE)).data == b"head-2\n[b]"
    await store.commit(TABLE, expected_version=2, data=b"head-3\n[b]", events=[])
    await store.commit(TABLE, expected_version=3, data=b"head-4\n[c]", events=[])
    assert (await store.load(TABLE, known_version=3)).data == b"head-4\n[c]"


async def test_create_twice_is_refused(store: Store) -> None:
    assert (await store.create(TABLE, b"first", [], open_seats=True)).created
    assert not (await store.create(TABLE, b"second", evs(1, 1), open_seats=False)).created
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data) == (1, b"first")
    assert (await store.read_events(TABLE, after=0)).events == ()


async def test_retried_create_returns_the_first_table_and_answer(store: Store) -> None:
    first = await store.create(
        TABLE, b"v1", evs(1, 1), open_seats=True, request_id="create-1", response=b"answer-1"
    )
    assert (first.created, first.table_id, first.replay) == (True, TABLE, None)
    retry = await store.create(
        OTHER, b"v1", evs(1, 1), open_seats=True, request_id="create-1", response=b"answer-2"
    )
    assert (retry.created, retry.table_id, retry.replay) == (False, TABLE, b"answer-1")
    assert not (await store.load(OTHER)).exists
    page, _ = await store.list_tables(open_only=False, before_id=None, limit=5)
    assert [i for i, _, _ in page] == [TABLE]


async def test_create_on_a_taken_id_answers_as_the_request_that_made_it(store: Store) -> None:
    # Ids are random: the one way a create's own id is taken is a retry of the same request,
    # answered from the request id's claim, that made the table while this call was on its way
    # (two round trips in the Redis store). The call then answers as that retry did, and the
    # request stays remembered: a next retry must not make a second table.
    await store.create(TABLE, b"v1", [], open_seats=True)
    taken = await store.create(TABLE, b"v2", [], open_seats=True, request_id="r", response=b"a")
    assert (taken.created, taken.table_id, taken.replay) == (False, TABLE, b"a")
    assert (await store.load(TABLE)).data == b"v1"
    again = await store.create(OTHER, b"v1", [], open_seats=True, request_id="r", response=b"b")
    assert (again.created, again.table_id, again.replay) == (False, TABLE, b"a")
    assert not (await store.load(OTHER)).exists


async def test_create_without_a_response_is_not_remembered(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True, request_id="r")
    again = await store.create(OTHER, b"v1", [], open_seats=True, request_id="r")
    assert (again.created, again.table_id) == (True, OTHER)


async def test_create_request_is_forgotten_after_the_idle_ttl(backend: Backend) -> None:
    store = backend.make(idle_ttl_seconds=0.2)
    await store.create(TABLE, b"v1", [], open_seats=True, request_id="r", response=b"a")
    await backend.advance(0.3)
    again = await store.create(OTHER, b"v1", [], open_seats=True, request_id="r", response=b"b")
    assert (again.created, again.table_id) == (True, OTHER)


async def test_the_embedded_store_sweeps_create_requests_less_often_as_they_grow() -> None:
    # Past 10,000 live create requests, every create swept them all (1.7 ms each at 12,000):
    # like the store's other maps, the next sweep now waits for twice what is left.
    store = MemoryStore(clock=lambda: 1_000.0)  # nothing expires
    sweeps, held = 0, store._creates
    for number in range(12_000):
        await store.create(
            f"t{number}", b"v1", [], open_seats=False, request_id=f"r{number}", response=b"ok"
        )
        if store._creates is not held:  # a sweep builds the map anew
            sweeps, held = sweeps + 1, store._creates
    assert sweeps == 1
    assert len(store._creates) == 12_000


async def test_commit_replaces_data_and_bumps_version(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    result = await store.commit(TABLE, expected_version=1, data=b"v2", events=[])
    assert (result.outcome, result.version, result.replay) == (CommitOutcome.APPLIED, 2, None)
    result = await store.commit(TABLE, expected_version=2, data=b"v3", events=evs(1, 1))
    assert (result.outcome, result.version) == (CommitOutcome.APPLIED, 3)
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data) == (3, b"v3")


async def test_a_commit_puts_its_outbox_item_in_the_outbox_with_it(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    item = OutboxItem("hook-1", b'{"type": "game_over"}')
    # A commit that does not apply puts nothing in the outbox.
    stale = await store.commit(
        TABLE, expected_version=7, data=b"x", events=[], outbox=(item, 1_000)
    )
    assert stale.outcome == CommitOutcome.CONFLICT
    assert await store.outbox_size() == 0
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[], outbox=(item, 1_000))
    # The same id again (a retried decision) changes nothing.
    again = OutboxItem("hook-1", b"other")
    await store.commit(TABLE, expected_version=2, data=b"v3", events=[], outbox=(again, 5))
    assert await store.outbox_size() == 1
    assert await store.outbox_claim(now_ms=999, lease_ms=100, limit=10) == []  # not due yet
    [claimed] = await store.outbox_claim(now_ms=1_000, lease_ms=100, limit=10)
    # Each claim is a delivery tried: this one is the first.
    assert (claimed.id, claimed.payload, claimed.attempts) == ("hook-1", item.payload, 1)
    # Leased: nobody else gets it until the lease runs out, then it comes back.
    assert await store.outbox_claim(now_ms=1_050, lease_ms=100, limit=10) == []
    [stale] = await store.outbox_claim(now_ms=1_100, lease_ms=100, limit=10)
    assert stale.attempts == 2  # its first claimer never said how the delivery went
    [current] = await store.outbox_claim(now_ms=1_200, lease_ms=100, limit=10)  # claimed again
    assert current.attempts == 3
    # The second claim's lease ran out: its retry changes nothing.
    assert not await store.outbox_retry(stale, due_ms=9_000)
    assert await store.outbox_retry(current, due_ms=5_000)
    assert await store.outbox_claim(now_ms=4_999, lease_ms=100, limit=10) == []
    [retried] = await store.outbox_claim(now_ms=5_000, lease_ms=100, limit=10)
    assert (retried.id, retried.payload, retried.attempts) == ("hook-1", item.payload, 4)
    await store.outbox_done("hook-1")
    assert await store.outbox_size() == 0
    assert await store.outbox_claim(now_ms=10**13, lease_ms=100, limit=10) == []
    # A retry by a claimer whose item was sent meanwhile leaves nothing behind.
    assert not await store.outbox_retry(retried, due_ms=9_000)
    assert await store.outbox_size() == 0


async def test_the_outbox_hands_out_the_oldest_due_first_up_to_the_limit(store: Store) -> None:
    await store.create(TABLE, b"v", [], open_seats=True)
    for version, due in enumerate((30, 10, 20), start=1):
        item = OutboxItem(f"hook-{due}", b"p")
        await store.commit(
            TABLE, expected_version=version, data=b"v", events=[], outbox=(item, due)
        )
    claimed = await store.outbox_claim(now_ms=100, lease_ms=1_000, limit=2)
    assert [item.id for item in claimed] == ["hook-10", "hook-20"]
    assert [item.id for item in await store.outbox_claim(now_ms=100, lease_ms=1_000, limit=2)] == [
        "hook-30"
    ]


async def test_commit_at_a_stale_version_conflicts_and_changes_nothing(store: Store) -> None:
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(2, 2))
    result = await store.commit(TABLE, expected_version=1, data=b"stale", events=evs(3, 3))
    assert (result.outcome, result.version) == (CommitOutcome.CONFLICT, 2)
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data) == (2, b"v2")
    assert (await store.read_events(TABLE, after=0)).events == tuple(evs(1, 2))


async def test_commit_to_a_missing_table_conflicts_at_version_zero(store: Store) -> None:
    result = await store.commit(TABLE, expected_version=1, data=b"x", events=evs(1, 1))
    assert (result.outcome, result.version) == (CommitOutcome.CONFLICT, 0)
    assert not (await store.load(TABLE)).exists


async def test_exactly_one_of_concurrent_commits_at_one_version_applies(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    results = await asyncio.gather(
        *(
            store.commit(TABLE, expected_version=1, data=f"writer-{i}".encode(), events=evs(1, 1))
            for i in range(20)
        )
    )
    applied = [i for i, r in enumerate(results) if r.outcome is CommitOutcome.APPLIED]
    assert len(applied) == 1, results
    assert all(r.version == 2 for r in results)
    assert {r.outcome for i, r in enumerate(results) if i != applied[0]} == {CommitOutcome.CONFLICT}
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data) == (2, f"writer-{applied[0]}".encode())
    assert (await store.read_events(TABLE, after=0)).events == (ev(1),)


# --- The event log ---


async def test_events_read_back_in_order_after_a_sequence(store: Store) -> None:
    await store.create(TABLE, b"v1", [ev(1), ev(2, audience=0)], open_seats=True)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[ev(3, 3), ev(4), ev(5)])
    page = await store.read_events(TABLE, after=0)
    assert page.events == (ev(1), ev(2, 0), ev(3, 3), ev(4), ev(5))
    assert page.first_sequence == 1
    assert (await store.read_events(TABLE, after=2, limit=2)).events == (ev(3, 3), ev(4))
    assert (await store.read_events(TABLE, after=4, limit=10)).events == (ev(5),)
    end = await store.read_events(TABLE, after=5)
    assert (end.events, end.first_sequence) == ((), 1)


async def test_events_of_a_missing_table_are_empty(store: Store) -> None:
    page = await store.read_events(TABLE, after=0)
    assert (page.events, page.first_sequence) == ((), 0)


async def test_table_without_events_reports_first_sequence_zero(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    page = await store.read_events(TABLE, after=0)
    assert (page.events, page.first_sequence) == ((), 0)


async def test_event_log_keeps_only_the_newest_max_events(backend: Backend) -> None:
    store = backend.make(max_events=3)
    await store.create(TABLE, b"v1", evs(1, 2), open_seats=True)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(3, 5))
    page = await store.read_events(TABLE, after=0)
    assert (page.events, page.first_sequence) == (tuple(evs(3, 5)), 3)
    # A reader that last saw 1 can tell that 2 is gone: the log now starts after its gap.
    page = await store.read_events(TABLE, after=1, limit=1)
    assert (page.events, page.first_sequence) == ((ev(3),), 3)


async def test_create_with_more_events_than_the_cap_keeps_the_newest(backend: Backend) -> None:
    store = backend.make(max_events=2)
    await store.create(TABLE, b"v1", evs(1, 4), open_seats=True)
    page = await store.read_events(TABLE, after=0)
    assert (page.events, page.first_sequence) == (tuple(evs(3, 4)), 3)


# --- Idempotent retries ---


async def test_retried_request_is_replayed_and_changes_nothing(store: Store) -> None:
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    first = await store.commit(
        TABLE,
        expected_version=1,
        data=b"v2",
        events=evs(2, 2),
        caller="seat-0",
        request_id="req-1",
        response=b"answer-1",
    )
    assert (first.outcome, first.version) == (CommitOutcome.APPLIED, 2)
    retry = await store.commit(
        TABLE,
        expected_version=1,
        data=b"retry",
        events=evs(3, 3),
        caller="seat-0",
        request_id="req-1",
        response=b"answer-2",
        open_seats=False,
    )
    assert (retry.outcome, retry.version, retry.replay) == (
        CommitOutcome.REPLAYED,
        2,
        b"answer-1",
    )
    loaded = await store.load(TABLE, caller="seat-0", request_id="req-1")
    assert (loaded.version, loaded.data, loaded.replay) == (2, b"v2", b"answer-1")
    assert (await store.read_events(TABLE, after=0)).events == tuple(evs(1, 2))


async def test_load_without_a_matching_request_has_no_replay(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(
        TABLE,
        expected_version=1,
        data=b"v2",
        events=[],
        caller="seat-0",
        request_id="req-1",
        response=b"answer-1",
    )
    assert (await store.load(TABLE)).replay is None
    assert (await store.load(TABLE, caller="seat-0", request_id="req-2")).replay is None
    assert (await store.load(TABLE, caller="seat-1", request_id="req-1")).replay is None
    assert (await store.load(TABLE, caller="seat-0", request_id="")).replay is None


async def test_same_request_id_from_another_caller_is_not_replayed(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(
        TABLE,
        expected_version=1,
        data=b"v2",
        events=[],
        caller="seat-0",
        request_id="req-1",
        response=b"answer-0",
    )
    other = await store.commit(
        TABLE,
        expected_version=2,
        data=b"v3",
        events=[],
        caller="seat-1",
        request_id="req-1",
        response=b"answer-1",
    )
    assert (other.outcome, other.version) == (CommitOutcome.APPLIED, 3)
    assert (await store.load(TABLE, caller="seat-0", request_id="req-1")).replay == b"answer-0"
    assert (await store.load(TABLE, caller="seat-1", request_id="req-1")).replay == b"answer-1"


async def test_only_the_last_request_of_a_caller_is_remembered(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    for version, request in [(1, "req-1"), (2, "req-2")]:
        await store.commit(
            TABLE,
            expected_version=version,
            data=f"after-{request}".encode(),
            events=[],
            caller="seat-0",
            request_id=request,
            response=f"answer-{request}".encode(),
        )
    old = await store.commit(
        TABLE,
        expected_version=1,
        data=b"x",
        events=[],
        caller="seat-0",
        request_id="req-1",
        response=b"x",
    )
    assert (old.outcome, old.version) == (CommitOutcome.CONFLICT, 3)
    assert (await store.load(TABLE, caller="seat-0", request_id="req-1")).replay is None
    assert (await store.load(TABLE, caller="seat-0", request_id="req-2")).replay == b"answer-req-2"


async def test_joins_are_remembered_up_to_a_bound(store: Store) -> None:
    # Each join is remembered under its own id; a table joined and left over and over must not
    # remember them all. Other callers (one key per seat) are never forgotten for it.
    await store.create(TABLE, b"v1", [], open_seats=True)
    version = 1
    await store.commit(
        TABLE, expected_version=version, data=b"x", events=[], caller="seat:0",
        request_id="r-seat", response=b"seat answer",
    )  # fmt: skip
    version += 1
    for n in range(MAX_CALLERS + 5):
        await store.commit(
            TABLE, expected_version=version, data=b"x", events=[],
            caller=f"{JOIN_CALLER_PREFIX}r{n}", request_id=f"r{n}", response=f"a{n}".encode(),
        )  # fmt: skip
        version += 1
    newest = f"r{MAX_CALLERS + 4}"
    loaded = await store.load(TABLE, caller=f"{JOIN_CALLER_PREFIX}{newest}", request_id=newest)
    assert loaded.replay == f"a{MAX_CALLERS + 4}".encode()
    remembered = [
        n
        for n in range(MAX_CALLERS + 5)
        if (await store.load(TABLE, caller=f"{JOIN_CALLER_PREFIX}r{n}", request_id=f"r{n}")).replay
        is not None
    ]
    assert len(remembered) <= MAX_CALLERS
    assert (await store.load(TABLE, caller="seat:0", request_id="r-seat")).replay == b"seat answer"


async def test_commit_without_a_response_is_not_remembered(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(
        TABLE, expected_version=1, data=b"v2", events=[], caller="seat-0", request_id="req-1"
    )
    again = await store.commit(
        TABLE, expected_version=1, data=b"x", events=[], caller="seat-0", request_id="req-1"
    )
    assert (again.outcome, again.version) == (CommitOutcome.CONFLICT, 2)


async def test_responses_and_request_ids_may_hold_any_bytes(store: Store) -> None:
    await store.create(TABLE, b"\x00v1", [], open_seats=True)
    response = bytes(range(256))
    await store.commit(
        TABLE,
        expected_version=1,
        data=b"\xff\x00",
        events=[StoredEvent(1, None, b"\x00:\xff")],
        caller="seat:0",
        request_id="12:ab:",
        response=response,
    )
    loaded = await store.load(TABLE, caller="seat:0", request_id="12:ab:")
    assert (loaded.data, loaded.replay) == (b"\xff\x00", response)
    assert (await store.read_events(TABLE, after=0)).events == (StoredEvent(1, None, b"\x00:\xff"),)


# --- Expiry ---


async def test_idle_table_expires_after_the_idle_ttl_from_its_last_commit(
    backend: Backend,
) -> None:
    store = backend.make(idle_ttl_seconds=0.4, finished_ttl_seconds=10)
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await backend.advance(0.25)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(2, 2))
    await backend.advance(0.25)  # 0.5 s after creation, 0.25 s after the commit
    assert (await store.load(TABLE)).version == 2
    await backend.advance(0.25)
    assert not (await store.load(TABLE)).exists
    assert (await store.read_events(TABLE, after=0)).events == ()
    stale = await store.commit(TABLE, expected_version=2, data=b"v3", events=[])
    assert (stale.outcome, stale.version) == (CommitOutcome.CONFLICT, 0)
    assert (await store.create(TABLE, b"again", [], open_seats=True)).created
    assert (await store.read_events(TABLE, after=0)).events == ()


async def test_finished_table_expires_after_the_finished_ttl(backend: Backend) -> None:
    store = backend.make(idle_ttl_seconds=10, finished_ttl_seconds=0.2)
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(
        TABLE,
        expected_version=1,
        data=b"over",
        events=evs(1, 1),
        caller="seat-0",
        request_id="r",
        response=b"ok",
        finished=True,
    )
    await backend.advance(0.3)
    assert not (await store.load(TABLE, caller="seat-0", request_id="r")).exists
    assert (await store.list_tables(open_only=False, before_id=None, limit=10)) == ([], False)


async def test_created_table_expires_after_the_idle_ttl(backend: Backend) -> None:
    store = backend.make(idle_ttl_seconds=0.2)
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await backend.advance(0.3)
    assert not (await store.load(TABLE)).exists


async def test_a_table_created_finished_expires_after_the_finished_ttl(backend: Backend) -> None:
    # Four bots play a whole game inside CreateTable: the table is born finished.
    store = backend.make(idle_ttl_seconds=10, finished_ttl_seconds=0.2)
    await store.create(TABLE, b"over", evs(1, 1), open_seats=False, finished=True)
    assert (await store.load(TABLE)).exists
    await backend.advance(0.3)
    assert not (await store.load(TABLE)).exists


# --- Delete ---


async def test_delete_needs_the_current_version(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(1, 1))
    assert not await store.delete(TABLE, expected_version=1, events=evs(2, 2))
    assert (await store.load(TABLE)).version == 2
    assert await store.delete(TABLE, expected_version=2, events=evs(2, 2))
    assert not (await store.load(TABLE)).exists
    assert (await store.read_events(TABLE, after=0)).events == ()
    assert not await store.delete(TABLE, expected_version=2, events=[])


async def test_a_deleted_tables_id_is_never_made_again(store: Store) -> None:
    # Ids are random, so only a retried create's claim names one again: a table its creator
    # deleted must stay deleted (see Store.create).
    await store.create(TABLE, b"v1", evs(1, 3), open_seats=True)
    await store.commit(
        TABLE, expected_version=1, data=b"v2", events=[], caller="c", request_id="r", response=b"x"
    )
    assert await store.delete(TABLE, expected_version=2, events=[])
    again = await store.create(TABLE, b"new", evs(1, 1), open_seats=True)
    assert (again.created, again.table_id, again.replay) == (False, TABLE, None)
    assert not (await store.load(TABLE)).exists
    assert (await store.read_events(TABLE, after=0)).events == ()
    assert (await store.load(TABLE, caller="c", request_id="r")).replay is None
    assert (await store.create(OTHER, b"v1", [], open_seats=True)).created


async def test_due_tables_are_claimed_once_a_lease_until_a_write_sets_their_time(
    store: Store,
) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True, due_ms=5_000)
    await store.create(OTHER, b"v1", [], open_seats=True, due_ms=3_000)
    await store.create("0190-table-c", b"v1", [], open_seats=True)  # owed nothing
    assert await store.due_claim(now_ms=2_999, lease_ms=1_000, limit=10) == []
    assert await store.due_claim(now_ms=6_000, lease_ms=1_000, limit=1) == [OTHER]  # soonest
    assert await store.due_claim(now_ms=6_000, lease_ms=1_000, limit=10) == [TABLE]
    # Leased until 7,000: nobody claims them again before, unless a write sets a new time.
    assert await store.due_claim(now_ms=6_999, lease_ms=1_000, limit=10) == []
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[], due_ms=6_500)
    assert await store.due_claim(now_ms=6_999, lease_ms=1_000, limit=10) == [TABLE]
    # A write without a time, a delete and a drop each take a table out.
    await store.commit(TABLE, expected_version=2, data=b"v3", events=[])
    assert await store.due_claim(now_ms=99_000, lease_ms=1_000, limit=10) == [OTHER]
    await store.commit(TABLE, expected_version=3, data=b"v4", events=[], due_ms=1)
    assert await store.delete(TABLE, expected_version=4, events=[])
    await store.due_drop(OTHER)
    assert await store.due_claim(now_ms=999_000, lease_ms=1_000, limit=10) == []
    # OTHER due again; then a commit that does not apply (not at version 7) changes nothing.
    await store.commit(OTHER, expected_version=1, data=b"v2", events=[], due_ms=1)
    await store.commit(OTHER, expected_version=7, data=b"v3", events=[])
    assert await store.due_claim(now_ms=999_000, lease_ms=1_000, limit=10) == [OTHER]
    # A webhook's due time is the outbox item's, not the table's.
    item = OutboxItem("item-1", b"{}")
    await store.commit(OTHER, expected_version=2, data=b"v3", events=[], outbox=(item, 5))
    assert await store.due_claim(now_ms=999_000, lease_ms=1_000, limit=10) == []


# --- Listing ---


async def _create_five(store: Store) -> list[str]:
    ids = [f"0190-t{i}" for i in range(1, 6)]
    for i, table_id in enumerate(ids):
        await store.create(table_id, f"data-{table_id}".encode(), [], open_seats=i % 2 == 0)
    return ids  # t1, t3, t5 open; t2, t4 full


async def test_listing_is_newest_first_and_pages_with_before_id(store: Store) -> None:
    await _create_five(store)
    page, more = await store.list_tables(open_only=False, before_id=None, limit=2)
    assert ([(i, d) for i, _, d in page], more) == (
        [("0190-t5", b"data-0190-t5"), ("0190-t4", b"data-0190-t4")],
        True,
    )
    page, more = await store.list_tables(open_only=False, before_id="0190-t4", limit=2)
    assert ([i for i, _, _ in page], more) == (["0190-t3", "0190-t2"], True)
    page, more = await store.list_tables(open_only=False, before_id="0190-t2", limit=2)
    assert ([i for i, _, _ in page], more) == (["0190-t1"], False)
    page, more = await store.list_tables(open_only=False, before_id=None, limit=5)
    assert (len(page), more) == (5, False)


async def test_listing_open_only_follows_the_last_commit(store: Store) -> None:
    await _create_five(store)
    page, more = await store.list_tables(open_only=True, before_id=None, limit=3)
    assert ([i for i, _, _ in page], more) == (["0190-t5", "0190-t3", "0190-t1"], False)
    await store.commit("0190-t5", expected_version=1, data=b"full", events=[], open_seats=False)
    await store.commit("0190-t2", expected_version=1, data=b"free", events=[], open_seats=True)
    await store.commit("0190-t3", expected_version=1, data=b"same", events=[], open_seats=None)
    page, more = await store.list_tables(open_only=True, before_id=None, limit=2)
    assert ([(i, d) for i, _, d in page], more) == (
        [("0190-t3", b"same"), ("0190-t2", b"free")],
        True,
    )
    page, more = await store.list_tables(open_only=True, before_id="0190-t2", limit=2)
    assert ([i for i, _, _ in page], more) == (["0190-t1"], False)


async def test_an_unlisted_table_is_never_listed_and_otherwise_a_table(store: Store) -> None:
    await _create_five(store)
    created = await store.create("0190-t6", b"hidden", [], open_seats=True, listed=False)
    assert created.created
    # Its commits pass no open_seats (the service's rule): nothing lists it later either.
    await store.commit("0190-t6", expected_version=1, data=b"still hidden", events=[])
    for open_only in (False, True):
        page, _ = await store.list_tables(open_only=open_only, before_id=None, limit=10)
        assert "0190-t6" not in [table_id for table_id, _, _ in page]
    loaded = await store.load("0190-t6")
    assert (loaded.version, loaded.data) == (2, b"still hidden")
    assert await store.table_count() == 6  # counted all the same


async def test_listing_gives_each_tables_current_version(store: Store) -> None:
    await _create_five(store)
    await store.commit("0190-t4", expected_version=1, data=b"v2", events=[])
    page, _ = await store.list_tables(open_only=False, before_id=None, limit=5)
    assert {table_id: version for table_id, version, _ in page} == {
        "0190-t5": 1,
        "0190-t4": 2,
        "0190-t3": 1,
        "0190-t2": 1,
        "0190-t1": 1,
    }


async def test_listing_skips_deleted_and_expired_tables(backend: Backend) -> None:
    store = backend.make(idle_ttl_seconds=0.3)
    await _create_five(store)
    assert await store.delete("0190-t3", expected_version=1, events=[])
    for table_id in ["0190-t1", "0190-t5"]:
        await store.commit(table_id, expected_version=1, data=b"kept", events=[])
    await backend.advance(0.2)
    await store.commit("0190-t1", expected_version=2, data=b"kept", events=[])
    await store.commit("0190-t5", expected_version=2, data=b"kept", events=[])
    await backend.advance(0.2)  # t2 and t4 expired
    page, more = await store.list_tables(open_only=False, before_id=None, limit=1)
    assert ([(i, d) for i, _, d in page], more) == ([("0190-t5", b"kept")], True)
    page, more = await store.list_tables(open_only=False, before_id="0190-t5", limit=1)
    assert ([(i, d) for i, _, d in page], more) == ([("0190-t1", b"kept")], False)
    page, more = await store.list_tables(open_only=True, before_id=None, limit=5)
    assert ([i for i, _, _ in page], more) == (["0190-t5", "0190-t1"], False)


# --- Lobby slots ---


async def test_a_lobby_slot_names_the_first_table_offered_until_released(store: Store) -> None:
    assert await store.lobby_get("game") is None
    assert await store.lobby_offer("game", TABLE, ttl_ms=60_000) == TABLE
    # Another offer finds the slot taken and learns which table it names.
    assert await store.lobby_offer("game", OTHER, ttl_ms=60_000) == TABLE
    assert await store.lobby_get("game") == TABLE
    assert await store.lobby_get("other game") is None
    await store.lobby_release("game", OTHER)  # not the table named: nothing happens
    assert await store.lobby_get("game") == TABLE
    await store.lobby_release("game", TABLE)
    assert await store.lobby_get("game") is None
    assert await store.lobby_offer("game", OTHER, ttl_ms=60_000) == OTHER
    await store.lobby_put("game", TABLE, ttl_ms=60_000)  # put replaces whatever was there
    assert await store.lobby_get("game") == TABLE
    # An offer replaces the table the caller found full, and only that one.
    assert await store.lobby_offer("game", "third", ttl_ms=60_000, replacing=OTHER) == TABLE
    assert await store.lobby_offer("game", "third", ttl_ms=60_000, replacing=TABLE) == "third"
    assert await store.lobby_get("game") == "third"


async def test_exactly_one_of_concurrent_lobby_offers_is_taken(store: Store) -> None:
    offered = [f"table-{index}" for index in range(8)]
    named = await asyncio.gather(
        *(store.lobby_offer("game", table, ttl_ms=60_000) for table in offered)
    )
    assert len(set(named)) == 1
    assert named[0] in offered
    assert await store.lobby_get("game") == named[0]


async def test_a_lobby_slot_expires_unless_offered_again(backend: Backend) -> None:
    store = backend.make()
    await store.lobby_offer("game", TABLE, ttl_ms=400)
    await store.lobby_put("request", TABLE, ttl_ms=400)
    await backend.advance(0.25)
    assert await store.lobby_offer("game", TABLE, ttl_ms=400) == TABLE  # renewed
    await backend.advance(0.25)  # 0.5 s after the first offer, 0.25 s after the second
    assert await store.lobby_get("game") == TABLE
    assert await store.lobby_get("request") is None
    await backend.advance(0.25)
    assert await store.lobby_get("game") is None
    assert await store.lobby_offer("game", OTHER, ttl_ms=400) == OTHER


# --- Players' lists of tables ---


async def test_a_players_list_holds_the_tables_with_records_newest_seat_first(
    store: Store,
) -> None:
    for table_id in (TABLE, OTHER, "0190-table-c"):
        await store.create(table_id, f"data {table_id}".encode(), [], open_seats=True)
    assert await store.player_tables("user-1", ttl_ms=60_000) == []
    await store.player_seat_taken("user-1", OTHER, at_us=1_000, ttl_ms=60_000)
    await store.player_seat_taken("user-1", TABLE, at_us=2_000, ttl_ms=60_000)
    await store.player_seat_taken("user-2", "0190-table-c", at_us=3_000, ttl_ms=60_000)
    assert await store.player_tables("user-1", ttl_ms=60_000) == [
        (TABLE, 1, b"data 0190-table-a"),
        (OTHER, 1, b"data 0190-table-b"),
    ]
    # Taking a seat there again moves the table to the front; a table that is gone drops out.
    await store.player_seat_taken("user-1", OTHER, at_us=4_000, ttl_ms=60_000)
    assert [row[0] for row in await store.player_tables("user-1", ttl_ms=60_000)] == [OTHER, TABLE]
    assert await store.delete(TABLE, expected_version=1, events=[])
    assert [row[0] for row in await store.player_tables("user-1", ttl_ms=60_000)] == [OTHER]
    other_player = await store.player_tables("user-2", ttl_ms=60_000)
    assert [row[0] for row in other_player] == ["0190-table-c"]


async def test_a_players_list_keeps_the_most_recent_tables_and_expires(backend: Backend) -> None:
    store = backend.make()
    ids = [f"0190-table-{index:03d}" for index in range(PLAYER_TABLES_KEPT + 5)]
    for index, table_id in enumerate(ids):
        await store.create(table_id, b"data", [], open_seats=True)
        await store.player_seat_taken("user-1", table_id, at_us=index, ttl_ms=400)
    listed = [row[0] for row in await store.player_tables("user-1", ttl_ms=400)]
    assert listed == ids[::-1][:PLAYER_TABLES_KEPT]
    await backend.advance(0.25)
    # A read renews the list's time to live, as a seat taken does.
    assert len(await store.player_tables("user-1", ttl_ms=400)) == PLAYER_TABLES_KEPT
    await backend.advance(0.25)  # 0.5 s after the last seat, 0.25 s after the read
    assert len(await store.player_tables("user-1", ttl_ms=400)) == PLAYER_TABLES_KEPT
    await backend.advance(0.5)  # neither written nor read for longer than its time to live
    assert await store.player_tables("user-1", ttl_ms=400) == []


async def test_the_memory_store_sweeps_ended_counter_windows_now_and_then() -> None:
    # Counter windows (quotas, reactions) that ended are dropped, but live ones, an hour's
    # quotas, stay; a sweep that keeps them all must not run again on the very next call.
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    sweeps = 0
    windows = dict(store._windows)

    class Counting(dict[str, tuple[float, int]]):
        def items(self) -> Any:
            nonlocal sweeps
            sweeps += 1
            return super().items()

    store._windows = Counting(windows)
    for index in range(25_000):
        assert await store.count_use(f"caller {index}", window_ms=3_600_000) == 1
        if isinstance(store._windows, dict) and not isinstance(store._windows, Counting):
            store._windows = Counting(store._windows)
    assert sweeps <= 2, sweeps  # at 10,000 and 20,000 held, not at every call past them
    now[0] += 3_601
    await store.count_use("one more", window_ms=3_600_000)
    for index in range(40_000 - 25_000):
        await store.count_use(f"later {index}", window_ms=1000)
    assert len(store._windows) < 40_000  # the hour's windows were dropped on the way


async def test_the_memory_store_forgets_expired_tables_that_nobody_reads() -> None:
    # Reading an expired table forgets it; tables nobody reads again (every finished game) must
    # not stay for the life of the process: creates sweep them, and so does the metric's count.
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0], idle_ttl_seconds=10, finished_ttl_seconds=1)
    for index in range(3000):
        await store.create(f"t{index:05d}", b"v1", [], open_seats=False, finished=index % 2 == 0)
        now[0] += 0.01  # 30 s in all: every table but the newest 1000 or so has expired
    held = len(store._tables)
    live = sum(1 for t in store._tables.values() if t.expires_at > now[0])
    assert live <= held <= max(1024, 2 * live) + 1, (live, held)
    assert await store.table_count() == live
    now[0] += 11
    assert await store.table_count() == 0
    assert store._tables == {}


async def test_refused_commit_leaves_the_listing_alone(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    await store.commit(
        TABLE, expected_version=1, data=b"v2", events=[], caller="c", request_id="r", response=b""
    )
    stale = await store.commit(TABLE, expected_version=1, data=b"x", events=[], open_seats=False)
    assert stale.outcome is CommitOutcome.CONFLICT
    replayed = await store.commit(
        TABLE,
        expected_version=2,
        data=b"x",
        events=[],
        caller="c",
        request_id="r",
        response=b"",
        open_seats=False,
    )
    assert replayed.outcome is CommitOutcome.REPLAYED
    missing = await store.commit(OTHER, expected_version=1, data=b"x", events=[], open_seats=True)
    assert missing.outcome is CommitOutcome.CONFLICT
    page, _ = await store.list_tables(open_only=True, before_id=None, limit=5)
    assert [i for i, _, _ in page] == [TABLE]
    assert not await store.delete(TABLE, expected_version=1, events=[])
    page, _ = await store.list_tables(open_only=False, before_id=None, limit=5)
    assert [i for i, _, _ in page] == [TABLE]


# --- Live batches ---


async def test_subscriber_receives_committed_batches_in_order(store: Store) -> None:
    subscription = store.subscribe(TABLE)
    batches = live(subscription)
    # A watcher subscribes, then reads its starting point; everything after that reaches it.
    await store.load(TABLE)
    await store.create(TABLE, b"v1", evs(1, 2), open_seats=True)
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[ev(3, 1)])
    await store.commit(TABLE, expected_version=2, data=b"v3", events=[])  # no events: no batch
    await store.commit(TABLE, expected_version=3, data=b"v4", events=evs(4, 5))
    await store.delete(TABLE, expected_version=4, events=evs(6, 6))
    assert await next_batch(batches) == tuple(evs(1, 2))
    assert await next_batch(batches) == (ev(3, 1),)
    assert await next_batch(batches) == tuple(evs(4, 5))
    assert await next_batch(batches) == (ev(6),)
    await subscription.close()
    with pytest.raises(StopAsyncIteration):
        await next_batch(batches)


async def test_an_ephemeral_event_reaches_subscribers_unstored_within_its_rate(
    backend: Backend,
) -> None:
    store = backend.make()
    await store.create(TABLE, b"v1", evs(1, 2), open_seats=True)
    subscription = store.subscribe(TABLE)
    batches = live(subscription)
    await store.load(TABLE)  # a watcher's starting point: its subscription is live from here
    window_ms = 1000

    async def publish(payload: bytes, sender: str, version: int = 1) -> Published:
        return await store.publish_ephemeral(
            TABLE, payload, expected_version=version, sender=sender, limit=2, window_ms=window_ms
        )

    for sender in ("0", "0", "1"):
        assert await publish(b"hi " + sender.encode(), sender) is Published.SENT
    # The sender's third within the window is refused, and publishes nothing.
    assert await publish(b"too many", "0") is Published.LIMITED
    # So is one for a version the table is no longer at (nor counted), or a table that is gone.
    assert await publish(b"stale", "1", version=2) is Published.STALE
    await backend.advance(window_ms / 1000 + 0.1)
    assert await publish(b"next window", "0") is Published.SENT
    for payload in (b"hi 0", b"hi 0", b"hi 1", b"next window"):
        assert await next_batch(batches) == (StoredEvent(EPHEMERAL_SEQUENCE, None, payload),)
    # Nothing of them is stored: the table is as it was.
    assert (await store.load(TABLE)).version == 1
    page = await store.read_events(TABLE, after=0)
    assert [event.sequence for event in page.events] == [1, 2]
    assert await publish(b"one", "1") is Published.SENT  # the stale one was not counted
    assert await store.delete(TABLE, expected_version=1, events=[])
    assert await publish(b"gone", "1") is Published.STALE
    await subscription.close()


async def test_presence_counts_each_seats_leases_and_announces_its_changes(store: Store) -> None:
    subscription = store.subscribe(TABLE)
    batches = live(subscription)
    await store.read_events(TABLE, after=0)  # a watcher's starting point
    # Real times: Redis expires the set by its own clock once the last lease runs out.
    now = int(time.time() * 1000)
    announce = [b"on 0", b"on 1", b"on 2", b"on 3", b"off 0", b"off 1", b"off 2", b"off 3"]

    async def presence(at: int, **changes: Any) -> int:
        return await store.presence(
            TABLE, now_ms=at, until_ms=at + 30_000, announce=announce, **changes
        )

    assert await presence(now) == 0
    assert await presence(now, hold=[(2, "a")]) == 0b0100
    # A second stream of a seat announces nothing; the seat stays until its last one ends.
    assert await presence(now, hold=[(2, "b"), (0, "c")]) == 0b0101
    assert await presence(now, hold=[(2, "b")], drop=[(2, "a")]) == 0b0101  # a renewal
    assert await presence(now, drop=[(2, "b")]) == 0b0001
    # A lease that ran out unrenewed ends at the next update, from any process, announced.
    assert await presence(now + 30_000) == 0
    # Without announcements the same kind of change publishes nothing.
    assert await store.presence(TABLE, now_ms=now, until_ms=now + 30_000, hold=[(3, "d")]) == 8
    assert await presence(now, drop=[(3, "d"), (1, "never held")]) == 0
    # A seat whose player left loses every lease of theirs at once (the stream ids start with
    # the seat's epoch); the next player's there, and other seats', stay.
    assert await presence(now, hold=[(1, "4:e"), (1, "4:f"), (2, "5:h"), (3, "4:g")]) == 0b1110
    assert await presence(now, vacate=[(1, "4:"), (2, "4:")]) == 0b1100
    assert await presence(now, drop=[(2, "5:h"), (3, "4:g")]) == 0
    for payload in (
        *(b"on 2", b"on 0", b"off 2", b"off 0", b"off 3"),
        *(b"on 1", b"on 2", b"on 3", b"off 1", b"off 2", b"off 3"),
    ):
        assert await next_batch(batches) == (StoredEvent(EPHEMERAL_SEQUENCE, None, payload),)
    # Presence is no change of the table, nor an event of its log.
    assert (await store.load(TABLE)).version == 0
    assert (await store.read_events(TABLE, after=0)).events == ()
    await subscription.close()


async def test_subscriber_receives_nothing_from_other_tables(store: Store) -> None:
    subscription = store.subscribe(TABLE)
    batches = live(subscription)
    await store.read_events(TABLE, after=0)
    await store.create(OTHER, b"v1", evs(1, 1), open_seats=True)
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await store.commit(OTHER, expected_version=1, data=b"v2", events=evs(2, 2))
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[ev(7)])
    assert await next_batch(batches) == (ev(1),)
    assert await next_batch(batches) == (ev(7),)
    await subscription.close()


async def test_refused_writes_publish_nothing(store: Store) -> None:
    await store.create(TABLE, b"v1", [], open_seats=True)
    subscription = store.subscribe(TABLE)
    batches = live(subscription)
    await store.load(TABLE)
    assert not (await store.create(TABLE, b"again", evs(1, 1), open_seats=True)).created
    await store.commit(TABLE, expected_version=5, data=b"x", events=evs(1, 1))
    assert not await store.delete(TABLE, expected_version=5, events=evs(1, 1))
    await store.commit(TABLE, expected_version=1, data=b"v2", events=[ev(9)])
    assert await next_batch(batches) == (ev(9),)
    await subscription.close()


async def test_closing_the_store_ends_its_subscriptions(backend: Backend) -> None:
    store = backend.make()
    batches = live(store.subscribe(TABLE))
    await store.load(TABLE)
    await store.close()
    with pytest.raises(SubscriptionLaggedError):
        await next_batch(batches)


# --- Redis only ---

redis_only = pytest.mark.redis


@pytest.fixture
async def make_redis(clean_redis: str) -> AsyncIterator[Callable[..., RedisStore]]:
    stores: list[RedisStore] = []

    def make(url: str = clean_redis, **options: Any) -> RedisStore:
        store = RedisStore.from_url(url, **options)
        stores.append(store)
        return store

    yield make
    for store in stores:
        await store.close()


@redis_only
async def test_subscriber_on_another_replica_sees_commits(
    make_redis: Callable[..., RedisStore],
) -> None:
    replica_a, replica_b = make_redis(), make_redis()
    await replica_b.start()
    subscription = replica_b.subscribe(TABLE)
    batches = live(subscription)
    await replica_b.load(TABLE)  # subscribe, then read: what is written after reaches it
    await replica_a.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await replica_a.commit(TABLE, expected_version=1, data=b"v2", events=evs(2, 3))
    assert await next_batch(batches) == (ev(1),)
    assert await next_batch(batches) == tuple(evs(2, 3))
    await subscription.close()


async def _channels(admin: redis.asyncio.Redis, expected: set[str]) -> set[str]:
    """The notify channels someone subscribes to, once they are ``expected`` (or after 5 s)."""
    for _ in range(100):
        channels = {c.decode() for c in await admin.pubsub_channels("hearts:notify:*")}
        if channels == expected:
            break
        await asyncio.sleep(0.05)
    return channels


@redis_only
async def test_a_replica_subscribes_to_the_tables_it_watches_and_no_others(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    store = make_redis()
    await store.start()
    admin = redis.asyncio.Redis.from_url(clean_redis)
    assert await _channels(admin, set()) == set()
    first, second = store.subscribe(TABLE), store.subscribe(TABLE)
    other = store.subscribe(OTHER)
    await store.load(TABLE)  # waits for Redis to confirm TABLE's channel
    table, other_table = keys.notify_channel(TABLE), keys.notify_channel(OTHER)
    assert await _channels(admin, {table, other_table}) == {table, other_table}
    assert await admin.pubsub_numsub(table) == [(table.encode(), 1)]  # one connection
    await first.close()  # TABLE still has a watcher here
    await other.close()
    assert await _channels(admin, {table}) == {table}
    await second.close()
    assert await _channels(admin, set()) == set()
    await admin.aclose()


@redis_only
async def test_watching_a_table_again_while_leaving_it_misses_no_batch(
    make_redis: Callable[..., RedisStore],
) -> None:
    # The subscription is dropped and taken again, with the UNSUBSCRIBE and the SUBSCRIBE still
    # in flight, or one after the other; each time the new watcher reads its starting point and
    # then gets every batch another replica commits.
    watcher, writer = make_redis(), make_redis()
    await watcher.start()
    # A slow link between the watcher's listener and Redis: its SUBSCRIBEs and UNSUBSCRIBEs
    # arrive 30 ms late (in order), so a read that did not wait for the confirmation of the
    # last SUBSCRIBE would run, and the commit after it, while the table is not subscribed.
    outbox: asyncio.Queue[tuple[str, ...]] = asyncio.Queue()
    send = watcher._send_to_listener

    async def slow_link() -> None:
        while True:
            command = await outbox.get()
            await asyncio.sleep(0.03)
            send(*command)

    link = asyncio.create_task(slow_link())
    watcher._send_to_listener = lambda *command: outbox.put_nowait(command)  # type: ignore[method-assign]
    await writer.create(TABLE, b"v", [], open_seats=True)
    version = 1
    subscription = watcher.subscribe(TABLE)
    for round_ in range(12):
        await subscription.close()
        if round_ % 3 == 1:
            await asyncio.sleep(0.05)  # let the UNSUBSCRIBE go out first
        subscription = watcher.subscribe(TABLE)
        if round_ % 3 == 2:  # and a second leave and watch before the first replies
            await subscription.close()
            subscription = watcher.subscribe(TABLE)
        batches = live(subscription)
        assert (await watcher.load(TABLE)).version == version
        if round_ % 3 == 2:
            # Commit while a SUBSCRIBE confirmed early would already be undone by the second
            # UNSUBSCRIBE, before the second SUBSCRIBE arrives.
            await asyncio.sleep(0.04)
        result = await writer.commit(
            TABLE, expected_version=version, data=b"v", events=[ev(version)]
        )
        assert result.outcome is CommitOutcome.APPLIED
        assert await next_batch(batches) == (ev(version),), round_
        version += 1
    await subscription.close()
    link.cancel()


@redis_only
async def test_commands_survive_a_script_flush(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    store = make_redis()
    await store.create(TABLE, b"v1", [], open_seats=True)
    admin = redis.asyncio.Redis.from_url(clean_redis)
    for version in (1, 2):
        await admin.script_flush()
        result = await store.commit(TABLE, expected_version=version, data=b"v", events=[])
        assert result.outcome is CommitOutcome.APPLIED
    await admin.script_flush()
    assert (await store.load(TABLE)).version == 3
    await admin.script_flush()
    assert await store.delete(TABLE, expected_version=3, events=[])
    await admin.script_flush()
    assert (await store.create(OTHER, b"v1", [], open_seats=True)).created  # a deleted id: never
    await admin.aclose()


@redis_only
async def test_a_create_without_a_due_time_leaves_no_entry_of_its_ids_first_table(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    # A rematch's or quick game's name made again after its first table expired (expiry runs no
    # script, so that table's entry may still be there).
    store = make_redis()
    admin = redis.asyncio.Redis.from_url(clean_redis)
    await admin.zadd(keys.DUE, {TABLE: 0})
    await store.create(TABLE, b"v1", [], open_seats=True)
    assert await store.due_claim(now_ms=999_000, lease_ms=1_000, limit=10) == []
    await admin.aclose()


@redis_only
async def test_redis_restart_cuts_watchers_and_service_resumes(
    make_redis: Callable[..., RedisStore], redis_server: Any
) -> None:
    store = make_redis(redis_server.url)
    await store.start()
    batches = live(store.subscribe(TABLE))
    await store.load(TABLE)
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    assert await next_batch(batches) == (ev(1),)
    await asyncio.to_thread(redis_server.restart)  # data and scripts are gone
    with pytest.raises(SubscriptionLostError):  # a SubscriptionLaggedError: resume, told why
        await next_batch(batches)
    # Pooled connections were closed by the restart; commands reconnect and reload scripts.
    resumed = live(store.subscribe(TABLE))
    assert not (await store.load(TABLE)).exists
    assert (await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)).created
    assert await next_batch(resumed) == (ev(1),)


@redis_only
async def test_quiet_listener_stays_connected_and_a_killed_one_cuts_watchers(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    store = make_redis(socket_timeout=0.25)
    await store.start()
    await store.create(TABLE, b"v1", [], open_seats=True)
    batches = live(store.subscribe(TABLE))
    await asyncio.sleep(1.0)  # four quiet timeouts: the listener PINGs instead of giving up
    await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(1, 1))
    assert await next_batch(batches) == (ev(1),)
    admin = redis.asyncio.Redis.from_url(clean_redis)
    assert await admin.client_kill_filter(_type="pubsub") == 1
    await admin.aclose()
    with pytest.raises(SubscriptionLaggedError):
        await next_batch(batches)
    resumed = live(store.subscribe(TABLE))
    assert (await store.load(TABLE)).version == 2  # waits until the listener is back
    await store.commit(TABLE, expected_version=2, data=b"v3", events=evs(2, 2))
    assert await next_batch(resumed) == (ev(2),)


@redis_only
async def test_unreachable_redis_raises_store_unavailable(
    make_redis: Callable[..., RedisStore], redis_server: Any
) -> None:
    url = redis_server.url
    redis_server.stop()  # a port that just closed: connections are refused
    store = make_redis(url, socket_timeout=0.3)
    calls: list[Callable[[], Awaitable[object]]] = [
        store.ping,
        lambda: store.load(TABLE),
        lambda: store.create(TABLE, b"", [], open_seats=True),
        lambda: store.commit(TABLE, expected_version=1, data=b"", events=[]),
        lambda: store.delete(TABLE, expected_version=1, events=[]),
        lambda: store.read_events(TABLE, after=0),
        lambda: store.list_tables(open_only=False, before_id=None, limit=1),
        store.table_count,
        store.start,
    ]
    for call in calls:
        with pytest.raises(StoreUnavailableError):
            await call()


@redis_only
async def test_expired_table_leaves_no_keys_and_sweep_unlists_it(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    store = make_redis(idle_ttl_seconds=0.2)
    await store.create(TABLE, b"v1", evs(1, 1), open_seats=True)
    await store.commit(
        TABLE, expected_version=1, data=b"v2", events=evs(2, 2), caller="c", request_id="r"
    )
    await store.commit(
        TABLE, expected_version=2, data=b"v3", events=[], caller="c", request_id="s", response=b""
    )
    admin = redis.asyncio.Redis.from_url(clean_redis)
    assert len(await admin.keys("hearts:{*")) == 3
    await asyncio.sleep(0.3)
    assert await admin.keys("hearts:{*") == []
    assert await store.table_count() == 1
    assert await store.sweep_index() == 1
    assert await store.table_count() == 0
    assert await admin.zcard(keys.INDEX_OPEN) == 0
    await admin.aclose()


@redis_only
async def test_a_sweep_pass_goes_on_while_it_finds_gone_tables(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    # One slice of 200 a minute unlisted fewer tables than a busy fleet leaves behind: the
    # index, and the active-tables gauge, grew without end. A pass now goes on while at least
    # half of a slice is gone, and stops at the first slice mostly alive.
    store = make_redis(idle_ttl_seconds=0.2)
    for number in range(450):
        await store.create(f"0190-gone-{number:04}", b"v1", [], open_seats=True)
    await asyncio.sleep(0.3)  # all expired
    lasting = make_redis(idle_ttl_seconds=60)
    for number in range(30):
        await lasting.create(f"0191-live-{number:04}", b"v1", [], open_seats=True)
    assert await store.table_count() == 480
    assert await store.sweep_pass() == 450
    assert await store.table_count() == 30
    admin = redis.asyncio.Redis.from_url(clean_redis)
    assert await admin.zcard(keys.INDEX_OPEN) == 30
    await admin.aclose()


@redis_only
async def test_the_sweep_comes_round_to_tables_that_expired_behind_it(
    make_redis: Callable[..., RedisStore],
) -> None:
    # The walk passed 400 tables while they were alive; they expire later, while more than a
    # slice of new tables is made between passes. Before, a pass stopped at the first slice
    # mostly alive, the walk never came round again, and those ids stayed listed for good (an
    # operator saw the index, and the active-tables gauge, grow by 270 ids a minute).
    early = make_redis(idle_ttl_seconds=1.0)
    lasting = make_redis(idle_ttl_seconds=120)
    made = 0

    async def make(count: int) -> None:
        nonlocal made
        for _ in range(count):
            await lasting.create(f"0191-live-{made:05}", b"v1", [], open_seats=True)
            made += 1

    for number in range(400):
        await early.create(f"0190-early-{number:04}", b"v1", [], open_seats=True)
    await make(1_600)
    assert await early.sweep_pass() == 0  # all alive: the walk moves past the early ones
    await asyncio.sleep(1.1)  # they expire
    swept = 0
    for _ in range(6):  # six passes, each after 250 new tables
        await make(250)
        swept += await early.sweep_pass()
    assert swept == 400
    assert await early.table_count() == made


@redis_only
async def test_events_must_follow_the_log(make_redis: Callable[..., RedisStore]) -> None:
    store = make_redis()
    await store.create(TABLE, b"v1", evs(1, 2), open_seats=True)
    with pytest.raises(ValueError, match="follow"):
        await store.commit(TABLE, expected_version=1, data=b"v2", events=evs(2, 3))
    with pytest.raises(ValueError, match="increasing"):
        await store.commit(TABLE, expected_version=1, data=b"v2", events=[ev(4), ev(3)])
    loaded = await store.load(TABLE)
    assert (loaded.version, loaded.data) == (1, b"v1")
    assert (await store.read_events(TABLE, after=0)).events == tuple(evs(1, 2))


@pytest.fixture
def round_trips(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts writes to Redis sockets, on the store's lane and on redis-py's connections: each
    pipeline is one write, so one round trip."""
    counter = [0]
    original = redis.asyncio.connection.AbstractConnection.send_packed_command
    original_send = lane._Connection.send

    async def counting(self: Any, *args: Any, **kwargs: Any) -> None:
        counter[0] += 1
        await original(self, *args, **kwargs)

    def counting_send(self: Any, *args: Any, **kwargs: Any) -> Any:
        counter[0] += 1
        return original_send(self, *args, **kwargs)

    monkeypatch.setattr(
        redis.asyncio.connection.AbstractConnection, "send_packed_command", counting
    )
    monkeypatch.setattr(lane._Connection, "send", counting_send)
    return counter


@redis_only
async def test_hot_path_commands_take_one_round_trip(
    make_redis: Callable[..., RedisStore], round_trips: list[int]
) -> None:
    store = make_redis()
    await store.ping()  # connects the pool (the handshake is not part of any command)

    async def trips(call: Awaitable[object]) -> int:
        before = round_trips[0]
        await call
        return round_trips[0] - before

    assert await trips(store.create(TABLE, b"v1", evs(1, 1), open_seats=True)) == 1
    assert await trips(store.load(TABLE, caller="c", request_id="r")) == 1
    commit = store.commit(
        TABLE,
        expected_version=1,
        data=b"v2",
        events=evs(2, 3),
        caller="c",
        request_id="r",
        response=b"ok",
        open_seats=False,
    )
    assert await trips(commit) == 1
    assert await trips(store.read_events(TABLE, after=0)) == 1
    reaction = store.publish_ephemeral(
        TABLE, b"hi", expected_version=2, sender="0", limit=5, window_ms=10_000
    )
    assert await trips(reaction) == 1


@redis_only
async def test_a_commit_sends_a_records_second_part_only_when_it_changed(
    make_redis: Callable[..., RedisStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    store = make_redis()
    scripts: list[bytes] = []  # the scripts run, each as its arguments joined
    original = RedisStore._run

    replies: list[Any] = []  # and their replies

    async def recording(self: RedisStore, *commands: Any, **options: Any) -> list[Any]:
        scripts.extend(
            b" ".join(a if isinstance(a, bytes) else str(a).encode() for a in command)
            for command in commands
            if command[0] == "EVALSHA"
        )
        answers = await original(self, *commands, **options)
        replies.extend(answers)
        return answers

    monkeypatch.setattr(RedisStore, "_run", recording)
    rounds = b"[" + b"round-one-" * 100 + b"]"
    await store.create(TABLE, b"head-1\n" + rounds, evs(1, 1), open_seats=True)
    assert rounds in scripts[-1]
    for version in (2, 3):
        scripts.clear()
        data = b"head-%d\n%s" % (version, rounds)
        await store.commit(TABLE, expected_version=version - 1, data=data, events=[])
        [commit] = scripts
        assert b"head-%d" % version in commit
        assert rounds not in commit
    more = rounds + b"[round-two]"
    scripts.clear()
    await store.commit(TABLE, expected_version=3, data=b"head-4\n" + more, events=[])
    assert more in scripts[0]
    assert (await store.load(TABLE)).data == b"head-4\n" + more
    # Another process, which holds no record of the table, loads it before it commits: the
    # load tells it the second part, which its commit then leaves out too.
    other = make_redis()
    assert (await other.load(TABLE)).data == b"head-4\n" + more
    scripts.clear()
    await other.commit(TABLE, expected_version=4, data=b"head-5\n" + more, events=[])
    [commit] = scripts
    assert b"head-5" in commit
    assert more not in commit
    assert (await store.load(TABLE)).data == b"head-5\n" + more
    # A load that leaves the record out (the process holds it) leaves out its second part too,
    # and the next commit still knows it.
    replies.clear()
    assert (await other.load(TABLE, known_version=5)).data == b""
    assert more not in repr(replies).encode()  # not sent by Redis either
    scripts.clear()
    await other.commit(TABLE, expected_version=5, data=b"head-6\n" + more, events=[])
    [commit] = scripts
    assert b"head-6" in commit
    assert more not in commit
    assert (await store.load(TABLE)).data == b"head-6\n" + more


@redis_only
async def test_a_second_part_changed_behind_the_stores_back_is_written_whole(
    make_redis: Callable[..., RedisStore], clean_redis: str
) -> None:
    store = make_redis()
    await store.create(TABLE, b"head-1\n[a]", evs(1, 1), open_seats=True)
    client = redis.Redis.from_url(clean_redis)
    try:
        client.hset(keys.table(TABLE), "f", b"[changed by hand]")
    finally:
        client.close()
    result = await store.commit(TABLE, expected_version=1, data=b"head-2\n[a]", events=[])
    assert (result.outcome, result.version) == (CommitOutcome.APPLIED, 2)
    assert (await make_redis().load(TABLE)).data == b"head-2\n[a]"


@redis_only
async def test_the_second_parts_a_store_keeps_are_bounded_and_never_a_finished_games(
    make_redis: Callable[..., RedisStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(redis_store_module, "_SECONDS_BYTES", 3000)
    store = make_redis()
    tables = [f"0190-bound-{index}" for index in range(5)]
    for table_id in tables:
        await store.create(table_id, b"head\n" + b"x" * 1000, [], open_seats=True)
    assert list(store._seconds) == tables[2:]  # the most recently used that fit
    assert store._seconds_bytes == 3000
    # A finished game's second part is not kept; a deleted table's goes.
    await store.commit(tables[4], expected_version=1, data=b"end\n" + b"x" * 1000, events=[],
                       finished=True)  # fmt: skip
    assert await store.delete(tables[3], expected_version=1, events=[])
    assert list(store._seconds) == tables[2:3]
    assert store._seconds_bytes == 1000
    assert (await store.load(tables[4])).data == b"end\n" + b"x" * 1000


def test_batch_encoding_round_trips() -> None:
    batch = (StoredEvent(1, None, b""), StoredEvent(2**40, 3, bytes(range(256))))
    assert decode_batch(encode_batch(batch)) == batch
    with pytest.raises(ValueError, match="format"):
        decode_batch(b"\x02")
    with pytest.raises(ValueError, match="truncated"):
        decode_batch(encode_batch(batch)[:-1])


def test_all_keys_of_a_table_share_one_hash_tag() -> None:
    names = [keys.table("x1"), keys.events("x1"), keys.requests("x1"), keys.notify_channel("x1")]
    assert all("{x1}" in name for name in names)
    assert keys.table_id_of_channel(keys.notify_channel("x1").encode()) == "x1"
    with pytest.raises(ValueError, match="unusable"):
        keys.table("a}b")
