"""Every Redis key and channel name the store uses, built in this one module.

All keys of one table carry the table id as a hash tag (``{...}``), so they land in one Cluster
slot and a Lua script may touch them together. The listing indexes are global keys in other slots:
nothing may ever need them in the same script as a table's keys.
"""

from __future__ import annotations

import hashlib

__all__ = [
    "INDEX_ALL",
    "INDEX_OPEN",
    "INDEX_UNLISTED",
    "check_table_id",
    "create_request",
    "events",
    "lobby",
    "notify_channel",
    "player_tables",
    "quota",
    "requests",
    "table",
    "table_id_of_channel",
]

_PREFIX = "hearts"

INDEX_ALL = f"{_PREFIX}:index:all"
"""Sorted set, score 0, member = table id: every listed table, ordered by id (newest last)."""

INDEX_UNLISTED = f"{_PREFIX}:index:unlisted"
"""Sorted set like :data:`INDEX_ALL`, of the unlisted tables: never listed, only counted and
swept."""

INDEX_OPEN = f"{_PREFIX}:index:open"
"""Sorted set like :data:`INDEX_ALL`, holding the tables whose last commit said a seat was free."""

_NOTIFY = f"{_PREFIX}:notify:"

DUE = f"{_PREFIX}:due"
"""Sorted set of the tables the server owes something (a bot's move, a timed-out move, bots for
empty seats): member the table id, score when some process must look at it (ms); see
``Store.due_claim``."""
OUTBOX = f"{_PREFIX}:outbox"
"""Sorted set, member = outbox item id, score = when it is due (ms): webhooks to send."""

OUTBOX_ITEMS = f"{_PREFIX}:outbox:items"
"""Hash, outbox item id -> its payload."""

OUTBOX_ATTEMPTS = f"{_PREFIX}:outbox:attempts"
"""Hash, outbox item id -> how many deliveries were tried (absent: none)."""


def check_table_id(table_id: str) -> str:
    """Return ``table_id`` if it can be a hash tag; raise ``ValueError`` otherwise.

    >>> check_table_id("0190a1b2c3-x7")
    '0190a1b2c3-x7'
    """
    if not table_id or "{" in table_id or "}" in table_id:
        raise ValueError(f"unusable table id {table_id!r}")
    return table_id


def table(table_id: str) -> str:
    """Hash ``v`` (version), ``d`` (data), ``o`` (``1``/``0``: a seat was free at the last commit).

    >>> table("abc")
    'hearts:{abc}:t'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:t"


def events(table_id: str) -> str:
    """Stream of events with ids ``<sequence>-0`` and fields ``a`` (audience) and ``p`` (payload).

    >>> events("abc")
    'hearts:{abc}:e'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:e"


def requests(table_id: str) -> str:
    """Hash caller -> ``<len(request_id)>:<request_id><response>``, the caller's last request.

    >>> requests("abc")
    'hearts:{abc}:r'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:r"


def gone(table_id: str) -> str:
    """Set when the table is deleted, for the idle TTL: no table is made under its id again,
    not even by a retried create whose first attempt claimed the id and died before making it
    (the retry makes that table then, see ``RedisStore.create``).

    >>> gone("abc")
    'hearts:{abc}:g'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:g"


def ephemeral_rate(table_id: str, sender: str) -> str:
    """Counter of the unstored events (reactions) ``sender`` published to the table in the
    current rate window; it expires with the window.

    >>> ephemeral_rate("abc", "2")
    'hearts:{abc}:x:2'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:x:{sender}"


def presence(table_id: str) -> str:
    """Sorted set of the table's presence leases: members ``<seat>:<lease id>`` (the service's
    lease ids are ``<epoch>:<process id>``) scored by the time (ms) they run out. It expires
    shortly after its last lease.

    >>> presence("abc")
    'hearts:{abc}:p'
    """
    return f"{_PREFIX}:{{{check_table_id(table_id)}}}:p"


def quota(name: str) -> str:
    """Counter of a quota's uses in its current window (see ``Store.count_use``); the name is
    hashed, so that any text (an identity's id) makes a short key of one shape.

    >>> quota("create:ip:203.0.113.7")
    'hearts:quota:bb67192ad33baf48de2b2cbad49daee3'
    """
    digest = hashlib.blake2b(name.encode(), digest_size=16).hexdigest()
    return f"{_PREFIX}:quota:{digest}"


def lobby(name: str) -> str:
    """String, a table id: a lobby's slot (see ``Store.lobby_offer``), hashed like
    :func:`quota`; it expires with the table it names. Single-key commands only.

    >>> lobby("game:0123")
    'hearts:lobby:3d3e62f2ef940ba55ea3bb776f7c4856'
    """
    digest = hashlib.blake2b(name.encode(), digest_size=16).hexdigest()
    return f"{_PREFIX}:lobby:{digest}"


def player_tables(player_id: str) -> str:
    """Sorted set, score = when the seat was taken (µs), member = table id: the tables where a
    signed-in player took a seat (see ``Store.player_seat_taken``), hashed like :func:`quota`;
    it expires 30 days (or the idle TTL, if longer) after its last write or read. Never in a
    script with a table's keys.

    >>> player_tables("user-1")
    'hearts:player:d6fc1c4b4ddbb4e741457d1d873d0d46'
    """
    digest = hashlib.blake2b(player_id.encode(), digest_size=16).hexdigest()
    return f"{_PREFIX}:player:{digest}"


def create_request(request_id: str) -> str:
    """String ``<len(table_id)>:<table_id><response>``: the table a create request made.

    It has no hash tag on purpose: only single-key commands touch it, so any slot will do.

    >>> create_request("req-1")
    'hearts:create:req-1'
    """
    return f"{_PREFIX}:create:{request_id}"


def notify_channel(table_id: str) -> str:
    """The pub/sub channel a commit publishes the table's event batch on.

    It carries the same hash tag, so sharded pub/sub (``SPUBLISH``) can use it unchanged later.

    >>> notify_channel("abc")
    'hearts:notify:{abc}'
    """
    return f"{_NOTIFY}{{{check_table_id(table_id)}}}"


def table_id_of_channel(channel: bytes) -> str | None:
    """The table id in a :func:`notify_channel` name, or ``None`` if it is not one.

    >>> table_id_of_channel(b"hearts:notify:{abc}")
    'abc'
    >>> table_id_of_channel(b"hearts:notify:other") is None
    True
    """
    text = channel.decode("utf-8", "replace")
    if not (text.startswith(_NOTIFY + "{") and text.endswith("}")):
        return None
    return text[len(_NOTIFY) + 1 : -1] or None
