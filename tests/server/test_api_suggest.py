"""SuggestMove: the move the server would make for the caller's seat, decided from that seat's
view as a heuristic bot (and the turn timer) would; it changes nothing."""

from __future__ import annotations

import asyncio

import grpc

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api

from .conftest import Hearts, ServerFactory, bearer, failure, owing

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


def _key(card: pb.Card) -> tuple[int, int]:
    return card.suit, card.rank


async def suggest(hearts: Hearts, name: str, token: str | None) -> api.SuggestMoveResponse:
    request = api.SuggestMoveRequest(name=name)
    return await hearts.stub.SuggestMove(request, metadata=bearer(token))


async def test_a_game_played_on_suggestions_alone_is_legal_to_the_end(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC}, target_score=40)
    name = seated.name
    moves = 0
    for _ in range(2000):
        table = (await hearts.view(name)).table
        if table.phase == pb.PHASE_GAME_OVER:
            break
        seat = owing(table)[0]
        token = seated.tokens[seat]
        seat_view = await hearts.view(name, token)
        suggestion = await suggest(hearts, name, token)
        # Decided on the table as it is, and changing nothing.
        assert suggestion.etag == seat_view.table.etag == await hearts.etag(name)
        legal = {_key(card) for card in seat_view.legal_cards}
        assert {_key(card) for card in suggestion.cards} <= legal
        if table.phase == pb.PHASE_PASSING:
            assert len({_key(card) for card in suggestion.cards}) == seat_view.cards_to_pass == 3
            await hearts.pass_cards(name, token, suggestion.cards, etag=suggestion.etag)
        else:
            assert len(suggestion.cards) == 1
            await hearts.play(name, token, suggestion.cards[0], etag=suggestion.etag)
        moves += 1
    assert table.phase == pb.PHASE_GAME_OVER
    assert moves > 26


async def test_only_a_seat_that_owes_a_move_gets_one(hearts: Hearts) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 3: HEURISTIC}, deck_seed=3)
    name = created.view.table.name
    first = await hearts.join(name, 0, player="Ann")
    refusal = await failure(suggest(hearts, name, first.seat_token))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "WRONG_PHASE")
    second = await hearts.join(name, 2, player="Bo")
    tokens = {0: first.seat_token, 2: second.seat_token}
    for token, code, reason in [
        (None, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING"),
        (created.creator_token, grpc.StatusCode.PERMISSION_DENIED, "NOT_A_PLAYER"),
        ("v1.forged", grpc.StatusCode.UNAUTHENTICATED, "TOKEN_INVALID"),
    ]:
        refusal = await failure(suggest(hearts, name, token))
        assert (refusal.code, refusal.reason) == (code, reason)
    other = await hearts.create()
    other_seat = await hearts.join(other.view.table.name, 0, player="Cy")
    refusal = await failure(suggest(hearts, name, other_seat.seat_token))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.PERMISSION_DENIED, "WRONG_TABLE")
    # Passing: Ann passes, and owes nothing more until the cards are exchanged.
    passed = await suggest(hearts, name, tokens[0])
    await hearts.pass_cards(name, tokens[0], passed.cards)
    refusal = await failure(suggest(hearts, name, tokens[0]))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "ALREADY_PASSED",
    )
    bo_pass = await suggest(hearts, name, tokens[2])
    played = await hearts.pass_cards(name, tokens[2], bo_pass.cards)
    table = played.view.table
    assert table.phase == pb.PHASE_PLAYING
    waiting = 2 if table.turn_seat == 0 else 0
    refusal = await failure(suggest(hearts, name, tokens[waiting]))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "NOT_YOUR_TURN")
    before = await hearts.etag(name)
    await suggest(hearts, name, tokens[table.turn_seat])
    assert await hearts.etag(name) == before
    # A player who left has no seat to ask for.
    await hearts.leave(name, tokens[waiting])
    refusal = await failure(suggest(hearts, name, tokens[waiting]))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")


async def test_the_suggestion_is_the_move_the_turn_timer_makes(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    hearts = connect(await make_server(store="memory"))
    seated = await hearts.seated(
        (0,), bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC}, turn_timeout_ms=1000, deck_seed=5
    )
    name, token = seated.name, seated.tokens[0]
    for _ in range(2):  # the passes, then a card
        suggestion = await suggest(hearts, name, token)
        sequence = await _sequence(hearts, name)
        # The player waits; the timer moves for them, as its stream shows.
        made = await _moves_of_seat_0(hearts, name, token, after=sequence)
        assert [_key(card) for card in made] == [_key(card) for card in suggestion.cards]


async def _sequence(hearts: Hearts, name: str) -> int:
    call = hearts.watch(name)
    try:
        async for message in call:
            return int(message.sequence)
    finally:
        call.cancel()
    raise AssertionError("no snapshot")


async def _moves_of_seat_0(hearts: Hearts, name: str, token: str, *, after: int) -> list[pb.Card]:
    """The cards seat 0 passes or plays next after ``after`` (read from its own stream, which
    waits for them)."""
    call = hearts.watch(name, token, after_sequence=after)
    cards: list[pb.Card] = []
    try:
        async with asyncio.timeout(10):
            async for message in call:
                event = message.event
                if event.HasField("cards_passed") and event.cards_passed.seat == 0:
                    return list(event.cards_passed.cards)
                if event.HasField("card_played") and event.card_played.seat == 0:
                    return [event.card_played.card]
    finally:
        call.cancel()
    return cards
