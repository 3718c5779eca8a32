"""The ``hearts`` command: play Hearts in a terminal against three bots or with strangers (a quick
game), or list a server's tables.

It reads plain lines from stdin and writes plain lines to stdout (no curses, no terminal
control), so a script or a test can drive a whole game through a pipe. The watch stream drives
the game: every event is printed as it comes, and the player is asked for cards only when the
stream says the game waits for them (``TurnChanged`` to their seat, or a new hand to pass from),
so what is printed is always in the order it happened.

When a game is over the command asks ``Play again? [y/N]``; yes takes the player's seat in the
next game with the same players (``RematchTable``), at a new table, and plays it the same way.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import sys
import threading
import time
from collections.abc import AsyncGenerator, Awaitable, Callable, Coroutine, Sequence
from typing import Any, TextIO

from hearts.v1 import table_event_pb2 as events_pb
from hearts.v1 import table_pb2 as pb
from hearts_client.cards import (
    SUIT_SYMBOLS,
    InvalidCardError,
    card_label,
    card_str,
    cards,
    sort_cards,
)
from hearts_client.client import REACTIONS, HeartsClient, make_rules, reaction, table_name
from hearts_client.errors import ConflictError, HeartsError, IllegalMoveError, UnavailableError

__all__ = ["build_parser", "main"]

DEFAULT_SERVER = "127.0.0.1:50051"
BOT_LEVELS = ("random", "heuristic", "monte_carlo")
DEFAULT_BOTS = "heuristic"

# Seats relative to the player, clockwise: the next seat is "left" (West, seen from South).
_POSITIONS = ("You", "West", "North", "East")
_DIRECTIONS = {
    pb.PASS_DIRECTION_LEFT: ("left", 1),
    pb.PASS_DIRECTION_ACROSS: ("across", 2),
    pb.PASS_DIRECTION_RIGHT: ("right", 3),
}
_HELP = (
    "Type cards in notation, rank then suit: QS, TD (or 10D), 2C, AH.\n"
    "  Passing: three cards, like 'QS KS AH'. Playing: one card, like '7H'.\n"
    "  'hint' shows what the server would play; 'react clap' (or thumbs_up, laugh, wow, sad,\n"
    "  angry, thinking, wave) shows the table a reaction; 'auto' lets the computer play the\n"
    "  rest of the game for you; 'quit' leaves."
)

_REACTION_SYMBOLS = {
    "thumbs_up": "\N{THUMBS UP SIGN}",
    "clap": "\N{CLAPPING HANDS SIGN}",
    "laugh": "\N{FACE WITH TEARS OF JOY}",
    "wow": "\N{FACE WITH OPEN MOUTH}",
    "sad": "\N{CRYING FACE}",
    "angry": "\N{ANGRY FACE}",
    "thinking": "\N{THINKING FACE}",
    "wave": "\N{WAVING HAND SIGN}",
}

# How long leaving (or deleting) the table may take when the command ends early.
_GIVE_UP_SECONDS = 3.0

# The refusals of a move the CLI asked for on the view's word: the game moved on meanwhile, which
# only the server's move for us (our time ran out) does.
_TOO_LATE = frozenset({"NOT_YOUR_TURN", "ALREADY_PASSED", "WRONG_PHASE"})
_RESENDS = 5  # a move resent on fresh etags while only other seats change the table
# What to do about a refusal the player can fix with the command's options.
_HINTS = {
    "IDENTITY_REQUIRED": "this server admits signed-in players only: give your identity token "
    "with --identity-token or HEARTS_IDENTITY_TOKEN",
    "IDENTITY_NOT_ACCEPTED": "this server checks no identity tokens: leave out --identity-token "
    "and unset HEARTS_IDENTITY_TOKEN",
    "IDENTITY_EXPIRED": "your identity token has expired: sign in again for a fresh one",
    "ALREADY_SEATED": "you hold another seat at this table: leave out --seat to take it again",
}
# The hints of `hearts tables --mine` where those above would mislead (it needs the token).
_MINE_HINTS = {
    "IDENTITY_NOT_ACCEPTED": "this server checks no identity tokens, so it keeps no player's "
    "tables: --mine needs a server started with an identity secret or key set",
}
EXIT_OK = 0
EXIT_QUIT = 1
EXIT_ERROR = 2


_QUIT_WORDS = ("quit", "exit", "q")


class _QuitError(Exception):
    """The player typed quit, or stdin ended."""


class _Game:
    """One player's game at one table, printed to ``out`` and asked on ``inp``."""

    def __init__(
        self,
        client: HeartsClient,
        name: str,
        seat: int,
        inp: TextIO,
        out: TextIO,
        *,
        auto: bool,
        symbols: bool,
    ) -> None:
        self.client = client
        self.name = name
        self.seat = seat
        self.inp = inp
        self.out = out
        self.auto = auto
        self.symbols = symbols
        self.rounds = 0
        self.filled = False  # bots took the seats nobody came for (fill_with_bots_after)
        self.connected: dict[int, bool] = {}  # the other players' presence, as last told
        self.sequence = 0  # the last sequence of the table's stream that was shown
        self._line: asyncio.Future[str] | None = None  # a line read, not yet answered
        isatty = getattr(inp, "isatty", None)
        self.echo = not (isatty is not None and isatty())

    # ------------------------------------------------------------------ text

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def who(self, seat: int) -> str:
        return _POSITIONS[(seat - self.seat) % 4]

    def label(self, card: pb.Card) -> str:
        return card_label(card, symbols=self.symbols)

    def labels(self, some: Sequence[pb.Card]) -> str:
        return " ".join(self.label(c) for c in some) or "-"

    def suit_mark(self, suit: pb.Suit.ValueType) -> str:
        return SUIT_SYMBOLS[suit] if self.symbols else "?CDHS"[suit]

    def show_hand(self, hand: Sequence[pb.Card]) -> None:
        self.say("Your hand:")
        ordered = sort_cards(hand)
        for suit in (pb.SUIT_CLUBS, pb.SUIT_DIAMONDS, pb.SUIT_HEARTS, pb.SUIT_SPADES):
            ranks = [card_str(c)[0] for c in ordered if c.suit == suit]
            self.say(f"  {self.suit_mark(suit)}  {' '.join(ranks) or '-'}")

    def show_trick(self, view: pb.TableView) -> None:
        trick = view.current_trick
        if not trick.cards:
            self.say(f"Trick {trick.number or 1}: you lead.")
            return
        played = ", ".join(f"{self.who(p.seat)} {self.label(p.card)}" for p in trick.cards)
        self.say(f"Trick {trick.number}, led by {self.who(trick.leader)}: {played}")

    def show_scores(self, title: str, rows: Sequence[tuple[str, Sequence[int]]]) -> None:
        names = [self.who(seat) for seat in range(4)]
        width = max(len(label) for label, _ in rows)
        self.say(title)
        self.say(" " * (width + 2) + "".join(f"{n:>7}" for n in names))
        for label, values in rows:
            self.say(f"  {label:<{width}}" + "".join(f"{v:>7}" for v in values))

    def show_final(self, totals: Sequence[int], winners: Sequence[int]) -> None:
        self.say()
        rounds = self.rounds or "all"
        self.say(f"Game over after {rounds} round{'' if rounds == 1 else 's'}.")
        self.say("Final totals: " + ", ".join(f"{self.who(s)} {totals[s]}" for s in range(4)))
        names = [self.who(s) for s in winners]
        if names == ["You"]:
            self.say("Winner: You. Well played!")
        else:
            self.say(("Winners: " if len(names) > 1 else "Winner: ") + ", ".join(names))

    def show_round(
        self,
        number: int,
        dealer: int,
        direction: pb.PassDirection.ValueType,
        *,
        passed: bool = False,
    ) -> None:
        """The round's header; ``passed``: joined after the exchange, so there is none to ask."""
        self.rounds = number
        self.say()
        self.say(f"=== Round {number} (dealer: {self.who(dealer)}) ===")
        passing = _DIRECTIONS.get(direction)
        if passing is None:
            self.say("No passing this round.")
        elif passed:
            self.say(f"The cards were passed {passing[0]} this round.")
        else:
            word, offset = passing
            self.say(f"Pass three cards {word}, to {self.who((self.seat + offset) % 4)}.")

    def show_event(self, event: events_pb.TableEvent) -> None:
        kind = event.WhichOneof("event")
        if kind == "round_started":
            started = event.round_started
            self.show_round(started.round_number, started.dealer, started.pass_direction)
        elif kind == "cards_passed":
            passed = event.cards_passed
            self.say(f"You pass {self.labels(passed.cards)} to {self.who(passed.to_seat)}.")
        elif kind == "cards_received":
            got = event.cards_received
            self.say(f"You receive {self.labels(got.cards)} from {self.who(got.from_seat)}.")
        elif kind == "card_played":
            played = event.card_played
            verb = "play" if played.seat == self.seat else "plays"
            self.say(f"  {self.who(played.seat)} {verb} {self.label(played.card)}")
        elif kind == "hearts_broken":
            self.say("  Hearts are broken.")
        elif kind == "trick_won":
            trick = event.trick_won.trick
            winner = self.who(trick.winner)
            verb = "take" if trick.winner == self.seat else "takes"
            points = f"{trick.points} point{'s' if trick.points != 1 else ''}"
            self.say(f"  -> {winner} {verb} trick {trick.number} ({points}).")
        elif kind == "round_scored":
            score = event.round_scored.score
            self.say()
            if score.HasField("moon_shooter"):
                self.say(f"{self.who(score.moon_shooter)} shot the moon!")
            self.show_scores(
                f"Scores after round {score.round_number}:",
                [("this round", score.points), ("total", score.total_scores)],
            )
        elif kind == "player_joined":
            self.connected.pop(event.player_joined.seat, None)  # someone new
            self.show_joined(event.player_joined)
        elif kind == "player_left":
            left = event.player_left
            self.connected.pop(left.seat, None)
            self.say(f"{left.player_display_name} ({self.who(left.seat)}) left the table.")
        elif kind == "rematch_created":
            created = event.rematch_created
            self.say(f"{self.who(created.seat)} asked for a rematch at {created.table}.")
        elif kind == "reaction":
            shown = event.reaction
            if shown.seat != self.seat:  # ours was said when we sent it
                self.say(f"  {self.who(shown.seat)}: {self.reaction_label(shown.reaction)}")
        elif kind == "presence_changed":
            self.show_presence(event.presence_changed.seat, event.presence_changed.connected)
        elif kind == "turn_timed_out":
            seat = event.turn_timed_out.seat
            if seat == self.seat:
                self.say("  Your time ran out: the server moves for you.")
            else:
                self.say(f"  {self.who(seat)} ran out of time: the server moves for them.")

    def show_presence(self, seat: int, connected: bool) -> None:
        """Another player's connection: said when it changes, or when first told it is down."""
        known = self.connected.get(seat)
        self.connected[seat] = connected
        if seat == self.seat or known == connected:
            return
        if known is None:
            if not connected:
                self.say(f"  {self.who(seat)} is not connected.")
        elif connected:
            self.say(f"  {self.who(seat)} is connected again.")
        else:
            self.say(f"  {self.who(seat)} lost the connection.")

    def show_joined(self, joined: events_pb.PlayerJoinedEvent) -> None:
        """A player who sat down, or a bot that took a seat nobody came for in time."""
        where = self.who(joined.seat)
        if not joined.HasField("bot_level"):
            self.say(f"{joined.player_display_name} sits down as {where}.")
            return
        if not self.filled:  # said once: the bots of one fill arrive together
            self.filled = True
            self.say("No more players came in time: bots take the free seats.")
        level = pb.BotLevel.Name(joined.bot_level).removeprefix("BOT_LEVEL_")
        self.say(f"A {level.lower().replace('_', ' ')} bot sits down as {where}.")

    def reaction_label(self, value: int) -> str:
        name = pb.Reaction.Name(value).removeprefix("REACTION_").lower()  # type: ignore[arg-type]
        return name if not self.symbols else f"{_REACTION_SYMBOLS.get(name, '')} {name}".strip()

    async def react(self, text: str) -> None:
        """Send the reaction that ``react NAME`` names, or say which there are."""
        _, _, name = text.partition(" ")
        try:
            await self.client.send_reaction(self.name, name)
        except ValueError:
            self.say(f"  Reactions: {', '.join(REACTIONS)} (like 'react clap').")
        except HeartsError as error:
            self.say(f"  Not sent: {error}")
        else:
            self.say(f"  You: {self.reaction_label(reaction(name))}")

    def time_left(self, view: pb.TableView) -> str:
        """`` (N s left)`` when the table times moves, else nothing."""
        if not view.table.HasField("turn_deadline"):
            return ""
        left = view.table.turn_deadline.ToMilliseconds() / 1000 - time.time()
        return f" ({max(0, round(left))} s left)"

    async def send(self, view: pb.TableView, move: Callable[..., Awaitable[object]]) -> bool:
        """Send the move chosen on ``view``, pinned to its etag; False if it should be chosen
        again on a fresh view.

        The server refuses a move chosen on a view the table has moved on from (ETAG_MISMATCH),
        so a card typed after the server played for us never lands in a later turn. When only
        other seats changed the table (one left, another passed), the move still stands and goes
        again on the fresh etag; when the game went past it (our time ran out), it is too late,
        and the stream shows what the server did. Both end the move (True); a table that keeps
        changing under it, past a few tries, has the player choose again.
        """
        etag = view.table.etag
        for _ in range(_RESENDS):
            try:
                await move(etag=etag)
                return True
            except ConflictError as error:
                if error.reason != "ETAG_MISMATCH":
                    raise
            fresh = await self.client.get_table(self.name)
            if not _same_move(view, fresh):
                self.say("  Too late: the move was made for you.")
                return True
            etag = fresh.table.etag
        return False

    def too_late(self, error: IllegalMoveError) -> bool:
        """Whether a refused move came after the server made it for us (our time ran out)."""
        if error.reason not in _TOO_LATE:
            return False
        self.say("  Too late: the move was made for you.")
        return True

    # ------------------------------------------------------------------ asking

    async def peek_line(self) -> str:
        """The player's next line, left for the next question; read now if none is waiting.

        Whoever waits for it may be cancelled (the game moved on) without losing it: the read
        goes on, and the next question gets its line.
        """
        if self._line is None:
            self._line = asyncio.ensure_future(_read_line(self.inp))
        return await asyncio.shield(self._line)

    async def take_line(self) -> str:
        """The player's next line (see :meth:`peek_line`), answered."""
        line = await self.peek_line()
        self._line = None
        return line

    async def quit_while_waiting(self) -> None:
        """While the table waits for players, let 'quit' (or the end of input) leave it.

        At a terminal other lines are answered (nothing can be played yet); piped input's are
        moves typed ahead, kept for the game's questions.
        """
        while True:
            line = await self.peek_line()
            text = line.strip().lower()
            if not line or text in _QUIT_WORDS:
                break
            if self.echo:
                return
            await self.take_line()
            if text in ("help", "?", "h"):
                self.say(_HELP)
            elif text:
                self.say("The game starts when every seat is taken; type quit to leave.")
        await self.take_line()
        if self.echo:
            self.say(line.strip())
        raise _QuitError("quit" if line else "end of input")

    async def ask(self, prompt: str) -> str:
        """One line from the player; raises _QuitError at end of input or on 'quit'."""
        while True:
            print(prompt, end="", file=self.out, flush=True)
            line = await self.take_line()
            if not line:
                self.say()
                raise _QuitError("end of input")
            text = line.strip()
            if self.echo:
                # Piped input is not echoed by a terminal: write it, so the transcript reads well.
                self.say(text)
            if text.lower() in _QUIT_WORDS:
                raise _QuitError("quit")
            if text.lower() in ("help", "?", "h"):
                self.say(_HELP)
                continue
            if text.lower().split(" ", 1)[0] == "react":
                await self.react(text.lower())
                continue
            if text:
                return text

    async def act(self, view: pb.TableView, *, passing_only: bool = False) -> None:
        """Ask for (or choose) the player's move if the view says the game waits for one."""
        phase = view.table.phase
        if phase == pb.PHASE_PASSING and view.cards_to_pass > 0:
            await self.pass_cards(view)
        elif (
            not passing_only
            and phase == pb.PHASE_PLAYING
            and view.table.HasField("turn_seat")
            and view.table.turn_seat == self.seat
            and view.legal_cards
        ):
            await self.play_card(view)

    async def pass_cards(self, view: pb.TableView) -> None:
        self.say()
        self.show_hand(view.hand)
        while True:
            if self.auto:
                # Pass the three highest cards: simple, and rarely a bad idea.
                chosen = sorted(view.hand, key=lambda c: (c.rank, c.suit))[-3:]
            else:
                text = await self.ask(
                    f"Cards to pass ({view.cards_to_pass}, like 'QS KS AH'){self.time_left(view)}: "
                )
                if text.lower() == "auto":
                    self.auto = True
                    continue
                if text.lower() == "hint":
                    if await self.hint(view):
                        return
                    continue
                try:
                    chosen = cards(text)
                except InvalidCardError as error:
                    self.say(f"  {error}")
                    continue
            try:
                if await self.send(
                    view, functools.partial(self.client.pass_cards, self.name, chosen)
                ):
                    return
                view = await self.client.get_table(self.name)  # another pass moved the table
            except IllegalMoveError as error:
                if self.too_late(error):
                    return
                self.say(f"  Not allowed: {error}")
                if self.auto:
                    raise

    async def play_card(self, view: pb.TableView) -> None:
        self.say()
        self.show_trick(view)
        self.show_hand(view.hand)
        self.say(f"Legal: {self.labels(sort_cards(view.legal_cards))}")
        while True:
            if self.auto:
                chosen: pb.Card | str = view.legal_cards[0]
            else:
                text = await self.ask(f"Your card{self.time_left(view)}: ")
                if text.lower() == "auto":
                    self.auto = True
                    continue
                if text.lower() == "hint":
                    if await self.hint(view):
                        return
                    continue
                chosen = text
            try:
                if await self.send(
                    view, functools.partial(self.client.play_card, self.name, chosen)
                ):
                    return
                view = await self.client.get_table(self.name)  # still this turn: a seat changed
            except InvalidCardError as error:
                self.say(f"  {error}")
            except IllegalMoveError as error:
                if self.too_late(error):
                    return
                self.say(f"  Not allowed: {error}")
                if error.legal_cards:
                    self.say(f"  Legal: {self.labels(sort_cards(error.legal_cards))}")
                if self.auto:
                    raise

    async def hint(self, view: pb.TableView) -> bool:
        """Say the move the server suggests (a heuristic bot's choice from our view) for the
        move ``view`` asks for; whether the game has moved on from it instead (the turn timer
        moved for us meanwhile: the stream shows what happened, as for a move too late)."""
        try:
            suggestion = await self.client.suggest_move(self.name)
        except IllegalMoveError:  # the seat owes no move now: the server made ours
            self.say("  Too late: the move was made for you.")
            return True
        except HeartsError as error:  # a hint is optional: the game goes on without one
            self.say(f"  No hint: {error}")
            return False
        # Another seat's pass changes the etag but not our question: the cards tell.
        offered = {card_str(c) for c in (view.hand if view.cards_to_pass else view.legal_cards)}
        wanted = view.cards_to_pass or 1
        hinted = {card_str(c) for c in suggestion.cards}
        if len(hinted) != wanted or not hinted <= offered:
            self.say("  Too late: the move was made for you.")
            return True
        self.say(f"  Hint: {self.labels(suggestion.cards)}")
        return False

    # ------------------------------------------------------------------ the game

    async def run(self, view: pb.TableView) -> int:
        """Play from ``view`` (the join's) until the game ends; the exit code.

        While the table waits for players, nothing is asked, but 'quit' (or the end of input)
        still leaves it: a player must not be stuck at a table nobody else comes to.
        """
        if self.auto or view.table.phase != pb.PHASE_WAITING_FOR_PLAYERS:
            return await self.follow(view)
        follow = asyncio.create_task(self.follow(view))
        listener = asyncio.create_task(self.quit_while_waiting())
        try:
            await asyncio.wait({follow, listener}, return_when=asyncio.FIRST_COMPLETED)
            if listener.done():
                listener.result()  # raises _QuitError: the player left
            return await follow
        finally:
            for task in (listener, follow):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError, _QuitError):
                        await task

    async def follow(self, view: pb.TableView) -> int:
        """:meth:`run`'s game: the moves asked for, and the table's stream shown.

        The watch stream is all it needs while others move: the server restarts a Monte Carlo
        bot whose thinking was lost (its replica died) for the tables someone watches.
        """
        table = view.table
        if table.phase in (pb.PHASE_PASSING, pb.PHASE_PLAYING):
            self.show_round(
                table.round_number,
                table.dealer,
                table.pass_direction,
                passed=table.phase == pb.PHASE_PLAYING,
            )
        await self.act(view)
        self.sequence = view.sequence
        stream = self.client.watch(self.name, after_sequence=view.sequence)
        async with contextlib.aclosing(stream):
            async for update in stream:
                self.sequence = update.sequence
                if update.HasField("snapshot"):
                    # The server could not replay what we missed: start again from its state.
                    view = update.snapshot
                    if view.table.phase == pb.PHASE_GAME_OVER:
                        self.show_final(view.table.total_scores, view.table.result.winners)
                        return EXIT_OK
                    await self.act(view)
                    continue
                event = update.event
                self.show_event(event)
                kind = event.WhichOneof("event")
                if kind == "game_over":
                    over = event.game_over
                    self.show_final(over.total_scores, over.result.winners)
                    return EXIT_OK
                if kind == "table_deleted":
                    self.say("The table was deleted.")
                    return EXIT_QUIT
                if kind == "turn_changed" and event.turn_changed.seat == self.seat:
                    # TurnChanged ends every batch of moves, so the table now waits for us.
                    await self.act(await self.client.get_table(self.name))
                elif kind == "hand_dealt":
                    await self.act(await self.client.get_table(self.name), passing_only=True)
        self.say("The server ended the game's stream.")
        return EXIT_ERROR

    # ------------------------------------------------------------------ the next game

    async def play_again(self) -> bool:
        """Ask ``Play again? [y/N]`` once the game is over; True for yes.

        Anything but yes is no, and so are the end of input and 'quit': the game is over, and
        nothing is left to leave. While the question waits, the finished table's stream goes on,
        so a player who asks for the rematch first is shown (``rematch_created``).
        """
        prompt = "Play again? [y/N]: "
        self.say()
        watcher = asyncio.create_task(self.show_rematches(prompt))
        try:
            print(prompt, end="", file=self.out, flush=True)
            line = await self.take_line()
        finally:
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError, HeartsError):
                await watcher
        if not line:
            self.say()
            return False
        text = line.strip()
        if self.echo:
            self.say(text)
        return text.lower() in ("y", "yes")

    async def show_rematches(self, prompt: str) -> None:
        """Show the finished table's ``rematch_created`` events (then ask ``prompt`` again)."""
        stream = self.client.watch(self.name, after_sequence=self.sequence)
        async with contextlib.aclosing(stream):
            async for update in stream:
                self.sequence = update.sequence
                if update.HasField("event") and update.event.HasField("rematch_created"):
                    self.say()
                    self.show_event(update.event)
                    print(prompt, end="", file=self.out, flush=True)

    def show_rematch(self, view: pb.TableView) -> None:
        """The first lines of the next game: its table, and whether it waits for players."""
        table = view.table
        self.say(
            f"Rematch at {table.name} (after {table.rematch_of}): "
            f"you sit in seat {self.seat} again."
        )
        self.show_waiting(view)

    def show_waiting(self, view: pb.TableView) -> None:
        """Which seats the game still waits for, if it does."""
        table = view.table
        taken = {seat.seat for seat in table.seats if seat.occupant != pb.SEAT_OCCUPANT_EMPTY}
        free = [self.who(seat) for seat in range(4) if seat not in taken]
        if table.phase == pb.PHASE_WAITING_FOR_PLAYERS and free:
            self.say(
                f"Waiting for the other players to take their seats "
                f"({', '.join(free)} {'is' if len(free) == 1 else 'are'} still free)."
            )
            if table.HasField("fill_with_bots_after"):
                wait = table.fill_with_bots_after.ToMilliseconds() / 1000
                self.say(f"If nobody sits down or leaves for {wait:g} s, bots take the free seats.")
            if not self.auto:
                self.say("Type quit to leave the table.")


def _same_move(before: pb.TableView, now: pb.TableView) -> bool:
    """Whether ``now`` still waits for the move the player chose on ``before``."""
    if (now.table.phase, now.table.round_number) != (before.table.phase, before.table.round_number):
        return False
    if now.table.phase == pb.PHASE_PASSING:
        return now.cards_to_pass > 0
    return (
        now.table.HasField("turn_seat")
        and now.table.turn_seat == now.viewer_seat
        and len(now.completed_tricks) == len(before.completed_tricks)
        and len(now.current_trick.cards) == len(before.current_trick.cards)
    )


async def _read_line(inp: TextIO) -> str:
    """One line of ``inp``, read in a daemon thread.

    A read blocks until the player presses Enter. In asyncio's default executor (``to_thread``)
    it would hold up the end of the program after Ctrl-C until then; a daemon thread does not.
    """
    loop = asyncio.get_running_loop()
    future: asyncio.Future[str] = loop.create_future()

    def settle(line: str | None, error: BaseException | None) -> None:
        if future.done():  # Ctrl-C cancelled the wait meanwhile
            return
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(line or "")

    def read() -> None:
        line: str | None = None
        error: BaseException | None = None
        try:
            line = inp.readline()
        except Exception as failure:  # closed or unreadable input: raised in the game's task
            error = failure
        with contextlib.suppress(RuntimeError):  # the loop is gone: the program is ending
            loop.call_soon_threadsafe(settle, line, error)

    threading.Thread(target=read, name="hearts-input", daemon=True).start()
    return await future


# ---------------------------------------------------------------------- commands


def _symbols_ok(out: TextIO) -> bool:
    encoding = getattr(out, "encoding", None)
    if not encoding:
        return True
    try:
        "".join(SUIT_SYMBOLS.values()).encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


async def _play(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    level = args.bots or DEFAULT_BOTS
    async with HeartsClient(args.server, identity_token=args.identity_token) as client:
        if args.table:  # someone else's table: take a free seat, and leave it when done
            name = table_name(args.table)
            joined = await client.join_table(name, args.name, seat=args.seat)
            intro = f"Table {name}: you ({args.name}) sit in seat {joined.seat}."
        elif args.quick:  # the server seats us with strangers who asked for the same game
            joined = await client.quick_join(
                args.name,
                rules=_rules_asked(args),
                turn_timeout=args.turn_timeout,
                fill_with_bots_after=args.bots_after,
            )
            name = joined.name
            intro = f"Quick game at {name}: you ({args.name}) sit in seat {joined.seat}."
        else:
            created = await client.create_table(
                f"{args.name} vs bots",
                rules=_rules_asked(args),
                bots={1: level, 2: level, 3: level},
                deck_seed=args.seed,
                turn_timeout=args.turn_timeout,
            )
            name = created.name
            try:
                joined = await client.join_table(name, args.name, seat=0)
            except HeartsError:
                with contextlib.suppress(HeartsError):  # the table was only made for this player
                    await client.delete_table(name)
                raise
            kind = level.replace("_", " ").replace("monte carlo", "Monte Carlo")
            intro = f"Table {name}: you ({args.name}) play against three {kind} bots."
        table = joined.view.table
        print(
            f"{intro}\nThe game ends when someone reaches {table.rules.target_score} points; "
            f"the lowest total wins.{_variants(table.rules)} Type 'help' for help.",
            file=out,
            flush=True,
        )
        # This command made the table: quitting deletes it. The server made a quick game's, so
        # quitting leaves its seat (to the next player who asks, while the game waits).
        own = not args.table and not args.quick
        view = joined.view
        rematch = False
        while True:
            game = _Game(
                client,
                name,
                joined.seat,
                inp,
                out,
                auto=args.auto,
                symbols=not args.ascii and _symbols_ok(out),
            )
            if rematch:
                game.show_rematch(view)
            elif args.quick:
                game.show_waiting(view)
            code = await _play_game(game, view, own=own)
            # --auto never reads the input (it may stay open, as a terminal's does): it plays
            # one game and ends, as it always did.
            if code != EXIT_OK or args.auto or not _can_ask(inp) or not await game.play_again():
                return code
            joined = await client.rematch_table(name)
            # The server made the rematch's table: its creator token is nobody's, so quitting
            # it leaves the seat to a bot, as at someone else's table.
            name, view, own, rematch = joined.name, joined.view, False, True


async def _play_game(game: _Game, view: pb.TableView, *, own: bool) -> int:
    """Play one game from ``view``; the exit code. Quitting or failing midway leaves the table
    (or deletes it, if ``own``: this command made it)."""
    try:
        return await game.run(view)
    except (_QuitError, asyncio.CancelledError) as stop:  # quit, end of input or Ctrl-C
        cut = isinstance(stop, asyncio.CancelledError)  # Ctrl-C, at a prompt or not
        game.say("\nLeaving the table." if cut else "Leaving the table.")
        await _give_up(game.client, game.name, own=own)
        if cut:
            raise  # asyncio.run turns it into KeyboardInterrupt
        return EXIT_QUIT
    except BaseException:
        # Any other end (the server gone for longer than the retries, a bug): a seat held by
        # a player who has left would stop the others' game until the table expires.
        await _give_up(game.client, game.name, own=own)
        raise


def _can_ask(inp: TextIO) -> bool:
    """Whether the player can still be asked something: the input is open (a terminal or a
    pipe; at its end, the answer is no)."""
    return not getattr(inp, "closed", False)


async def _give_up(client: HeartsClient, name: str, *, own: bool) -> None:
    """Leave the table (a bot takes the seat), or delete it if this command made it; at most a
    few seconds, and quietly: the command is ending anyway."""
    with contextlib.suppress(HeartsError, TimeoutError):
        async with asyncio.timeout(_GIVE_UP_SECONDS):
            if own:
                await client.delete_table(name)
            else:
                await client.leave_table(name)


# How each rule reads when it differs from the German rules (the defaults).
_VARIANTS = {
    "pass_cards": (True, "no passing"),
    "no_points_on_first_trick": (True, "points allowed on the first trick"),
    "can_lead_any_club": (False, "any club may open"),
    "must_break_hearts": (True, "hearts may be led at any time"),
    "queen_breaks_hearts": (False, "the queen of spades breaks hearts"),
    "can_lead_hearts_instead_of_queen": (
        False,
        "hearts may be led when the queen is the only other card",
    ),
    "jack_of_diamonds_bonus": (False, "the jack of diamonds is worth -10"),
    "avoid_all_tricks_bonus": (False, "taking no trick is worth -5"),
}


def _variants(rules: pb.Rules) -> str:
    """The table's departures from the German rules, as a sentence (empty if none)."""
    changed = [
        text for field, (default, text) in _VARIANTS.items() if getattr(rules, field) != default
    ]
    if rules.moon_scoring == pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER:
        changed.append("shooting the moon subtracts 26 from the shooter")
    return f" Variants: {'; '.join(changed)}." if changed else ""


def _rules_asked(args: argparse.Namespace) -> dict[str, object]:
    """The rules ``--rule``, ``--target-score`` and ``--no-passing`` ask for (unset: defaults)."""
    rules: dict[str, object] = dict(args.rule)
    if args.target_score is not None:
        rules["target_score"] = args.target_score
    if args.no_passing:
        rules["pass_cards"] = False
    return rules


def _rule(text: str) -> tuple[str, object]:
    """An argparse type: ``field=value`` of ``hearts.v1.Rules`` (``true``/``false``, a number,
    or a moon scoring name), checked with :func:`make_rules`."""
    field, equals, raw = text.partition("=")
    field, raw = field.strip().replace("-", "_"), raw.strip()
    if not equals or not field:
        raise argparse.ArgumentTypeError(f"not field=value: {text!r}")
    value: object = raw
    if raw.lower() in ("true", "yes", "on"):
        value = True
    elif raw.lower() in ("false", "no", "off"):
        value = False
    elif raw.lstrip("-").isdigit():
        value = int(raw)
    try:
        make_rules({field: value})
    except ValueError:
        fields = ", ".join(pb.Rules.DESCRIPTOR.fields_by_name)
        raise argparse.ArgumentTypeError(
            f"not a rule: {text!r} (fields: {fields}; moon_scoring: add_to_others or "
            "subtract_from_shooter)"
        ) from None
    return field, value


_PHASES = {
    pb.PHASE_WAITING_FOR_PLAYERS: "waiting",
    pb.PHASE_PASSING: "passing",
    pb.PHASE_PLAYING: "playing",
    pb.PHASE_GAME_OVER: "over",
}
# The most ListPlayerTables returns: the server keeps a player's 100 most recently joined tables.
_PLAYER_TABLES_MAX = 100


async def _tables(args: argparse.Namespace, inp: TextIO, out: TextIO) -> int:
    count = 0
    async with HeartsClient(args.server, identity_token=args.identity_token) as client:
        lines = _mine(client, args.limit) if args.mine else _listed(client, has_free_seat=args.open)
        async with contextlib.aclosing(lines):
            async for line in lines:
                print(line, file=out)
                count += 1
                if args.limit and count >= args.limit:
                    break
    if not count:
        print("No tables.", file=out)
    return EXIT_OK


async def _listed(client: HeartsClient, *, has_free_seat: bool) -> AsyncGenerator[str, None]:
    """The lines of ``hearts tables``: the server's listed tables, newest first."""
    async for table in client.iter_tables(has_free_seat=has_free_seat):
        yield _table_line(table)


async def _mine(client: HeartsClient, limit: int) -> AsyncGenerator[str, None]:
    """The lines of ``hearts tables --mine``: the caller's tables (most recently joined first),
    each with the caller's seat."""
    for mine in await client.list_player_tables(page_size=limit or _PLAYER_TABLES_MAX):
        yield f"{_table_line(mine.table)}  your seat: {mine.seat}"


def _table_line(table: pb.Table) -> str:
    """One table as ``hearts tables`` shows it: name, display name, phase, timers, seats."""
    over = table.phase == pb.PHASE_GAME_OVER
    seats = ", ".join(
        (seat.player_display_name or "(free)")
        # A signed-in player's id (the app's id of the user), from the identity token.
        + (f" <{seat.player_id}>" if seat.player_id else "")
        # A bot standing in for a player who left: --table NAME --seat N takes it over.
        + (" (open)" if seat.stand_in and not over else "")
        for seat in sorted(table.seats, key=_seat_no)
    )
    phase = _PHASES.get(table.phase, "?")
    timer = ""
    if table.HasField("turn_timeout"):
        timer = f"  {table.turn_timeout.ToMilliseconds() / 1000:g} s a move"
    if table.HasField("fill_with_bots_after") and table.phase == pb.PHASE_WAITING_FOR_PLAYERS:
        # Still waiting: bots take the free seats after so long without an arrival.
        wait = table.fill_with_bots_after.ToMilliseconds() / 1000
        timer += f"  bots after {wait:g} s"
    # A finished game whose players asked for a rematch: where the next game is.
    rematch = f"  rematch: {table.rematch_table}" if table.rematch_table else ""
    return f"{table.name}  {table.display_name!r}  {phase}{timer}  [{seats}]{rematch}"


def _seat_no(seat: pb.Seat) -> int:
    return seat.seat


def _int_between(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high`` (what the API's field can hold)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is not between {low} and {high}")
        return value

    return parse


def _add_identity_token(parser: argparse.ArgumentParser, use: str) -> None:
    """The ``--identity-token`` option, ``$HEARTS_IDENTITY_TOKEN`` by default; ``use`` says what
    the command sends it for."""
    parser.add_argument(
        "--identity-token",
        default=os.environ.get("HEARTS_IDENTITY_TOKEN") or None,
        metavar="JWT",
        help=f"your identity token (a JWT from the app's sign-in), {use} (env "
        "HEARTS_IDENTITY_TOKEN: safer, as other users of the machine can see a command's "
        "arguments)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The ``hearts`` argument parser."""
    parser = argparse.ArgumentParser(prog="hearts", description="Play Hearts on a Hearts server.")
    commands = parser.add_subparsers(dest="command", required=True)
    server_help = f"the server's host:port (env HEARTS_SERVER; default {DEFAULT_SERVER})"
    server = os.environ.get("HEARTS_SERVER", DEFAULT_SERVER)

    play = commands.add_parser(
        "play",
        help="play a game against three bots, join a table with --table, or play with "
        "strangers with --quick",
    )
    play.add_argument("--server", default=server, help=server_help)
    play.add_argument("--name", default="Player", help="your name at the table")
    play.add_argument(
        "--bots", choices=BOT_LEVELS, help=f"the bots' level (default {DEFAULT_BOTS})"
    )
    play.add_argument(
        "--seed", type=_int_between(-(2**63), 2**63 - 1), help="deck seed, for a reproducible game"
    )
    play.add_argument(
        "--target-score",
        type=_int_between(1, 1000),
        help="end the game at this total (default 100)",
    )
    play.add_argument("--no-passing", action="store_true", help="play without passing cards")
    play.add_argument(
        "--turn-timeout",
        type=_int_between(1, 86_400),
        metavar="SECONDS",
        help="your time for each move, at most the server's limit (59 minutes by default); "
        "when it runs out, the server moves for you",
    )
    play.add_argument(
        "--rule",
        type=_rule,
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="a rule of the new table (with --quick, of the game to join), repeatable: "
        "jack_of_diamonds_bonus=true, moon_scoring=subtract_from_shooter, ... "
        "(hearts.v1.Rules' fields)",
    )
    play.add_argument(
        "--quick",
        action="store_true",
        help="play with strangers: take a seat at the game that waits for players with these "
        "rules, turn timeout and --bots-after, or start one; it begins when four have joined",
    )
    play.add_argument(
        "--bots-after",
        type=_int_between(1, 86_400),
        metavar="SECONDS",
        help="with --quick: when nobody sits down or leaves for this long, heuristic bots take "
        "the free seats and the game begins; at most the server's limit (59 minutes by "
        "default). Without it the game waits for four players",
    )
    play.add_argument(
        "--table",
        metavar="NAME",
        help="join this table (tables/ID or ID) in a free seat instead of making one",
    )
    play.add_argument(
        "--seat",
        type=_int_between(0, 3),
        help="with --table: this seat (an empty one, or one a bot plays for a player who left)",
    )
    _add_identity_token(
        play,
        "sent when creating and joining a table, for a server that checks them: your seat then "
        "shows your player id, and joining a table where you hold a seat gives you that seat "
        "again",
    )
    play.add_argument("--auto", action="store_true", help="play the first legal card for me")
    play.add_argument("--ascii", action="store_true", help="write suits as letters, not symbols")
    play.set_defaults(run=_play)

    tables = commands.add_parser("tables", help="list the server's tables")
    tables.add_argument("--server", default=server, help=server_help)
    tables.add_argument("--open", action="store_true", help="only tables with a free seat")
    tables.add_argument(
        "--mine",
        action="store_true",
        help="the tables where you hold a seat (listed or not), the most recently joined first, "
        "with your seat; needs --identity-token and a server that checks identity tokens",
    )
    _add_identity_token(tables, "with --mine: whose tables to list")
    tables.add_argument(
        "--limit",
        type=_int_between(0, 2**31 - 1),
        default=50,
        help="list at most this many (0: all)",
    )
    tables.set_defaults(run=_tables)
    return parser


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
) -> int:
    """Run the ``hearts`` command; returns the exit code (0: done, 1: quit, 2: error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "play" and args.quick:
        not_quick = {
            "--table": args.table is not None,
            "--seat": args.seat is not None,
            "--seed": args.seed is not None,
            "--bots": args.bots is not None,
        }
        given = [flag for flag, value in not_quick.items() if value]
        if given:
            parser.error(
                f"{', '.join(given)}: not with --quick (the server picks the table and the "
                "seat, deals at random, and seats bots only with --bots-after)"
            )
    if args.command == "play" and args.table:
        new_table_only = {
            "--rule": args.rule,
            "--target-score": args.target_score is not None,
            "--no-passing": args.no_passing,
            "--seed": args.seed is not None,
            "--turn-timeout": args.turn_timeout is not None,
        }
        given = [flag for flag, value in new_table_only.items() if value]
        if given:
            parser.error(f"{', '.join(given)}: only for a new table, not with --table")
    if args.command == "play" and not args.quick and args.bots_after is not None:
        parser.error("--bots-after: only with --quick")
    if args.command == "play" and not args.table and args.seat is not None:
        parser.error("--seat: only with --table (a new table seats you in seat 0)")
    if args.command == "tables" and args.mine:
        if args.open:
            parser.error("--open: not with --mine (it lists your tables, free seats or not)")
        if not args.identity_token:
            parser.error(
                "--mine: needs your identity token (--identity-token or HEARTS_IDENTITY_TOKEN): "
                "the server lists the tables of the player it names"
            )
    inp = stdin if stdin is not None else sys.stdin
    out = stdout if stdout is not None else sys.stdout
    run: Callable[[argparse.Namespace, TextIO, TextIO], Coroutine[Any, Any, int]] = args.run
    try:
        code = asyncio.run(run(args, inp, out))
        out.flush()  # a short output sits in the buffer: a closed pipe must fail here, not at exit
        return code
    except UnavailableError as error:
        if error.reason in ("UNAVAILABLE", "DEADLINE_EXCEEDED"):  # no answer from the server
            print(f"hearts: cannot reach the server at {args.server}: {error}", file=sys.stderr)
        else:  # it answered, with a reason (its table store is down, it is stopping)
            print(f"hearts: the server at {args.server} is unavailable: {error}", file=sys.stderr)
    except BrokenPipeError:
        # The reader of our output went away (`hearts tables | head`): nothing more to say.
        # Point stdout at nowhere, so that the interpreter's final flush does not fail too.
        with contextlib.suppress(OSError, ValueError):  # a stdout without a file descriptor
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK
    except HeartsError as error:
        print(f"hearts: the server refused: {error}", file=sys.stderr)
        hint = _hint(args, error.reason)
        if hint:
            print(f"hearts: {hint}", file=sys.stderr)
    except KeyboardInterrupt:
        print(file=out)
        return EXIT_QUIT
    return EXIT_ERROR


def _hint(args: argparse.Namespace, reason: str) -> str | None:
    """What to do about a refusal with ``reason``, for the command that got it."""
    if args.command == "tables" and args.mine and reason in _MINE_HINTS:
        return _MINE_HINTS[reason]
    return _HINTS.get(reason)


if __name__ == "__main__":
    sys.exit(main())
