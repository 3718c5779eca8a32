"""Engine values to ``hearts.v1`` messages and back.

Everything a response or an event shows a player is built here from an engine
:class:`~hearts_engine.SeatView` (or a public engine event), never from the stored state, so the
engine's visibility rules are the only ones in force. Rounds and tricks are numbered from 1 in
the API and from 0 in the engine.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

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
from hearts_server.errors import Code, ServiceError
from hearts_server.record import Occupant, TableRecord

__all__ = [
    "BOT_LEVELS",
    "bot_level_from_pb",
    "card_from_pb",
    "card_to_pb",
    "engine_event_to_pb",
    "rules_from_pb",
    "rules_to_pb",
    "table_name",
    "table_to_pb",
    "timestamp",
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


def card_from_pb(message: pb.Card) -> Card:
    """The engine card of a message; INVALID_ARGUMENT/INVALID_CARD if it names no card."""
    suit, rank = message.suit, message.rank
    if not (1 <= suit <= 4 and 2 <= rank <= 14):
        raise ServiceError(
            "INVALID_CARD", f"not a card: suit {suit}, rank {rank}", code=Code.INVALID_ARGUMENT
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


def rules_from_pb(message: pb.Rules) -> Rules:
    """Rules from a message; unset fields take the German defaults."""
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
            "INVALID_RULES",
            f"unknown moon scoring {message.moon_scoring}",
            code=Code.INVALID_ARGUMENT,
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
    """The table resource. ``seat_view`` may be passed when already computed."""
    if seat_view is None:
        seat_view = view_of(record, None)
    table = pb.Table(
        name=table_name(record.table_id),
        display_name=record.display_name,
        rules=_rules_pb(record.rules),
        create_time=timestamp(record.create_ms),
        update_time=timestamp(record.update_ms),
        etag=str(version),
        dealer=record.first_dealer if seat_view is None else seat_view.dealer,
    )
    for index, seat in enumerate(record.seats):
        table.seats.append(
            pb.Seat(
                seat=index,
                occupant=_OCCUPANTS[seat.occupant],
                player_display_name=seat.name,
                bot_level=(
                    BOT_LEVELS[seat.bot_level] if seat.bot_level else pb.BOT_LEVEL_UNSPECIFIED
                ),
                has_passed=bool(seat_view and seat_view.has_passed[index]),
            )
        )
    if seat_view is None:
        table.phase = pb.PHASE_WAITING_FOR_PLAYERS
        table.total_scores.extend((0, 0, 0, 0))
        return table
    table.phase = _PHASES[seat_view.phase]
    table.round_number = seat_view.round_index + 1
    table.pass_direction = _PASS_DIRECTIONS[seat_view.pass_direction]
    if seat_view.turn is not None:
        table.turn_seat = seat_view.turn
    table.total_scores.extend(seat_view.totals)
    if seat_view.result is not None:
        table.result.winners.extend(seat_view.result.winners)
        table.result.losers.extend(seat_view.result.losers)
        if record.deck_seed is not None:
            table.deck_seed = record.deck_seed
    return table


def _trick_to_pb(number: int, trick: Trick, points: int) -> pb.Trick:
    message = pb.Trick(number=number, leader=trick.leader, winner=trick.winner, points=points)
    for index, card in enumerate(trick.cards):
        message.cards.append(pb.PlayedCard(seat=trick.seat_of(index), card=_CARDS_PB[card]))
    return message


_TRICKS_PB: dict[tuple[int, Trick, int], pb.Trick] = {}
_TRICKS_PB_SIZE = 16384


def _completed_trick(number: int, trick: Trick, rules: Rules) -> pb.Trick:
    """A completed trick's message, built once: every view of the rest of the round shows it."""
    key = (number, trick, points_of(trick.cards, rules))
    message = _TRICKS_PB.get(key)
    if message is None:
        if len(_TRICKS_PB) >= _TRICKS_PB_SIZE:
            _TRICKS_PB.clear()  # a plain bound: refilling is cheap
        message = _TRICKS_PB[key] = _trick_to_pb(*key)
    return message


def _round_history(record: RoundRecord, rules: Rules, totals: list[int]) -> pb.RoundHistory:
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
    for number, trick in enumerate(record.tricks, start=1):
        message.tricks.append(_trick_to_pb(number, trick, points_of(trick.cards, rules)))
    for seat in range(4):
        totals[seat] += record.points[seat]
    message.score.CopyFrom(
        _round_score(record.round_index, record.points, totals, record.moon_shooter)
    )
    return message


def _round_score(
    round_index: int, points: Iterable[int], totals: Iterable[int], moon_shooter: int | None
) -> pb.RoundScore:
    score = pb.RoundScore(
        round_number=round_index + 1, points=list(points), total_scores=list(totals)
    )
    if moon_shooter is not None:
        score.moon_shooter = moon_shooter
    return score


_HISTORIES: dict[tuple[tuple[tuple[int, ...], ...], tuple[int | None, ...]], list[pb.RoundScore]]
_HISTORIES = {}


def _score_history(
    round_scores: tuple[tuple[int, ...], ...], moon_shooters: tuple[int | None, ...]
) -> list[pb.RoundScore]:
    """The scores of the finished rounds, built once per game: every later view repeats them."""
    key = (round_scores, moon_shooters)
    history = _HISTORIES.get(key)
    if history is None:
        history = []
        totals = [0, 0, 0, 0]
        for index, (points, shooter) in enumerate(zip(round_scores, moon_shooters, strict=True)):
            for s in range(4):
                totals[s] += points[s]
            history.append(_round_score(index, points, totals, shooter))
        if len(_HISTORIES) >= 4096:
            _HISTORIES.clear()  # a plain bound: refilling is cheap
        _HISTORIES[key] = history
    return history


def view_to_pb(
    record: TableRecord, version: int, seat: int | None, *, seat_view: SeatView | None = None
) -> pb.TableView:
    """What ``seat`` (None: a spectator) may know of the table, as a message."""
    if seat_view is None:
        seat_view = view_of(record, seat)
    message = pb.TableView(table=table_to_pb(record, version, seat_view), sequence=record.sequence)
    if seat is not None:
        message.viewer_seat = seat
    if seat_view is None:
        message.round_points.extend((0, 0, 0, 0))
        message.tricks_won.extend((0, 0, 0, 0))
        return message
    rules = seat_view.rules
    message.hand.extend(_cards(seat_view.hand))
    message.passed_cards.extend(_cards(seat_view.passed))
    message.received_cards.extend(_cards(seat_view.received))
    trick_number = len(seat_view.tricks) + 1
    if seat_view.leader is not None:
        current = message.current_trick
        current.number = trick_number
        current.leader = seat_view.leader
        for index, card in enumerate(seat_view.trick):
            current.cards.append(
                pb.PlayedCard(seat=(seat_view.leader + index) % 4, card=_CARDS_PB[card])
            )
        current.points = points_of(seat_view.trick, rules)
    message.completed_tricks.extend(
        [_completed_trick(number, trick, rules) for number, trick in enumerate(seat_view.tricks, 1)]
    )
    message.hearts_broken = seat_view.hearts_broken
    message.round_points.extend(seat_view.round_points)
    message.tricks_won.extend(seat_view.tricks_won)
    if seat_view.round_scores:
        message.score_history.extend(
            _score_history(tuple(seat_view.round_scores), tuple(seat_view.moon_shooters))
        )
    message.legal_cards.extend(_cards(seat_view.legal))
    message.cards_to_pass = seat_view.pass_count
    if seat_view.history:
        running = [0, 0, 0, 0]
        for round_record in seat_view.history:
            message.game_history.append(_round_history(round_record, rules, running))
    return message


def engine_event_to_pb(event: Event, time_ms: int) -> events_pb.TableEvent:
    """The API event for an engine event."""
    message = events_pb.TableEvent(event_time=timestamp(time_ms))
    if isinstance(event, CardPlayed):
        message.card_played.seat = event.seat
        message.card_played.card.CopyFrom(_CARDS_PB[event.card])
        message.card_played.trick_number = event.trick_index + 1
    elif isinstance(event, TrickWon):
        points = event.points
        trick = Trick(event.leader, event.cards, event.winner)
        message.trick_won.trick.CopyFrom(_trick_to_pb(event.trick_index + 1, trick, points))
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
