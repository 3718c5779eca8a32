"""Who may do what: seat and creator tokens, forged, expired and revoked ones, and spectators."""

from __future__ import annotations

import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.tokens import CREATOR, TokenCodec

from .conftest import SECRET, bearer, card, event_kind, failure, owing, read_until

UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED
PRIVATE_EVENTS = ("hand_dealt", "cards_passed", "cards_received")

pytestmark = pytest.mark.timeout(60)


def table_id(name: str) -> str:
    return name.removeprefix("tables/")


async def turn_token(hearts, seated) -> tuple[int, str, pb.TableView]:
    """The seat whose turn it is, its token and its view (a game without passing)."""
    seat = owing((await hearts.view(seated.name)).table)[0]
    token = seated.tokens[seat]
    return seat, token, await hearts.view(seated.name, token)


async def test_a_move_without_a_token_is_token_missing(hearts) -> None:
    seated = await hearts.seated(pass_cards=False, deck_seed=4)
    _, _, view = await turn_token(hearts, seated)
    refusal = await failure(hearts.play(seated.name, None, view.legal_cards[0]))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_MISSING")
    refusal = await failure(hearts.leave(seated.name, None))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_MISSING")
    refusal = await failure(hearts.delete(seated.name, None))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_MISSING")


async def test_a_forged_token_is_token_invalid(hearts) -> None:
    seated = await hearts.seated(pass_cards=False, deck_seed=4)
    _, token, view = await turn_token(hearts, seated)
    flipped = token[:-1] + ("A" if token[-1] != "A" else "B")
    tampered_claims = token.replace(".", ".x", 1)
    other_secret = TokenCodec(b"another-secret-0123456789").issue(
        table_id(seated.name), view.viewer_seat, 0
    )
    # Signed with the server's own secret, but for a seat no table has.
    no_such_seat = TokenCodec(SECRET.encode()).issue(table_id(seated.name), 7, 0)
    for forged in (flipped, tampered_claims, other_secret, no_such_seat, "v1.x.y", "garbage"):
        for call in (
            hearts.play(seated.name, forged, view.legal_cards[0]),
            hearts.view(seated.name, forged),
            hearts.watch(seated.name, forged).read(),
        ):
            refusal = await failure(call)
            assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_INVALID"), forged


async def _expired_turn_token(hearts) -> tuple[Any, int, pb.TableView, str]:
    """A seated game, the seat to play, its view, and a month-old token of that seat."""
    seated = await hearts.seated(pass_cards=False, deck_seed=4)
    seat, _, view = await turn_token(hearts, seated)
    a_month_ago = time.time() - 30 * 24 * 3600
    expired = TokenCodec(SECRET.encode(), clock=lambda: a_month_ago).issue(
        table_id(seated.name), seat, 0
    )
    return seated, seat, view, expired


async def test_an_expired_token_is_token_expired(hearts) -> None:
    seated, _, view, expired = await _expired_turn_token(hearts)
    refusal = await failure(hearts.play(seated.name, expired, view.legal_cards[0]))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_EXPIRED")
    refusal = await failure(hearts.view(seated.name, expired))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_EXPIRED")
    assert "JoinTable" in refusal.message  # a seat token is renewed so
    a_month_ago = time.time() - 30 * 24 * 3600
    creator = TokenCodec(SECRET.encode(), clock=lambda: a_month_ago).issue(
        table_id(seated.name), CREATOR, 0
    )
    refusal = await failure(hearts.delete(seated.name, creator))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_EXPIRED")
    assert "JoinTable" not in refusal.message  # a creator token is not


async def test_join_table_with_an_expired_seat_token_renews_it(hearts) -> None:
    # The token expires while the seat stays taken: JoinTable with the token as authorization
    # gives a new one for the same seat, and writes nothing.
    seated, seat, view, expired = await _expired_turn_token(hearts)
    etag = await hearts.etag(seated.name)
    request = api.JoinTableRequest(name=seated.name)  # no display name, no seat needed
    renewed = await hearts.stub.JoinTable(request, metadata=bearer(expired))
    assert (renewed.seat, renewed.etag, renewed.view.viewer_seat) == (seat, etag, seat)
    assert list(renewed.view.hand) == list(view.hand)
    # With an etag, only while the table has it, as for every JoinTable (was taken with any).
    for stale in (str(int(etag) - 1), "not-an-etag"):
        request = api.JoinTableRequest(name=seated.name, etag=stale)
        refusal = await failure(hearts.stub.JoinTable(request, metadata=bearer(expired)))
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.ABORTED, "ETAG_MISMATCH")
    request = api.JoinTableRequest(name=seated.name, etag=etag)
    assert (await hearts.stub.JoinTable(request, metadata=bearer(expired))).seat == seat
    request = api.JoinTableRequest(name=seated.name, request_id="r" * 129)  # the limit is 128
    refusal = await failure(hearts.stub.JoinTable(request, metadata=bearer(expired)))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    await hearts.play(seated.name, renewed.seat_token, view.legal_cards[0])
    # Asking to renew another seat with it is refused; so is a token whose seat was left.
    request = api.JoinTableRequest(name=seated.name, seat=(seat + 1) % 4)
    refusal = await failure(hearts.stub.JoinTable(request, metadata=bearer(expired)))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    await hearts.leave(seated.name, renewed.seat_token)
    refusal = await failure(
        hearts.stub.JoinTable(api.JoinTableRequest(name=seated.name), metadata=bearer(expired))
    )
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_REVOKED")


async def test_join_table_with_another_tables_token_is_an_ordinary_join(hearts) -> None:
    first = await hearts.seated([0])
    second = await hearts.create()
    request = api.JoinTableRequest(name=second.view.table.name, player_display_name="p")
    joined = await hearts.stub.JoinTable(request, metadata=bearer(first.tokens[0]))
    assert joined.seat == 0
    assert joined.view.table.seats[0].player_display_name == "p"


async def test_a_token_of_another_table_is_wrong_table(hearts) -> None:
    first = await hearts.seated(pass_cards=False, deck_seed=4)
    second = await hearts.seated(pass_cards=False, deck_seed=4)
    seat, _, view = await turn_token(hearts, second)
    etag = await hearts.etag(second.name)
    for call in (
        hearts.play(second.name, first.tokens[seat], view.legal_cards[0]),
        hearts.view(second.name, first.tokens[seat]),
        hearts.leave(second.name, first.tokens[seat]),
        hearts.delete(second.name, first.creator_token),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (DENIED, "WRONG_TABLE")
    assert await hearts.etag(second.name) == etag


async def test_a_leavers_old_token_is_revoked(hearts) -> None:
    seated = await hearts.seated([0, 1])
    old = seated.tokens[1]
    await hearts.leave(seated.name, old)
    for call in (
        hearts.view(seated.name, old),
        hearts.leave(seated.name, old),
        hearts.watch(seated.name, old).read(),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_REVOKED")
    # Taking the seat again gives a new token; the old one stays revoked, even in play.
    rejoined = await hearts.join(seated.name, 1)
    await hearts.join(seated.name, 2)
    await hearts.join(seated.name, 3)
    assert (await hearts.view(seated.name, rejoined.seat_token)).viewer_seat == 1
    refusal = await failure(hearts.pass_cards(seated.name, old, [card("2C")] * 3))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_REVOKED")


async def test_a_leavers_old_token_gets_nothing_from_the_next_players_request_ids(
    hearts,
) -> None:
    # The store remembers a seat's last request id with its answer, the seat's view. Replayed
    # with the token of the player who sat there before, the request must be refused as that
    # token's every other call is, not answered with the new player's hand.
    seated = await hearts.seated(pass_cards=False, deck_seed=4)
    name, tokens = seated.name, dict(seated.tokens)
    first = owing((await hearts.view(name)).table)[0]
    seat = (first + 1) % 4  # plays second: a stand-in would play at once in the first's place
    old = tokens[seat]
    await hearts.leave(name, old)
    tokens[seat] = (await hearts.join(name, seat, player="next")).seat_token
    await hearts.play_until(name, tokens, lambda table: owing(table) == [seat])
    view = await hearts.view(name, tokens[seat])
    request = api.PlayCardRequest(name=name, card=view.legal_cards[0], request_id="move-1")
    played = await hearts.stub.PlayCard(request, metadata=bearer(tokens[seat]))
    assert len(played.view.hand) == len(view.hand) - 1
    refusal = await failure(hearts.stub.PlayCard(request, metadata=bearer(old)))
    assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_REVOKED")
    assert await hearts.etag(name) == played.etag
    # The new player's own retry is still answered from memory.
    again = await hearts.stub.PlayCard(request, metadata=bearer(tokens[seat]))
    assert again == played


async def test_only_the_creator_may_delete_a_table(hearts) -> None:
    seated = await hearts.seated([0])
    refusal = await failure(hearts.delete(seated.name, seated.tokens[0]))
    assert (refusal.code, refusal.reason) == (DENIED, "NOT_TABLE_CREATOR")
    assert await hearts.view(seated.name)
    assert await hearts.delete(seated.name, seated.creator_token) == api.DeleteTableResponse()
    for call in (
        hearts.view(seated.name),
        hearts.delete(seated.name, seated.creator_token),
        hearts.join(seated.name),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


async def test_a_creator_token_cannot_play(hearts) -> None:
    seated = await hearts.seated(pass_cards=False, deck_seed=4)
    _, _, view = await turn_token(hearts, seated)
    etag = await hearts.etag(seated.name)
    for call in (
        hearts.play(seated.name, seated.creator_token, view.legal_cards[0]),
        hearts.pass_cards(seated.name, seated.creator_token, view.legal_cards[:3]),
        hearts.leave(seated.name, seated.creator_token),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (DENIED, "NOT_A_PLAYER")
    assert await hearts.etag(seated.name) == etag
    creator_view = await hearts.view(seated.name, seated.creator_token)
    assert not creator_view.HasField("viewer_seat")
    assert not creator_view.hand


async def test_authorization_other_than_bearer_is_token_invalid(hearts) -> None:
    seated = await hearts.seated([0, 1])
    for value in ("Basic x", "Bearer", "Bearer    ", seated.tokens[0]):
        metadata = (("authorization", value),)
        refusal = await failure(
            hearts.stub.GetTable(api.GetTableRequest(name=seated.name), metadata=metadata)
        )
        assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_INVALID"), value
    # The scheme is case-insensitive, as in HTTP.
    metadata = (("authorization", f"bearer {seated.tokens[0]}"),)
    response = await hearts.stub.GetTable(api.GetTableRequest(name=seated.name), metadata=metadata)
    assert response.view.viewer_seat == 0
    # Two headers are refused, even two of the same token: none is picked over the other.
    for second in (seated.tokens[0], seated.tokens[1]):
        metadata = (
            ("authorization", f"Bearer {seated.tokens[0]}"),
            ("authorization", f"Bearer {second}"),
        )
        refusal = await failure(
            hearts.stub.GetTable(api.GetTableRequest(name=seated.name), metadata=metadata)
        )
        assert (refusal.code, refusal.reason) == (UNAUTHENTICATED, "TOKEN_INVALID")
        assert "one authorization header" in refusal.message, refusal.message


def assert_spectator_view(view: pb.TableView) -> None:
    assert not view.HasField("viewer_seat")
    assert not view.hand
    assert not view.legal_cards
    assert not view.passed_cards
    assert not view.received_cards
    assert view.cards_to_pass == 0


async def test_a_spectator_sees_no_hand_no_legal_cards_and_no_private_events(hearts) -> None:
    seated = await hearts.seated(deck_seed=9, target_score=100)
    spectator = hearts.watch(seated.name, after_sequence=0)
    # A whole round: dealing, passing, every trick.
    await hearts.play_until(seated.name, seated.tokens, lambda table: table.round_number > 1)
    view = await hearts.view(seated.name)
    assert_spectator_view(view)
    assert view.table.phase == pb.PHASE_PASSING
    messages = await read_until(
        spectator,
        lambda m: m.event.round_started.round_number == 2,
    )
    spectator.cancel()
    kinds = [event_kind(message) for message in messages]
    for message in messages:
        if message.HasField("snapshot"):
            assert_spectator_view(message.snapshot)
        assert event_kind(message) not in PRIVATE_EVENTS, message
    assert kinds.count("card_played") == 52
    assert kinds.count("seat_passed") == 4
    snapshot = await anext(aiter(hearts.watch(seated.name)))
    assert_spectator_view(snapshot.snapshot)
