"""The stored form of a table: seats, settings, the engine state and the last event sequence.

A record is a frozen value encoded as compact JSON. It holds secrets (every hand, the deck seed),
so it never leaves the server: responses are built from engine views only
(:mod:`hearts_server.convert`).

Every command writes the record, so its encoding is on the hot path. Schema 2 therefore writes
the engine state as arrays of card indexes (0..51) and 52-bit masks, read off the state's public
fields by name and rebuilt with ``_replace`` on a fresh game (see :func:`_game_to_json`), and
encodes what a command did not change once per table (its last encoding is kept: see
``_Encoded``). Schema 3 is schema 2 on two lines: the game's finished rounds, most of a record
late in a game and unchanged by all but a round's last card, move to the second line, which the
Redis store keeps in a field of its own and writes only when it changed. A command then writes
about 1 KiB whatever the stage of the game, instead of a record that grows by about 450 bytes a
round. Schema 1 records, which hold the engine's readable dict form with card notation, and
schema 2 records are still read; servers write schema 2 while a fleet is upgraded from a version
that reads no schema 3 (``--record-schema``).
"""

from __future__ import annotations

import dataclasses
import enum
import functools
from typing import Any

import orjson

from hearts_engine import (
    DECK,
    Card,
    Phase,
    RoundRecord,
    Rules,
    State,
    Trick,
    new_game,
    seats_to_act,
    state_from_dict,
)
from hearts_engine.bots import BotLevel

__all__ = [
    "RECORD_SCHEMA",
    "WRITABLE_SCHEMAS",
    "Occupant",
    "SeatRecord",
    "TableRecord",
    "UnreadableRecordError",
    "forget",
]

RECORD_SCHEMA = 3
_READABLE_SCHEMAS = (1, 2, 3)
WRITABLE_SCHEMAS = (2, 3)


_FIELD_TYPES = (
    ("id", str),
    ("name", str),
    ("first_dealer", int),
    ("create_ms", int),
    ("update_ms", int),
    ("seq", int),
    ("bot_seed", int),
    ("creator_epoch", int),
)


class UnreadableRecordError(ValueError):
    """A stored record this version cannot read.

    ``newer`` when a later schema than this version knows wrote it: during a rolling upgrade a
    replica of the new version can read it, so callers are told to retry. Otherwise the record is
    damaged (or was written by hand).
    """

    def __init__(self, message: str, *, newer: bool) -> None:
        super().__init__(message)
        self.newer = newer


class Occupant(enum.StrEnum):
    """Who sits in a seat."""

    EMPTY = "EMPTY"
    HUMAN = "HUMAN"
    BOT = "BOT"


@dataclasses.dataclass(frozen=True, slots=True)
class SeatRecord:
    """One seat. ``epoch`` goes up whenever a human leaves it, revoking its old tokens.

    ``stand_in``: the seat's bot plays for a player who left mid-game; a player may take over.
    ``rematched``: the player took the seat with RematchTable, from the same seat of the table
    this one is a rematch of (whose seat token then leads back to it). ``player_id``: the
    player's verified identity (an identity token's ``sub``), or "". ``left``: the player left
    the finished game; the seat keeps its name and id for the results, but is nobody's.
    """

    occupant: Occupant = Occupant.EMPTY
    name: str = ""
    bot_level: BotLevel | None = None
    epoch: int = 0
    stand_in: bool = False
    rematched: bool = False
    player_id: str = ""
    left: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class TableRecord:
    """Everything stored about a table."""

    table_id: str
    display_name: str
    rules: Rules
    first_dealer: int
    seats: tuple[SeatRecord, ...]
    create_ms: int
    update_ms: int
    sequence: int
    deck_seed: int | None
    bot_seed: int
    creator_epoch: int = 0
    game: State | None = None
    # The time a player has for a move, 0 for no limit, and when the moves owed now were asked
    # for: the last card played or deal (a pass leaves it). See turn_deadline_ms.
    turn_timeout_ms: int = 0
    turn_ms: int = 0
    unlisted: bool = False  # left out of ListTables (see Table.unlisted)
    # The table of the next game with the same players, once one asked for it (RematchTable),
    # and the finished table that this one is the rematch of: table ids, or "".
    rematch_id: str = ""
    rematch_of: str = ""
    # Whether a turn.started webhook goes out each time a player is asked for a move (see
    # Table.turn_notifications).
    turn_notifications: bool = False
    # How long the table waits for players before bots take its empty seats, 0 for ever (see
    # Table.fill_with_bots_after and fill_deadline_ms).
    fill_after_ms: int = 0

    @property
    def phase_over(self) -> bool:
        """Whether the game has ended."""
        return self.game is not None and self.game.phase == Phase.GAME_OVER

    @property
    def has_free_seat(self) -> bool:
        """Whether a human could still join."""
        return any(seat.occupant == Occupant.EMPTY for seat in self.seats)

    def owing_players(self) -> tuple[int, ...]:
        """The human seats the game waits for now: the seat to play, or those yet to pass."""
        state = self.game
        if state is None:
            return ()
        if state.phase is Phase.PLAYING:
            owing: tuple[int, ...] = (state.turn,)
        elif state.phase is Phase.PASSING:
            owing = seats_to_act(state)
        else:
            return ()
        return tuple(seat for seat in owing if self.seats[seat].occupant is Occupant.HUMAN)

    @property
    def turn_deadline_ms(self) -> int | None:
        """When the time for the players' moves owed now runs out; None without a limit."""
        if not self.turn_timeout_ms or not self.owing_players():
            return None
        return self.turn_ms + self.turn_timeout_ms

    @property
    def fill_deadline_ms(self) -> int | None:
        """When bots take the empty seats of a table that waits for players: ``fill_after_ms``
        after the last change of seating (the last commit, while the game has not started),
        while a player is seated; None otherwise."""
        if not self.fill_after_ms or self.game is not None or not self.has_free_seat:
            return None
        if not any(seat.occupant is Occupant.HUMAN for seat in self.seats):
            return None
        return self.update_ms + self.fill_after_ms

    @property
    def timer_deadline_ms(self) -> int | None:
        """The next time the table's driver has to act (see ``TableApp._arm_turn_timer``)."""
        turn = self.turn_deadline_ms
        return self.fill_deadline_ms if turn is None else turn

    def timed_out(self, now_ms: int) -> tuple[int, ...]:
        """The human seats whose time for the move they owe ran out by ``now_ms``."""
        if not self.turn_timeout_ms or now_ms < self.turn_ms + self.turn_timeout_ms:
            return ()
        return self.owing_players()

    def evolve(
        self,
        game: State | None,
        sequence: int,
        update_ms: int,
        *,
        started_from: TableRecord | None = None,
    ) -> TableRecord:
        """A copy with another game, last event sequence and update time.

        What ``dataclasses.replace`` does for these three fields, several times faster: every
        command makes such a copy. ``started_from`` is the record the command began with when
        this one already carries some of its changes (a game it started, say): the turn clock
        compares the game with that one's.
        """
        return TableRecord(
            self.table_id,
            self.display_name,
            self.rules,
            self.first_dealer,
            self.seats,
            self.create_ms,
            update_ms,
            sequence,
            self.deck_seed,
            self.bot_seed,
            self.creator_epoch,
            game,
            self.turn_timeout_ms,
            (
                self.turn_since((started_from or self).game, game, update_ms)
                if self.turn_timeout_ms
                else 0
            ),
            self.unlisted,
            self.rematch_id,
            self.rematch_of,
            self.turn_notifications,
            self.fill_after_ms,
        )

    def turn_since(self, old: State | None, game: State | None, update_ms: int) -> int:
        """``turn_ms`` after the game moves from ``old`` to ``game`` at ``update_ms``.

        It starts again when new moves are owed: a deal (a new round, or the game's first), and
        every card played. One seat's pass leaves it for the seats still to pass; a change of
        seating leaves it too.
        """
        return update_ms if asked_anew(old, game) else self.turn_ms

    def to_json(self, *, schema: int = RECORD_SCHEMA) -> bytes:
        """The record as UTF-8 JSON: schema 3 (the default), or 2 for a fleet being upgraded from
        a version that reads no schema 3 (``--record-schema``).

        Schema 3 is two JSON texts on two lines: everything but the finished rounds, then the
        finished rounds as an array. A store may keep the second line apart and write it only
        when it changed, once a round (see :class:`~hearts_server.store.base.Store`), so what a
        command writes does not grow with the game. Schema 2 is one text holding both.
        """
        # Every command writes the record, and only its game, time and sequence change from one
        # command to the next: the rest is encoded once per table and seating, and the two
        # numbers are put between (see _Encoded).
        encoded = _ENCODED.get(self.table_id)
        fixed = (
            schema,
            self.display_name,
            self.rules,
            self.first_dealer,
            self.seats,
            self.create_ms,
            self.deck_seed,
            self.bot_seed,
            self.creator_epoch,
            self.turn_timeout_ms,
            self.unlisted,
            self.rematch_id,
            self.rematch_of,
            self.turn_notifications,
            self.fill_after_ms,
        )
        if encoded is None or encoded.fixed != fixed:
            if schema not in WRITABLE_SCHEMAS:
                raise ValueError(f"cannot write record schema {schema!r}")
            encoded = _Encoded(fixed, *self._head_parts(schema))
            if len(_ENCODED) >= _ENCODED_SIZE:
                _ENCODED.clear()  # rare and cheap to refill: a plain bound, no LRU bookkeeping
            _ENCODED[self.table_id] = encoded
        if self.game is None:
            game, rounds = b"null", b"[]"
        else:
            game, rounds = _game_to_json(self.game, self.rules, encoded)
        if self.phase_over:
            # A finished game is written again only if a seat is left or a rematch asked for: its
            # encoding, up to
            # hundreds of KiB for a long game, is not kept for it.
            _ENCODED.pop(self.table_id, None)
        timer = b',"turn_ms":%d' % self.turn_ms if self.turn_timeout_ms else b""
        if schema == 2:
            if self.game is not None:
                # The rounds inside the game's array, where schema 3 has their count.
                game = b"%s[%s]]" % (game[: game.rindex(b",") + 1], rounds[1:-1])
            return b'%s%d,"seq":%d%s%s,"game":%s}' % (
                encoded.head,
                self.update_ms,
                self.sequence,
                timer,
                encoded.tail,
                game,
            )
        return b'%s%d,"seq":%d%s%s,"game":%s}\n%s' % (
            encoded.head,
            self.update_ms,
            self.sequence,
            timer,
            encoded.tail,
            game,
            rounds,
        )

    def _head_parts(self, schema: int) -> tuple[bytes, bytes]:
        """The JSON object of everything but the game, cut around update_ms and seq."""
        data: dict[str, Any] = {
            "schema": schema,
            "id": self.table_id,
            "name": self.display_name,
            "rules": _rules_to_dict(self.rules),
            "first_dealer": self.first_dealer,
            "seats": [
                [
                    seat.occupant.value,
                    seat.name,
                    seat.bot_level and seat.bot_level.value,
                    seat.epoch,
                ]
                for seat in self.seats
            ],
            "create_ms": self.create_ms,
            "update_ms": 0,
            "seq": 0,
            "deck_seed": self.deck_seed,
            "bot_seed": self.bot_seed,
            "creator_epoch": self.creator_epoch,
        }
        # The settings below are left out when off: such records read as before they existed.
        if self.turn_timeout_ms:
            data["turn_timeout_ms"] = self.turn_timeout_ms
        if self.unlisted:
            data["unlisted"] = True
        if self.turn_notifications:
            data["turn_notifications"] = True
        if self.fill_after_ms:
            data["fill_after_ms"] = self.fill_after_ms
        stand_ins = [index for index, seat in enumerate(self.seats) if seat.stand_in]
        if stand_ins:  # beside "seats", whose entries older versions read as four values
            data["stand_ins"] = stand_ins
        rematched = [index for index, seat in enumerate(self.seats) if seat.rematched]
        if rematched:
            data["rematched"] = rematched
        left = [index for index, seat in enumerate(self.seats) if seat.left]
        if left:
            data["left"] = left
        if any(seat.player_id for seat in self.seats):
            data["player_ids"] = [seat.player_id for seat in self.seats]
        if self.rematch_id:
            data["rematch"] = self.rematch_id
        if self.rematch_of:
            data["rematch_of"] = self.rematch_of
        text = orjson.dumps(data)
        before, after = text[:-1].split(b',"update_ms":0,"seq":0', 1)
        return before + b',"update_ms":', after

    @classmethod
    def from_json(cls, raw: bytes, *, summary: bool = False) -> TableRecord:
        """The inverse of :meth:`to_json`; also reads schema 1 records.

        With ``summary``, a schema 3 record's finished rounds (its second line, most of a
        record late in a game: about 10 ms of decoding for a long finished one) are not read,
        and its game holds none: a summary for listings, which show only the table's own
        fields, phase and totals. Such a record must never be written, cached or viewed by a
        seat. Raises :class:`UnreadableRecordError` for anything else.
        """
        # Schema 3 is two lines; a schema 1 or 2 record is the first line alone (a store may
        # hand it back with a stale second line, which an older version did not clear).
        head, _, rounds = raw.partition(b"\n")
        try:
            data = orjson.loads(head)
            schema = data.get("schema")
        except (ValueError, AttributeError) as error:
            raise UnreadableRecordError(f"not a table record: {error}", newer=False) from None
        if schema not in _READABLE_SCHEMAS:
            newer = type(schema) is int and schema > RECORD_SCHEMA
            raise UnreadableRecordError(f"unsupported table record schema {schema!r}", newer=newer)
        try:
            return cls._from_dict(data, schema, None if summary else rounds)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
            raise UnreadableRecordError(
                f"a damaged schema {schema} record: {error!r}", newer=False
            ) from error

    @classmethod
    def _from_dict(cls, data: dict[str, Any], schema: int, rounds: bytes | None) -> TableRecord:
        rules = _rules_from_dict(data["rules"])
        game = data["game"]
        # The fields read as they are: a value of the wrong type would decode here and fail
        # later, in whatever call met it first (a listing of every table, say).
        for key, kind in _FIELD_TYPES:
            if type(data[key]) is not kind:
                raise TypeError(f"{key} is not a {kind.__name__}")
        if data["deck_seed"] is not None and type(data["deck_seed"]) is not int:
            raise TypeError("deck_seed is not an int")
        turn_timeout_ms = data.get("turn_timeout_ms", 0)
        turn_ms = data.get("turn_ms", data["update_ms"] if turn_timeout_ms else 0)
        if type(turn_timeout_ms) is not int or type(turn_ms) is not int:
            raise TypeError("turn_timeout_ms or turn_ms is not an int")
        unlisted = data.get("unlisted", False)
        turn_notifications = data.get("turn_notifications", False)
        if type(unlisted) is not bool or type(turn_notifications) is not bool:
            raise TypeError("unlisted or turn_notifications is not a bool")
        fill_after_ms = data.get("fill_after_ms", 0)
        if type(fill_after_ms) is not int:
            raise TypeError("fill_after_ms is not an int")
        seats = _seats_from(data)
        rematch_id = data.get("rematch", "")
        rematch_of = data.get("rematch_of", "")
        if type(rematch_id) is not str or type(rematch_of) is not str:
            raise TypeError("rematch or rematch_of is not a string")
        return cls(
            table_id=data["id"],
            display_name=data["name"],
            rules=rules,
            first_dealer=data["first_dealer"],
            seats=seats,
            create_ms=data["create_ms"],
            update_ms=data["update_ms"],
            sequence=data["seq"],
            deck_seed=data["deck_seed"],
            bot_seed=data["bot_seed"],
            creator_epoch=data["creator_epoch"],
            game=(
                None
                if game is None
                else state_from_dict(game)
                if schema == 1
                else _game_from_json(game, rules, _rounds_apart(data["id"], schema, rounds))
            ),
            turn_timeout_ms=turn_timeout_ms,
            turn_ms=turn_ms,
            unlisted=unlisted,
            rematch_id=rematch_id,
            rematch_of=rematch_of,
            turn_notifications=turn_notifications,
            fill_after_ms=fill_after_ms,
        )


def _seats_from(data: dict[str, Any]) -> tuple[SeatRecord, ...]:
    """The seats of a record's decoded JSON, the same tuple while the table's seating stays.

    A table whose players are connected to different replicas is read for nearly every
    command; the seating seldom changes, and a view's table fields are kept per seats tuple
    (``convert._table_head``, by identity), so the seats decode once per table and seating.
    The seating is told by its fields' JSON, exact to the type (``1`` and ``true`` differ) and
    to their presence (a ``null`` is not an absent field).
    """
    table_id = data["id"]
    key = orjson.dumps(
        [data["seats"]] + [[name in data, data.get(name)] for name in _SEATING_FIELDS]
    )
    known = _SEATINGS.get(table_id)
    if known is not None and known[0] == key:
        return known[1]
    seats = tuple(
        SeatRecord(Occupant(occ), name, BotLevel(level) if level else None, epoch)
        for occ, name, level, epoch in data["seats"]
    )
    if len(seats) != 4 or any(
        type(seat.name) is not str or type(seat.epoch) is not int for seat in seats
    ):
        raise TypeError("seats are not four (occupant, name, bot level, epoch)")
    # Flags kept beside "seats", whose entries older versions read as four values.
    seats = _flag_seats(seats, data.get("stand_ins", ()), Occupant.BOT, stand_in=True)
    seats = _flag_seats(seats, data.get("rematched", ()), Occupant.HUMAN, rematched=True)
    seats = _flag_seats(seats, data.get("left", ()), Occupant.HUMAN, left=True)
    if "player_ids" in data:
        player_ids = data["player_ids"]
        if (
            type(player_ids) is not list
            or len(player_ids) != 4
            or any(
                type(player_id) is not str or (player_id and seat.occupant is not Occupant.HUMAN)
                for player_id, seat in zip(player_ids, seats, strict=True)
            )
        ):
            raise TypeError("player_ids are not four strings, set for players only")
        seats = tuple(
            dataclasses.replace(seat, player_id=player_id) if player_id else seat
            for player_id, seat in zip(player_ids, seats, strict=True)
        )
    if len(_SEATINGS) >= _SEATINGS_SIZE:
        _SEATINGS.clear()  # a plain bound, as _ENCODED's
    _SEATINGS[table_id] = (_tight(key), seats)
    return seats


# Per table, its last seating decoded: the seating's key (see _seats_from) and its seats.
_SEATINGS: dict[str, tuple[bytes, tuple[SeatRecord, ...]]] = {}
_SEATINGS_SIZE = 4096
_SEATING_FIELDS = ("stand_ins", "rematched", "left", "player_ids")


# --- Schema 2: the engine state as arrays -------------------------------------------------------
#
# The layout is written out here, field by field by name, so it does not follow the engine's
# field order by accident: an engine change that adds a State field fails the record round-trip
# tests instead of silently writing records that miss it. Cards are their indexes; hands, passes
# and taken cards are 52-bit masks, as in the engine.

_CARD: tuple[Card, ...] = DECK
_BLANK: State = new_game()
"""A state to build others from by their public fields (``_replace`` takes every one)."""


def asked_anew(old: State | None, game: State | None) -> bool:
    """Whether moving the game from ``old`` to ``game`` asks for new moves.

    It does on a deal (a new round, or the game's first) and on every card played. One seat's
    pass does not (the seats still to pass owe the passes they owed), nor does a change of
    seating (the game is the same object).
    """
    if game is None or game is old:
        return False
    if old is None or game.phase is not old.phase or game.round_index != old.round_index:
        return True
    return game.phase is Phase.PLAYING and (
        game.turn != old.turn or len(game.tricks) != len(old.tricks)
    )


def _flag_seats(
    seats: tuple[SeatRecord, ...],
    indexes: Any,
    occupant: Occupant,
    *,
    stand_in: bool = False,
    rematched: bool = False,
    left: bool = False,
) -> tuple[SeatRecord, ...]:
    """``seats`` with the flags given set on those at ``indexes``, which must hold
    ``occupant``."""
    if type(indexes) not in (list, tuple) or any(
        type(index) is not int or not 0 <= index <= 3 or seats[index].occupant != occupant
        for index in indexes
    ):
        raise TypeError(f"flagged seats {indexes!r} are not {occupant.value} seats")
    return tuple(
        SeatRecord(
            seat.occupant,
            seat.name,
            seat.bot_level,
            seat.epoch,
            stand_in=seat.stand_in or stand_in,
            rematched=seat.rematched or rematched,
            player_id=seat.player_id,
            left=seat.left or left,
        )
        if index in indexes
        else seat
        for index, seat in enumerate(seats)
    )


@functools.lru_cache(maxsize=64)
def _rules_to_dict(rules: Rules) -> dict[str, Any]:
    # Shared and never mutated: orjson.dumps only reads it.
    return rules.to_dict()


def _rules_from_dict(data: dict[str, Any]) -> Rules:
    return _rules_from_items(tuple(data.items()))


@functools.lru_cache(maxsize=64)
def _rules_from_items(items: tuple[tuple[str, Any], ...]) -> Rules:
    return Rules.from_dict(dict(items))


def _cards(indexes: list[int]) -> tuple[Card, ...]:
    return tuple(map(_CARD.__getitem__, indexes))


def _trick_to_json(trick: Trick) -> list[Any]:
    return [trick.leader, trick.cards, trick.winner]


def _trick_from_json(data: list[Any]) -> Trick:
    leader, cards, winner = data
    return Trick(leader=leader, cards=_cards(cards), winner=winner)


def _tight(data: bytes) -> bytes:
    """``data`` in a buffer of its own size, for what a cache keeps per table.

    orjson (3.13) returns its output in a buffer of at least 4 KiB that it never shrinks, and
    ``bytes.join`` of one item returns that item: a cache of 4,096 tables kept 16 MiB where
    0.6 MiB would do (a soak's tracemalloc).
    """
    return bytes(memoryview(data))


def _round_to_json(record: RoundRecord) -> bytes:
    return orjson.dumps(
        [
            record.round_index,
            record.dealer,
            record.deck,
            record.passes,
            [[t.leader, t.cards, t.winner] for t in record.tricks],
            record.points,
            record.moon_shooter,
        ]
    )


def _round_from_json(data: list[Any]) -> RoundRecord:
    round_index, dealer, deck, passes, tricks, points, moon_shooter = data
    return RoundRecord(
        round_index=round_index,
        dealer=dealer,
        deck=_cards(deck),
        passes=tuple(map(_cards, passes)),
        tricks=tuple(map(_trick_from_json, tricks)),
        points=tuple(points),
        moon_shooter=moon_shooter,
    )


class _Encoded:
    """What the last record of one table encoded to, for the next record to reuse.

    One per table in play (by table id), replaced as the table moves on and dropped when its
    game ends or its record leaves the process's cache (:func:`forget`), so it holds nothing
    the table does not still use: the head (everything but the game, the time and the
    sequence) for the seating and settings in ``fixed``; the parts of the game that stay the
    same through a round (its deck, the totals and the finished rounds before it) for the
    round whose tuples it holds, and the finished rounds encoded, which the next round's
    record extends; and the completed tricks for the tricks tuple it holds. The next state of
    a game shares those tuples, so identity finds them.
    """

    __slots__ = (
        "fixed",
        "head",
        "round",
        "round_parts",
        "rounds_json",
        "tail",
        "tricks",
        "tricks_json",
    )

    def __init__(self, fixed: tuple[Any, ...], head: bytes, tail: bytes) -> None:
        self.fixed = fixed
        self.head = head
        self.tail = tail
        self.round: tuple[Any, ...] = ()
        self.round_parts: tuple[bytes, bytes, bytes, bytes] = (b"", b"", b"", b"")
        self.rounds_json = b""
        self.tricks: tuple[Trick, ...] | None = None
        self.tricks_json: orjson.Fragment | None = None


_ENCODED: dict[str, _Encoded] = {}
_ENCODED_SIZE = 8192


def _finished_rounds(table_id: str, raw: bytes) -> tuple[RoundRecord, ...]:
    """The finished rounds of a schema 3 record's second line ``raw``.

    Decoding them is most of a record's decoding late in a game (about 50 µs a round), and a
    table whose players are connected to different replicas is loaded for nearly every command.
    So the rounds this process last encoded for the table (``_Encoded``) are taken as they are
    when ``raw`` holds them byte for byte, and only the rounds after them are decoded: a JSON
    array's text that begins with another's elements, and a finished round never changes.
    """
    encoded = _ENCODED.get(table_id)
    if encoded is not None and encoded.round:
        known, text = encoded.round[1], encoded.rounds_json
        end = len(text) + 1
        if known and raw[1:end] == text and raw[:1] == b"[":
            if len(raw) == end + 1 and raw[end:] == b"]":
                return known  # type: ignore[no-any-return]
            if raw[end : end + 1] == b",":
                added = orjson.loads(b"[" + raw[end + 1 :])
                if not added:  # "[...,]", which a decoding in full refuses
                    raise ValueError("a comma after the last finished round")
                return known + tuple(map(_round_from_json, added))  # type: ignore[no-any-return]
    finished = orjson.loads(raw)
    if type(finished) is not list:
        raise TypeError("the finished rounds are not a list")
    return tuple(map(_round_from_json, finished))


def forget(table_id: str) -> None:
    """Drop what this process keeps to encode and decode ``table_id``'s next record (it left
    the cache)."""
    _ENCODED.pop(table_id, None)
    _SEATINGS.pop(table_id, None)


def _game_to_json(state: State, rules: Rules, encoded: _Encoded) -> tuple[bytes, bytes]:
    """The game's JSON array, which ends with the count of finished rounds, and the JSON array
    of those rounds."""
    # Tuples of cards (ints) and of masks serialize as JSON arrays as they are. What the table's
    # last record encoded (``encoded``) is reused where the state shares it.
    deck, rounds, totals, own_rules = state.deck, state.rounds, state.totals, state.rules
    known = encoded.round
    if (
        not known
        or known[0] is not deck
        or known[1] is not rounds
        or known[2] is not totals
        or known[3] is not own_rules
        or known[4] is not rules
    ):
        marker = None if own_rules is rules or own_rules == rules else _rules_to_dict(own_rules)
        start = orjson.dumps([2, marker])[:-1] + b","
        middle = b"," + orjson.dumps([state.round_index, state.first_dealer, deck])[1:-1]
        # A finished round never changes: the rounds the table's last record encoded are
        # kept, and only those finished since are encoded.
        done = known[1] if known else ()
        if done is rounds:
            pass  # the same rounds (a record read again: see _finished_rounds)
        elif done and len(rounds) > len(done) and rounds[: len(done)] == done:
            added = b"".join(b"," + _round_to_json(record) for record in rounds[len(done) :])
            encoded.rounds_json += added
        else:
            encoded.rounds_json = _tight(b",".join(map(_round_to_json, rounds)))
        tail = orjson.dumps([totals, len(rounds)])[1:]
        encoded.round = (deck, rounds, totals, own_rules, rules)
        encoded.round_parts = (start, middle, tail, b"[" + encoded.rounds_json + b"]")
    tricks = state.tricks
    tricks_json = encoded.tricks_json
    if encoded.tricks is not tricks or tricks_json is None:
        tricks_json = orjson.Fragment(_tight(orjson.dumps([_trick_to_json(t) for t in tricks])))
        encoded.tricks, encoded.tricks_json = tricks, tricks_json
    now = orjson.dumps(
        [
            state.hands,
            state.passed,
            state.turn,
            state.leader,
            state.trick,
            tricks_json,
            state.hearts_broken,
            state.taken,
        ]
    )
    start, middle, tail, finished = encoded.round_parts
    game = b"".join((start, _PHASE_JSON[state.phase], middle, b",", now[1:-1], b",", tail))
    return game, finished


_PHASE_JSON = {phase: orjson.dumps(phase.name) for phase in Phase}


def _rounds_apart(table_id: str, schema: int, raw: bytes | None) -> tuple[RoundRecord, ...] | None:
    """The finished rounds a record keeps apart from its game: a schema 3 record's second line
    ``raw`` decoded, or ``_UNREAD`` when not read (``raw`` None); None for schema 2, whose game
    holds its rounds."""
    if schema != 3:
        return None
    return _UNREAD if raw is None else _finished_rounds(table_id, raw)


_UNREAD: Any = object()
"""The finished rounds of a schema 3 record read without them (see ``TableRecord.from_json``)."""


def _game_from_json(
    data: list[Any], rules: Rules, finished: tuple[RoundRecord, ...] | None
) -> State:
    """The game of a schema 2 record, or of schema 3 with its ``finished`` rounds (the
    record's second line), whose count the game holds where schema 2 has the rounds; or
    ``_UNREAD``: none (checked only to be a count)."""
    if not isinstance(data, list) or not data or data[0] != 2:
        raise ValueError("unsupported game layout in a schema 2 or 3 record")
    (
        _,
        own_rules,
        phase,
        round_index,
        first_dealer,
        deck,
        hands,
        passed,
        turn,
        leader,
        trick,
        tricks,
        hearts_broken,
        taken,
        totals,
        rounds,
    ) = data
    for value in (round_index, first_dealer, turn, leader, *hands, *passed, *taken, *totals):
        if type(value) is not int:  # what the engine would only trip over later
            raise TypeError(f"not a whole number in the game: {value!r}")
    if not len(hands) == len(passed) == len(taken) == len(totals) == 4:
        raise TypeError("the game's per-seat lists are not four long")
    if type(hearts_broken) is not bool:
        raise TypeError("hearts_broken is not a boolean")
    if finished is None:
        finished = tuple(map(_round_from_json, rounds))
    elif type(rounds) is not int:
        raise ValueError(f"the record counts {rounds!r} finished rounds")
    elif finished is _UNREAD:
        finished = ()
    elif len(finished) != rounds:
        raise ValueError(f"the record counts {rounds!r} finished rounds; its rounds differ")
    return _BLANK._replace(
        rules=rules if own_rules is None else _rules_from_dict(own_rules),
        phase=Phase[phase],
        round_index=round_index,
        first_dealer=first_dealer,
        deck=_cards(deck),
        hands=tuple(hands),
        passed=tuple(passed),
        turn=turn,
        leader=leader,
        trick=_cards(trick),
        tricks=tuple(map(_trick_from_json, tricks)),
        hearts_broken=hearts_broken,
        taken=tuple(taken),
        totals=tuple(totals),
        rounds=finished,
    )
