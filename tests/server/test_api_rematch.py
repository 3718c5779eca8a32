"""RematchTable: the next game with the same players, at a new table linked to the finished one.

Each test plays a short game (target score 1: one round) through the real server on both stores,
then asks for the rematch as the players' clients would.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api

from .conftest import (
    Hearts,
    Seated,
    ServerFactory,
    event_kind,
    failure,
    read_until,
    rejected,
    stored,
)

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


async def finished(hearts: Hearts, **create: object) -> Seated:
    """A finished one-round game: humans at seats 0 and 3, heuristic bots at 1 and 2."""
    options = {"bots": {1: HEURISTIC, 2: HEURISTIC}, "target_score": 1, "dealer": 2, **create}
    seated = await hearts.seated((0, 3), **options)  # type: ignore[arg-type]
    table = await hearts.play_out(seated.name, seated.tokens)
    assert table.phase == pb.PHASE_GAME_OVER
    return seated


async def test_a_rematch_seats_the_players_at_a_new_table_with_the_same_settings(
    hearts: Hearts,
) -> None:
    old = await finished(hearts, turn_timeout_ms=30_000)
    watcher = hearts.watch(old.name)
    await read_until(watcher, lambda message: event_kind(message) == "snapshot")

    first = await hearts.rematch(old.name, old.tokens[0])

    new = first.view.table
    assert first.seat == 0
    assert first.view.viewer_seat == 0
    assert new.name != old.name
    assert new.rematch_of == old.name
    assert not new.rematch_table
    assert new.phase == pb.PHASE_WAITING_FOR_PLAYERS
    assert new.dealer == 3  # the old game's first dealer was 2: the deal moves on
    assert new.turn_timeout.ToMilliseconds() == 30_000
    assert new.rules.target_score == 1
    assert [seat.occupant for seat in new.seats] == [
        pb.SEAT_OCCUPANT_HUMAN,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_EMPTY,
    ]
    assert new.seats[0].player_display_name == "human 0"
    assert [seat.bot_level for seat in new.seats[1:3]] == [HEURISTIC, HEURISTIC]
    assert not new.HasField("deck_seed")
    # The finished table names its rematch, and its watchers hear of it.
    assert (await hearts.view(old.name)).table.rematch_table == new.name
    received = await read_until(watcher, lambda message: event_kind(message) == "rematch_created")
    created = received[-1].event.rematch_created
    assert (created.table, created.seat) == (new.name, 0)
    watcher.cancel()

    # The other player takes its seat; the table is full and the new game starts.
    second = await hearts.rematch(old.name, old.tokens[3])
    assert second.seat == 3
    assert second.view.table.name == new.name
    assert second.view.table.phase == pb.PHASE_PASSING
    assert second.view.table.seats[3].player_display_name == "human 3"
    # The new tokens play the new game; the old ones belong to the old table.
    tokens = {0: first.seat_token, 3: second.seat_token}
    table = await hearts.play_out(new.name, tokens)
    assert table.phase == pb.PHASE_GAME_OVER
    refusal = await failure(hearts.play(new.name, old.tokens[0], pb.Card()))
    assert refusal.reason == "WRONG_TABLE"
    # And the rematch of the rematch follows on.
    third = await hearts.rematch(new.name, tokens[3])
    assert third.view.table.rematch_of == new.name
    assert third.seat == 3
    assert third.view.table.dealer == 0


async def test_asking_again_renews_the_token_and_changes_nothing(hearts: Hearts) -> None:
    old = await finished(hearts)
    first = await hearts.rematch(old.name, old.tokens[0])
    again = await hearts.rematch(old.name, old.tokens[0])
    assert again.seat == 0
    assert again.etag == first.etag
    assert again.view.table.name == first.view.table.name
    # Either token is the seat's: both read the seat's view.
    for token in (first.seat_token, again.seat_token):
        assert (await hearts.view(first.view.table.name, token)).viewer_seat == 0
    # A retry with the same request id is answered as the first time, even once the table
    # moved on (a fresh call would answer its new etag).
    retried = await hearts.rematch(old.name, old.tokens[3], request_id="rematch-3")
    assert retried.view.table.phase == pb.PHASE_PASSING
    moved = await hearts.pass_cards(
        first.view.table.name, retried.seat_token, list(retried.view.legal_cards)[:3]
    )
    assert moved.etag != retried.etag
    repeated = await hearts.rematch(old.name, old.tokens[3], request_id="rematch-3")
    assert repeated == retried
    fresh = await hearts.rematch(old.name, old.tokens[3])
    assert fresh.etag == moved.etag


async def test_players_asking_at_once_meet_at_one_table(hearts: Hearts) -> None:
    old = await finished(hearts)
    results = await asyncio.gather(
        hearts.rematch(old.name, old.tokens[0]), hearts.rematch(old.name, old.tokens[3])
    )
    assert results[0].view.table.name == results[1].view.table.name
    assert {result.seat for result in results} == {0, 3}
    table = (await hearts.view(results[0].view.table.name)).table
    assert table.phase == pb.PHASE_PASSING


@pytest.mark.redis
async def test_replicas_agree_on_the_rematch(make_server: ServerFactory, connect) -> None:  # type: ignore[no-untyped-def]
    one = connect(await make_server(store="redis"))
    two = connect(await make_server(store="redis"))
    old = await finished(one)
    results = await asyncio.gather(
        one.rematch(old.name, old.tokens[0]), two.rematch(old.name, old.tokens[3])
    )
    assert results[0].view.table.name == results[1].view.table.name
    assert (await two.view(old.name)).table.rematch_table == results[0].view.table.name


async def test_a_rematch_is_refused_with_a_reason_and_changes_nothing(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 3), bots={1: HEURISTIC, 2: HEURISTIC}, target_score=1)
    before = await hearts.etag(seated.name)
    refusal = await failure(hearts.rematch(seated.name, seated.tokens[0]))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GAME_NOT_OVER")
    await hearts.play_out(seated.name, seated.tokens)
    over = await hearts.etag(seated.name)
    for token, reason in [
        (None, "TOKEN_MISSING"),
        (seated.creator_token, "NOT_A_PLAYER"),
        ("v1.forged", "TOKEN_INVALID"),
    ]:
        assert (await failure(hearts.rematch(seated.name, token))).reason == reason
    other = await finished(hearts)
    assert (await failure(hearts.rematch(seated.name, other.tokens[0]))).reason == "WRONG_TABLE"
    bad_name = await failure(hearts.rematch("tables/nope", seated.tokens[0]))
    assert bad_name.reason in ("INVALID_TABLE_NAME", "WRONG_TABLE")
    # A player who left the finished game gave up its seat there, and the rematch with it.
    await hearts.leave(seated.name, seated.tokens[3])
    left = await hearts.etag(seated.name)
    assert (await failure(hearts.rematch(seated.name, seated.tokens[3]))).reason == "TOKEN_REVOKED"
    assert await hearts.etag(seated.name) == left != over != before
    assert not (await hearts.view(seated.name)).table.rematch_table


async def test_a_seat_someone_else_took_is_seat_taken(hearts: Hearts) -> None:
    old = await finished(hearts)
    first = await hearts.rematch(old.name, old.tokens[0])
    new = first.view.table.name
    # The rematch of a listed table is listed: anyone may join it, and took seat 3 first.
    listing = await hearts.stub.ListTables(api.ListTablesRequest(has_free_seat=True))
    assert new in [table.name for table in listing.tables]
    await hearts.join(new, 3, player="stranger")
    refusal = await failure(hearts.rematch(old.name, old.tokens[3]))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.ALREADY_EXISTS, "SEAT_TAKEN")


async def test_an_unlisted_tables_rematch_is_unlisted(hearts: Hearts) -> None:
    old = await finished(hearts, unlisted=True)
    first = await hearts.rematch(old.name, old.tokens[0])
    assert first.view.table.unlisted
    listing = await hearts.stub.ListTables(api.ListTablesRequest())
    assert first.view.table.name not in [table.name for table in listing.tables]


async def test_a_player_who_left_the_rematch_before_it_began_may_come_back(
    hearts: Hearts,
) -> None:
    old = await finished(hearts)
    first = await hearts.rematch(old.name, old.tokens[0])
    new = first.view.table.name
    left = await hearts.leave(new, first.seat_token)
    assert left.view.table.seats[0].occupant == pb.SEAT_OCCUPANT_EMPTY
    back = await hearts.rematch(old.name, old.tokens[0])
    assert back.seat == 0
    assert back.view.table.seats[0].occupant == pb.SEAT_OCCUPANT_HUMAN
    refusal = await failure(hearts.view(new, first.seat_token))
    assert refusal.reason == "TOKEN_REVOKED"


async def test_a_claimed_rematch_whose_table_was_never_made_is_made_by_the_next_call(
    make_server: ServerFactory,
    connect,
    store_kind: str,  # type: ignore[no-untyped-def]
) -> None:
    server = await make_server(store=store_kind)
    hearts = connect(server)
    old = await finished(hearts)
    # The first caller's replica dies after naming the rematch and before creating its table.
    app = server.app
    claims = app.caller(old.tokens[0], old.name.removeprefix("tables/"))
    new_id = (await app._claim_rematch(old.name.removeprefix("tables/"), claims)).rematch_id
    app.records.drop(new_id)
    assert (await hearts.view(old.name)).table.rematch_table == f"tables/{new_id}"
    refusal = await failure(hearts.view(f"tables/{new_id}"))
    assert refusal.reason == "TABLE_NOT_FOUND"
    joined = await hearts.rematch(old.name, old.tokens[3])
    assert joined.view.table.name == f"tables/{new_id}"
    assert joined.seat == 3


async def test_another_player_reusing_a_request_id_gets_no_seat_of_anothers(
    hearts: Hearts,
) -> None:
    old = await finished(hearts)
    first = await hearts.rematch(old.name, old.tokens[0], request_id="rematch")
    refusal = await failure(hearts.rematch(old.name, old.tokens[3], request_id="rematch"))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "REQUEST_ID_REUSED",
    )
    view = await hearts.view(first.view.table.name)
    assert view.table.seats[3].occupant == pb.SEAT_OCCUPANT_EMPTY


@pytest.mark.redis
async def test_a_player_who_left_on_another_replica_gets_no_rematch(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    one = connect(await make_server(store="redis"))
    two = connect(await make_server(store="redis"))
    old = await finished(one)
    await one.rematch(old.name, old.tokens[0])  # replica one holds the record naming it
    await two.leave(old.name, old.tokens[3])
    refusal = await failure(one.rematch(old.name, old.tokens[3]))
    assert refusal.reason == "TOKEN_REVOKED"


async def test_the_rematch_goes_with_the_finished_table(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    server = await make_server(store=store_kind, finished_table_ttl_seconds=1)
    hearts = connect(server)
    old = await finished(hearts)
    await hearts.rematch(old.name, old.tokens[0])
    await asyncio.sleep(1.3)  # the finished table expires; the process still holds its record
    assert (await failure(hearts.rematch(old.name, old.tokens[3]))).reason == "TABLE_NOT_FOUND"
    assert (await failure(hearts.view(old.name))).reason == "TABLE_NOT_FOUND"


async def _finished_on_short_idle_expiry(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> tuple[Hearts, Seated]:
    """A finished game on a server whose idle tables expire after 1 s (finished ones after 10
    minutes): its rematch table expires while the game stays."""
    server = await make_server(
        store=store_kind, table_ttl_seconds=1, finished_table_ttl_seconds=600
    )
    hearts = connect(server)
    return hearts, await finished(hearts)


async def test_a_rematch_table_that_expired_is_made_again_with_its_seats_free(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    hearts, old = await _finished_on_short_idle_expiry(make_server, connect, store_kind)
    first = await hearts.rematch(old.name, old.tokens[0])
    await asyncio.sleep(1.3)  # idle: the new table expires, the finished one stays
    again = await hearts.rematch(old.name, old.tokens[3])
    assert again.view.table.name == first.view.table.name
    assert [seat.occupant for seat in again.view.table.seats] == [
        pb.SEAT_OCCUPANT_EMPTY,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_HUMAN,
    ]
    back = await hearts.rematch(old.name, old.tokens[0])
    assert back.seat == 0
    # The seat tokens of the table's first life do not work at the new one.
    refusal = await failure(hearts.view(first.view.table.name, first.seat_token))
    assert refusal.reason == "TOKEN_REVOKED"


async def test_streams_of_an_expired_rematch_table_end_before_the_next_one_under_its_name(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    # The table made again numbered its events from 1 like the first one, so a stream kept open
    # on the first took the second's events above its last number as its own: a seat's stream
    # showed the cards dealt to the seat's next occupant. Now the second numbers above the first:
    # the old streams meet a gap they cannot fill, and end; a resume gets a snapshot first.
    hearts, old = await _finished_on_short_idle_expiry(make_server, connect, store_kind)
    first = await hearts.rematch(old.name, old.tokens[3])
    name = first.view.table.name
    streams = {"seat": hearts.watch(name, first.seat_token), "spectator": hearts.watch(name)}
    received: dict[str, list[api.WatchTableResponse]] = {kind: [] for kind in streams}
    ended: dict[str, str] = {}

    async def read(kind: str) -> None:
        try:
            async for message in streams[kind]:
                received[kind].append(message)
        except grpc.aio.AioRpcError as error:
            ended[kind] = rejected(error).reason

    readers = [asyncio.create_task(read(kind)) for kind in streams]
    await asyncio.sleep(1.3)  # idle: the rematch table expires, the finished one stays
    again = await hearts.rematch(old.name, old.tokens[0])
    assert again.view.table.name == name
    newcomer = await hearts.join(name, 3, player="newcomer")  # the game starts: cards dealt
    await asyncio.wait_for(asyncio.gather(*readers), 5)
    assert ended == {"seat": "STREAM_LAGGED", "spectator": "STREAM_LAGGED"}
    for messages in received.values():
        assert [event_kind(m) for m in stored(messages)] == ["snapshot"]  # nothing of the new table
    resumed = hearts.watch(name, newcomer.seat_token, after_sequence=received["seat"][0].sequence)
    [snapshot] = await read_until(resumed, lambda message: True)
    resumed.cancel()
    assert event_kind(snapshot) == "snapshot"
    assert snapshot.snapshot.table.create_time == again.view.table.create_time
    assert snapshot.sequence > received["seat"][0].sequence
