"""Fixtures for the client tests: a real in-process server on a free port, and a client for it.

The client tests talk to :class:`~hearts_server.server.HeartsServer` over real gRPC on loopback,
with the embedded memory store, exactly as a user's program would. Helpers shared by several
modules live in ``client_helpers.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest

from hearts_client import HeartsClient
from hearts_server.server import HeartsServer

from .client_helpers import IDENTITY_SECRET, server_in_thread, start_server


@pytest.fixture(autouse=True)
def _no_identity_token_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``hearts`` command reads ``HEARTS_IDENTITY_TOKEN``; a developer's own must not leak
    into the tests (a server without identity checks refuses it)."""
    monkeypatch.delenv("HEARTS_IDENTITY_TOKEN", raising=False)


@pytest.fixture
async def server() -> AsyncIterator[HeartsServer]:
    """A running server with a fresh memory store."""
    running = await start_server()
    yield running
    await running.stop(0)


@pytest.fixture
async def identity_server() -> AsyncIterator[HeartsServer]:
    """A running server that checks identity tokens signed with ``IDENTITY_SECRET``."""
    running = await start_server(identity_secret=IDENTITY_SECRET)
    yield running
    await running.stop(0)


@pytest.fixture
async def client(server: HeartsServer) -> AsyncIterator[HeartsClient]:
    """A client of ``server`` with short retry delays."""
    async with HeartsClient(server.address, backoff=0.02) as opened:
        yield opened


@pytest.fixture
def threaded_server() -> Iterator[str]:
    """The address of a server on its own event loop in a thread, for the sync client (which
    must own the test's)."""
    with server_in_thread() as address:
        yield address


@pytest.fixture
def identity_server_in_thread() -> Iterator[str]:
    """Like ``threaded_server``, checking identity tokens signed with ``IDENTITY_SECRET``."""
    with server_in_thread(identity_secret=IDENTITY_SECRET) as address:
        yield address
