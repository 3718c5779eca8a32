"""The Redis store packs commands with hiredis: the same bytes as redis-py's own packer."""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection

from hearts_server.store.redis import RedisStore, _HiredisPackingConnection

COMMANDS = [
    ("EVALSHA", "a" * 40, 3, "t:{x}:r", "t:{x}:e", "t:{x}:q", 17, b"\x00\xff" * 900, "", -5),
    (b"XADD", "k", "MAXLEN", "~", 100, "*", "p", "é ünïcode"),
    ("GET", "k"),
    ("SCRIPT LOAD", b"return 1"),  # a two-word name: split into two arguments
    (b"CLIENT SETNAME", "hearts"),
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: str(c[0]))
def test_packs_the_same_bytes_as_redis_py(command: tuple[object, ...]) -> None:
    ours = b"".join(_HiredisPackingConnection().pack_command(*command))
    theirs = b"".join(Connection().pack_command(*command))
    assert ours == theirs


def test_plain_redis_urls_use_the_hiredis_packer() -> None:
    store = RedisStore.from_url("redis://127.0.0.1:1/0")
    assert store._redis.connection_pool.connection_class is _HiredisPackingConnection
    tls = RedisStore.from_url("rediss://127.0.0.1:1/0")
    assert tls._redis.connection_pool.connection_class is not _HiredisPackingConnection
