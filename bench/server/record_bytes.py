"""What a table's record costs to write over a whole game, by record schema.

Every command writes the table's record to Redis. Schema 2 is one JSON text holding every
finished round, so each write grows with the game; schema 3 puts the finished rounds on a second
line, which the Redis store sends only when it changed (once a round). This plays seeded random
games to several target scores through the engine, builds the record after every move as the
server does (``TableRecord.evolve``, ``to_json``), and adds up the bytes each schema sends: the
whole text for schema 2; the first line, and the second when it differs from the last one sent,
for schema 3. No server and no Redis: the sizes are the record's own.

Run it with ``uv run python bench/server/record_bytes.py [--targets 100,500,1000] [--seed 1]``.
"""

from __future__ import annotations

import argparse
import random

from hearts_engine import (
    Deal,
    PassCards,
    Phase,
    PlayCard,
    Rules,
    State,
    apply,
    legal_passes,
    legal_plays,
    new_game,
    seats_to_act,
    seeded_deck,
)
from hearts_server.record import Occupant, SeatRecord, TableRecord


def _move(state: State, rng: random.Random, seed: int) -> State:
    """The state after one random legal move (the deal from ``seed``)."""
    if state.phase is Phase.DEALING:
        return apply(state, Deal(seeded_deck(seed, state.round_index)))
    if state.phase is Phase.PASSING:
        seat = seats_to_act(state)[0]
        return apply(state, PassCards(seat, tuple(rng.sample(legal_passes(state, seat), 3))))
    return apply(state, PlayCard(state.turn, rng.choice(legal_plays(state, state.turn))))


def measure(target: int, seed: int) -> None:
    rng = random.Random(seed)
    rules = Rules(target_score=target)
    record = TableRecord(
        table_id=f"bench-{target}",
        display_name="Bench table",
        rules=rules,
        first_dealer=0,
        seats=tuple(SeatRecord(Occupant.HUMAN, f"player {seat}", None, 1) for seat in range(4)),
        create_ms=1,
        update_ms=1,
        sequence=1,
        deck_seed=seed,
        bot_seed=seed,
    )
    state = new_game(rules)
    moves = one_line = first_lines = second_lines = 0
    last_second = b""
    late = (0, 0)
    while state.phase is not Phase.GAME_OVER:
        state = _move(state, rng, seed)
        moves += 1
        current = record.evolve(state, moves, moves)
        whole = current.to_json(schema=2)
        first, _, second = current.to_json(schema=3).partition(b"\n")
        one_line += len(whole)
        first_lines += len(first)
        if second != last_second:
            second_lines += len(second)
            last_second = second
        late = (len(whole), len(first))
    two_lines = first_lines + second_lines
    print(
        f"target {target:>5}: {len(state.rounds):>3} rounds, {moves:>5} moves | "
        f"schema 2: {one_line / 1e6:7.2f} MB, the last move {late[0] / 1024:5.1f} KiB | "
        f"schema 3: {two_lines / 1e6:6.2f} MB ({second_lines / 1e6:.2f} MB of it the rounds), "
        f"the last move {late[1] / 1024:.1f} KiB (without its rounds) | "
        f"{one_line / two_lines:.1f}x less"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", default="100,500,1000", help="target scores, comma-separated")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for target in (int(part) for part in args.targets.split(",")):
        measure(target, args.seed)


if __name__ == "__main__":
    main()
