"""The store's connection packs commands with hiredis: the same bytes as redis-py's own packer."""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection

from hearts_server.store.lane import _pack

COMMANDS = [
    ("EVALSHA", "a" * 40, 3, "t:{x}:r", "t:{x}:e", "t:{x}:q", 17, b"\x00\xff" * 900, "", -5),
    (b"XADD", "k", "MAXLEN", "~", 100, "*", "p", "é ünïcode"),
    ("GET", "k"),
    ("SCRIPT LOAD", b"return 1"),  # a two-word name: split into two arguments
    ("SET", "k", b"v", "NX", "GET", "PX", 60_000),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: str(c[0]))
def test_packs_the_same_bytes_as_redis_py(command: tuple[object, ...]) -> None:
    theirs = b"".join(Connection().pack_command(*command))
    assert _pack(command) == theirs  # type: ignore[arg-type]
