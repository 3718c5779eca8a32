"""The ``hearts`` command, driven through stdin and stdout like a piped terminal session.

``main`` runs its own event loop, so the tests run it in a worker thread while the server keeps
serving on the test's loop.
"""

from __future__ import annotations

import asyncio
import io
import queue
import signal
import sys
import time
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, UnavailableError, card_str
from hearts_client.cli import main
from hearts_server.errors import ServiceError
from hearts_server.server import HeartsServer

from .client_helpers import (
    hearts_command,
    make_move,
    play_seats,
    run_hearts,
    table_with_bots,
    waits_for_me,
)


async def test_auto_play_finishes_a_game_and_prints_final_scores(
    server: HeartsServer, client: HeartsClient, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["play", "--server", server.address, "--auto", "--seed", "4", "--name", "Ada"]
    code = await asyncio.to_thread(main, argv, stdin=io.StringIO())
    out = capsys.readouterr().out
    assert code == 0
    # --auto plays one game and ends without asking to play again (it reads no input).
    assert "Play again" not in out
    [table] = [t async for t in client.iter_tables()]
    assert table.phase == pb.PHASE_GAME_OVER
    assert not table.rematch_table
    assert "=== Round 1 (dealer: You) ===" in out
    assert "Your hand:" in out
    assert "Legal:" in out
    assert "Scores after round 1:" in out
    assert "Final totals: You " in out
    assert "Winner" in out
    for symbol in "♣♦♥♠":
        assert symbol in out


async def test_typed_moves_show_the_servers_reason_and_reprompt(
    server: HeartsServer, client: HeartsClient
) -> None:
    # The same seed deals the same cards: look at the hand the command will be dealt.
    preview = (await table_with_bots(client, seed=7, passing=False)).view
    led_suit = preview.current_trick.cards[0].card.suit
    off_suit = card_str(next(c for c in preview.hand if c.suit != led_suit))
    typed = f"XX\n{off_suit}\nhelp\nhint\nreact clap\nreact shrug\nauto\n"

    argv = ["play", "--server", server.address, "--seed", "7", "--no-passing", "--ascii"]
    code, out = await run_hearts(argv, typed)

    assert code == 0, out
    assert "not a card: 'XX'" in out
    assert "Not allowed: MUST_FOLLOW_SUIT" in out
    assert "Type cards in notation" in out  # help
    # The hint is one of the legal cards the refusal listed.
    legal = out.split("Legal: ", 1)[1].split("\n", 1)[0].split()
    hinted = out.split("Hint: ", 1)[1].split("\n", 1)[0]
    assert hinted in legal
    assert "  You: clap\n" in out  # sent (--ascii: no emoji)
    assert "  Reactions: thumbs_up, clap, laugh" in out  # no such reaction: the list
    assert out.count("Your card: ") == 7  # XX, the illegal card, help, hint, 2 reactions, auto
    assert "Final totals:" in out
    assert "♠" not in out


async def test_a_hint_the_server_cannot_give_leaves_the_game_going(
    server: HeartsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: object) -> None:
        raise ServiceError("INTERNAL", "the hint broke")

    monkeypatch.setattr(server.app, "suggest_move", broken)
    argv = ["play", "--server", server.address, "--seed", "7", "--no-passing", "--ascii"]
    code, out = await run_hearts(argv, "hint\nauto\n")
    assert code == 0, out
    assert "No hint: INTERNAL" in out
    assert "Final totals:" in out


async def test_a_bad_pass_is_refused_and_quit_deletes_the_table(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--seed", "2"]
    code, out = await run_hearts(argv, "QS\n2C 2C 3C\nquit\n")

    assert code == 1
    assert "Not allowed: WRONG_PASS_COUNT" in out
    assert "Not allowed: DUPLICATE_CARD" in out
    assert "Leaving the table." in out
    assert [t async for t in client.iter_tables()] == []


async def test_monte_carlo_bots_are_named_as_people_say_it(server: HeartsServer) -> None:
    argv = ["play", "--server", server.address, "--seed", "2", "--bots", "monte_carlo"]
    code, out = await run_hearts(argv, "quit\n")
    assert code == 1
    assert "play against three Monte Carlo bots." in out


async def _friends_table_with_ann(client: HeartsClient) -> tuple[str, pb.TableView]:
    """A one-round table with random bots in seats 0 and 3, Ann (``client``) in seat 1 and seat
    2 free for Bob; its name and Ann's view."""
    bots = {0: "random", 3: "random"}
    created = await client.create_table("Friends", bots=bots, rules={"target_score": 1})
    return created.name, (await client.join_table(created.name, "Ann", seat=1)).view


async def test_taking_over_a_seat_after_the_exchange_asks_for_no_pass(
    server: HeartsServer, client: HeartsClient
) -> None:
    # Bob passes and leaves in the first trick; the command takes his seat back: the round's
    # cards were passed already, so it must not say "Pass three cards".
    name, _ = await _friends_table_with_ann(client)
    async with HeartsClient(server.address) as bob:
        bob_view = (await bob.join_table(name, "Bob", seat=2)).view
        await bob.pass_cards(name, bob_view.hand[:3])
        view = await client.get_table(name)  # dealt when Bob sat down
        view = await client.pass_cards(name, view.hand[:3])
        assert view.table.phase == pb.PHASE_PLAYING
        await bob.leave_table(name)
    code, out, view = await _bob_takes_seat_2_back(server, client, name, view)
    assert code == 0, out
    assert "=== Round 1 (dealer: " in out
    assert "The cards were passed left this round." in out
    assert "Pass three cards" not in out


async def test_end_of_input_leaves_the_game(server: HeartsServer) -> None:
    code, out = await run_hearts(["play", "--server", server.address, "--seed", "2"], "")
    assert code == 1
    assert "Leaving the table." in out


async def test_tables_lists_the_servers_tables(server: HeartsServer, client: HeartsClient) -> None:
    created = await client.create_table("Evening game", bots={1: "random"})
    code, out = await run_hearts(["tables", "--server", server.address, "--open"])
    assert code == 0
    assert created.name in out
    assert "'Evening game'" in out
    assert "waiting" in out


async def test_tables_shows_a_turn_timer_and_the_seats_a_player_may_take_over(
    server: HeartsServer, client: HeartsClient
) -> None:
    bots = {0: "random", 3: "random"}
    created = await client.create_table("Timed", bots=bots, turn_timeout=30)
    await client.join_table(created.name, "Ann", seat=1)
    async with HeartsClient(server.address) as bob:
        await bob.join_table(created.name, "Bob", seat=2)
        await bob.leave_table(created.name)  # mid-game: a bot stands in for Bob
    code, out = await run_hearts(["tables", "--server", server.address])
    assert code == 0
    [line] = [line for line in out.splitlines() if created.name in line]
    assert "30 s a move" in line
    assert "Bob (bot) (open)" in line
    assert "Ann (open)" not in line


async def test_tables_shows_the_wait_for_bots_while_a_table_waits(
    server: HeartsServer, client: HeartsClient
) -> None:
    waiting = await client.create_table("Soon", fill_with_bots_after=20)
    plain = await client.create_table("Plain", bots={1: "random", 2: "random", 3: "random"})
    code, out = await run_hearts(["tables", "--server", server.address])
    assert code == 0
    [line] = [line for line in out.splitlines() if waiting.name in line]
    assert "waiting  bots after 20 s  [" in line
    assert "bots after" not in next(line for line in out.splitlines() if plain.name in line)


async def test_an_unreachable_server_is_reported_with_exit_code_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = await asyncio.to_thread(main, ["tables", "--server", "127.0.0.1:1"])
    assert code == 2
    assert "cannot reach the server at 127.0.0.1:1" in capsys.readouterr().err


async def test_a_server_that_answers_unavailable_is_not_called_unreachable(
    server: HeartsServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The server answered (its table store is down): saying it cannot be reached misleads.
    async def store_down(*args: Any, **kwargs: Any) -> Any:
        raise ServiceError("STORE_UNAVAILABLE", "the table store is unavailable")

    monkeypatch.setattr(server.app, "list_tables", store_down)
    code = await asyncio.to_thread(main, ["tables", "--server", server.address])
    assert code == 2
    err = capsys.readouterr().err
    assert f"the server at {server.address} is unavailable: STORE_UNAVAILABLE" in err
    assert "cannot reach" not in err


async def test_a_reader_that_goes_away_ends_the_listing_quietly(
    server: HeartsServer, client: HeartsClient
) -> None:
    # `hearts tables | head -1`: the pipe closes after the first line.
    await client.create_table("one")
    await client.create_table("two")

    class ClosedPipe(io.StringIO):
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

    code = await asyncio.to_thread(
        main, ["tables", "--server", server.address], stdout=ClosedPipe()
    )
    assert code == 0

    class ClosedPipeBuffered(io.StringIO):
        # A short listing sits in the buffer: it fails only when flushed, which main must do
        # itself (the interpreter's flush at exit would print "Exception ignored" and exit 120).
        flushed = False

        def flush(self) -> None:
            self.flushed = True
            raise BrokenPipeError(32, "Broken pipe")

    out = ClosedPipeBuffered()
    code = await asyncio.to_thread(main, ["tables", "--server", server.address], stdout=out)
    assert code == 0
    assert out.flushed


async def test_a_refused_join_deletes_the_table_it_made(
    server: HeartsServer, client: HeartsClient
) -> None:
    code, _ = await run_hearts(["play", "--server", server.address, "--name", "x" * 41])
    assert code == 2
    assert [t async for t in client.iter_tables()] == []


@pytest.mark.parametrize(
    "option",
    [
        ["--seed", "99999999999999999999"],
        ["--target-score", "99999999999"],
        ["--target-score", "1001"],
        ["--quick", "--bots-after", "0"],
    ],
)
def test_numbers_the_api_cannot_hold_are_refused_by_the_parser(
    option: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["play", "--server", "127.0.0.1:1", *option])
    assert caught.value.code == 2
    assert "is not between" in capsys.readouterr().err


async def test_ctrl_c_at_a_prompt_leaves_at_once_and_deletes_the_table(
    server: HeartsServer, client: HeartsClient
) -> None:
    # A real process with its input open and unanswered, as at a terminal; and with Ctrl-C's
    # handler that Python sets at a terminal. (A process started in the background by a shell
    # without job control inherits SIGINT ignored, and so would the command: as it should.)
    argv = ["play", "--server", server.address, "--seed", "3", "--no-passing", "--ascii"]
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "import runpy, signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "runpy.run_module('hearts_client.cli', run_name='__main__', alter_sys=True)",
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        shown = b""
        async with asyncio.timeout(20):
            while b"Your card: " not in shown:
                chunk = await process.stdout.read(4096)
                assert chunk, shown.decode()
                shown += chunk
        assert len([t async for t in client.iter_tables()]) == 1
        process.send_signal(signal.SIGINT)
        async with asyncio.timeout(10):  # not held up by the read still waiting for a line
            rest, errors = await process.communicate()
        assert process.returncode == 1, errors.decode()
        assert b"Leaving the table." in rest
        assert [t async for t in client.iter_tables()] == []
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_rules_given_with_rule_make_the_table_and_are_shown(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--auto", "--seed", "5", "--target-score", "30"]
    argv += [
        "--rule",
        "jack_of_diamonds_bonus=true",
        "--rule",
        "moon-scoring=subtract_from_shooter",
    ]
    code, out = await run_hearts(argv)
    assert code == 0, out
    assert "the jack of diamonds is worth -10" in out
    assert "shooting the moon subtracts 26 from the shooter" in out
    [table] = [t async for t in client.iter_tables()]
    assert table.rules.jack_of_diamonds_bonus
    assert table.rules.moon_scoring == pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER
    assert table.rules.target_score == 30


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (["--rule", "no_such_rule=1"], "not a rule: 'no_such_rule=1'"),
        (["--rule", "target_score"], "not field=value"),
        (["--rule", "moon_scoring=sideways"], "not a rule"),
        (["--table", "tables/x", "--no-passing"], "--no-passing: only for a new table"),
        (["--table", "tables/x", "--turn-timeout", "5"], "--turn-timeout: only for a new table"),
        (["--seat", "2"], "--seat: only with --table"),
        (["--quick", "--table", "tables/x"], "--table: not with --quick"),
        (["--quick", "--seed", "3", "--bots", "random"], "--seed, --bots: not with --quick"),
        (["--bots-after", "5"], "--bots-after: only with --quick"),
        (["--table", "tables/x", "--bots-after", "5"], "--bots-after: only with --quick"),
    ],
)
def test_a_bad_rule_or_one_for_someone_elses_table_is_refused_by_the_parser(
    option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["play", "--server", "127.0.0.1:1", *option])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


async def test_table_joins_a_free_seat_and_quitting_leaves_it_to_a_bot(
    server: HeartsServer, client: HeartsClient
) -> None:
    created = await client.create_table("Open table", bots={0: "random", 2: "random", 3: "random"})
    argv = ["play", "--server", server.address, "--table", created.name, "--name", "Bea"]
    code, out = await run_hearts(argv, "quit\n")
    assert code == 1, out
    assert f"Table {created.name}: you (Bea) sit in seat 1." in out
    view = await client.get_table(created.name)  # the table stays, the seat goes to a bot
    assert view.table.seats[1].occupant == pb.SEAT_OCCUPANT_BOT


async def test_a_table_joined_with_table_is_left_when_the_command_fails(
    server: HeartsServer, client: HeartsClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The watch gives up after its reconnects (the server gone too long): the command ends with
    # exit code 2, and must not leave the others a seat held by a player who has gone.
    def server_gone(*args: Any, **kwargs: Any) -> Any:
        raise UnavailableError(grpc.StatusCode.UNAVAILABLE, "UNAVAILABLE", "injected")

    monkeypatch.setattr(HeartsClient, "watch", server_gone)
    created = await client.create_table("Open table", bots={0: "random", 2: "random", 3: "random"})
    argv = ["play", "--server", server.address, "--table", created.name, "--auto"]
    code, _ = await run_hearts(argv)
    assert code == 2
    view = await client.get_table(created.name)
    assert view.table.seats[1].occupant == pb.SEAT_OCCUPANT_BOT


class _LateInput(io.StringIO):
    """Typed input whose first line comes ``delay`` seconds late (a player who looked away)."""

    def __init__(self, text: str, delay: float) -> None:
        super().__init__(text)
        self.delay = delay

    def readline(self, size: int | None = -1) -> str:
        if self.delay:
            time.sleep(self.delay)  # read in the command's own input thread
            self.delay = 0
        return super().readline(size)


async def test_a_move_typed_after_the_turn_timeout_is_too_late_and_the_game_goes_on(
    server: HeartsServer, client: HeartsClient
) -> None:
    preview = (await table_with_bots(client, seed=7)).view
    typed = " ".join(card_str(c) for c in preview.hand[:3]) + "\nauto\n"
    argv = ["play", "--server", server.address, "--seed", "7", "--turn-timeout", "1", "--ascii"]
    out = io.StringIO()
    code = await asyncio.to_thread(main, argv, stdin=_LateInput(typed, 1.5), stdout=out)
    text = out.getvalue()
    assert code == 0, text
    assert "s left): " in text  # the prompt shows the time the player has
    assert "Too late: the move was made for you." in text
    assert "Your time ran out: the server moves for you." in text
    assert "Final totals:" in text


async def test_a_hint_asked_after_the_turn_timeout_is_too_late_and_the_game_goes_on(
    server: HeartsServer,
) -> None:
    # The timer passes for the player while the prompt waits: the hint is for no move of this
    # prompt (the server would suggest the first card of the next one, maybe one just passed
    # to the player), so it says the move was made, and the game goes on.
    argv = ["play", "--server", server.address, "--seed", "1", "--turn-timeout", "1", "--ascii"]
    out = io.StringIO()
    code = await asyncio.to_thread(main, argv, stdin=_LateInput("hint\nauto\n", 2.5), stdout=out)
    text = out.getvalue()
    assert code == 0, text
    assert "Hint:" not in text.split("Your time ran out", 1)[0]
    assert "Too late: the move was made for you." in text
    assert "Final totals:" in text


async def _bob_takes_seat_2_back(
    server: HeartsServer, client: HeartsClient, name: str, view: pb.TableView
) -> tuple[int, str, pb.TableView]:
    """Bob's command takes seat 2 of ``name`` back (--auto) while ``client`` plays its own seat
    from ``view`` on; the command's exit code and output, and the client's last view."""
    argv = ["play", "--server", server.address, "--table", name, "--seat", "2", "--auto"]
    argv += ["--name", "Bob", "--ascii"]
    command = asyncio.create_task(run_hearts(argv))
    for _ in range(1500):  # 30 s at most
        if view.table.phase == pb.PHASE_GAME_OVER or command.done():
            break
        if waits_for_me(view) and view.table.seats[2].occupant == pb.SEAT_OCCUPANT_HUMAN:
            view = await make_move(client, name, view)
        else:
            await asyncio.sleep(0.02)
            view = await client.get_table(name)
    code, out = await command
    return code, out, view


async def test_table_with_seat_takes_over_the_bot_of_a_player_who_left(
    server: HeartsServer, client: HeartsClient
) -> None:
    # Ann (this test) and Bob at a table with two bots; Bob leaves mid-game and comes back
    # through the command, which plays his seat on (--auto) while Ann plays hers from here.
    name, view = await _friends_table_with_ann(client)
    async with HeartsClient(server.address) as bob:
        await bob.join_table(name, "Bob", seat=2)
        assert (await bob.leave_table(name)).table.seats[2].stand_in
    code, out, view = await _bob_takes_seat_2_back(server, client, name, view)
    assert code == 0, out
    assert f"Table {name}: you (Bob) sit in seat 2." in out
    assert "Final totals:" in out
    assert view.table.seats[2].player_display_name == "Bob"


async def test_a_card_typed_after_the_server_played_for_us_is_never_played_later(
    server: HeartsServer,
) -> None:
    # Seed 7 without passing: in trick 1 we may play 5C or KC. The server plays KC for us at
    # the deadline, we take the trick and lead the next, where 5C would be legal: the card
    # typed for trick 1 must not land there.
    argv = ["play", "--server", server.address, "--seed", "7", "--no-passing", "--ascii"]
    argv += ["--turn-timeout", "1"]
    out = io.StringIO()
    typed = _LateInput("5C\nquit\n", 1.5)
    code = await asyncio.to_thread(main, argv, stdin=typed, stdout=out)
    text = out.getvalue()
    assert code == 1, text  # quit
    assert "Legal: 5C KC" in text
    assert "Too late: the move was made for you." in text
    assert "  You play KC" in text
    assert "  You play 5C" not in text


# --------------------------------------------------------------------------- play again


async def test_play_again_plays_a_rematch_at_a_new_table_then_no_ends(
    server: HeartsServer, client: HeartsClient
) -> None:
    argv = ["play", "--server", server.address, "--seed", "4", "--target-score", "1"]
    argv += ["--name", "Ada", "--ascii"]
    # 'auto' at the first prompt of each game lets the computer play it.
    code, out = await run_hearts(argv, "auto\ny\nauto\nn\n")

    assert code == 0, out
    assert out.count("Play again? [y/N]: ") == 2
    assert "Play again? [y/N]: y\n" in out
    assert out.endswith("Play again? [y/N]: n\n")
    assert out.count("=== Round 1 ") == 2
    assert out.count("Final totals:") == 2
    tables = {t.name: t async for t in client.iter_tables()}
    assert len(tables) == 2
    [new] = [t for t in tables.values() if t.rematch_of]
    old = tables[new.rematch_of]
    assert old.rematch_table == new.name
    assert f"Rematch at {new.name} (after {old.name}): you sit in seat 0 again." in out
    assert "Waiting for the other players" not in out  # three bots: the game began at once
    # The second game was played to its end, by the same player in the same seat.
    assert old.phase == new.phase == pb.PHASE_GAME_OVER
    assert new.seats[0].player_display_name == "Ada"
    assert new.seats[0].occupant == pb.SEAT_OCCUPANT_HUMAN
    assert new.rules.target_score == 1
    assert not new.rematch_table  # the second answer was no
    # The listing points from the finished game to its rematch.
    code, listing = await run_hearts(["tables", "--server", server.address])
    assert code == 0
    [line] = [line for line in listing.splitlines() if line.startswith(old.name)]
    assert line.endswith(f"rematch: {new.name}")


class _Typist(io.TextIOBase):
    """Input the test types a line at a time when it chooses, as a player at a terminal would."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: queue.Queue[str] = queue.Queue()

    def type(self, line: str) -> None:
        self.lines.put(f"{line}\n" if line else "")

    def readline(self, size: int | None = -1) -> str:
        return self.lines.get(timeout=60)


async def _until(seen: io.StringIO, text: str, count: int = 1) -> None:
    """Wait until the command's output shows ``text`` ``count`` times."""
    for _ in range(1500):  # 30 s at most
        if seen.getvalue().count(text) >= count:
            return
        await asyncio.sleep(0.02)
    pytest.fail(f"{text!r} not shown {count} times:\n{seen.getvalue()}")


async def test_play_again_at_a_friends_table_waits_for_them_and_shows_their_rematch(
    server: HeartsServer, client: HeartsClient
) -> None:
    # Ann (this test, seat 1) and Bob (the command, seat 2, East of him is Ann) with two bots.
    first, _ = await _friends_table_with_ann(client)
    argv = ["play", "--server", server.address, "--table", first, "--name", "Bob"]
    typist, out = _Typist(), io.StringIO()
    typist.type("auto")  # the computer plays Bob's game (--auto would not ask to play again)
    async with hearts_command([*argv, "--ascii"], typist, out) as command:
        try:
            await play_seats(first, client)
            await _until(out, "Play again? [y/N]: ")

            # Bob asks first: the new table waits for Ann, and says so.
            typist.type("y")
            typist.type("auto")  # and Bob's next game
            await _until(out, "Waiting for the other players")
            second = (await client.get_table(first)).table.rematch_table
            assert second
            assert (
                f"Rematch at {second} (after {first}): you sit in seat 2 again." in out.getvalue()
            )
            assert "(East is still free)" in out.getvalue()
            ann = await client.rematch_table(first)
            assert (ann.name, ann.seat) == (second, 1)
            assert ann.view.table.phase == pb.PHASE_PASSING  # all four seats taken: the game is on
            await play_seats(second, client)
            await _until(out, "Play again? [y/N]: ", count=2)

            # Now Ann asks first: the command, still asking, shows it.
            third = await client.rematch_table(second)
            await _until(out, f"East asked for a rematch at {third.name}.")
            typist.type("n")
            async with asyncio.timeout(30):
                code = await command
        finally:
            typist.type("")  # the end of input: the command ends whatever it was waiting for
    text = out.getvalue()
    assert code == 0, text
    assert "Ann sits down as East." in text
    assert text.count("Final totals:") == 2
    assert text.endswith("Play again? [y/N]: n\n")
    view = await client.get_table(second)
    assert view.table.phase == pb.PHASE_GAME_OVER
    assert [view.table.seats[s].player_display_name for s in (1, 2)] == ["Ann", "Bob"]
    # Bob said no: his seat at the third table stays free.
    after = await client.get_table(third.name)
    assert after.table.seats[2].occupant == pb.SEAT_OCCUPANT_EMPTY


async def test_the_command_says_when_another_player_is_away_and_back(
    server: HeartsServer, client: HeartsClient
) -> None:
    # Ann (this test, seat 1: East of Bob) has not opened a stream yet; Bob is the command.
    created = await client.create_table("Presence", bots={0: "random", 3: "random"})
    await client.join_table(created.name, "Ann", seat=1)
    argv = ["play", "--server", server.address, "--table", created.name, "--name", "Bob"]
    typist, out = _Typist(), io.StringIO()
    async with hearts_command([*argv, "--auto", "--ascii"], typist, out) as command:
        try:
            await _until(out, "East is not connected.")

            async def watch() -> None:
                async for _ in client.watch(created.name):
                    pass

            ann = asyncio.create_task(watch())
            await _until(out, "East is connected again.")
            ann.cancel()
            await _until(out, "East lost the connection.")
            await client.leave_table(created.name)  # a bot plays Ann's seat: the game ends
            async with asyncio.timeout(30):
                code = await command
        finally:
            typist.type("")
    text = out.getvalue()
    assert code == 0, text
    assert text.count("East lost the connection.") == 1
    assert "connected" not in text.split("East lost the connection.")[1], text
