"""``HeartsClient.rematch_table`` against a real server: the next game with the same players.

Each test plays a short game (target score 1: one round) to its end, then asks for the rematch
as a player's program would, and plays on at the new table with the token it returned.
"""

from __future__ import annotations

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import AuthError, HeartsClient, IllegalMoveError, SeatTakenError
from hearts_server.server import HeartsServer

from .client_helpers import make_move, play_seats, play_to_the_end, table_with_bots


async def test_rematch_table_seats_the_player_at_a_new_table_its_token_plays(
    client: HeartsClient, server: HeartsServer
) -> None:
    joined = await table_with_bots(client, seed=5, target=1)
    old = joined.name
    with pytest.raises(IllegalMoveError) as early:
        await client.rematch_table(old)
    assert early.value.code == grpc.StatusCode.FAILED_PRECONDITION
    assert early.value.reason == "GAME_NOT_OVER"
    assert not (await client.get_table(old)).table.rematch_table

    final = await play_to_the_end(client, old, joined.view)
    assert final.table.round_number == 1
    rematch = await client.rematch_table(old.removeprefix("tables/"))

    new = rematch.name
    assert new.startswith("tables/")
    assert new != old
    assert rematch.seat == 0
    assert rematch.view.viewer_seat == 0
    assert rematch.view.table.rematch_of == old
    assert rematch.view.table.display_name == "client test"
    assert rematch.view.table.rules.target_score == 1
    # Three bots and the player: the new game is on at once, and deals the player a hand.
    assert rematch.view.table.phase == pb.PHASE_PASSING
    assert len(rematch.view.hand) == 13
    assert (await client.get_table(old)).table.rematch_table == new
    # The new token is kept for the new table; the finished table's stays as it was.
    assert client.seat_token(new) == rematch.seat_token
    assert client.seat_token(old) == joined.seat_token

    # The returned token alone plays at the new table (another process resuming the seat).
    async with HeartsClient(server.address) as resumed:
        resumed.set_seat_token(new, rematch.seat_token)
        mine = await resumed.get_table(new)
        assert mine.viewer_seat == 0
        after = await make_move(resumed, new, mine)
    assert after.cards_to_pass == 0
    last = await play_to_the_end(client, new, await client.get_table(new))
    assert last.table.phase == pb.PHASE_GAME_OVER
    assert last.table.seats[0].player_display_name == "Tester"


async def test_asking_again_renews_the_token_for_the_same_seat(client: HeartsClient) -> None:
    joined = await table_with_bots(client, target=1)
    await play_to_the_end(client, joined.name, joined.view)
    first = await client.rematch_table(joined.name, request_id="rematch-once")
    # The game moves on; a retry of the first call is answered as it was (a replay) ...
    moved = await client.pass_cards(first.name, list(first.view.legal_cards)[:3])
    repeated = await client.rematch_table(joined.name, request_id="rematch-once")
    assert repeated == first
    # ... and asking again, another call, renews the token for the same seat, now.
    again = await client.rematch_table(joined.name)
    assert (again.name, again.seat) == (first.name, 0)
    assert again.view.table.etag == moved.table.etag != first.view.table.etag
    assert client.seat_token(first.name) == again.seat_token
    assert (await client.get_table(first.name)).viewer_seat == 0


async def test_refused_rematches_raise_the_clients_errors_with_the_reasons(
    client: HeartsClient, server: HeartsServer
) -> None:
    # Ada (seat 0) and Bob (seat 3) with two bots: the rematch waits for both of them.
    created = await client.create_table(
        "friends", bots={1: "heuristic", 2: "heuristic"}, rules={"target_score": 1}
    )
    name = created.name
    await client.join_table(name, "Ada", seat=0)
    async with (
        HeartsClient(server.address) as bob,
        HeartsClient(server.address) as stranger,
        HeartsClient(server.address, token=created.creator_token) as creator,
    ):
        await bob.join_table(name, "Bob", seat=3)
        await play_seats(name, client, bob)

        with pytest.raises(AuthError) as missing:
            await stranger.rematch_table(name)
        assert missing.value.reason == "TOKEN_MISSING"
        with pytest.raises(AuthError) as creators:
            await creator.rematch_table(name)
        assert creators.value.reason == "NOT_A_PLAYER"

        ada = await client.rematch_table(name)
        assert ada.view.table.phase == pb.PHASE_WAITING_FOR_PLAYERS
        assert ada.view.table.seats[3].occupant == pb.SEAT_OCCUPANT_EMPTY
        # The rematch of a listed table is listed: a stranger may take Bob's seat first.
        await stranger.join_table(ada.name, "Stranger", seat=3)
        with pytest.raises(SeatTakenError) as taken:
            await bob.rematch_table(name)
        assert taken.value.code == grpc.StatusCode.ALREADY_EXISTS
        assert taken.value.reason == "SEAT_TAKEN"
        assert bob.seat_token(ada.name) is None

        # A player who left the finished table gave up the rematch with the seat.
        token = bob.seat_token(name)
        await bob.leave_table(name)
        bob.set_seat_token(name, token)
        with pytest.raises(AuthError) as revoked:
            await bob.rematch_table(name)
        assert revoked.value.reason == "TOKEN_REVOKED"
        # A token of another table is refused too.
        bob.set_seat_token(name, ada.seat_token)
        with pytest.raises(AuthError) as wrong:
            await bob.rematch_table(name)
        assert wrong.value.reason == "WRONG_TABLE"
