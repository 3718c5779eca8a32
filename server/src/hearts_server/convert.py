"""Engine values to ``hearts.v1`` messages and back.

Everything a response or an event shows a player is built here from an engine
:class:`~hearts_engine.SeatView` (or a public engine event), never from the stored state, so the
engine's visibility rules are the only ones in force. Rounds and tricks are numbered from 1 in
the API and from 0 in the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any, TypeVar

from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

from hearts.v1 import table_event_pb2 as events_pb
from hearts.v1 import table_pb2 as pb
from hearts_engine import (
    Card,
    CardPlayed,
    CardsPassed,
    CardsReceived,
    Event,
    GameOver,
    HandDealt,
    HeartsBroken,
    MalformedReason,
    MoonScoring,
    PassDirection,
    Phase,
    RoundRecord,
    RoundScored,
    RoundStarted,
    Rules,
    SeatPassed,
    SeatView,
    Trick,
    TrickWon,
    cards_of,
    deal_hands,
    mask_of,
    points_of,
    spectator_view,
    view,
)
from hearts_engine.bots import BotLevel
from hearts_server.errors import ServiceError
from hearts_server.record import Occupant, TableRecord

__all__ = [
    "BOT_LEVELS",
    "MAX_TARGET_SCORE",
    "bot_level_from_pb",
    "card_from_pb",
    "card_to_pb",
    "engine_event_bytes",
    "forget",
    "length_prefixed",
    "presence_announcements",
    "rules_from_pb",
    "rules_to_pb",
    "table_bytes",
    "table_name",
    "table_to_pb",
    "timestamp",
    "turn_changed_bytes",
    "view_bytes",
    "view_of",
    "view_to_pb",
]

_PASS_DIRECTIONS = {
    PassDirection.LEFT: pb.PASS_DIRECTION_LEFT,
    PassDirection.ACROSS: pb.PASS_DIRECTION_ACROSS,
    PassDirection.RIGHT: pb.PASS_DIRECTION_RIGHT,
    PassDirection.HOLD: pb.PASS_DIRECTION_HOLD,
}
BOT_LEVELS = {
    BotLevel.RANDOM: pb.BOT_LEVEL_RANDOM,
    BotLevel.HEURISTIC: pb.BOT_LEVEL_HEURISTIC,
    BotLevel.MONTE_CARLO: pb.BOT_LEVEL_MONTE_CARLO,
}
_BOT_LEVELS_BACK = {value: key for key, value in BOT_LEVELS.items()}
_OCCUPANTS = {
    Occupant.EMPTY: pb.SEAT_OCCUPANT_EMPTY,
    Occupant.HUMAN: pb.SEAT_OCCUPANT_HUMAN,
    Occupant.BOT: pb.SEAT_OCCUPANT_BOT,
}
_PHASES = {
    Phase.DEALING: pb.PHASE_PLAYING,  # never stored: the server deals at once
    Phase.PASSING: pb.PHASE_PASSING,
    Phase.PLAYING: pb.PHASE_PLAYING,
    Phase.GAME_OVER: pb.PHASE_GAME_OVER,
}
_CARDS_PB = tuple(
    pb.Card(suit=pb.Suit.ValueType(card.suit + 1), rank=pb.Rank.ValueType(card.rank))
    for card in map(Card.from_index, range(52))
)


def table_name(table_id: str) -> str:
    """The resource name ``tables/{table}``."""
    return f"tables/{table_id}"


def timestamp(ms: int) -> Timestamp:
    """A protobuf timestamp from Unix milliseconds."""
    # What Timestamp.FromMilliseconds computes, without its Python-level checks (hot path).
    return Timestamp(seconds=ms // 1000, nanos=ms % 1000 * 1_000_000)


def card_to_pb(card: Card) -> pb.Card:
    """A card message (a shared immutable prototype: copy before mutating)."""
    return _CARDS_PB[card]


def _cards(cards: Iterable[Card]) -> list[pb.Card]:
    return [_CARDS_PB[card] for card in cards]


def _enum_name(enum: Any, number: int) -> str:
    """The name of ``number`` in a Protobuf enum, as a client's code spells it; a number the
    enum does not define (a newer client's, or a typo) as the number."""
    try:
        return str(enum.Name(number))
    except ValueError:
        return f"{enum.DESCRIPTOR.name.lower()} {number}"


def card_from_pb(message: pb.Card) -> Card:
    """The engine card of a message; INVALID_ARGUMENT/INVALID_CARD if it names no card."""
    suit, rank = message.suit, message.rank
    if not (1 <= suit <= 4 and 2 <= rank <= 14):
        raise ServiceError(
            MalformedReason.INVALID_CARD,
            f"not a card: {_enum_name(pb.Suit, suit)}, "
            f"{_enum_name(pb.Rank, rank)} (a card needs both a suit and a rank)",
        )
    return Card.from_index((suit - 1) * 13 + rank - 2)


def bot_level_from_pb(level: int) -> BotLevel:
    """The bot level of an enum value; unset means HEURISTIC."""
    if level == pb.BOT_LEVEL_UNSPECIFIED:
        return BotLevel.HEURISTIC
    try:
        return _BOT_LEVELS_BACK[level]  # type: ignore[index]
    except KeyError:
        raise ServiceError("INVALID_REQUEST", f"unknown bot level {level}") from None


MAX_TARGET_SCORE = 1000
"""The highest target score a table may have. A finished game's view carries every round's
history: at 1000 points, with the bonuses that make games longest, up to about 290 KB (some 260
rounds; ``bench/server/commands.py`` measures it), which leaves room within --max-message-bytes'
default of 1 MiB; at 10,000 it was 1.5 MB and no client could read the table any more."""


def rules_from_pb(message: pb.Rules) -> Rules:
    """Rules from a message; unset fields take the German defaults."""
    if message.HasField("target_score") and not 1 <= message.target_score <= MAX_TARGET_SCORE:
        raise ServiceError(
            MalformedReason.INVALID_RULES,
            f"target_score must be a whole number 1..{MAX_TARGET_SCORE}",
        )
    values: dict[str, object] = {}
    for name in (
        "pass_cards",
        "no_points_on_first_trick",
        "can_lead_any_club",
        "must_break_hearts",
        "queen_breaks_hearts",
        "can_lead_hearts_instead_of_queen",
        "jack_of_diamonds_bonus",
        "avoid_all_tricks_bonus",
        "target_score",
    ):
        if message.HasField(name):
            values[name] = getattr(message, name)
    if message.moon_scoring == pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER:
        values["moon_scoring"] = MoonScoring.SUBTRACT_FROM_SHOOTER
    elif message.moon_scoring not in (pb.MOON_SCORING_UNSPECIFIED, pb.MOON_SCORING_ADD_TO_OTHERS):
        raise ServiceError(
            MalformedReason.INVALID_RULES, f"unknown moon scoring {message.moon_scoring}"
        )
    return Rules(**values)  # type: ignore[arg-type]


@functools.lru_cache(maxsize=64)
def _rules_pb(rules: Rules) -> pb.Rules:
    """A shared prototype of :func:`rules_to_pb` (never mutated: messages copy it in)."""
    return rules_to_pb(rules)


def rules_to_pb(rules: Rules) -> pb.Rules:
    """Every rules field, set."""
    return pb.Rules(
        pass_cards=rules.pass_cards,
        no_points_on_first_trick=rules.no_points_on_first_trick,
        can_lead_any_club=rules.can_lead_any_club,
        must_break_hearts=rules.must_break_hearts,
        queen_breaks_hearts=rules.queen_breaks_hearts,
        can_lead_hearts_instead_of_queen=rules.can_lead_hearts_instead_of_queen,
        jack_of_diamonds_bonus=rules.jack_of_diamonds_bonus,
        avoid_all_tricks_bonus=rules.avoid_all_tricks_bonus,
        target_score=rules.target_score,
        moon_scoring=(
            pb.MOON_SCORING_SUBTRACT_FROM_SHOOTER
            if rules.moon_scoring == MoonScoring.SUBTRACT_FROM_SHOOTER
            else pb.MOON_SCORING_ADD_TO_OTHERS
        ),
    )


def view_of(record: TableRecord, seat: int | None) -> SeatView | None:
    """The engine view of the record's game for ``seat`` (None: spectator), if a game exists."""
    if record.game is None:
        return None
    return spectator_view(record.game) if seat is None else view(record.game, seat)


def table_to_pb(record: TableRecord, version: int, seat_view: SeatView | None = None) -> pb.Table:
    """The table resource. ``seat_view`` may be passed when already computed.

    Parsed from :func:`table_bytes`, like :func:`view_to_pb`.
    """
    return pb.Table.FromString(table_bytes(record, version, seat_view))


# A completed trick is serialized from fragments, as the view is (see view_bytes): every trick
# is written twice (its TrickWon event and the view's completed tricks) and again in the game's
# history, and building it as a message (four PlayedCards copied in) cost more than the rest of
# a play's view. A serialized Trick is its fields in field-number order: number and leader, the
# four cards, winner and points; each part below is serialized by protobuf from a partial Trick.
_TRICK_STARTS = tuple(
    tuple(pb.Trick(number=number, leader=leader).SerializeToString() for leader in range(4))
    for number in range(14)
)
"""Per trick number (1 to 13) and leader, a Trick's number and leader."""
_TRICK_CARDS = tuple(
    tuple(
        pb.Trick(cards=[pb.PlayedCard(seat=seat, card=card)]).SerializeToString()
        for card in _CARDS_PB
    )
    for seat in range(4)
)
"""Per seat and card index, that card played by that seat as one entry of a Trick's cards."""
_TRICK_ENDS: dict[tuple[int, int], bytes] = {}
"""Per winner and points, a Trick's winner and points (at most 4 × 27: four cards are worth -10
to 16 points)."""


def _trick_bytes(number: int, trick: Trick, points: int) -> bytes:
    """The completed trick ``number`` of its round, worth ``points``, serialized as a ``Trick``."""
    end_key = (trick.winner, points)
    end = _TRICK_ENDS.get(end_key)
    if end is None:
        winner, points = end_key
        end = _TRICK_ENDS[end_key] = pb.Trick(winner=winner, points=points).SerializeToString()
    leader = trick.leader
    cards = _TRICK_CARDS
    return b"".join(
        (
            _TRICK_STARTS[number][leader],
            *[cards[(leader + index) & 3][card] for index, card in enumerate(trick.cards)],
            end,
        )
    )


def length_prefixed(key: bytes, payload: bytes) -> bytes:
    """A field ``key`` (its tag, wire type 2) holding ``payload``: how protobuf embeds a message."""
    size = len(payload)
    if size < 0x80:
        return b"%s%c%s" % (key, size, payload)
    prefix = bytearray(key)
    while size >= 0x80:
        prefix.append(size & 0x7F | 0x80)
        size >>= 7
    prefix.append(size)
    return bytes(prefix) + payload


def _key_of(message: Message) -> bytes:
    """The tag of the one message field set (empty) in ``message``: its serialization less the
    length byte."""
    serialized = message.SerializeToString()
    assert serialized.endswith(b"\x00"), serialized
    return serialized[:-1]


_COMPLETED_TRICK_KEY = _key_of(pb.TableView(completed_tricks=[pb.Trick()]))
_HISTORY_TRICK_KEY = _key_of(pb.RoundHistory(tricks=[pb.Trick()]))
_GAME_HISTORY_KEY = _key_of(pb.TableView(game_history=[pb.RoundHistory()]))
_TRICK_WON_KEY = _key_of(events_pb.TableEvent(trick_won=events_pb.TrickWonEvent()))
_WON_TRICK_KEY = _key_of(events_pb.TrickWonEvent(trick=pb.Trick()))


def _round_history(record: RoundRecord, rules: Rules, totals: list[int]) -> bytes:
    """A finished round as a serialized ``RoundHistory``: the fields before its tricks built as
    a message, then the tricks (field 6) and the score (field 7) joined in order."""
    hands = deal_hands(record.deck, record.dealer)
    direction = rules.pass_direction(record.round_index)
    message = pb.RoundHistory(
        round_number=record.round_index + 1,
        dealer=record.dealer,
        pass_direction=_PASS_DIRECTIONS[direction],
    )
    for seat in range(4):
        message.deals.append(pb.SeatCards(seat=seat, cards=_cards(cards_of(hands[seat]))))
        if record.passes[seat]:
            message.passes.append(
                pb.CardPass(
                    from_seat=seat,
                    to_seat=(seat + direction) % 4,
                    cards=_cards(cards_of(mask_of(record.passes[seat]))),
                )
            )
    tricks = [
        length_prefixed(
            _HISTORY_TRICK_KEY, _trick_bytes(number, trick, points_of(trick.cards, rules))
        )
        for number, trick in enumerate(record.tricks, start=1)
    ]
    for seat in range(4):
        totals[seat] += record.points[seat]
    score = pb.RoundHistory(
        score=_round_score(record.round_index, record.points, totals, record.moon_shooter)
    )
    return b"".join((message.SerializeToString(), *tricks, score.SerializeToString()))


def _round_score(
    round_index: int, points: Iterable[int], totals: Iterable[int], moon_shooter: int | None
) -> pb.RoundScore:
    score = pb.RoundScore(
        round_number=round_index + 1, points=list(points), total_scores=list(totals)
    )
    if moon_shooter is not None:
        score.moon_shooter = moon_shooter
    return score


def view_to_pb(
    record: TableRecord, version: int, seat: int | None, *, seat_view: SeatView | None = None
) -> pb.TableView:
    """What ``seat`` (None: a spectator) may know of the table, as a message.

    Parsed from :func:`view_bytes`: the same message as one built field by field, for about half
    the cost.
    """
    return pb.TableView.FromString(view_bytes(record, version, seat, seat_view=seat_view))


# --------------------------------------------------------------------------- views as bytes
#
# view_to_pb answers every command, so it is on the hot path. With the upb runtime every field set
# from Python is a call of its own, while parsing or serializing a message is a single call into C.
# So a view is assembled as bytes from fragments, most of them cached, and parsed (or merged into
# a response) once.
#
# Every fragment is protobuf's own SerializeToString() of a generated message of the type being
# assembled (a partial TableView, or a partial Table for table_bytes): nothing is encoded here.
# This works because protobuf defines parsing the concatenation of two serialized messages of a
# type as merging them (MergeFrom): a singular scalar field takes the last value seen, a repeated
# field appends in order, and a singular message field (TableView.table, .current_trick) is merged
# recursively. So, for example,
#
#     pb.TableView(table=pb.Table(name="tables/t")).SerializeToString()
#     + pb.TableView(hand=[two_of_clubs]).SerializeToString()
#     + pb.TableView(hand=[ace_of_spades]).SerializeToString()
#     + pb.TableView(table=pb.Table(etag="7"), sequence=3).SerializeToString()
#
# parses to pb.TableView(table=pb.Table(name="tables/t", etag="7"), hand=[two_of_clubs,
# ace_of_spades], sequence=3). The assembly below keeps two invariants that make the result equal
# to the field-by-field message: every singular field is set in one fragment only (no "last value
# wins" surprises), and every repeated field comes from one run of consecutive fragments in its
# order (the cards of a hand, the completed tricks, ...). Re-serializing the parsed message writes
# the canonical form, whatever order the fragments came in.
#
# The fragments:
#  - the table fields that stay put while a game is played (name, rules, seats, creation time),
#    cached per table and seats (_table_head);
#  - a card as one entry of a card list (hand, legal cards, ...), and a played card as one entry
#    of the current trick, built once at import: they hold a card (and the public seat that
#    played it) but nothing of whose hand it is, so one seat's cards cannot reach another's view;
#  - the completed tricks of a round so far, the scores of the finished rounds and the game
#    history, and the round's points and tricks won, cached: later views repeat them;
#  - one small message built on each call with the fields that change with every call (times,
#    etag, phase, totals, the current trick's number, ...), see _view_now and _fill_table.
# tests/server/test_convert_equivalence.py checks the result against messages built field by
# field.
#
# The caches are plain dicts, cleared whole when full (refilling is cheap), and keyed by every
# value their bytes depend on, so that tables share nothing but equal values; or, for the
# completed tricks, by table, one entry a table that holds those values and is checked against
# them by identity, so that nothing of a table's past stays alive in it.

K = TypeVar("K")
V = TypeVar("V")


class _Memo(dict[K, V]):
    """A cache of bytes built from immutable values: a plain dict, emptied whole when full.

    No least-recently-used bookkeeping on the hot path: refilling after a clear is cheap.
    """

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: K, value: V) -> None:
        if len(self) >= self.size:
            self.clear()
        self[key] = value


_NOBODY_PASSED = (False, False, False, False)
_ZEROS = (0, 0, 0, 0)


# Per card index, that card as one entry of one of the view's card lists.
_HAND_CARDS = tuple(pb.TableView(hand=[card]).SerializeToString() for card in _CARDS_PB)
_PASSED_CARDS = tuple(pb.TableView(passed_cards=[card]).SerializeToString() for card in _CARDS_PB)
_RECEIVED_CARDS = tuple(
    pb.TableView(received_cards=[card]).SerializeToString() for card in _CARDS_PB
)
_LEGAL_CARDS = tuple(pb.TableView(legal_cards=[card]).SerializeToString() for card in _CARDS_PB)
_CURRENT_TRICK_CARDS = tuple(
    tuple(
        pb.TableView(
            current_trick=pb.Trick(cards=[pb.PlayedCard(seat=seat, card=card)])
        ).SerializeToString()
        for card in _CARDS_PB
    )
    for seat in range(4)
)
"""Per seat and card index, that card played by that seat as one entry of the current trick."""


def _table_head(record: TableRecord, has_passed: tuple[bool, ...]) -> tuple[bytes, bytes]:
    """The table fields that stay put while a game is played, as a Table and as a TableView."""
    # A record's seats and rules are values shared by every later record of the table (evolve
    # passes them on), so the key holds their identities, cheap to hash and compare, where their
    # values would be hashed and compared field by field in Python; the entry keeps the objects,
    # so that an identity seen again is still theirs.
    seats, rules = record.seats, record.rules
    key = (
        record.table_id,
        record.display_name,
        record.create_ms,
        record.turn_timeout_ms,
        record.unlisted,
        record.rematch_id,
        record.rematch_of,
        record.turn_notifications,
        record.fill_after_ms,
        record.deck_seed is not None,
        id(seats),
        id(rules),
        has_passed,
    )
    cached = _TABLE_HEADS.get(key)
    if cached is not None and cached[0] is seats and cached[1] is rules:
        return cached[2]
    table = pb.Table(
        name=table_name(record.table_id),
        display_name=record.display_name,
        rules=_rules_pb(record.rules),
        create_time=timestamp(record.create_ms),
        seats=[
            pb.Seat(
                seat=index,
                occupant=_OCCUPANTS[seat.occupant],
                player_display_name=seat.name,
                bot_level=(
                    BOT_LEVELS[seat.bot_level] if seat.bot_level else pb.BOT_LEVEL_UNSPECIFIED
                ),
                has_passed=has_passed[index],
                stand_in=seat.stand_in,
                player_id=seat.player_id,
            )
            for index, seat in enumerate(record.seats)
        ],
    )
    if record.turn_timeout_ms:
        table.turn_timeout.FromMilliseconds(record.turn_timeout_ms)
    table.unlisted = record.unlisted
    table.seeded = record.deck_seed is not None  # the seed itself only after the game
    table.turn_notifications = record.turn_notifications
    if record.fill_after_ms:
        table.fill_with_bots_after.FromMilliseconds(record.fill_after_ms)
    if record.rematch_id:
        table.rematch_table = table_name(record.rematch_id)
    if record.rematch_of:
        table.rematch_of = table_name(record.rematch_of)
    head = (table.SerializeToString(), pb.TableView(table=table).SerializeToString())
    _TABLE_HEADS.put(key, (seats, rules, head))
    return head


_TABLE_HEADS: _Memo[tuple[object, ...], tuple[object, object, tuple[bytes, bytes]]] = _Memo(4096)


def _fill_table(
    table: pb.Table, record: TableRecord, version: int, seat_view: SeatView | None
) -> None:
    """Set in ``table`` the fields that change from call to call (all :func:`_table_head` leaves
    out). Filled in place, so that a view's table is not built apart and copied in."""
    ms, update_time = record.update_ms, table.update_time
    update_time.seconds = ms // 1000  # as timestamp() builds it
    update_time.nanos = ms % 1000 * 1_000_000
    table.etag = str(version)
    if seat_view is None:
        table.phase = pb.PHASE_WAITING_FOR_PLAYERS
        table.dealer = record.first_dealer
        table.pass_direction = _PASS_DIRECTIONS[record.rules.pass_direction(0)]  # the first deal's
        table.total_scores.extend(_ZEROS)
        return
    table.phase = _PHASES[seat_view.phase]
    table.round_number = seat_view.round_index + 1
    table.dealer = seat_view.dealer
    table.pass_direction = _PASS_DIRECTIONS[seat_view.pass_direction]
    if seat_view.turn is not None:
        table.turn_seat = seat_view.turn
    if record.turn_timeout_ms:
        deadline = record.turn_deadline_ms
        if deadline is not None:
            table.turn_deadline.seconds = deadline // 1000
            table.turn_deadline.nanos = deadline % 1000 * 1_000_000
    table.total_scores.extend(seat_view.totals)
    if seat_view.result is not None:
        table.result.winners.extend(seat_view.result.winners)
        table.result.losers.extend(seat_view.result.losers)
        if record.deck_seed is not None:
            table.deck_seed = record.deck_seed


def table_bytes(record: TableRecord, version: int, seat_view: SeatView | None = None) -> bytes:
    """The serialized :func:`table_to_pb` message (see the section comment above)."""
    if seat_view is None:
        seat_view = view_of(record, None)
    has_passed = _NOBODY_PASSED if seat_view is None else seat_view.has_passed
    head, _ = _table_head(record, has_passed)
    now = pb.Table()
    _fill_table(now, record, version, seat_view)
    return head + now.SerializeToString()


def _completed_tricks(table_id: str, tricks: tuple[Trick, ...], rules: Rules) -> bytes:
    """A round's completed tricks as the view's completed_tricks entries.

    Every later view of the round repeats them, so each table keeps its newest block (one entry
    a table, replaced as it moves on: nothing stale stays alive for the collector to walk). The
    states of one trick share their tricks tuple, found by identity; the first view after a
    trick extends the block by that trick (concatenation appends, see above).
    """
    if not tricks:
        _TRICK_BLOCKS.pop(table_id, None)  # a new round, or the game is over: not needed now
        return b""
    known = _TRICK_BLOCKS.get(table_id)
    if known is not None and known[1] is rules:
        done, _, block = known
        if done is tricks:
            return block
        if len(tricks) == len(done) and tricks == done:
            # A record read again (another replica moved the table on): the same tricks in
            # tuples of its own, kept for the next view.
            _TRICK_BLOCKS.put(table_id, (tricks, rules, block))
            return block
        if len(tricks) == len(done) + 1 and tricks[:-1] == done:
            block += _trick_block(len(tricks), tricks[-1], rules)
            _TRICK_BLOCKS.put(table_id, (tricks, rules, block))
            return block
    block = b"".join(_trick_block(i, trick, rules) for i, trick in enumerate(tricks, 1))
    _TRICK_BLOCKS.put(table_id, (tricks, rules, block))
    return block


def _trick_block(number: int, trick: Trick, rules: Rules) -> bytes:
    """One completed trick as a view's completed_tricks entry."""
    points = points_of(trick.cards, rules)
    return length_prefixed(_COMPLETED_TRICK_KEY, _trick_bytes(number, trick, points))


_TRICK_BLOCKS: _Memo[str, tuple[tuple[Trick, ...], Rules, bytes]] = _Memo(8192)


def forget(table_id: str) -> None:
    """Drop the view parts kept for ``table_id`` (its record left the process's cache)."""
    _TRICK_BLOCKS.pop(table_id, None)


def _score_history(
    round_scores: tuple[tuple[int, ...], ...], moon_shooters: tuple[int | None, ...]
) -> bytes:
    """The finished rounds' scores as the view's score_history entries, built once per game."""
    key = (round_scores, moon_shooters)
    history = _SCORE_HISTORIES.get(key)
    if history is None:
        scores = []
        totals = [0, 0, 0, 0]
        for index, (points, shooter) in enumerate(zip(round_scores, moon_shooters, strict=True)):
            for s in range(4):
                totals[s] += points[s]
            scores.append(_round_score(index, points, totals, shooter))
        history = pb.TableView(score_history=scores).SerializeToString()
        _SCORE_HISTORIES.put(key, history)
    return history


_SCORE_HISTORIES: _Memo[tuple[tuple[tuple[int, ...], ...], tuple[int | None, ...]], bytes] = _Memo(
    4096
)


def _game_history(history: tuple[RoundRecord, ...], rules: Rules) -> bytes:
    """Every round of a finished game as the view's game_history entries, built once per game."""
    key = (rules, history)
    block = _GAME_HISTORIES.get(key)
    if block is None:
        running = [0, 0, 0, 0]
        block = b"".join(
            length_prefixed(_GAME_HISTORY_KEY, _round_history(round_record, rules, running))
            for round_record in history
        )
        _GAME_HISTORIES.put(key, block)
    return block


_GAME_HISTORIES: _Memo[tuple[Rules, tuple[RoundRecord, ...]], bytes] = _Memo(64)


def _view_now(
    record: TableRecord, version: int, seat: int | None, seat_view: SeatView | None
) -> bytes:
    """The view fields that change from call to call, serialized: built afresh every time."""
    if seat_view is None:
        message = pb.TableView(round_points=_ZEROS, tricks_won=_ZEROS, sequence=record.sequence)
    else:
        message = pb.TableView(
            hearts_broken=seat_view.hearts_broken,
            cards_to_pass=seat_view.pass_count,
            sequence=record.sequence,
        )
        if seat_view.leader is not None:  # its cards come as fragments (view_bytes)
            current = message.current_trick
            current.number = len(seat_view.tricks) + 1
            current.leader = seat_view.leader
            current.points = points_of(seat_view.trick, seat_view.rules)
    if seat is not None:
        message.viewer_seat = seat
    _fill_table(message.table, record, version, seat_view)
    return message.SerializeToString()


def _round_tallies(round_points: tuple[int, ...], tricks_won: tuple[int, ...]) -> bytes:
    """The view's round_points and tricks_won: few values, repeated from view to view."""
    key = (round_points, tricks_won)
    tallies = _TALLIES.get(key)
    if tallies is None:
        tallies = pb.TableView(round_points=round_points, tricks_won=tricks_won).SerializeToString()
        _TALLIES.put(key, tallies)
    return tallies


_TALLIES: _Memo[tuple[tuple[int, ...], tuple[int, ...]], bytes] = _Memo(8192)


def _current_trick_cards(seat_view: SeatView) -> bytes:
    """The cards of the trick in progress, in the order played, as current_trick entries."""
    leader = seat_view.leader
    if leader is None:
        return b""
    return b"".join(
        _CURRENT_TRICK_CARDS[(leader + index) & 3][card]
        for index, card in enumerate(seat_view.trick)
    )


def view_bytes(
    record: TableRecord, version: int, seat: int | None, *, seat_view: SeatView | None = None
) -> bytes:
    """The serialized :func:`view_to_pb` message, assembled from fragments (see above).

    For a response that holds the view, ``response.view.MergeFromString(view_bytes(...))``
    saves building the message and copying it in.
    """
    if seat_view is None:
        seat_view = view_of(record, seat)
    has_passed = _NOBODY_PASSED if seat_view is None else seat_view.has_passed
    _, head = _table_head(record, has_passed)
    now = _view_now(record, version, seat, seat_view)
    if seat_view is None:
        return head + now
    rules = seat_view.rules
    parts = [
        head,
        now,
        _round_tallies(seat_view.round_points, seat_view.tricks_won),
        # Each repeated field from one run of fragments, in order.
        b"".join(map(_HAND_CARDS.__getitem__, seat_view.hand)),
        b"".join(map(_PASSED_CARDS.__getitem__, seat_view.passed)),
        b"".join(map(_RECEIVED_CARDS.__getitem__, seat_view.received)),
        _current_trick_cards(seat_view),
        _completed_tricks(record.table_id, seat_view.tricks, rules),
        b"".join(map(_LEGAL_CARDS.__getitem__, seat_view.legal)),
    ]
    if seat_view.round_scores:
        parts.append(_score_history(seat_view.round_scores, seat_view.moon_shooters))
    if seat_view.history:
        parts.append(_game_history(seat_view.history, rules))
    return b"".join(parts)


def engine_event_bytes(event: Event, time_ms: int) -> bytes:
    """The API event for an engine event at ``time_ms``, serialized, joined from two fragments.

    A TableEvent is its time (field 1) and one body (a later field), so the two serialized apart
    and joined are its serialized form. The events of one command share their time, and a card
    played, one per command, has one of 4 × 52 × 13 bodies: each is serialized once and reused.
    """
    if event.__class__ is CardPlayed:
        key = (event.trick_index * 4 + event.seat) * 52 + event.card
        body = _PLAYED_BODIES.get(key)
        if body is None:
            body = _PLAYED_BODIES[key] = _event_body(event).SerializeToString()
    elif event.__class__ is TrickWon:
        played = Trick(event.leader, event.cards, event.winner)
        trick = _trick_bytes(event.trick_index + 1, played, event.points)
        body = length_prefixed(_TRICK_WON_KEY, length_prefixed(_WON_TRICK_KEY, trick))
    else:
        body = _event_body(event).SerializeToString()
    return _event_time(time_ms) + body


def turn_changed_bytes(seat: int, time_ms: int, deadline_ms: int | None = None) -> bytes:
    """A serialized TableEvent saying it is ``seat``'s turn (see :func:`engine_event_bytes`),
    until ``deadline_ms`` at a table with a turn timeout."""
    if deadline_ms is None:
        return _event_time(time_ms) + _TURN_BODIES[seat]
    changed = events_pb.TurnChangedEvent(seat=seat, deadline=timestamp(deadline_ms))
    return _event_time(time_ms) + events_pb.TableEvent(turn_changed=changed).SerializeToString()


def turn_timed_out_bytes(seat: int, time_ms: int) -> bytes:
    """A serialized TableEvent saying ``seat``'s time for a move ran out."""
    return _event_time(time_ms) + _TIMED_OUT_BODIES[seat]


def reaction_bytes(seat: int, reaction: int, time_ms: int) -> bytes:
    """A serialized TableEvent of ``seat``'s reaction (a ``hearts.v1.Reaction`` value)."""
    event = events_pb.TableEvent(event_time=timestamp(time_ms))
    event.reaction.seat = seat
    event.reaction.reaction = reaction  # type: ignore[assignment]  # checked by the caller
    return event.SerializeToString()


def presence_announcements(time_ms: int) -> tuple[bytes, ...]:
    """The eight serialized TableEvents a presence update may send (see ``Store.presence``):
    seats 0 to 3 connected, then seats 0 to 3 disconnected, at ``time_ms``."""
    time = _event_time(time_ms)
    return tuple(time + body for body in _PRESENCE_BODIES)


def _event_time(time_ms: int) -> bytes:
    """A TableEvent holding only its time, serialized: the events of a command share it.

    Joined from fragments too: under load nearly every command has a millisecond of its own,
    and building the Timestamp and the event to serialize them was a few percent of a move. A
    Timestamp is its seconds (one fragment a second) then its nanos (one of 1,000)."""
    seconds, ms = divmod(time_ms, 1000)
    head = _EVENT_SECONDS.get(seconds)
    if head is None:
        head = Timestamp(seconds=seconds).SerializeToString()
        _EVENT_SECONDS.put(seconds, head)
    return length_prefixed(_EVENT_TIME_KEY, head + _NANOS[ms])


_PLAYED_BODIES: dict[int, bytes] = {}  # at most 4 × 52 × 13 entries
_EVENT_TIME_KEY = _key_of(events_pb.TableEvent(event_time=Timestamp()))
_EVENT_SECONDS: _Memo[int, bytes] = _Memo(64)
_NANOS = tuple(Timestamp(nanos=ms * 1_000_000).SerializeToString() for ms in range(1000))
"""Per millisecond of a second, a Timestamp's nanos."""
_TURN_BODIES = tuple(
    events_pb.TableEvent(turn_changed=events_pb.TurnChangedEvent(seat=seat)).SerializeToString()
    for seat in range(4)
)
_PRESENCE_BODIES = tuple(
    events_pb.TableEvent(
        presence_changed=events_pb.PresenceChangedEvent(seat=seat, connected=connected)
    ).SerializeToString()
    for connected in (True, False)
    for seat in range(4)
)
_TIMED_OUT_BODIES = tuple(
    events_pb.TableEvent(turn_timed_out=events_pb.TurnTimedOutEvent(seat=seat)).SerializeToString()
    for seat in range(4)
)


def _event_body(event: Event) -> events_pb.TableEvent:
    """The API event for an engine event, without its time (a TrickWon is joined from fragments
    in :func:`engine_event_bytes` instead)."""
    message = events_pb.TableEvent()
    if isinstance(event, CardPlayed):
        message.card_played.seat = event.seat
        message.card_played.card.CopyFrom(_CARDS_PB[event.card])
        message.card_played.trick_number = event.trick_index + 1
    elif isinstance(event, HeartsBroken):
        message.hearts_broken.seat = event.seat
        message.hearts_broken.card.CopyFrom(_CARDS_PB[event.card])
    elif isinstance(event, SeatPassed):
        message.seat_passed.seat = event.seat
    elif isinstance(event, CardsPassed):
        message.cards_passed.seat = event.seat
        message.cards_passed.to_seat = event.to_seat
        message.cards_passed.cards.extend(_cards(event.cards))
    elif isinstance(event, CardsReceived):
        message.cards_received.seat = event.seat
        message.cards_received.from_seat = event.from_seat
        message.cards_received.cards.extend(_cards(event.cards))
    elif isinstance(event, HandDealt):
        message.hand_dealt.seat = event.seat
        message.hand_dealt.cards.extend(_cards(event.cards))
    elif isinstance(event, RoundStarted):
        message.round_started.round_number = event.round_index + 1
        message.round_started.dealer = event.dealer
        message.round_started.pass_direction = _PASS_DIRECTIONS[event.pass_direction]
    elif isinstance(event, RoundScored):
        message.round_scored.score.CopyFrom(
            _round_score(event.round_index, event.points, event.totals, event.moon_shooter)
        )
    elif isinstance(event, GameOver):
        message.game_over.total_scores.extend(event.totals)
        message.game_over.result.winners.extend(event.winners)
        message.game_over.result.losers.extend(event.losers)
    else:  # pragma: no cover - a new engine event must be mapped here
        raise TypeError(f"no API form for {event!r}")
    return message
