"""``HeartsClient.list_player_tables`` and ``hearts tables --mine`` against a real server: the
tables where a signed-in player holds a seat ("my games"), found by the player's identity token
alone, so a new device finds the player's games again.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import grpc
import pytest

from hearts_client import (
    AuthError,
    HeartsClient,
    InvalidRequestError,
    PlayerTable,
    SyncHeartsClient,
)
from hearts_client.cli import main
from hearts_server.server import HeartsServer

from .client_helpers import THREE_BOTS, Record, identity, run_hearts


async def _seat_user_1_twice(address: str) -> tuple[str, str, str]:
    """Three tables: ``user-1`` takes seat 2 of the first, then seat 0 of an unlisted one;
    ``user-2`` and a guest sit at the third. Their names, in that order."""
    async with HeartsClient(address, identity_token=identity("user-1")) as ann:
        first = (await ann.create_table("First")).name
        unlisted = (await ann.create_table("Friends", unlisted=True)).name
        others = (await ann.create_table("Others")).name
        await ann.join_table(first, "Ann", seat=2)
        await ann.join_table(unlisted, "Ann", seat=0)
        await ann.join_table(others, "Bob", seat=1, identity_token=identity("user-2"))
        await ann.join_table(others, "Guest", seat=3, identity_token="")
    return first, unlisted, others


def _seats(tables: list[PlayerTable]) -> list[tuple[str, int]]:
    return [(mine.name, mine.seat) for mine in tables]


# --------------------------------------------------------------------------- the asyncio client


async def test_a_signed_in_player_lists_its_tables_most_recently_joined_first(
    identity_server: HeartsServer,
) -> None:
    first, unlisted, others = await _seat_user_1_twice(identity_server.address)
    async with HeartsClient(identity_server.address, identity_token=identity("user-1")) as ann:
        mine = await ann.list_player_tables()
        assert _seats(mine) == [(unlisted, 0), (first, 2)]
        assert _seats(await ann.list_player_tables(page_size=1)) == [(unlisted, 0)]
        # Another player's token, for this call only.
        bobs = await ann.list_player_tables(identity_token=identity("user-2"))
        assert _seats(bobs) == [(others, 1)]
        assert ann.identity_token == identity("user-1")
        assert await ann.list_player_tables(identity_token=identity("user-3")) == []
    assert all(isinstance(entry, PlayerTable) for entry in mine)
    table, seat = mine[1]  # unpacks like the other results
    assert (table.display_name, seat) == ("First", 2)
    assert table.seats[2].player_id == "user-1"
    assert mine[0].table.unlisted  # a game among friends is the player's game too


async def test_a_new_device_finds_the_players_game_and_takes_its_seat_again(
    identity_server: HeartsServer,
) -> None:
    async with HeartsClient(identity_server.address, identity_token=identity("user-1")) as old:
        created = await old.create_table("Long game", bots=THREE_BOTS)
        await old.join_table(created.name, "Ann", seat=0)
    # The first device's seat token is lost; a fresh sign-in on the new device is all it has.
    fresh = identity("user-1", iat=int(time.time()))
    async with HeartsClient(identity_server.address, identity_token=fresh) as new:
        [mine] = await new.list_player_tables()
        assert (mine.name, mine.seat) == (created.name, 0)
        again = await new.join_table(mine.name, "Ann")
        view = await new.get_table(mine.name)
    assert again.seat == 0
    assert view.viewer_seat == 0
    assert len(view.hand) == 13


async def test_the_identity_token_goes_in_the_request_never_as_metadata(
    identity_server: HeartsServer,
) -> None:
    token = identity("user-1")
    record = Record()
    async with HeartsClient(
        identity_server.address, identity_token=token, token="a-seat-token", interceptors=[record]
    ) as client:
        await client.list_player_tables(page_size=7)
        await client.list_player_tables(identity_token=identity("user-2"))
    [(method, request, metadata), (_, override, _)] = record.calls
    assert method == "ListPlayerTables"
    assert (request.identity_token, request.page_size) == (token, 7)
    assert override.identity_token == identity("user-2")
    assert metadata == []  # no token of any kind as metadata


@pytest.mark.parametrize(
    ("token", "reason"),
    [
        (lambda: "", "IDENTITY_REQUIRED"),
        (lambda: "not-a-jwt", "IDENTITY_INVALID"),
        (lambda: identity(exp=int(time.time()) - 3600), "IDENTITY_EXPIRED"),
    ],
)
async def test_a_missing_or_bad_identity_token_raises_an_auth_error_and_is_not_retried(
    identity_server: HeartsServer, token: Callable[[], str], reason: str
) -> None:
    record = Record()
    async with HeartsClient(identity_server.address, interceptors=[record], backoff=0.01) as client:
        with pytest.raises(AuthError) as caught:
            await client.list_player_tables(identity_token=token())
    assert (caught.value.code, caught.value.reason) == (grpc.StatusCode.UNAUTHENTICATED, reason)
    assert len(record.calls) == 1


async def test_a_negative_page_size_is_refused(identity_server: HeartsServer) -> None:
    async with HeartsClient(identity_server.address, identity_token=identity()) as client:
        with pytest.raises(InvalidRequestError) as caught:
            await client.list_player_tables(page_size=-1)
    assert caught.value.reason == "INVALID_REQUEST"


async def test_a_server_that_checks_no_identity_keeps_no_player_tables(
    server: HeartsServer,
) -> None:
    async with HeartsClient(server.address, identity_token=identity()) as client:
        for token in (None, ""):  # the client's token, then none at all
            with pytest.raises(InvalidRequestError) as caught:
                await client.list_player_tables(identity_token=token)
            assert (caught.value.code, caught.value.reason) == (
                grpc.StatusCode.INVALID_ARGUMENT,
                "IDENTITY_NOT_ACCEPTED",
            )


# --------------------------------------------------------------------------- the sync client


def test_the_sync_client_lists_the_players_tables(identity_server_in_thread: str) -> None:
    with SyncHeartsClient(identity_server_in_thread, identity_token=identity("user-1")) as client:
        created = client.create_table("sync")
        joined = client.join_table(created.name, "Ann", seat=1)
        mine = client.list_player_tables()
        assert _seats(mine) == [(created.name, 1)]
        assert mine[0].table.seats[1].player_id == joined.player_id == "user-1"
        assert client.list_player_tables(identity_token=identity("user-2")) == []
        with pytest.raises(AuthError) as caught:
            client.list_player_tables(identity_token="")
        assert caught.value.reason == "IDENTITY_REQUIRED"


# --------------------------------------------------------------------------- the hearts command


async def test_tables_mine_shows_the_players_tables_with_its_seat(
    identity_server: HeartsServer,
) -> None:
    address = identity_server.address
    first, unlisted, _ = await _seat_user_1_twice(address)
    argv = ["tables", "--server", address, "--mine", "--identity-token", identity("user-1")]
    code, out = await run_hearts(argv)
    assert code == 0, out
    code, listed = await run_hearts(["tables", "--server", address])
    assert code == 0, listed
    # Each line is the table's line of `hearts tables`, and the player's seat.
    [first_line] = [line for line in listed.splitlines() if line.startswith(first)]
    assert "[(free), (free), Ann <user-1>, (free)]" in first_line
    unlisted_line, mine_line = out.splitlines()
    assert mine_line == f"{first_line}  your seat: 2"
    assert unlisted_line.startswith(f"{unlisted}  'Friends'  waiting  [Ann <user-1>, ")
    assert unlisted_line.endswith("  your seat: 0")
    assert unlisted not in listed  # only --mine shows it

    code, out = await run_hearts([*argv, "--limit", "1"])
    assert (code, out.splitlines()) == (0, [unlisted_line])


async def test_tables_mine_limit_0_lists_more_than_the_servers_default_page(
    identity_server: HeartsServer,
) -> None:
    address = identity_server.address
    async with HeartsClient(address, identity_token=identity("user-1")) as ann:
        for number in range(51):  # one more than the server's default page_size
            await ann.join_table((await ann.create_table(f"t{number}")).name, "Ann")
    argv = ["tables", "--server", address, "--mine", "--identity-token", identity("user-1")]
    code, out = await run_hearts([*argv, "--limit", "0"])
    assert code == 0, out
    assert len(out.splitlines()) == 51
    assert "'t50'" in out.splitlines()[0]  # the most recently joined first
    code, out = await run_hearts(argv)  # --limit 50 by default
    assert len(out.splitlines()) == 50


async def test_tables_mine_reads_the_identity_token_from_the_environment(
    identity_server: HeartsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    address = identity_server.address
    _, _, others = await _seat_user_1_twice(address)
    monkeypatch.setenv("HEARTS_IDENTITY_TOKEN", identity("user-2"))
    code, out = await run_hearts(["tables", "--server", address, "--mine"])
    assert code == 0, out
    [line] = out.splitlines()
    assert line.startswith(others)
    assert line.endswith("Bob <user-2>, (free), Guest]  your seat: 1")
    monkeypatch.setenv("HEARTS_IDENTITY_TOKEN", identity("user-3"))
    assert await run_hearts(["tables", "--server", address, "--mine"]) == (0, "No tables.\n")


@pytest.mark.parametrize(
    ("option", "message"),
    [
        ([], "--mine: needs your identity token (--identity-token or HEARTS_IDENTITY_TOKEN)"),
        (["--identity-token", ""], "--mine: needs your identity token"),
        (["--open", "--identity-token", "x"], "--open: not with --mine"),
    ],
)
def test_tables_mine_without_an_identity_token_says_how_to_give_one(
    option: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Refused before any call: the port has no server.
    with pytest.raises(SystemExit) as caught:
        main(["tables", "--server", "127.0.0.1:1", "--mine", *option])
    assert caught.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    ("token", "reason", "hint"),
    [
        (lambda: identity(exp=int(time.time()) - 3600), "IDENTITY_EXPIRED", "sign in again"),
        (lambda: "not-a-jwt", "IDENTITY_INVALID", None),
    ],
)
async def test_tables_mine_with_a_bad_identity_token_is_refused(
    identity_server: HeartsServer,
    token: Callable[[], str],
    reason: str,
    hint: str | None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["tables", "--server", identity_server.address, "--mine", "--identity-token"]
    code, out = await run_hearts([*argv, token()])
    assert (code, out) == (2, "")
    err = capsys.readouterr().err
    assert f"hearts: the server refused: {reason}" in err
    if hint is not None:
        assert hint in err


async def test_tables_mine_on_a_server_that_checks_no_identity_says_why_it_cannot(
    server: HeartsServer, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["tables", "--server", server.address, "--mine", "--identity-token", identity()]
    code, out = await run_hearts(argv)
    assert (code, out) == (2, "")
    err = capsys.readouterr().err
    assert "IDENTITY_NOT_ACCEPTED" in err
    assert "keeps no player's tables" in err
    assert "leave out --identity-token" not in err  # the hint for `hearts play` would mislead
