"""The asyncio client against a real server: a whole game, the tables API, and error mapping.

Each error test checks that a refusal surfaces as the right :class:`HeartsError` subclass with
the server's stable reason, so callers can branch on ``reason`` without parsing messages.
"""

from __future__ import annotations

import datetime
import time

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import (
    AuthError,
    ConflictError,
    HeartsClient,
    HeartsError,
    IllegalMoveError,
    InvalidCardError,
    InvalidRequestError,
    NotFoundError,
    SeatTakenError,
    bot_level,
    card_str,
    make_rules,
)
from hearts_server.server import HeartsServer
from hearts_server.tokens import TokenCodec

from .client_helpers import SECRET, THREE_BOTS, play_to_the_end, table_with_bots


async def test_client_plays_a_whole_game_against_three_bots(client: HeartsClient) -> None:
    joined = await table_with_bots(client, seed=11)
    name = joined.view.table.name
    assert joined.seat == 0
    assert len(joined.view.hand) == 13

    final = await play_to_the_end(client, name, joined.view)

    table = final.table
    assert table.phase == pb.PHASE_GAME_OVER
    assert max(table.total_scores) >= table.rules.target_score
    lowest = min(table.total_scores)
    assert sorted(table.result.winners) == [s for s in range(4) if table.total_scores[s] == lowest]
    assert [r.round_number for r in final.score_history] == list(range(1, table.round_number + 1))
    assert len(final.game_history) == table.round_number
    assert table.deck_seed == 11  # revealed once the game is over


async def test_suggested_moves_play_a_round_and_a_seat_that_owes_none_is_refused(
    client: HeartsClient,
) -> None:
    joined = await table_with_bots(client, seed=12, target=1)
    name = joined.view.table.name
    view = joined.view
    while view.table.phase != pb.PHASE_GAME_OVER:
        suggestion = await client.suggest_move(name)
        assert suggestion.etag == view.table.etag
        legal = {card_str(card) for card in view.legal_cards}
        assert {card_str(card) for card in suggestion.cards} <= legal
        if view.table.phase == pb.PHASE_PASSING:
            assert len(suggestion.cards) == 3
            view = await client.pass_cards(name, suggestion.cards, etag=suggestion.etag)
        else:
            view = await client.play_card(name, suggestion.cards[0], etag=suggestion.etag)
    with pytest.raises(IllegalMoveError) as refused:
        await client.suggest_move(name)
    assert refused.value.reason == "GAME_OVER"


async def test_get_table_shows_the_hand_only_to_the_seat(
    client: HeartsClient, server: HeartsServer
) -> None:
    joined = await table_with_bots(client)
    name = joined.view.table.name
    mine = await client.get_table(name)
    assert mine.viewer_seat == 0
    assert len(mine.hand) == 13
    async with HeartsClient(server.address) as spectator:
        public = await spectator.get_table(name.removeprefix("tables/"))
    assert not public.HasField("viewer_seat")
    assert not public.hand


async def test_list_tables_pages_through_every_table(client: HeartsClient) -> None:
    names = {(await client.create_table(f"t{i}", bots={1: "random"})).name for i in range(5)}
    full = await client.create_table("full", bots={1: "random", 2: "random", 3: "random"})
    await client.join_table(full.name, "Ada")

    page = await client.list_tables(page_size=2)
    assert len(page.tables) == 2
    assert page.next_page_token

    every = [table.name async for table in client.iter_tables(page_size=2)]
    assert sorted(every) == sorted([*names, full.name])
    open_ones = [table.name async for table in client.iter_tables(has_free_seat=True)]
    assert sorted(open_ones) == sorted(names)


async def test_create_table_takes_rules_as_a_dict_and_bots_by_level(client: HeartsClient) -> None:
    created = await client.create_table(
        "variant",
        rules={
            "target_score": 50,
            "jack_of_diamonds_bonus": True,
            "moon_scoring": "subtract_from_shooter",
        },
        bots={1: "random", 3: "monte-carlo"},
        dealer=2,
    )
    table = created.view.table
    assert table.rules.target_score == 50
    assert table.rules.jack_of_diamonds_bonus
    assert table.rules.pass_cards  # unset fields take the server's defaults
    assert table.rules.moon_scoring == pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER
    assert [seat.occupant for seat in table.seats] == [
        pb.SEAT_OCCUPANT_EMPTY,
        pb.SEAT_OCCUPANT_BOT,
        pb.SEAT_OCCUPANT_EMPTY,
        pb.SEAT_OCCUPANT_BOT,
    ]
    assert table.seats[3].bot_level == pb.BOT_LEVEL_MONTE_CARLO
    assert created.creator_token == client.creator_token(created.name)


def test_unknown_rules_and_bot_levels_are_refused_before_any_call() -> None:
    with pytest.raises(ValueError, match="bad rules"):
        make_rules({"no_such_flag": True})
    with pytest.raises(ValueError, match="bad rules"):
        make_rules({"target_score": "many"})
    with pytest.raises(ValueError, match="unknown bot level"):
        bot_level("grandmaster")
    assert bot_level("Monte_Carlo") == pb.BOT_LEVEL_MONTE_CARLO


async def test_leave_then_delete_forget_the_tokens(client: HeartsClient) -> None:
    created = await client.create_table("short-lived")
    await client.join_table(created.name, "Ada")
    assert client.seat_token(created.name)
    spectator_view = await client.leave_table(created.name)
    assert spectator_view.table.seats[0].occupant == pb.SEAT_OCCUPANT_EMPTY
    assert client.seat_token(created.name) is None
    await client.delete_table(created.name)
    with pytest.raises(NotFoundError) as caught:
        await client.get_table(created.name)
    assert caught.value.reason == "TABLE_NOT_FOUND"
    assert caught.value.code == grpc.StatusCode.NOT_FOUND


# --------------------------------------------------------------------------- errors


async def test_playing_off_suit_raises_illegal_move_with_the_legal_cards(
    client: HeartsClient,
) -> None:
    # Seed 7 without passing: East leads the two of clubs, and seat 0 holds clubs and more.
    joined = await table_with_bots(client, seed=7, passing=False)
    view = joined.view
    trick = view.current_trick
    assert trick.cards, "seat 0 should be following in the first trick"
    led_suit = trick.cards[0].card.suit
    off_suit = next(c for c in view.hand if c.suit != led_suit)

    with pytest.raises(IllegalMoveError) as caught:
        await client.play_card(view.table.name, off_suit)

    error = caught.value
    assert error.code == grpc.StatusCode.FAILED_PRECONDITION
    assert error.reason == "MUST_FOLLOW_SUIT"
    assert [card_str(c) for c in error.legal_cards] == [card_str(c) for c in view.legal_cards]
    assert all(c.suit == led_suit for c in error.legal_cards)
    assert "MUST_FOLLOW_SUIT" in str(error)
    after = await client.get_table(view.table.name)
    assert len(after.hand) == 13  # nothing was played


async def test_passing_two_cards_raises_wrong_pass_count(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    with pytest.raises(IllegalMoveError) as caught:
        await client.pass_cards(joined.view.table.name, joined.view.hand[:2])
    assert caught.value.reason == "WRONG_PASS_COUNT"
    assert caught.value.cards_to_pass == 3


async def test_a_forged_token_raises_auth_error_token_invalid(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    name = joined.view.table.name
    token = joined.seat_token
    client.set_seat_token(name, token[:-4] + ("AAAA" if not token.endswith("AAAA") else "BBBB"))
    with pytest.raises(AuthError) as caught:
        await client.play_card(name, joined.view.hand[0])
    assert caught.value.code == grpc.StatusCode.UNAUTHENTICATED
    assert caught.value.reason == "TOKEN_INVALID"


async def test_an_expired_seat_token_is_renewed(client: HeartsClient, server: HeartsServer) -> None:
    joined = await table_with_bots(client)
    name = joined.view.table.name
    a_month_ago = time.time() - 30 * 24 * 3600
    expired = TokenCodec(SECRET.encode(), clock=lambda: a_month_ago).issue(name.split("/")[1], 0, 0)
    client.set_seat_token(name, expired)
    with pytest.raises(AuthError) as caught:
        await client.get_table(name)
    assert caught.value.reason == "TOKEN_EXPIRED"
    renewed = await client.renew_seat_token(name)
    assert (renewed.seat, client.seat_token(name)) == (0, renewed.seat_token)
    assert list((await client.get_table(name)).hand) == list(joined.view.hand)
    # A client made with the token (another process resuming the seat) renews it too.
    async with HeartsClient(server.address, token=expired) as resumed:
        assert (await resumed.renew_seat_token(name)).seat == 0
        assert list((await resumed.get_table(name)).hand) == list(joined.view.hand)


async def test_a_seat_token_of_another_table_raises_wrong_table(client: HeartsClient) -> None:
    first = await table_with_bots(client)
    second = await client.create_table("other", bots=THREE_BOTS)
    client.set_seat_token(second.name, first.seat_token)
    with pytest.raises(AuthError) as caught:
        await client.leave_table(second.name)
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert caught.value.reason == "WRONG_TABLE"


async def test_deleting_with_a_seat_token_raises_not_table_creator(
    client: HeartsClient, server: HeartsServer
) -> None:
    joined = await table_with_bots(client)
    async with HeartsClient(server.address, token=joined.seat_token) as player:
        with pytest.raises(AuthError) as caught:
            await player.delete_table(joined.view.table.name)
    assert caught.value.reason == "NOT_TABLE_CREATOR"


async def test_moving_without_a_token_raises_token_missing(
    client: HeartsClient, server: HeartsServer
) -> None:
    joined = await table_with_bots(client)
    async with HeartsClient(server.address) as stranger:
        with pytest.raises(AuthError) as caught:
            await stranger.pass_cards(joined.view.table.name, joined.view.hand[:3])
    assert caught.value.reason == "TOKEN_MISSING"


async def test_joining_a_bot_seat_raises_seat_taken(client: HeartsClient) -> None:
    created = await client.create_table("t", bots={1: "random"})
    with pytest.raises(SeatTakenError) as caught:
        await client.join_table(created.name, "Ada", seat=1)
    assert caught.value.reason == "SEAT_TAKEN"


async def test_joining_a_full_table_raises_table_full(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    with pytest.raises(IllegalMoveError) as caught:
        await client.join_table(joined.view.table.name, "Late")
    assert caught.value.reason == "TABLE_FULL"
    assert not caught.value.legal_cards


async def test_a_stale_etag_raises_conflict_and_is_not_retried(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    with pytest.raises(ConflictError) as caught:
        await client.pass_cards(joined.view.table.name, joined.view.hand[:3], etag="1")
    assert caught.value.reason == "ETAG_MISMATCH"
    assert caught.value.code == grpc.StatusCode.ABORTED


async def test_a_bad_table_name_raises_invalid_request(client: HeartsClient) -> None:
    with pytest.raises(InvalidRequestError) as caught:
        await client.get_table("tables/not-a-name!")
    assert caught.value.reason == "INVALID_TABLE_NAME"
    assert isinstance(caught.value, HeartsError)


async def test_malformed_card_text_fails_locally_without_a_call(client: HeartsClient) -> None:
    joined = await table_with_bots(client)
    with pytest.raises(InvalidCardError):
        await client.play_card(joined.view.table.name, "1H")


async def test_create_table_sets_a_turn_timeout_in_seconds_or_as_a_timedelta(
    client: HeartsClient,
) -> None:
    for given, milliseconds in ((1.5, 1500), (datetime.timedelta(minutes=2), 120_000)):
        created = await client.create_table("timed", bots=THREE_BOTS, turn_timeout=given)
        assert created.view.table.turn_timeout.ToMilliseconds() == milliseconds
        joined = await client.join_table(created.name, "Tester", seat=0)
        table = joined.view.table
        assert table.turn_deadline.ToMilliseconds() == (
            table.update_time.ToMilliseconds() + milliseconds
        )
    with pytest.raises(InvalidRequestError) as refused:
        await client.create_table("timed", turn_timeout=0.5)
    assert refused.value.reason == "INVALID_REQUEST"


async def test_an_unlisted_table_is_left_out_of_list_tables(client: HeartsClient) -> None:
    hidden = await client.create_table("friends only", unlisted=True)
    shown = await client.create_table("anyone")
    page = await client.list_tables(page_size=100)
    names = [table.name for table in page.tables]
    assert shown.name in names
    assert hidden.name not in names
    joined = await client.join_table(hidden.name, "Friend")
    assert joined.view.table.unlisted
