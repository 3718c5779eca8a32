"""``HeartsClient.quick_join`` and ``hearts play --quick`` against a real server: "play now".

Players who ask for the same game (rules and turn timeout) are seated together, four to a
table, and play it with the seat tokens the client kept; a retry gets the seat the first call
took, never a second one.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import io
import uuid
from collections.abc import AsyncIterator

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, InvalidRequestError, SyncHeartsClient
from hearts_client.cli import main
from hearts_server.server import HeartsServer

from .client_helpers import (
    IDENTITY_SECRET,
    LoseFirstAnswer,
    hearts_command,
    identity,
    play_seats,
    start_server,
)


@contextlib.asynccontextmanager
async def _players(address: str, count: int) -> AsyncIterator[list[HeartsClient]]:
    """``count`` clients of the server at ``address``, each a player of its own."""
    async with contextlib.AsyncExitStack() as stack:
        yield [
            await stack.enter_async_context(HeartsClient(address, backoff=0.02))
            for _ in range(count)
        ]


def _names(view: pb.TableView) -> list[str]:
    return [seat.player_display_name for seat in sorted(view.table.seats, key=lambda s: s.seat)]


async def test_four_quick_joins_sit_together_and_play_the_game_to_the_end(
    server: HeartsServer,
) -> None:
    async with _players(server.address, 5) as (ann, bob, cy, di, ed):
        # The same game asked for in the client's several spellings: a dict or a message,
        # seconds or a timedelta.
        first = await ann.quick_join("Ann", rules={"target_score": 1}, turn_timeout=30)
        name = first.name
        assert first.seat == 0
        assert first.view.table.display_name == "Quick game"
        assert first.view.table.phase == pb.PHASE_WAITING_FOR_PLAYERS
        assert first.view.table.rules.target_score == 1
        assert first.view.table.turn_timeout.ToMilliseconds() == 30_000
        assert ann.seat_token(name) == first.seat_token
        others = [
            await bob.quick_join(
                "Bob", rules=pb.Rules(target_score=1), turn_timeout=datetime.timedelta(seconds=30)
            ),
            await cy.quick_join("Cy", rules={"target_score": 1}, turn_timeout=30.0),
            await di.quick_join("Di", rules={"target_score": 1}, turn_timeout=30),
        ]
        assert [joined.name for joined in others] == [name] * 3
        assert [joined.seat for joined in others] == [1, 2, 3]
        last = others[-1].view
        assert _names(last) == ["Ann", "Bob", "Cy", "Di"]
        assert last.table.phase == pb.PHASE_PASSING  # the fourth player: the game is on
        assert len(last.hand) == 13
        # Another game asked for sits elsewhere.
        elsewhere = await ed.quick_join("Ed", rules={"target_score": 1})
        assert elsewhere.name != name

        # The seat tokens the clients kept play the game through.
        final = await play_seats(name, ann, bob, cy, di)
        assert final.table.phase == pb.PHASE_GAME_OVER
        assert _names(final) == ["Ann", "Bob", "Cy", "Di"]
        assert [(await p.get_table(name)).viewer_seat for p in (ann, bob, cy, di)] == [0, 1, 2, 3]
        # The next player asking for that game starts the next table.
        nxt = await ed.quick_join("Ed", rules={"target_score": 1}, turn_timeout=30)
        assert (nxt.seat, _names(nxt.view)) == (0, ["Ed", "", "", ""])
        assert nxt.name not in (name, elsewhere.name)


async def test_a_quick_join_whose_answer_was_lost_takes_one_seat(server: HeartsServer) -> None:
    lose = LoseFirstAnswer("QuickJoin")
    async with HeartsClient(server.address, interceptors=[lose], backoff=0.01) as client:
        joined = await client.quick_join("Ada")
        view = await client.get_table(joined.name)
    assert len(lose.request_ids) == 2, "the lost answer should cause exactly one retry"
    assert lose.request_ids[0] == lose.request_ids[1] != ""
    assert _names(view) == ["Ada", "", "", ""]
    assert view.viewer_seat == joined.seat == 0  # the replayed answer's token works


async def test_the_same_request_id_gets_the_same_seat_and_a_new_one_another(
    client: HeartsClient,
) -> None:
    request_id = str(uuid.uuid4())
    first = await client.quick_join("Ada", request_id=request_id)
    again = await client.quick_join("Ada", request_id=request_id)
    assert again == first
    assert _names(await client.get_table(first.name)) == ["Ada", "", "", ""]
    # The client gives every call an id of its own: another call is another seat.
    second = await client.quick_join("Ada")
    assert (second.name, second.seat) == (first.name, 1)
    with pytest.raises(InvalidRequestError) as reused:
        await client.quick_join("Bea", request_id=request_id)
    assert reused.value.reason == "REQUEST_ID_REUSED"
    with pytest.raises(InvalidRequestError) as bad_rules:
        await client.quick_join("Ada", rules={"target_score": 0})
    assert bad_rules.value.reason == "INVALID_RULES"


async def test_quick_join_sends_the_identity_token_and_a_player_gets_their_seat_again() -> None:
    server = await start_server(identity_secret=IDENTITY_SECRET)
    try:
        async with (
            HeartsClient(server.address, identity_token=identity("ann-1")) as phone,
            HeartsClient(server.address, identity_token=identity("ann-1")) as laptop,
            HeartsClient(server.address) as anonymous,
        ):
            first = await phone.quick_join("Ann")
            assert first.player_id == "ann-1"
            again = await laptop.quick_join("Ann on her laptop")
            assert (again.name, again.seat, again.player_id) == (first.name, 0, "ann-1")
            other = await anonymous.quick_join("Bob", identity_token=identity("bob-7"))
            assert (other.name, other.seat, other.player_id) == (first.name, 1, "bob-7")
    finally:
        await server.stop(0)


def test_sync_client_quick_joins_and_keeps_the_seat_token(threaded_server: str) -> None:
    with (
        SyncHeartsClient(threaded_server, backoff=0.02) as ann,
        SyncHeartsClient(threaded_server, backoff=0.02) as bob,
    ):
        first = ann.quick_join("Ann", rules={"pass_cards": False})
        second = bob.quick_join("Bob", rules={"pass_cards": False}, request_id="bob-once")
        assert bob.quick_join("Bob", rules={"pass_cards": False}, request_id="bob-once") == second
        assert (second.name, second.seat) == (first.name, 1)
        assert not second.view.table.rules.pass_cards
        assert ann.client.seat_token(first.name) == first.seat_token
        assert bob.get_table(first.name).viewer_seat == 1
        bob.leave_table(first.name)
        # A seat left while the game waits goes to the next player who asks.
        assert ann.quick_join("Cy", rules={"pass_cards": False}).seat == 1


# --------------------------------------------------------------------------- hearts play --quick


async def test_play_quick_seats_the_player_with_strangers_and_plays_to_the_end(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--quick", "--auto", "--target-score", "1"]
    argv += ["--rule", "jack_of_diamonds_bonus=true", "--name", "Ada", "--ascii"]
    out = io.StringIO()
    async with hearts_command(argv, io.StringIO(), out) as command:
        for _ in range(500):  # the command takes the first seat of a new table
            tables = (await client.list_tables()).tables
            if tables or command.done():
                break
            await asyncio.sleep(0.02)
        [table] = tables
        game = {"target_score": 1, "jack_of_diamonds_bonus": True}
        async with _players(server.address, 3) as strangers:
            seats = [
                await player.quick_join(player_name, rules=game)
                for player, player_name in zip(strangers, ("Bob", "Cy", "Di"), strict=True)
            ]
            assert [(s.name, s.seat) for s in seats] == [(table.name, n) for n in (1, 2, 3)]
            final = await play_seats(table.name, *strangers)
        async with asyncio.timeout(30):
            code = await command
    text = out.getvalue()
    assert code == 0, text
    assert f"Quick game at {table.name}: you (Ada) sit in seat 0." in text
    waiting = "Waiting for the other players to take their seats (West, North, East are still free)"
    assert waiting in text
    assert "the jack of diamonds is worth -10" in text
    assert "Di sits down as East." in text
    assert "Final totals:" in text
    assert "Play again" not in text  # --auto plays one game
    assert final.table.phase == pb.PHASE_GAME_OVER
    assert _names(final) == ["Ada", "Bob", "Cy", "Di"]


async def test_quitting_a_quick_game_leaves_the_seat_to_a_bot(
    server: HeartsServer, client: HeartsClient
) -> None:
    async with _players(server.address, 3) as strangers:
        [first, *_] = [
            await player.quick_join(player_name)
            for player, player_name in zip(strangers, ("Bob", "Cy", "Di"), strict=True)
        ]
        # The fourth player: the game starts at once and asks for the pass.
        argv = ["play", "--server", server.address, "--quick", "--name", "Ada", "--ascii"]
        out = io.StringIO()
        code = await asyncio.to_thread(main, argv, stdin=io.StringIO("quit\n"), stdout=out)
    text = out.getvalue()
    assert code == 1, text
    assert f"Quick game at {first.name}: you (Ada) sit in seat 3." in text
    assert "Waiting for the other players" not in text
    assert "Cards to pass (3, like 'QS KS AH')" in text
    assert "Leaving the table." in text
    # The server made the table: the command leaves its seat to a bot rather than deleting it.
    view = await client.get_table(first.name)
    assert view.table.seats[3].occupant == pb.SEAT_OCCUPANT_BOT
    assert view.table.seats[3].stand_in


@pytest.mark.parametrize("typed", ["quit\n", ""], ids=["quit", "end of input"])
async def test_quit_or_the_end_of_input_leaves_a_quick_table_that_still_waits(
    server: HeartsServer, client: HeartsClient, typed: str
) -> None:
    # Nobody else comes: without a way out the command would wait for ever.
    argv = ["play", "--server", server.address, "--quick", "--name", "Ada", "--ascii"]
    out = io.StringIO()
    code = await asyncio.wait_for(
        asyncio.to_thread(main, argv, stdin=io.StringIO(typed), stdout=out), 20
    )
    text = out.getvalue()
    assert code == 1, text
    assert "Waiting for the other players" in text
    assert "Type quit to leave the table." in text
    assert "Leaving the table." in text
    [table] = (await client.list_tables()).tables
    assert [seat.occupant for seat in table.seats] == [pb.SEAT_OCCUPANT_EMPTY] * 4
    # Its seat is free again: the next caller sits where Ada sat.
    again = await client.quick_join("Bob")
    assert (again.name, again.seat) == (table.name, 0)


class _Terminal(io.StringIO):
    """Input typed at a terminal (not echoed back by the command)."""

    def isatty(self) -> bool:
        return True


async def test_at_a_terminal_lines_typed_while_the_table_waits_are_answered_until_quit(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--quick", "--name", "Ada", "--ascii"]
    out = io.StringIO()
    typed = _Terminal("QS\nhelp\nquit\n")
    code = await asyncio.wait_for(asyncio.to_thread(main, argv, stdin=typed, stdout=out), 20)
    text = out.getvalue()
    assert code == 1, text
    assert "The game starts when every seat is taken; type quit to leave." in text
    assert "Passing: three cards" in text  # the help
    assert "Leaving the table." in text
    [table] = (await client.list_tables()).tables
    assert [seat.occupant for seat in table.seats] == [pb.SEAT_OCCUPANT_EMPTY] * 4
