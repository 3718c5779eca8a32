"""One clock for all replicas: the store's (``hearts_server.clock``).

Unit tests of :class:`StoreClock` with clocks the tests move, then replicas on one real Redis
whose hosts' clocks are off: the turn deadlines they stamp are the store's time all the same.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time

import pytest
import redis.asyncio

from hearts.v1 import table_pb2 as pb
from hearts_server.clock import StoreClock

from .conftest import owing

TURN_MS = 10_000


class _Clocks:
    """A host's wall and monotonic clocks, and a store's time, all moved by the test."""

    def __init__(self) -> None:
        self.wall = 1_000.0
        self.mono = 50.0
        self.store = 2_000.0
        self.trips = [0.0]  # the round trip of each reading, in turn (the last one repeats)
        self.reads = 0

    async def read(self) -> float:
        trip = self.trips[min(self.reads, len(self.trips) - 1)]
        self.reads += 1
        self.mono += trip / 2
        now = self.store + trip / 2
        self.mono += trip / 2
        self.store += trip
        return now


def _clock(clocks: _Clocks, **options: float) -> StoreClock:
    return StoreClock(
        clocks.read, wall=lambda: clocks.wall, monotonic=lambda: clocks.mono, **options
    )


async def test_the_hosts_clock_stands_in_until_the_store_is_read() -> None:
    clocks = _Clocks()
    clock = _clock(clocks)
    assert clock() == 1_000.0
    assert not clock.synced
    assert clock.offset == 0.0
    await clock.sync()
    assert clock.synced
    assert clock() == pytest.approx(2_000.0)  # the store's time, not the host's
    clocks.mono += 7.5
    clocks.wall -= 3_600  # the host's wall clock steps back: nothing follows it
    assert clock() == pytest.approx(2_007.5)


async def test_the_reading_with_the_shortest_round_trip_counts() -> None:
    clocks = _Clocks()
    clocks.trips = [0.200, 0.002, 0.100]
    clock = _clock(clocks)
    await clock.sync()
    assert clocks.reads == 3
    # After the three readings the store is at 2000.302 and the best reading (the second,
    # taken at 2000.201 in the middle of its 2 ms trip) is 0.1 s old: exact.
    assert clock() == pytest.approx(clocks.store, abs=1e-9)


async def test_the_clock_counts_on_from_its_last_reading_while_the_store_is_away() -> None:
    clocks = _Clocks()
    clock = _clock(clocks, interval=0.01)
    await clock.sync()

    async def away() -> float:
        raise ConnectionError("the store is away")

    clock._source = away
    clock.start()
    await asyncio.sleep(0.05)  # several failed readings
    clocks.mono += 1.0
    assert clock() == pytest.approx(2_001.0)
    await clock.close()


async def test_a_host_clock_far_off_the_stores_is_logged_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    clocks = _Clocks()
    clock = _clock(clocks)
    with caplog.at_level(logging.WARNING, logger="hearts_server.clock"):
        await clock.sync()
        await clock.sync()
    assert [r.getMessage() for r in caplog.records] == [
        "this host's clock is 1000.0 s behind the table store's; the server keeps the "
        "store's time (deadlines and event times), but the host's clock needs fixing"
    ]
    assert clock.offset == pytest.approx(1_000.0)


async def test_without_a_store_clock_the_hosts_is_the_clock() -> None:
    clock = StoreClock(None, wall=lambda: 123.0)
    await clock.sync()
    clock.start()
    assert clock() == 123.0
    assert not clock.synced
    await clock.close()


# --------------------------------------------------------------------------- replicas


@pytest.mark.redis
@pytest.mark.parametrize("skew", [-120.0, 600.0], ids=["behind", "ahead"])
async def test_a_replica_whose_host_clock_is_off_gives_the_next_player_their_full_time(
    make_server, connect, skew: float
) -> None:
    # A move made through the replica whose host clock is off starts the next player's turn:
    # its deadline is a full turn from the store's now. Before, a replica 120 s behind
    # stamped the start of the turn before (the next player lost the time the mover took),
    # and one 600 s ahead stamped the future (every replica waited that out).
    right = connect(await make_server(store="redis"))
    off = connect(await make_server(store="redis", host_clock=lambda: time.time() + skew))
    seated = await right.seated(
        (0, 1),
        bots={2: pb.BOT_LEVEL_HEURISTIC, 3: pb.BOT_LEVEL_HEURISTIC},
        turn_timeout_ms=TURN_MS,
        pass_cards=False,
    )
    rng = random.Random(7)
    checked = 0
    for _ in range(4):  # a human's move through the off replica, then the next human's turn
        table = (await right.view(seated.name)).table
        (seat,) = owing(table)
        await asyncio.sleep(1.5)  # the mover thinks: the next turn must not pay for it
        await off.move(
            seated.name, seated.tokens[seat], await off.view(seated.name, seated.tokens[seat]), rng
        )
        table = (await right.view(seated.name)).table
        assert owing(table)
        assert owing(table)[0] in (0, 1)
        left = table.turn_deadline.ToMilliseconds() / 1000 - time.time()
        assert TURN_MS / 1000 - 0.5 <= left <= TURN_MS / 1000 + 0.1, (seat, left)
        assert abs(table.update_time.ToMilliseconds() / 1000 - time.time()) < 0.5
        checked += 1
    assert checked == 4


@pytest.mark.redis
async def test_a_redis_user_that_may_not_read_the_time_keeps_the_hosts_clock(
    make_server, connect, redis_server, caplog: pytest.LogCaptureFixture
) -> None:
    # Redis ACLs may leave TIME out of a user's commands: the server serves on the host's
    # clock and says why (it crashed at start-up with NoPermissionError).
    admin = redis.asyncio.Redis.from_url(redis_server.url)
    await admin.execute_command(
        "ACL", "SETUSER", "hearts", "on", ">pw-0123456789", "~*", "&*", "+@all", "-time"
    )
    await admin.aclose()
    url = redis_server.url.replace("redis://", "redis://hearts:pw-0123456789@")
    with caplog.at_level(logging.WARNING, logger="hearts_server.server"):
        server = await make_server(store="redis", redis_url=url)
    assert not server.clock.synced
    assert any("cannot read the table store's time" in r.getMessage() for r in caplog.records)
    created = await connect(server).create()
    assert created.view.table.phase == pb.PHASE_WAITING_FOR_PLAYERS
