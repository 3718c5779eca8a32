"""Helpers for the client tests: a server, bots at a table, a player that makes legal moves."""

from __future__ import annotations

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, JoinedTable
from hearts_server.config import Settings
from hearts_server.server import HeartsServer
from hearts_server.store.memory import MemoryStore

SECRET = "client-tests-secret-0123456789abcdef"
"""The token secret of every test server (a restarted server must accept the old tokens)."""

THREE_BOTS = {1: "heuristic", 2: "heuristic", 3: "heuristic"}


async def start_server(port: int = 0, store: MemoryStore | None = None) -> HeartsServer:
    """A started server on ``port`` (0: a free one), optionally over an existing store."""
    server = HeartsServer(Settings(port=port, token_secret=SECRET, bot_workers=0), store=store)
    await server.start()
    return server


async def table_with_bots(
    client: HeartsClient, *, seed: int = 7, passing: bool = True, target: int = 100
) -> JoinedTable:
    """A new table with three heuristic bots, joined by ``client`` at seat 0; the game is on."""
    created = await client.create_table(
        "client test",
        rules={"pass_cards": passing, "target_score": target},
        bots=THREE_BOTS,
        deck_seed=seed,
    )
    return await client.join_table(created.name, "Tester", seat=0)


def waits_for_me(view: pb.TableView) -> bool:
    """Whether the game waits for the viewer's pass or play."""
    if view.table.phase == pb.PHASE_PASSING:
        return view.cards_to_pass > 0
    return view.table.phase == pb.PHASE_PLAYING and bool(view.legal_cards)


async def make_move(client: HeartsClient, name: str, view: pb.TableView) -> pb.TableView:
    """Pass the first three cards, or play the first legal card; the view after it."""
    if view.table.phase == pb.PHASE_PASSING:
        return await client.pass_cards(name, view.hand[:3])
    return await client.play_card(name, view.legal_cards[0])


async def play_to_the_end(client: HeartsClient, name: str, view: pb.TableView) -> pb.TableView:
    """Make legal moves until the game is over (inline bots answer within each call)."""
    for _ in range(2000):
        if view.table.phase == pb.PHASE_GAME_OVER:
            return view
        assert waits_for_me(view), f"the game does not wait for seat 0: {view.table}"
        view = await make_move(client, name, view)
    raise AssertionError("the game did not end within 2000 moves")
