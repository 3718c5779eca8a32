"""The store's multiplexed Redis connection (``hearts_server.store.lane``) against a real Redis.

The lane replaces redis-py's pool on the hot path, so it must answer exactly as redis-py's
``execute_command`` does, keep every caller's reply its own when many share the connection or
one gives up, and turn a dead or stalled Redis into redis-py's errors within its timeout, then
connect again.
"""

from __future__ import annotations

import asyncio
import datetime
import ipaddress
import shutil
import time
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from redis.exceptions import (
    AuthenticationError,
    NoScriptError,
    ResponseError,
)
from redis.exceptions import (
    ConnectionError as RedisConnectionError,
)
from redis.exceptions import (
    TimeoutError as RedisTimeoutError,
)

from hearts_server.store import keys
from hearts_server.store.base import StoreUnavailableError
from hearts_server.store.lane import RedisLane
from hearts_server.store.redis import RedisStore
from tests.conftest import LocalRedis, free_port

SCRIPT = b"return {1, false, 'two', {3, ARGV[1]}}"


@pytest.fixture
async def admin(clean_redis: str) -> AsyncIterator[redis.asyncio.Redis]:
    client = redis.asyncio.Redis.from_url(clean_redis)
    yield client
    await client.aclose()


@pytest.fixture
async def make_lane(
    clean_redis: str, admin: redis.asyncio.Redis
) -> AsyncIterator[Callable[..., RedisLane]]:
    lanes: list[RedisLane] = []
    port = int(clean_redis.rsplit(":", 1)[1].split("/", maxsplit=1)[0])

    def make(**options: Any) -> RedisLane:
        settings: dict[str, Any] = {
            "host": "127.0.0.1",
            "port": port,
            "timeout": 5.0,
            "callbacks": admin.response_callbacks,
            "client_name": "lane-test",
        }
        lane = RedisLane(**(settings | options))
        lanes.append(lane)
        return lane

    yield make
    for lane in lanes:
        await lane.aclose()


async def one(lane: RedisLane, *command: Any) -> Any:
    [reply] = await lane.run([command])
    return reply


async def test_replies_are_what_redis_py_answers(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane()
    sha = await one(lane, "SCRIPT LOAD", SCRIPT)
    assert sha == await admin.script_load(SCRIPT)
    await admin.zadd("z", {"a": 1.5, "b": 2})
    await admin.xadd("s", {"p": b"x"}, id="1-0")
    await admin.hset("h", mapping={"v": 7, "d": b"\x00data"})
    commands: list[tuple[Any, ...]] = [
        ("PING",),
        ("SET", "k", b"\xffvalue", "PX", 60_000),
        ("GET", "k"),
        ("GET", "missing"),
        ("EXISTS", "k", "missing"),
        ("HMGET", "h", "v", "d", "none"),
        ("ZREVRANGE", "z", 0, -1, "WITHSCORES"),
        ("ZRANGEBYLEX", "z", "-", "+"),
        ("ZCARD", "z"),
        ("XRANGE", "s", "-", "+"),
        ("PEXPIRE", "k", 60_000),
        ("PEXPIRE", "missing", 60_000),
        ("EVALSHA", sha, 0, "arg"),
    ]
    for command in commands:
        assert await one(lane, *command) == await admin.execute_command(*command), command
    # A pipeline answers each command as alone.
    expected = [await admin.execute_command(*command) for command in commands]
    assert await lane.run(commands) == expected


async def test_error_replies_come_back_as_redis_py_exceptions(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane()
    await admin.set("text", "x")
    missing, wrong_type, fine = await lane.run(
        [("EVALSHA", "0" * 40, 0), ("ZCARD", "text"), ("GET", "text")]
    )
    assert isinstance(missing, NoScriptError)
    assert type(wrong_type) is ResponseError
    assert "WRONGTYPE" in str(wrong_type)
    assert fine == b"x"  # the commands after an error still get their own replies


async def test_concurrent_callers_share_one_connection_and_keep_their_replies(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane()

    async def echo(index: int) -> bytes:
        await asyncio.sleep(0)
        return bytes(await one(lane, "ECHO", f"caller {index}"))

    replies = await asyncio.gather(*(echo(index) for index in range(500)))
    assert replies == [f"caller {index}".encode() for index in range(500)]
    names = [client["name"] for client in await admin.client_list()]
    assert names.count("lane-test") == 1


async def test_a_cancelled_caller_does_not_take_another_callers_reply(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane()
    await one(lane, "PING")  # connected
    await admin.client_pause(300, all=True)  # nothing is answered for a while
    first = asyncio.ensure_future(one(lane, "ECHO", "first"))
    cancelled = asyncio.ensure_future(one(lane, "ECHO", "cancelled"))
    last = asyncio.ensure_future(one(lane, "ECHO", "last"))
    await asyncio.sleep(0.05)  # all three are written and waiting for their replies
    cancelled.cancel()
    assert await first == b"first"
    assert await last == b"last"
    assert cancelled.cancelled()
    assert await one(lane, "ECHO", "after") == b"after"


async def test_a_stalled_redis_times_out_and_the_next_command_connects_again(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane(timeout=0.2)
    assert await one(lane, "PING") is True
    await admin.client_pause(1500, all=True)
    started = time.monotonic()
    waiting = [asyncio.ensure_future(one(lane, "ECHO", f"{index}")) for index in range(3)]
    for call in waiting:
        with pytest.raises(RedisTimeoutError):
            await call
    # The watchdog looks every quarter of the timeout, so a reply is given up within 1.25×
    # (plus scheduling); far less than the pause.
    assert time.monotonic() - started < 0.6
    await admin.client_unpause()
    assert await one(lane, "ECHO", "again") == b"again"


async def test_a_killed_connection_fails_its_commands_and_the_next_connects_again(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis
) -> None:
    lane = make_lane()
    assert await one(lane, "SET", "k", "v") is True
    waiting = asyncio.ensure_future(one(lane, "BLPOP", "empty", 5))  # Redis holds the reply
    await asyncio.sleep(0.05)
    assert await admin.client_kill_filter(_type="normal", skipme=True) == 1
    with pytest.raises(RedisConnectionError):
        await waiting
    assert await one(lane, "GET", "k") == b"v"


async def test_the_handshake_authenticates_names_and_selects_the_database(
    make_lane: Callable[..., RedisLane], admin: redis.asyncio.Redis, clean_redis: str
) -> None:
    await admin.acl_setuser(
        "lane-user", enabled=True, passwords=["+sekrit"], keys=["*"], commands=["+@all"]
    )
    try:
        lane = make_lane(username="lane-user", password="sekrit", db=3, client_name="named")
        assert await one(lane, "SET", "in-three", "yes") is True
        assert await one(lane, "ACL", "WHOAMI") == b"lane-user"
        assert await one(lane, "CLIENT", "GETNAME") == b"named"
        assert await admin.get("in-three") is None
        admin_three = redis.asyncio.Redis.from_url(clean_redis.rsplit("/", 1)[0] + "/3")
        assert await admin_three.get("in-three") == b"yes"
        await admin_three.aclose()

        refused = make_lane(username="lane-user", password="wrong")
        with pytest.raises(AuthenticationError):
            await one(refused, "PING")
    finally:
        await admin.acl_deluser("lane-user")


async def test_a_closed_lane_refuses_commands(make_lane: Callable[..., RedisLane]) -> None:
    lane = make_lane()
    assert await one(lane, "PING") is True
    await lane.aclose()
    with pytest.raises(RedisConnectionError):
        await one(lane, "PING")


async def test_the_store_maps_the_lanes_errors(clean_redis: str) -> None:
    store = RedisStore.from_url(clean_redis, socket_timeout=0.2)
    admin = redis.asyncio.Redis.from_url(clean_redis)
    try:
        await store.ping()
        await admin.client_pause(1000, all=True)
        with pytest.raises(StoreUnavailableError, match="TimeoutError"):
            await store.load("t1")
        await admin.client_unpause()
        assert (await store.load("t1")).version == 0
    finally:
        await store.close()
        await admin.aclose()


def _certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA, and a certificate it signed for 127.0.0.1 with its key: (ca, cert, key) files."""
    now = datetime.datetime.now(datetime.UTC)

    def issue(
        subject: str, key: ec.EllipticCurvePrivateKey, issuer: x509.Name
    ) -> x509.CertificateBuilder:
        return (
            x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
            .issuer_name(issuer)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(hours=1))
        )

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hearts test CA")])
    ca = (
        issue("hearts test CA", ca_key, ca_name)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        issue("127.0.0.1", key, ca_name)
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = directory / "ca.pem", directory / "redis.pem", directory / "redis.key"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.fixture
def tls_redis(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    """A private redis-server that also listens with TLS: (its TLS port, the CA's file)."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs a redis-server binary on PATH")
    ca, cert, key = _certificates(tmp_path)
    tls_port = free_port()
    server = LocalRedis(
        binary,
        tmp_path,
        [
            "--tls-port",
            str(tls_port),
            "--tls-cert-file",
            str(cert),
            "--tls-key-file",
            str(key),
            "--tls-ca-cert-file",
            str(ca),
            "--tls-auth-clients",
            "no",
        ],
    )
    server.start()
    try:
        yield tls_port, ca
    finally:
        server.stop()


async def test_the_lane_speaks_tls_as_the_url_asks(tls_redis: tuple[int, Path]) -> None:
    port, ca = tls_redis
    store = RedisStore.from_url(f"rediss://127.0.0.1:{port}/0?ssl_ca_certs={ca}")
    try:
        assert await store.create("t1", b"v1", [], open_seats=True)
        assert (await store.load("t1")).data == b"v1"
    finally:
        await store.close()
    # Without the CA the server's certificate is not trusted: refused, as redis-py refuses it.
    untrusted = RedisStore.from_url(f"rediss://127.0.0.1:{port}/0", socket_timeout=1.0)
    try:
        with pytest.raises(StoreUnavailableError, match="CERTIFICATE_VERIFY_FAILED"):
            await untrusted.load("t1")
    finally:
        await untrusted.close()


async def test_the_lane_connects_to_a_unix_socket(tmp_path: Path) -> None:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs a redis-server binary on PATH")
    socket_path = tmp_path / "redis.sock"
    server = LocalRedis(binary, tmp_path, ["--unixsocket", str(socket_path)])
    server.start()
    store = RedisStore.from_url(f"unix://{socket_path}?db=2")
    admin = redis.asyncio.Redis(port=server.port, db=2)
    try:
        assert await store.create("t1", b"v1", [], open_seats=True)
        assert (await store.load("t1")).data == b"v1"
        assert await admin.exists(keys.table("t1")) == 1  # in database 2, as the URL says
    finally:
        await store.close()
        await admin.aclose()
        server.stop()


async def test_closing_while_a_caller_connects_fails_that_caller_at_once(
    make_lane: Callable[..., RedisLane], clean_redis: str
) -> None:
    lane = make_lane(timeout=0.5)
    call = asyncio.ensure_future(one(lane, "PING"))
    await asyncio.sleep(0)  # the caller is connecting
    await lane.aclose()
    with pytest.raises(RedisConnectionError):
        await asyncio.wait_for(call, 3)  # not after the timeout, and never a hang

    store = RedisStore.from_url(clean_redis, socket_timeout=0.5)
    load = asyncio.ensure_future(store.load("t1"))
    await asyncio.sleep(0)
    await store.close()
    with pytest.raises(StoreUnavailableError):
        await asyncio.wait_for(load, 3)


async def test_a_connection_lost_right_after_the_handshake_fails_fast() -> None:
    async def hello_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.read(100)
        writer.write(b"%1\r\n+proto\r\n:3\r\n")  # HELLO's reply, then "Redis" goes away
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(hello_then_close, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    lane = RedisLane(host="127.0.0.1", port=port, timeout=2.0, callbacks={})
    started = time.monotonic()
    try:
        with pytest.raises(RedisConnectionError):
            await lane.run([("PING",)])
        assert time.monotonic() - started < 1.0  # not the 2 s timeout
    finally:
        await lane.aclose()
        server.close()
        await server.wait_closed()
