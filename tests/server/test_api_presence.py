"""Presence: which seated players have a WatchTable stream open, told to every stream."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc
import pytest
from redis.asyncio import Redis

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.server import HeartsServer
from hearts_server.store import keys
from hearts_server.store.base import StoreUnavailableError

from ..relay import Link
from .conftest import Hearts, Seated, ServerFactory, event_kind

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


def presence_of(message: api.WatchTableResponse) -> tuple[int, bool]:
    assert event_kind(message) == "presence_changed", message
    changed = message.event.presence_changed
    return changed.seat, changed.connected


class Stream:
    """A WatchTable call read in the background, so that waiting for a message that must not
    come (a timeout) leaves the stream open."""

    def __init__(self, call: Any) -> None:
        self.call = call
        self.messages: asyncio.Queue[api.WatchTableResponse] = asyncio.Queue()
        self._reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        async for message in self.call:
            await self.messages.put(message)

    async def next(self, seconds: float = 5.0) -> api.WatchTableResponse:
        return await asyncio.wait_for(self.messages.get(), seconds)

    async def opening(self, humans: int) -> list[tuple[int, bool]]:
        """The snapshot, then the presence of each of the ``humans`` seated players."""
        assert (await self.next()).HasField("snapshot")
        return [presence_of(await self.next()) for _ in range(humans)]

    async def next_presence(self, seconds: float = 5.0) -> tuple[int, bool]:
        while True:
            message = await self.next(seconds)
            if event_kind(message) == "presence_changed":
                return presence_of(message)

    async def nothing_within(self, seconds: float) -> None:
        try:
            message = await self.next(seconds)
        except TimeoutError:
            return
        raise AssertionError(f"unexpected: {message}")

    def close(self) -> None:
        self.call.cancel()
        self._reader.cancel()


async def test_a_stream_starts_with_each_seated_players_presence(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    player = Stream(hearts.watch(seated.name, seated.tokens[0]))
    try:
        # Its own stream counts; bots are never reported.
        assert await player.opening(humans=2) == [(0, True), (2, False)]
        # The announcement of its own lease is not told again.
        await player.nothing_within(0.3)
        spectator = Stream(hearts.watch(seated.name))
        assert await spectator.opening(humans=2) == [(0, True), (2, False)]
        spectator.close()
    finally:
        player.close()


async def test_every_presence_event_says_when(hearts: Hearts) -> None:
    """Those a stream opens with (read as it opens) and those announced later alike: a client
    that orders or shows events by time must not get 1970."""
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    before = time.time_ns() // 1_000_000
    spectator = Stream(hearts.watch(seated.name))
    assert (await spectator.next()).HasField("snapshot")
    opening = [await spectator.next() for _ in range(2)]
    player = Stream(hearts.watch(seated.name, seated.tokens[2]))
    await player.opening(humans=2)
    announced = await spectator.next()
    after = time.time_ns() // 1_000_000
    player.close()
    spectator.close()
    assert [presence_of(message) for message in [*opening, announced]] == [
        (0, False),
        (2, False),
        (2, True),
    ]
    for message in [*opening, announced]:
        assert message.event.HasField("event_time"), message
        assert before <= message.event.event_time.ToMilliseconds() <= after, message


async def test_a_players_first_stream_and_last_stream_are_announced(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    name = seated.name
    etag = await hearts.etag(name)
    spectator = Stream(hearts.watch(name))
    await spectator.opening(humans=2)
    snapshot_sequence = (await hearts.view(name)).sequence
    phone = Stream(hearts.watch(name, seated.tokens[2]))
    await phone.opening(humans=2)
    message = await spectator.next()
    assert presence_of(message) == (2, True)
    # Unstored: it takes the number of the event before it.
    assert message.sequence == snapshot_sequence
    # A second device of the same player changes nothing; the player is gone with the last.
    tablet = Stream(hearts.watch(name, seated.tokens[2]))
    await tablet.opening(humans=2)
    phone.close()
    await spectator.nothing_within(0.5)
    tablet.close()
    assert await spectator.next_presence() == (2, False)
    spectator.close()
    # Presence is not a change of the table.
    assert await hearts.etag(name) == etag


async def _watched_player(hearts: Hearts) -> tuple[Seated, Stream, Stream]:
    """Two seated players, a spectator's stream, and seat 1's first stream, announced."""
    seated = await hearts.seated((0, 1))
    spectator = Stream(hearts.watch(seated.name))
    await spectator.opening(humans=2)
    first = Stream(hearts.watch(seated.name, seated.tokens[1]))
    await first.opening(humans=2)
    assert await spectator.next_presence() == (1, True)
    return seated, spectator, first


async def test_a_reconnect_within_the_grace_that_stays_is_never_told_away(hearts: Hearts) -> None:
    seated, spectator, first = await _watched_player(hearts)
    first.close()
    await asyncio.sleep(0.3)
    again = Stream(hearts.watch(seated.name, seated.tokens[1]))  # this process: the same lease
    await again.opening(humans=2)
    await spectator.nothing_within(3.0)  # past the first stream's 2 s grace: still there
    again.close()
    assert await spectator.next_presence(seconds=4) == (1, False)
    spectator.close()


async def test_a_seats_last_close_gets_its_whole_grace(hearts: Hearts) -> None:
    seated, spectator, first = await _watched_player(hearts)
    loop = asyncio.get_running_loop()
    first.close()
    closed = loop.time()
    await asyncio.sleep(0.8)
    second = Stream(hearts.watch(seated.name, seated.tokens[1]))
    await second.opening(humans=2)
    await asyncio.sleep(max(0.0, 1.5 - (loop.time() - closed)))
    second.close()  # before the first close's grace ran out
    second_closed = loop.time()
    assert await spectator.next_presence(seconds=5) == (1, False)
    assert loop.time() - second_closed > 1.8, "announced before the last close's grace ended"
    spectator.close()


async def test_no_lease_bookkeeping_is_left_behind(server: HeartsServer, connect: Any) -> None:
    hearts = connect(server)
    for _ in range(3):
        seated = await hearts.seated((0, 1))
        streams = [Stream(hearts.watch(seated.name, seated.tokens[s])) for s in (0, 1, 1)]
        for stream in streams:
            await stream.opening(humans=2)
        for stream in streams:
            stream.close()
    await asyncio.sleep(2.6)  # the grace, and the drops
    assert server.app._leases == {}
    assert server.app._lease_ended == {}
    assert not server.app._lease_drops


async def test_a_stream_whose_first_presence_update_fails_holds_nothing(
    server: HeartsServer, connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hearts = connect(server)
    seated = await hearts.seated((0, 1))
    update = server.store.presence

    async def down(*args: Any, **kwargs: Any) -> int:
        monkeypatch.setattr(server.store, "presence", update)  # once
        raise StoreUnavailableError("down")

    monkeypatch.setattr(server.store, "presence", down)
    call = hearts.watch(seated.name, seated.tokens[0])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in call:
            pass
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert server.app._leases == {}
    spectator = Stream(hearts.watch(seated.name))
    assert await spectator.opening(humans=2) == [(0, False), (1, False)]
    await asyncio.sleep(2.3)
    assert server.app._lease_ended == {}
    spectator.close()


@pytest.mark.redis
async def test_presence_reaches_the_watchers_of_every_replica(
    make_server: ServerFactory, connect: Any
) -> None:
    one = connect(await make_server(store="redis"))
    two = connect(await make_server(store="redis"))
    seated = await one.seated((0, 1), bots={2: HEURISTIC, 3: HEURISTIC})
    spectator = Stream(two.watch(seated.name))
    await spectator.opening(humans=2)
    player = Stream(one.watch(seated.name, seated.tokens[1]))
    await player.opening(humans=2)
    assert await spectator.next_presence() == (1, True)
    player.close()
    assert await spectator.next_presence() == (1, False)
    spectator.close()


@pytest.mark.redis
async def test_a_seats_streams_hold_one_lease_a_replica(
    make_server: ServerFactory, connect: Any, redis_url: str
) -> None:
    """However many streams a token opens, the presence set every update reads whole holds one
    lease per seat and replica: it does not grow with the streams."""
    one = connect(await make_server(store="redis"))
    two = connect(await make_server(store="redis"))
    seated = await one.seated((0, 1), bots={2: HEURISTIC, 3: HEURISTIC})
    table_id = seated.name.removeprefix("tables/")
    spectator = Stream(two.watch(seated.name))
    await spectator.opening(humans=2)
    # Seat 0 has a stream on replica one too: its own lease there, apart from seat 1's.
    other = Stream(one.watch(seated.name, seated.tokens[0]))
    await other.opening(humans=2)
    assert await spectator.next_presence() == (0, True)
    streams = [Stream(one.watch(seated.name, seated.tokens[1])) for _ in range(12)]
    streams += [Stream(two.watch(seated.name, seated.tokens[1])) for _ in range(12)]
    for stream in streams:
        await stream.opening(humans=2)
    assert await spectator.next_presence() == (1, True)
    client = Redis.from_url(redis_url)
    try:
        members = await client.zrange(keys.presence(table_id), 0, -1)
        # Seat 1's lease on each replica, and seat 0's.
        assert sorted(member.split(b":")[0] for member in members) == [b"0", b"1", b"1"]
        # All but one stream of each replica closed: nothing changes, the seat stays present.
        for stream in streams[1:12] + streams[13:]:
            stream.close()
        await spectator.nothing_within(2.5)  # past the 2 s grace of the streams that closed
        assert len(await client.zrange(keys.presence(table_id), 0, -1)) == 3
        # The last stream of a replica takes that replica's lease with it, after the grace.
        streams[0].close()
        await spectator.nothing_within(2.5)
        assert len(await client.zrange(keys.presence(table_id), 0, -1)) == 2
        streams[12].close()
        assert await spectator.next_presence() == (1, False)
        [member] = await client.zrange(keys.presence(table_id), 0, -1)
        assert member.startswith(b"0:")  # seat 0's stays with its stream
    finally:
        await client.aclose()
        for stream in (*streams, other, spectator):
            stream.close()


def short_leases(server: HeartsServer, lease: float = 1.0, refresh: float = 0.2) -> None:
    server.app._presence_lease_ms = int(lease * 1000)
    server.app._presence_refresh_seconds = refresh


@pytest.mark.redis
async def test_the_lease_of_a_stream_whose_process_died_runs_out_and_is_announced(
    make_server: ServerFactory, connect: Any
) -> None:
    server = await make_server(store="redis")
    short_leases(server)
    hearts = connect(server)
    seated = await hearts.seated((0, 3), bots={1: HEURISTIC, 2: HEURISTIC})
    # Seat 3's stream was open on a process that died: its lease is all that is left of it.
    table_id = seated.name.removeprefix("tables/")
    now = server.app._now_ms()
    await server.store.presence(table_id, now_ms=now, until_ms=now + 1000, hold=[(3, "dead")])
    spectator = Stream(hearts.watch(seated.name))
    assert await spectator.opening(humans=2) == [(0, False), (3, True)]
    # Nobody renews it: a replica watching the table ends it and tells its watchers.
    assert await spectator.next_presence(seconds=3) == (3, False)
    spectator.close()


@pytest.mark.redis
async def test_a_draining_replica_leaves_its_players_leases_to_run_out(
    make_server: ServerFactory, connect: Any
) -> None:
    draining = await make_server(store="redis")
    staying = await make_server(store="redis")
    short_leases(staying)
    short_leases(draining, lease=2.0)
    seated = await connect(staying).seated((0,), bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC})
    spectator = Stream(connect(staying).watch(seated.name))
    await spectator.opening(humans=1)
    player = Stream(connect(draining).watch(seated.name, seated.tokens[0]))
    await player.opening(humans=1)
    assert await spectator.next_presence() == (0, True)
    # A rolling update: the player's stream ends with SHUTTING_DOWN and the app reconnects to
    # another replica within the lease, so nobody is told the player went away meanwhile.
    await draining.stop(0.5)
    await spectator.nothing_within(1.0)
    back = Stream(connect(staying).watch(seated.name, seated.tokens[0]))
    await back.opening(humans=1)
    await spectator.nothing_within(2.0)  # the old lease ran out, the new one holds the seat
    back.close()
    assert await spectator.next_presence() == (0, False)
    spectator.close()
    player.close()


async def test_presence_of_a_player_who_leaves_ends_with_the_seat(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 1, 2, 3), deck_seed=5)
    spectator = Stream(hearts.watch(seated.name))
    await spectator.opening(humans=4)
    player = Stream(hearts.watch(seated.name, seated.tokens[3]))
    await player.opening(humans=4)
    assert await spectator.next_presence() == (3, True)
    await hearts.leave(seated.name, seated.tokens[3])  # a bot plays on for them
    kinds = []
    while "presence_changed" not in kinds:
        message = await spectator.next()
        kinds.append(event_kind(message))
    assert "player_left" in kinds
    assert presence_of(message) == (3, False)
    # A stream opened now no longer reports the seat a bot plays.
    again = Stream(hearts.watch(seated.name))
    assert await again.opening(humans=3) == [(0, False), (1, False), (2, False)]
    again.close()
    spectator.close()
    player.close()


async def test_a_player_who_reconnects_within_the_grace_is_never_told_away(
    hearts: Hearts,
) -> None:
    # A flaky network, or a client that opens and closes streams in a loop: one announcement.
    seated = await hearts.seated((0, 1))
    spectator = Stream(hearts.watch(seated.name))
    await spectator.opening(humans=2)
    for _ in range(30):
        player = Stream(hearts.watch(seated.name, seated.tokens[1]))
        await player.opening(humans=2)
        player.close()
    assert await spectator.next_presence() == (1, True)
    await spectator.nothing_within(1.0)
    assert await spectator.next_presence() == (1, False)  # the grace after the last one
    await spectator.nothing_within(0.5)
    spectator.close()


async def test_a_player_who_sits_down_while_a_stream_opens_is_told_connected(
    server: HeartsServer, connect: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    hearts = connect(server)
    seated = await hearts.seated((0, 1))  # seats 2 and 3 are free: the table waits
    update = server.store.presence
    opening = asyncio.Event()

    async def late(*args: Any, **kwargs: Any) -> int:
        # The spectator's stream has read its record (seat 2 free); its presence update is
        # slow, and a player sits down at seat 2 and connects before it lands.
        monkeypatch.setattr(server.store, "presence", update)
        opening.set()
        await asyncio.sleep(0.5)
        return await update(*args, **kwargs)

    monkeypatch.setattr(server.store, "presence", late)
    spectator = Stream(hearts.watch(seated.name))
    await opening.wait()
    joined = await hearts.join(seated.name, 2, player="late")
    player = Stream(hearts.watch(seated.name, joined.seat_token))
    assert await spectator.opening(humans=2) == [(0, False), (1, False)]
    kinds = []
    while "presence_changed" not in kinds:
        message = await spectator.next()
        kinds.append(event_kind(message))
    assert kinds == ["player_joined", "presence_changed"]
    assert presence_of(message) == (2, True)
    player.close()
    spectator.close()


async def _player_on_a_replica_that_drains(
    make_server: ServerFactory, connect: Any
) -> tuple[HeartsServer, Hearts, Seated, Stream, Stream]:
    """Two replicas on one Redis and a table of two players: a spectator on the one that stays,
    seat 0's stream on the one that will drain, and the spectator told seat 0 connected."""
    draining = await make_server(store="redis")
    staying = connect(await make_server(store="redis"))
    seated = await staying.seated((0, 1))
    spectator = Stream(staying.watch(seated.name))
    await spectator.opening(humans=2)
    player = Stream(connect(draining).watch(seated.name, seated.tokens[0]))
    await player.opening(humans=2)
    assert await spectator.next_presence() == (0, True)
    return draining, staying, seated, spectator, player


@pytest.mark.redis
async def test_the_next_player_in_a_seat_is_not_shown_with_the_last_ones_lease(
    make_server: ServerFactory, connect: Any
) -> None:
    draining, staying, seated, spectator, old = await _player_on_a_replica_that_drains(
        make_server, connect
    )
    # A rolling update leaves seat 0's lease to run out; its player leaves meanwhile.
    await draining.stop(0.5)
    await staying.leave(seated.name, seated.tokens[0])
    assert await spectator.next_presence() == (0, False)
    newcomer = await staying.join(seated.name, 0, player="newcomer")
    late = Stream(staying.watch(seated.name))
    assert await late.opening(humans=2) == [(0, False), (1, False)]
    connected = Stream(staying.watch(seated.name, newcomer.seat_token))
    await connected.opening(humans=2)
    assert await spectator.next_presence() == (0, True)
    for stream in (spectator, old, late, connected):
        stream.close()


async def test_a_leave_retried_after_the_next_player_sat_down_leaves_their_presence(
    hearts: Hearts,
) -> None:
    seated = await hearts.seated((0, 1))  # seats 2 and 3 are free: no game yet
    name = seated.name
    spectator = Stream(hearts.watch(name))
    await spectator.opening(humans=2)
    await hearts.leave(name, seated.tokens[0], request_id="leave-1")
    newcomer = await hearts.join(name, 0, player="newcomer")
    phone = Stream(hearts.watch(name, newcomer.seat_token))
    await phone.opening(humans=2)
    assert await spectator.next_presence() == (0, True)
    # The first player's client retries its leave (the answer was lost): answered from memory,
    # it ends nothing of the newcomer's.
    await hearts.leave(name, seated.tokens[0], request_id="leave-1")
    await spectator.nothing_within(1.0)
    late = Stream(hearts.watch(name))
    assert await late.opening(humans=2) == [(0, True), (1, False)]
    for stream in (spectator, phone, late):
        stream.close()


@pytest.mark.redis
async def test_a_stream_closed_just_before_a_drain_is_announced_at_the_drain(
    make_server: ServerFactory, connect: Any
) -> None:
    draining, _, _, spectator, player = await _player_on_a_replica_that_drains(make_server, connect)
    player.close()  # the app closed it: away is due 2 s later
    await asyncio.sleep(0.5)
    await draining.stop(0.5)  # a rolling update meanwhile does not put it off for 30 s
    assert await spectator.next_presence(seconds=2) == (0, False)
    spectator.close()


async def test_a_player_whose_network_vanishes_is_told_away_after_the_keepalive(
    store_kind: str, make_server: ServerFactory, connect: Any
) -> None:
    server = await make_server(
        store=store_kind, keepalive_seconds=0.3, keepalive_timeout_seconds=0.5
    )
    hearts = connect(server)
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    spectator = Stream(hearts.watch(seated.name))
    await spectator.opening(humans=2)
    link = await Link(server.address).start()
    channel = grpc.aio.insecure_channel(link.address)
    player = Stream(Hearts(channel).watch(seated.name, seated.tokens[2]))
    try:
        await player.opening(humans=2)
        assert await spectator.next_presence() == (2, True)
        # A client that is there but silent answers the server's pings: many keepalives pass
        # on the idle table, and nobody is told anything.
        await spectator.nothing_within(2.0)
        # Its network vanishes: the ping that gets no answer closes the connection, and after
        # the grace for a reconnect the other watchers are told.
        link.cut()
        assert await spectator.next_presence(seconds=8) == (2, False)
    finally:
        player.close()
        spectator.close()
        await channel.close(grace=0)
        await link.close()
