"""SendReaction: a player's reaction, shown on every stream of the table as it is sent; not
stored, not a change of the table, and limited per seat."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import grpc
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server import service
from hearts_server.server import HeartsServer

from .conftest import Hearts, ServerFactory, bearer, event_kind, failure, read_until

HEURISTIC = pb.BOT_LEVEL_HEURISTIC


async def react(hearts: Hearts, name: str, token: str | None, reaction: int) -> None:
    request = api.SendReactionRequest(name=name, reaction=reaction)  # type: ignore[arg-type]
    await hearts.stub.SendReaction(request, metadata=bearer(token))


async def snapshot(call: object) -> api.WatchTableResponse:
    [first] = await read_until(call, lambda message: True)
    assert first.HasField("snapshot")
    return first


async def test_a_reaction_reaches_every_stream_and_changes_nothing(hearts: Hearts) -> None:
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    name = seated.name
    spectator, player = hearts.watch(name), hearts.watch(name, seated.tokens[2])
    try:
        first = await snapshot(spectator)
        await snapshot(player)
        etag = await hearts.etag(name)
        await react(hearts, name, seated.tokens[0], pb.REACTION_THUMBS_UP)
        for call in (spectator, player):
            [message] = await read_until(call, lambda message: True)
            assert event_kind(message) == "reaction"
            assert (message.event.reaction.seat, message.event.reaction.reaction) == (
                0,
                pb.REACTION_THUMBS_UP,
            )
            # It takes the number of the event before it, and is a change of nothing.
            assert message.sequence == first.sequence
            assert message.event.HasField("event_time")
        assert await hearts.etag(name) == etag
        # The table's next event follows the one before the reaction.
        view = await hearts.view(name, seated.tokens[0])
        await hearts.move(name, seated.tokens[0], view, random.Random(1))
        [message] = await read_until(spectator, lambda message: True)
        assert message.sequence == first.sequence + 1
        assert event_kind(message) != "reaction"
    finally:
        spectator.cancel()
        player.cancel()
    # Not stored: a stream that resumes from before it does not get it.
    resumed = hearts.watch(name, after_sequence=first.sequence)
    try:
        messages = await read_until(resumed, lambda message: message.sequence > first.sequence)
        assert "reaction" not in [event_kind(message) for message in messages]
    finally:
        resumed.cancel()


async def test_a_reaction_is_refused_with_a_reason(hearts: Hearts) -> None:
    created = await hearts.create(bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC})
    name = created.view.table.name
    joined = await hearts.join(name, 0, player="Ann")
    for token, reaction, code, reason in [
        (None, pb.REACTION_WAVE, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_MISSING"),
        (
            created.creator_token,
            pb.REACTION_WAVE,
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_A_PLAYER",
        ),
        (
            joined.seat_token,
            pb.REACTION_UNSPECIFIED,
            grpc.StatusCode.INVALID_ARGUMENT,
            "INVALID_REQUEST",
        ),
        (joined.seat_token, 99, grpc.StatusCode.INVALID_ARGUMENT, "INVALID_REQUEST"),
    ]:
        refusal = await failure(react(hearts, name, token, reaction))
        assert (refusal.code, refusal.reason) == (code, reason)
    refusal = await failure(react(hearts, "tables/0123456789abcdef01", joined.seat_token, 1))
    assert refusal.reason in ("TABLE_NOT_FOUND", "WRONG_TABLE")
    # A player who left no longer has a seat to react from.
    await hearts.leave(name, joined.seat_token)
    refusal = await failure(react(hearts, name, joined.seat_token, pb.REACTION_WAVE))
    assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")


async def test_a_seat_may_send_a_few_reactions_per_window(
    hearts: Hearts, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(service, "REACTION_WINDOW_MS", 1000)
    seated = await hearts.seated((0, 1), bots={2: HEURISTIC, 3: HEURISTIC})
    name, ann, bo = seated.name, seated.tokens[0], seated.tokens[1]
    watcher = hearts.watch(name)
    try:
        await snapshot(watcher)
        for _ in range(service.REACTIONS_PER_WINDOW):
            await react(hearts, name, ann, pb.REACTION_CLAP)
        refusal = await failure(react(hearts, name, ann, pb.REACTION_CLAP))
        assert (refusal.code, refusal.reason) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "TOO_MANY_REACTIONS",
        )
        await react(hearts, name, bo, pb.REACTION_LAUGH)  # another seat's own count
        await asyncio.sleep(1.1)  # the window is over
        await react(hearts, name, ann, pb.REACTION_WAVE)
        messages = await read_until(
            watcher,
            lambda message: message.event.reaction.reaction == pb.REACTION_WAVE,
        )
        sent = [(m.event.reaction.seat, m.event.reaction.reaction) for m in messages]
        assert sent == [(0, pb.REACTION_CLAP)] * service.REACTIONS_PER_WINDOW + [
            (1, pb.REACTION_LAUGH),
            (0, pb.REACTION_WAVE),
        ]
    finally:
        watcher.cancel()


@pytest.mark.redis
async def test_a_reaction_sent_on_one_replica_reaches_watchers_of_another(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    one = connect(await make_server(store="redis"))
    two = connect(await make_server(store="redis"))
    seated = await one.seated((0,), bots={1: HEURISTIC, 2: HEURISTIC, 3: HEURISTIC})
    watcher = two.watch(seated.name)
    try:
        first = await snapshot(watcher)
        await react(one, seated.name, seated.tokens[0], pb.REACTION_WOW)
        [message] = await read_until(watcher, lambda message: True)
        assert message.event.reaction.reaction == pb.REACTION_WOW
        assert message.sequence == first.sequence
    finally:
        watcher.cancel()


async def test_a_reaction_that_races_its_senders_leave_is_not_sent(
    hearts: Hearts, server: HeartsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    seated = await hearts.seated((0, 2), bots={1: HEURISTIC, 3: HEURISTIC})
    name, token = seated.name, seated.tokens[0]
    publish = server.store.publish_ephemeral

    async def leave_first(*args: Any, **kwargs: Any) -> Any:
        # The player leaves between the reaction's read (which seated them) and its publish.
        monkeypatch.setattr(server.store, "publish_ephemeral", publish)
        await hearts.leave(name, token)
        return await publish(*args, **kwargs)

    monkeypatch.setattr(server.store, "publish_ephemeral", leave_first)
    watcher = hearts.watch(name)
    try:
        first = await snapshot(watcher)
        refusal = await failure(react(hearts, name, token, pb.REACTION_WAVE))
        assert (refusal.code, refusal.reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_REVOKED")
        # The next thing the table tells its watchers after the leave is no reaction of seat 0.
        await react(hearts, name, seated.tokens[2], pb.REACTION_SAD)
        messages = await read_until(watcher, lambda message: event_kind(message) == "reaction")
        kinds = [(event_kind(m), m.event.reaction.seat) for m in messages]
        assert kinds[-1] == ("reaction", 2)
        assert ("player_left", 0) in [(event_kind(m), m.event.player_left.seat) for m in messages]
        assert all(m.sequence > first.sequence for m in messages)
    finally:
        watcher.cancel()
