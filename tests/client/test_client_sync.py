"""The blocking facade: the same calls as the asyncio client, from plain code."""

from __future__ import annotations

import pytest

from hearts.v1 import table_pb2 as pb
from hearts_client import HeartsClient, IllegalMoveError, SyncHeartsClient


def test_sync_client_plays_and_watches(threaded_server: str) -> None:
    with SyncHeartsClient(threaded_server, backoff=0.02) as client:
        created = client.create_table(
            "sync", rules={"pass_cards": False}, bots={1: "random", 2: "random", 3: "random"}
        )
        joined = client.join_table(created.name, "Ada")
        view = joined.view
        if not view.legal_cards:
            pytest.fail("seat 0 should hold the turn once bots have played")
        illegal = [c for c in view.hand if c not in view.legal_cards]
        if illegal:
            with pytest.raises(IllegalMoveError):
                client.play_card(created.name, illegal[0])
        after = client.play_card(created.name, view.legal_cards[0])
        assert len(after.hand) == 12

        stream = client.watch(created.name, after_sequence=view.sequence)
        first = next(stream)
        stream.close()
        assert first.HasField("event")
        assert first.sequence > view.sequence

        assert [t.name for t in client.iter_tables()] == [created.name]
        assert client.get_table(created.name).table.phase == pb.PHASE_PLAYING
        client.delete_table(created.name)
        assert client.list_tables().tables == []


def test_sync_client_asks_for_a_rematch_after_the_game(threaded_server: str) -> None:
    with SyncHeartsClient(threaded_server, backoff=0.02) as client:
        bots = {1: "random", 2: "random", 3: "random"}
        created = client.create_table("sync", rules={"target_score": 1}, bots=bots)
        view = client.join_table(created.name, "Ada").view
        with pytest.raises(IllegalMoveError) as early:
            client.rematch_table(created.name)
        assert early.value.reason == "GAME_NOT_OVER"
        while view.table.phase != pb.PHASE_GAME_OVER:
            if view.cards_to_pass:
                view = client.pass_cards(created.name, view.hand[:3])
            else:
                view = client.play_card(created.name, view.legal_cards[0])

        rematch = client.rematch_table(created.name)
        assert rematch.seat == 0
        assert rematch.name != created.name
        assert rematch.view.table.rematch_of == created.name
        assert client.client.seat_token(rematch.name) == rematch.seat_token
        assert len(client.get_table(rematch.name).hand) == 13
        assert client.get_table(created.name).table.rematch_table == rematch.name


def test_a_watch_left_open_past_the_clients_close_closes_quietly(
    threaded_server: str, recwarn: pytest.WarningsRecorder
) -> None:
    # Closing such an iterator (or dropping it) used to run the stream's close on the client's
    # closed event loop: RuntimeError, and a coroutine never awaited.
    with SyncHeartsClient(threaded_server, backoff=0.02) as client:
        created = client.create_table("left open")
        stream = client.watch(created.name)
        assert next(stream).HasField("snapshot")
    stream.close()
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_the_facade_has_every_public_member_of_the_asyncio_client() -> None:
    public = {name for name in dir(HeartsClient) if not name.startswith("_")}
    assert public <= {name for name in dir(SyncHeartsClient) if not name.startswith("_")}


def test_a_seat_token_handed_to_another_sync_client_resumes_the_seat(threaded_server: str) -> None:
    with SyncHeartsClient(threaded_server, backoff=0.02) as first:
        created = first.create_table("handed over", bots={1: "random", 2: "random", 3: "random"})
        first.join_table(created.name, "Ada")
        token = first.seat_token(created.name)
        assert token is not None
        assert first.creator_token(created.name) is not None
    with SyncHeartsClient(threaded_server, backoff=0.02) as second:
        second.set_seat_token(created.name, token)
        view = second.get_table(created.name)
        assert len(view.hand) == 13  # the seat's own cards: the token was sent
        second.set_seat_token(created.name, None)
        assert second.seat_token(created.name) is None
        assert len(second.get_table(created.name).hand) == 0
