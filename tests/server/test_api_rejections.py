"""Every way the API refuses a move or a malformed request: status code, reason and details.

A refused move carries ``google.rpc.ErrorInfo`` (domain ``hearts.v1``, the engine's reason) and a
``hearts.v1.MoveRejection`` whose legal cards are exactly those of the caller's own view, and it
changes nothing: the table's etag is the same after every refusal.
"""

from __future__ import annotations

import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api

from .conftest import card, failure, key, names, owing

FAILED = grpc.StatusCode.FAILED_PRECONDITION
pytestmark = pytest.mark.timeout(60)
PLAY_REASONS = {
    "NOT_YOUR_TURN",
    "CARD_NOT_IN_HAND",
    "MUST_LEAD_TWO_OF_CLUBS",
    "MUST_FOLLOW_SUIT",
    "NO_POINTS_ON_FIRST_TRICK",
    "HEARTS_NOT_BROKEN",
}


async def assert_refused_move(hearts, name, token, call, reason: str) -> None:
    """``call`` fails with FAILED_PRECONDITION/``reason``, details match the caller's view."""
    before = await hearts.view(name, token)
    refusal = await failure(call)
    assert refusal.code == FAILED, refusal
    assert refusal.domain == "hearts.v1"
    assert refusal.reason == reason, refusal
    assert refusal.move is not None, f"{reason} without a MoveRejection"
    assert refusal.move.reason == reason
    assert names(refusal.move.legal_cards) == names(before.legal_cards)
    assert refusal.move.cards_to_pass == before.cards_to_pass
    after = await hearts.view(name, token)
    assert after.table.etag == before.table.etag, f"{reason} changed the table"
    assert after.sequence == before.sequence


def expected_play_reason(view: pb.TableView) -> str:
    """Why any card outside the view's legal cards is refused (the rule clauses, in order)."""
    trick = view.current_trick.cards
    if trick:
        led = trick[0].card.suit
        if any(held.suit == led for held in view.hand):
            return "MUST_FOLLOW_SUIT"
        return "NO_POINTS_ON_FIRST_TRICK"
    if not view.completed_tricks:
        return "MUST_LEAD_TWO_OF_CLUBS"
    return "HEARTS_NOT_BROKEN"


# --------------------------------------------------------------------------- passing


async def test_pass_refusals_name_the_rule_and_change_nothing(hearts) -> None:
    seated = await hearts.seated(deck_seed=1)
    name, token = seated.name, seated.tokens[0]
    hand = list((await hearts.view(name, token)).hand)
    other = list((await hearts.view(name, seated.tokens[1])).hand)
    assert (await hearts.view(name)).table.phase == pb.PHASE_PASSING

    async def refused(chosen, reason):
        await assert_refused_move(
            hearts, name, token, hearts.pass_cards(name, token, chosen), reason
        )

    await refused(hand[:2], "WRONG_PASS_COUNT")
    await refused(hand[:4], "WRONG_PASS_COUNT")
    await refused([hand[0], hand[0], hand[1]], "DUPLICATE_CARD")
    await refused([hand[0], hand[1], other[0]], "CARD_NOT_IN_HAND")
    await assert_refused_move(hearts, name, token, hearts.play(name, token, hand[0]), "WRONG_PHASE")

    await hearts.pass_cards(name, token, hand[:3])
    await refused(hand[3:6], "ALREADY_PASSED")


async def test_pass_or_play_before_the_table_is_full_is_wrong_phase(hearts) -> None:
    seated = await hearts.seated([0])
    name, token = seated.name, seated.tokens[0]
    etag = await hearts.etag(name)
    for call in (
        hearts.pass_cards(name, token, [card("2C"), card("3C"), card("4C")]),
        hearts.play(name, token, card("2C")),
    ):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (FAILED, "WRONG_PHASE")
        assert await hearts.etag(name) == etag


async def test_wrong_phase_before_the_table_is_full_carries_a_move_rejection(hearts) -> None:
    seated = await hearts.seated([0])
    refusal = await failure(hearts.play(seated.name, seated.tokens[0], card("2C")))
    assert refusal.reason == "WRONG_PHASE"
    assert refusal.move is not None
    assert refusal.move.reason == "WRONG_PHASE"
    assert not refusal.move.legal_cards


# --------------------------------------------------------------------------- playing


async def test_every_play_refusal_is_reached_in_seeded_games(hearts) -> None:
    """Four humans play seeded games; before each legal play the test tries an illegal one.

    The test holds all four tokens, so it also plays out of turn and plays a card another seat
    holds. It stops once every play reason has been seen.
    """
    seen: dict[str, int] = {}
    for seed in range(12):
        seated = await hearts.seated(deck_seed=seed, target_score=100)
        name, tokens = seated.name, seated.tokens
        rng = random.Random(seed)

        async def try_illegal(seat, view, *, name=name, tokens=tokens, rng=rng, seed=seed):
            if view.table.phase != pb.PHASE_PLAYING:
                return
            token = tokens[seat]
            if "NOT_YOUR_TURN" not in seen:
                other = (seat + 1) % 4
                other_hand = (await hearts.view(name, tokens[other])).hand
                await assert_refused_move(
                    hearts,
                    name,
                    tokens[other],
                    hearts.play(name, tokens[other], other_hand[0]),
                    "NOT_YOUR_TURN",
                )
                seen["NOT_YOUR_TURN"] = seed
            if "CARD_NOT_IN_HAND" not in seen:
                other_hand = (await hearts.view(name, tokens[(seat + 2) % 4])).hand
                await assert_refused_move(
                    hearts, name, token, hearts.play(name, token, other_hand[0]), "CARD_NOT_IN_HAND"
                )
                seen["CARD_NOT_IN_HAND"] = seed
            legal = {key(c) for c in view.legal_cards}
            illegal = [c for c in view.hand if key(c) not in legal]
            if not illegal:
                return
            reason = expected_play_reason(view)
            if reason in seen and rng.random() < 0.7:
                return  # keep the game moving; the rarer reasons are what the loop is after
            await assert_refused_move(
                hearts, name, token, hearts.play(name, token, rng.choice(illegal)), reason
            )
            seen.setdefault(reason, seed)

        await hearts.play_until(
            name,
            tokens,
            lambda table: seen.keys() >= PLAY_REASONS or table.round_number > 2,
            rng=rng,
            before_move=try_illegal,
        )
        if seen.keys() >= PLAY_REASONS:
            break
    assert seen.keys() >= PLAY_REASONS, f"never saw {PLAY_REASONS - seen.keys()}"


async def test_moves_after_the_game_are_refused_with_game_over(hearts) -> None:
    seated = await hearts.seated(target_score=1, deck_seed=5)
    table = await hearts.play_out(seated.name, seated.tokens, rng=random.Random(5))
    assert table.phase == pb.PHASE_GAME_OVER
    name, token = seated.name, seated.tokens[table.result.losers[0]]
    view = await hearts.view(name, token)
    assert not view.legal_cards
    assert view.cards_to_pass == 0
    # The game history says what this seat held; any of those cards will do.
    held = view.game_history[-1].deals[view.viewer_seat].cards
    await assert_refused_move(hearts, name, token, hearts.play(name, token, held[0]), "GAME_OVER")
    await assert_refused_move(
        hearts, name, token, hearts.pass_cards(name, token, held[:3]), "GAME_OVER"
    )


# --------------------------------------------------------------------------- malformed requests


async def test_a_card_that_names_no_card_is_invalid_argument(hearts) -> None:
    seated = await hearts.seated(pass_cards=False, deck_seed=2)
    name = seated.name
    turn = owing((await hearts.view(name)).table)[0]
    token = seated.tokens[turn]
    etag = await hearts.etag(name)
    for bad in (pb.Card(suit=0, rank=1), pb.Card(suit=1, rank=1), pb.Card(suit=5, rank=2)):  # type: ignore[arg-type]
        refusal = await failure(hearts.play(name, token, bad))
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_CARD")
        assert refusal.domain == "hearts.v1"
    refusal = await failure(hearts.pass_cards(name, token, [pb.Card(suit=0, rank=1)] * 3))  # type: ignore[arg-type]
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_CARD")
    refusal = await failure(
        hearts.stub.PlayCard(
            api.PlayCardRequest(name=name), metadata=(("authorization", f"Bearer {token}"),)
        )
    )
    assert refusal.code == grpc.StatusCode.INVALID_ARGUMENT
    # The enums by the names a client's code spells them, not as numbers to look up.
    refusal = await failure(hearts.play(name, token, pb.Card(suit=pb.SUIT_SPADES)))
    assert "SUIT_SPADES, RANK_UNSPECIFIED" in refusal.message
    refusal = await failure(hearts.play(name, token, pb.Card(suit=5, rank=2)))  # type: ignore[arg-type]
    assert "suit 5, RANK_TWO" in refusal.message
    assert await hearts.etag(name) == etag


@pytest.mark.parametrize(
    "bad_name", ["", "tables/", "table/abc", "tables/a-b", "tables/a/b", "x" * 8]
)
async def test_a_bad_table_name_is_invalid_argument(hearts, bad_name: str) -> None:
    calls = [
        hearts.view(bad_name),
        hearts.join(bad_name, 0),
        hearts.play(bad_name, None, card("2C")),
        hearts.watch(bad_name).read(),
    ]
    for call in calls:
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_TABLE_NAME",
        )


async def test_an_unknown_table_is_not_found(hearts) -> None:
    name = "tables/0123456789abcdef"
    for call in (hearts.view(name), hearts.join(name, 0), hearts.watch(name).read()):
        refusal = await failure(call)
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.NOT_FOUND, "TABLE_NOT_FOUND")


@pytest.mark.parametrize("target_score", [0, -5, 10_001])
async def test_invalid_rules_are_invalid_argument(hearts, target_score: int) -> None:
    refusal = await failure(hearts.create(target_score=target_score))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_RULES")


async def test_joining_a_taken_seat_is_already_exists(hearts) -> None:
    seated = await hearts.seated([1])
    etag = await hearts.etag(seated.name)
    refusal = await failure(hearts.join(seated.name, 1))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.ALREADY_EXISTS, "SEAT_TAKEN")
    assert await hearts.etag(seated.name) == etag


async def test_joining_a_full_table_is_failed_precondition(hearts) -> None:
    seated = await hearts.seated([0, 1], bots={2: pb.BOT_LEVEL_RANDOM, 3: pb.BOT_LEVEL_RANDOM})
    etag = await hearts.etag(seated.name)
    refusal = await failure(hearts.join(seated.name))
    assert (refusal.code, refusal.reason) == (FAILED, "TABLE_FULL")
    assert await hearts.etag(seated.name) == etag


@pytest.mark.parametrize("player", ["", "   ", "x" * 41], ids=["empty", "blank", "41 characters"])
async def test_a_display_name_outside_1_to_40_characters_is_refused(hearts, player: str) -> None:
    created = await hearts.create()
    name = created.view.table.name
    etag = await hearts.etag(name)
    refusal = await failure(hearts.join(name, 0, player=player))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert await hearts.etag(name) == etag
    joined = await hearts.join(name, 0, player="x" * 40)  # the documented limit itself
    assert joined.view.table.seats[0].player_display_name == "x" * 40


@pytest.mark.parametrize(
    "player",
    ["Ann\n", "\tAnn", "Ann\x1f", "\x1c\x1dAnn\r", "A\x85nn", "An\x07n"],
    ids=["trailing newline", "leading tab", "trailing unit separator", "both ends", "NEL", "bell"],
)
async def test_a_display_name_with_control_characters_is_refused_even_at_its_ends(
    hearts, player: str
) -> None:
    # Trimming came first once, and took tabs, line breaks and U+001C..U+001F off the ends.
    created = await hearts.create()
    name = created.view.table.name
    etag = await hearts.etag(name)
    refusal = await failure(hearts.join(name, 0, player=player))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    quick = await failure(hearts.stub.QuickJoin(api.QuickJoinRequest(player_display_name=player)))
    assert (quick.code, quick.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert await hearts.etag(name) == etag
    joined = await hearts.join(name, 0, player="  Ann  ")  # spaces are trimmed, as before
    assert joined.view.table.seats[0].player_display_name == "Ann"


@pytest.mark.parametrize(
    "player",
    ["\u200b", "\u200b\u200d\u2060", " \u00ad ", "\u0301"],
    ids=["zero-width space", "zero-width run", "soft hyphen", "combining mark"],
)
async def test_a_display_name_that_shows_nothing_is_refused(hearts, player: str) -> None:
    # Not blank to str.strip, but blank on every screen: a seat nobody could name.
    name = (await hearts.create()).view.table.name
    etag = await hearts.etag(name)
    refusal = await failure(hearts.join(name, 0, player=player))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "must show" in refusal.message
    assert await hearts.etag(name) == etag
    # Joiners and marks in a name that shows something are names of people and emoji.
    for shown in ("Zoë", "\U0001f469\u200d\U0001f4bb", "Ro\u200cya"):
        joined = await hearts.join(name, player=shown)
        assert joined.view.table.seats[joined.seat].player_display_name == shown


@pytest.mark.parametrize("override", ["\u202e", "\u202a", "\u2066", "\u2069"])
async def test_a_name_that_reorders_the_text_around_it_is_refused(hearts, override: str) -> None:
    # A right-to-left override in a name makes it read as another player's in a lobby.
    name = (await hearts.create()).view.table.name
    etag = await hearts.etag(name)
    for call in (
        hearts.join(name, 0, player=f"Ann{override}xoB"),
        hearts.stub.CreateTable(
            api.CreateTableRequest(table=pb.Table(display_name=f"Ann's{override} table"))
        ),
    ):
        refusal = await failure(call)
        assert refusal.reason == "INVALID_REQUEST"
        assert "control characters" in refusal.message
    assert await hearts.etag(name) == etag


async def test_a_display_name_far_over_its_limit_is_refused_before_it_is_read(hearts) -> None:
    # Refused for its length, not for the control character at its end, which a character by
    # character scan of its megabyte held the event loop 40 ms to find.
    name = (await hearts.create()).view.table.name
    refusal = await failure(hearts.join(name, 0, player="x" * 1_000_000 + "\n"))
    assert refusal.reason == "INVALID_REQUEST"
    assert "1 to 40 characters" in refusal.message


async def test_a_seat_given_twice_or_a_deck_of_cards_to_pass_is_refused_at_once(hearts) -> None:
    # Each entry was read one by one on the event loop, the last one for a seat winning: a
    # request of 1 MiB (some 100,000 seats, or 170,000 cards to pass) held it for 0.1-0.2 s.
    bot = pb.Seat(seat=1, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM)
    refusal = await failure(
        hearts.stub.CreateTable(api.CreateTableRequest(table=pb.Table(seats=[bot] * 100_000)))
    )
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "seat 1 is given twice" in refusal.message
    assert not (await hearts.stub.ListTables(api.ListTablesRequest())).tables
    seated = await hearts.seated()
    etag = await hearts.etag(seated.name)
    many = [card("2C")] * 170_000
    refusal = await failure(hearts.pass_cards(seated.name, seated.tokens[0], many))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert await hearts.etag(seated.name) == etag
    four = [card(c) for c in ("2C", "3C", "4C", "5C")]  # a plausible miscount: the rule's reason
    refusal = await failure(hearts.pass_cards(seated.name, seated.tokens[0], four))
    assert refusal.reason == "WRONG_PASS_COUNT"


async def test_names_over_their_limits_on_create_are_refused(hearts) -> None:
    long_bot = pb.Seat(
        seat=1, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM,
        player_display_name="x" * 41,
    )  # fmt: skip
    for table in (pb.Table(display_name="x" * 201), pb.Table(seats=[long_bot])):
        refusal = await failure(hearts.stub.CreateTable(api.CreateTableRequest(table=table)))
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        )
    listed = await hearts.stub.ListTables(api.ListTablesRequest())
    assert not listed.tables
    long_bot.player_display_name = "x" * 40  # the limits themselves
    table = pb.Table(display_name="x" * 200, seats=[long_bot])
    created = (await hearts.stub.CreateTable(api.CreateTableRequest(table=table))).view.table
    assert (len(created.display_name), len(created.seats[1].player_display_name)) == (200, 40)


async def test_create_without_a_table_is_refused_and_an_empty_table_is_a_default_one(
    hearts,
) -> None:
    refusal = await failure(hearts.stub.CreateTable(api.CreateTableRequest(request_id="c1")))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "table is required" in refusal.message
    assert not (await hearts.stub.ListTables(api.ListTablesRequest())).tables
    created = await hearts.stub.CreateTable(api.CreateTableRequest(table=pb.Table()))
    table = created.view.table
    assert table.phase == pb.PHASE_WAITING_FOR_PLAYERS
    assert table.rules.target_score == 100
    assert [seat.occupant for seat in table.seats] == [pb.SEAT_OCCUPANT_EMPTY] * 4


async def test_a_bot_name_is_trimmed_and_a_blank_one_is_the_servers_to_pick(hearts) -> None:
    seats = [
        pb.Seat(seat=seat, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_RANDOM,
                player_display_name=name)
        for seat, name in enumerate(["  Bob  ", "   ", "", " " + "x" * 40 + " "])
    ]  # fmt: skip
    created = await hearts.stub.CreateTable(api.CreateTableRequest(table=pb.Table(seats=seats)))
    names = [seat.player_display_name for seat in created.view.table.seats]
    assert names == ["Bob", "Random bot", "Random bot", "x" * 40]
    for bad in (" \t ", " " + "x" * 41, " " * 161):
        seats[1].player_display_name = bad
        refusal = await failure(
            hearts.stub.CreateTable(api.CreateTableRequest(table=pb.Table(seats=seats)))
        )
        assert refusal.reason == "INVALID_REQUEST", bad


async def test_error_info_names_the_table(hearts) -> None:
    seated = await hearts.seated([1])
    unknown = "tables/0123456789abcdef"
    for name, call in (
        (seated.name, hearts.join(seated.name, 1)),
        (seated.name, hearts.play(seated.name, seated.tokens[1], card("2C"))),
        (unknown, hearts.view(unknown)),
        (unknown, hearts.watch(unknown).read()),
    ):
        refusal = await failure(call)
        assert refusal.domain == "hearts.v1"
        assert refusal.metadata.get("table") == name, refusal


async def test_a_name_too_long_to_be_a_table_is_refused_readably(hearts) -> None:
    # Echoed whole, a 5,000-character name overflowed gRPC's 8 KiB trailer limit: the client got
    # a bare RESOURCE_EXHAUSTED whose details it could not read.
    for length in (72, 5_000, 100_000):
        name = "tables/" + "x" * (length - len("tables/"))
        for call in (hearts.view(name), hearts.watch(name).read()):
            refusal = await failure(call)
            assert (refusal.code, refusal.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "INVALID_TABLE_NAME",
            )
            assert "table" not in refusal.metadata
            assert len(refusal.message) < 200, refusal.message


# Requests whose field 1 (the table name; field 2, page_token or request_id, where field 1 is
# no string) is not UTF-8.
_NOT_UTF8 = b"\x0a\x02\xff\xfe"
_NOT_UTF8_2 = b"\x12\x02\xff\xfe"


@pytest.mark.parametrize(
    "method",
    ["GetTable", "ListTables", "CreateTable", "DeleteTable", "JoinTable", "LeaveTable",
     "PassCards", "PlayCard", "WatchTable"],
)  # fmt: skip
async def test_a_request_that_does_not_parse_is_invalid_request(
    hearts, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    # gRPC itself answers a request it cannot parse with UNKNOWN and no details, and logs a
    # traceback; the server's parsers hand it to the handler, which refuses it like any other
    # malformed request.
    path = f"/hearts.v1.TableService/{method}"
    # Field 2 (page_token, request_id) where field 1 is no string.
    request = _NOT_UTF8_2 if method in ("ListTables", "CreateTable") else _NOT_UTF8
    if method == "WatchTable":
        stream = hearts.channel.unary_stream(path)
        refusal = await failure(_drain(stream(request)))
    else:
        unary = hearts.channel.unary_unary(path)
        refusal = await failure(unary(request))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert "UTF-8" in refusal.message, refusal.message
    assert not [r for r in caplog.records if r.levelno >= 40], caplog.records


async def _drain(call) -> None:
    async for _ in call:
        pass


@pytest.mark.parametrize("method", ["Check", "Watch", "List"])
async def test_a_health_request_that_does_not_parse_is_invalid_request(
    hearts, method: str, caplog: pytest.LogCaptureFixture
) -> None:
    # gRPC's health service, registered with the same lenient parsers as hearts.v1 (its
    # HealthListRequest has no string: a field cut short does not parse either).
    path = f"/grpc.health.v1.Health/{method}"
    request = b"\x0a\x05ab" if method == "List" else _NOT_UTF8
    if method == "Watch":
        refusal = await failure(_drain(hearts.channel.unary_stream(path)(request)))
    else:
        refusal = await failure(hearts.channel.unary_unary(path)(request))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST")
    assert not [r for r in caplog.records if r.levelno >= 40], caplog.records


async def test_health_lists_every_status(hearts) -> None:
    health = health_pb2_grpc.HealthStub(hearts.channel)
    listed = await health.List(health_pb2.HealthListRequest())
    serving = health_pb2.HealthCheckResponse.SERVING
    assert {name: s.status for name, s in listed.statuses.items()} == {
        "": serving,
        "hearts.v1.TableService": serving,
    }
