"""--max-tables-per-hour: how many tables one player (by identity token) or one address may
create in an hour; --max-streams-per-client and --max-streams, how many WatchTable streams one
address and the whole process may hold; and --trusted-proxies, whose x-forwarded-for names the
caller's address."""

from __future__ import annotations

import asyncio
import ipaddress
import time
from collections.abc import Sequence
from typing import Any

import grpc
import jwt
import pytest

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts_server.rpc import client_address

from .conftest import Hearts, ServerFactory, failure

SECRET = "the-apps-backend-signs-with-this-secret-0123456789"


def signed(sub: str) -> str:
    return jwt.encode({"sub": sub, "exp": int(time.time()) + 3600}, SECRET, "HS256")


async def create(
    hearts: Hearts, *, identity: str = "", forwarded: str | None = None
) -> api.CreateTableResponse:
    request = api.CreateTableRequest(table=pb.Table(), identity_token=identity)
    metadata = () if forwarded is None else (("x-forwarded-for", forwarded),)
    return await hearts.stub.CreateTable(request, metadata=metadata)


async def tables(hearts: Hearts) -> int:
    return len((await hearts.stub.ListTables(api.ListTablesRequest())).tables)


async def test_an_address_may_create_so_many_tables_an_hour(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    hearts = connect(
        await make_server(store=store_kind, max_tables_per_hour=2, identity_secret=SECRET)
    )
    await create(hearts)
    await create(hearts)
    refusal = await failure(create(hearts))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_TABLES",
    )
    assert "2 new tables an hour from one address" in refusal.message
    assert await tables(hearts) == 2  # the refused one was not made
    # A signed-in player has a quota of its own, whatever address it calls from.
    await create(hearts, identity=signed("ann"))
    await create(hearts, identity=signed("ann"))
    refusal = await failure(create(hearts, identity=signed("ann")))
    assert refusal.reason == "TOO_MANY_TABLES"
    assert "from one player" in refusal.message
    await create(hearts, identity=signed("bo"))
    # A header the caller wrote itself names nobody: this server trusts no proxy.
    refusal = await failure(create(hearts, forwarded="198.51.100.1"))
    assert refusal.reason == "TOO_MANY_TABLES"
    assert await tables(hearts) == 5


async def test_behind_a_trusted_proxy_each_forwarded_address_has_its_quota(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    server = await make_server(
        store="memory", max_tables_per_hour=1, trusted_proxies="127.0.0.0/8, ::1"
    )
    hearts = connect(server)
    await create(hearts, forwarded="198.51.100.1")
    await create(hearts, forwarded="198.51.100.2")
    # What a client puts before the address the proxy saw is not believed.
    refusal = await failure(create(hearts, forwarded="203.0.113.9, 198.51.100.1"))
    assert refusal.reason == "TOO_MANY_TABLES"
    await create(hearts)  # the proxy's own address, calling directly
    assert await tables(hearts) == 3


async def test_a_retried_create_gets_its_table_and_is_not_counted_again(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    hearts = connect(await make_server(store=store_kind, max_tables_per_hour=1))
    request = api.CreateTableRequest(table=pb.Table(), request_id="create-1")
    first = await hearts.stub.CreateTable(request)
    # The answer was lost, say: the retry at the limit is answered, with the same table.
    again = await hearts.stub.CreateTable(request)
    assert again.view.table.name == first.view.table.name
    assert again.creator_token == first.creator_token
    refusal = await failure(create(hearts))
    assert refusal.reason == "TOO_MANY_TABLES"


async def test_an_ipv6_caller_is_counted_by_its_64_and_ports_are_no_new_callers(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
) -> None:
    server = await make_server(store="memory", max_tables_per_hour=1, trusted_proxies="127.0.0.1")
    hearts = connect(server)
    await create(hearts, forwarded="2001:db8:0:1::1")
    # Another address of the same /64: the same host.
    assert (await failure(create(hearts, forwarded="[2001:db8:0:1::2]:443"))).reason == (
        "TOO_MANY_TABLES"
    )
    await create(hearts, forwarded="2001:db8:0:2::1")  # another /64
    await create(hearts, forwarded="198.51.100.1:5000")
    # The same address with another port is the same caller.
    assert (await failure(create(hearts, forwarded="198.51.100.1:6000"))).reason == (
        "TOO_MANY_TABLES"
    )


async def test_without_a_limit_nothing_is_counted(hearts: Hearts) -> None:
    for _ in range(5):
        await create(hearts)
    assert await tables(hearts) == 5


class _Context:
    def __init__(self, peer: str, metadata: Sequence[tuple[str, str]] = ()) -> None:
        self._peer = peer
        self._metadata = tuple(metadata)

    def peer(self) -> str:
        return self._peer

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._metadata


GATEWAYS = [ipaddress.ip_network("10.0.0.0/8"), ipaddress.ip_network("fd00::/8")]


@pytest.mark.parametrize(
    ("peer", "forwarded", "caller"),
    [
        ("ipv4:203.0.113.7:5000", [], "203.0.113.7"),
        ("ipv6:[2001:db8::7]:5000", [], "2001:db8::7"),
        ("ipv6:[::ffff:203.0.113.7]:5000", [], "203.0.113.7"),
        ("unix:/run/hearts.sock", [], ""),
        # Not through a trusted proxy: the header is the caller's own word.
        ("ipv4:203.0.113.7:5000", ["198.51.100.1"], "203.0.113.7"),
        # Through the gateway: the address it saw, not what the client wrote before it.
        ("ipv4:10.1.2.3:5000", ["198.51.100.1"], "198.51.100.1"),
        ("ipv4:10.1.2.3:5000", ["6.6.6.6, 198.51.100.1"], "198.51.100.1"),
        ("ipv4:10.1.2.3:5000", ["6.6.6.6", "198.51.100.1, 10.9.9.9"], "198.51.100.1"),
        ("ipv6:[fd00::3]:5000", ["2001:db8::1"], "2001:db8::1"),
        # A proxy with no caller named, or a name that is no address: the last one known.
        ("ipv4:10.1.2.3:5000", [], "10.1.2.3"),
        ("ipv4:10.1.2.3:5000", ["10.4.4.4"], "10.4.4.4"),
        ("ipv4:10.1.2.3:5000", ["198.51.100.1, unknown"], "10.1.2.3"),
        # Entries some proxies write with a port.
        ("ipv4:10.1.2.3:5000", ["198.51.100.1:5678"], "198.51.100.1"),
        ("ipv4:10.1.2.3:5000", ["[2001:db8::1]:443"], "2001:db8::1"),
        ("ipv4:10.1.2.3:5000", ["[2001:db8::1]"], "2001:db8::1"),
    ],
)
def test_the_callers_address(peer: str, forwarded: list[str], caller: str) -> None:
    context: Any = _Context(peer, [("x-forwarded-for", value) for value in forwarded])
    assert client_address(context, GATEWAYS) == caller


async def test_a_rematch_counts_as_a_table_made(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    # A one-round game against bots, rematched over and over, made a table each time without
    # counting: about 50 a second from one counted create.
    hearts = connect(await make_server(store=store_kind, max_tables_per_hour=2))
    bots = dict.fromkeys((1, 2, 3), pb.BOT_LEVEL_HEURISTIC)
    seated = await hearts.seated((0,), bots=bots, target_score=1)  # the first use
    await hearts.play_out(seated.name, seated.tokens)
    rematch = await hearts.rematch(seated.name, seated.tokens[0])  # the second
    await hearts.play_out(rematch.view.table.name, {0: rematch.seat_token})
    refusal = await failure(hearts.rematch(rematch.view.table.name, rematch.seat_token))
    assert (refusal.code, refusal.reason) == (
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "TOO_MANY_TABLES",
    )
    # A second call for a rematch some call named already makes no table, and is not counted.
    again = await hearts.rematch(seated.name, seated.tokens[0])
    assert again.view.table.name == rematch.view.table.name


async def test_a_rematch_call_that_names_no_table_is_not_counted(
    make_server: ServerFactory,
    connect,  # type: ignore[no-untyped-def]
    store_kind: str,
) -> None:
    # Counted were also a call for a rematch another call had named (whenever this process did
    # not hold the finished table's record, as with no record cache, or on another replica),
    # and a call refused before the game's end.
    hearts = connect(
        await make_server(store=store_kind, max_tables_per_hour=2, record_cache_size=0)
    )
    bots = dict.fromkeys((2, 3), pb.BOT_LEVEL_HEURISTIC)
    seated = await hearts.seated((0, 1), bots=bots, target_score=1)  # the first use
    early = await failure(hearts.rematch(seated.name, seated.tokens[0]))
    assert early.reason == "GAME_NOT_OVER"
    await hearts.play_out(seated.name, seated.tokens)
    first = await hearts.rematch(seated.name, seated.tokens[0])  # names it: the second use
    second = await hearts.rematch(seated.name, seated.tokens[1])  # named: not counted
    assert second.view.table.name == first.view.table.name
    assert (await failure(create(hearts))).reason == "TOO_MANY_TABLES"  # two uses, no more


async def test_an_address_and_the_process_hold_so_many_streams(
    make_server: ServerFactory, connect: Any
) -> None:
    server = await make_server(
        store="memory", max_streams=5, max_streams_per_client=2, trusted_proxies="127.0.0.1"
    )
    hearts = connect(server)
    name = (await create(hearts)).view.table.name

    async def watch(forwarded: str) -> Any:
        call = hearts.stub.WatchTable(
            api.WatchTableRequest(name=name), metadata=(("x-forwarded-for", forwarded),)
        )
        await call.read()  # the snapshot: the stream is open
        return call

    async def refused(forwarded: str) -> str:
        call = hearts.stub.WatchTable(
            api.WatchTableRequest(name=name), metadata=(("x-forwarded-for", forwarded),)
        )
        refusal = await failure(call.read())
        assert refusal.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        return refusal.reason

    first = [await watch("198.51.100.1"), await watch("198.51.100.1")]
    assert await refused("198.51.100.1") == "TOO_MANY_STREAMS_FROM_ADDRESS"
    ipv6 = await watch("2001:db8:0:1::1")
    assert await refused("198.51.100.1") == "TOO_MANY_STREAMS_FROM_ADDRESS"  # still two open
    ipv6_again = await watch("2001:db8:0:1::2")  # the same /64: its second
    assert await refused("[2001:db8:0:1::3]:443") == "TOO_MANY_STREAMS_FROM_ADDRESS"
    other = await watch("198.51.100.2")
    assert await refused("198.51.100.3") == "TOO_MANY_STREAMS"  # the process's 5
    first[0].cancel()
    await asyncio.sleep(0.2)  # the server sees the stream end
    replacement = await watch("198.51.100.1")
    for call in (first[1], ipv6, ipv6_again, other, replacement):
        call.cancel()
    await asyncio.sleep(0.2)
    assert not server.servicer.streams_of  # nothing left counted
