"""The benchmark's floor: a bare grpc.aio server whose one unary method runs one Redis EVALSHA.

The script does the core of a table commit and nothing else: compare the key's version, set the
new value and version, append the value to the key's stream. Requests and responses are the
sizes of a ``PlayCard``'s (about 60 and 480 bytes), the value stored about a record's (1 KiB),
and the load generator sends the same ``authorization`` header as to the Hearts server. The
server uses the same gRPC options and the same Redis client as ``hearts-server``: by default
the store's multiplexed connection (``hearts_server.store.lane``), or with ``--client
redis-py`` redis-py's asyncio client on a blocking pool of 16 connections, which the Hearts
server used until 2026-11-30 (both with hiredis, EVALSHA without redis-py's Script objects). So
the difference between the two is what the Hearts server does on top: tokens, records, the
engine, views, events, metrics.

Run by ``run.py``: ``python baseline.py --port P --redis-url URL --gen-dir DIR`` where ``DIR``
holds ``baseline_pb2*.py`` generated from ``baseline.proto``.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import signal
import sys
from typing import Any

import grpc
from grpc_reflection.v1alpha import reflection
from redis.asyncio import BlockingConnectionPool, Redis

from hearts_server.store.lane import RedisLane

SCRIPT = b"""
local current = tonumber(redis.call('HGET', KEYS[1], 'v') or '0')
if current ~= tonumber(ARGV[1]) then
  return -current
end
redis.call('HSET', KEYS[1], 'v', current + 1, 'd', ARGV[2])
redis.call('XADD', KEYS[2], 'MAXLEN', '~', 100, '*', 'p', ARGV[2])
return current + 1
"""
SHA = hashlib.sha1(SCRIPT).hexdigest()
# What a write stores (about a table record's size) and answers (about a PlayCard response's).
_STORED = bytes(1024)
_ANSWERED = 480


def lane_client(redis_url: str, callbacks: Any) -> tuple[Any, RedisLane]:
    """An ``execute_command`` on the Hearts server's multiplexed connection (its store's lane),
    and the lane (to close)."""
    pool = BlockingConnectionPool.from_url(redis_url)
    lane = RedisLane.of_pool(pool, timeout=5.0, callbacks=callbacks)

    async def execute_command(*command: Any) -> Any:
        [reply] = await lane.run((command,))
        if isinstance(reply, Exception):
            raise reply
        return reply

    return execute_command, lane


async def serve(port: int, redis_url: str, client_kind: str) -> None:
    import baseline_pb2  # noqa: PLC0415 - generated at run time into --gen-dir
    import baseline_pb2_grpc  # noqa: PLC0415

    pool = BlockingConnectionPool.from_url(
        redis_url, max_connections=16, timeout=5.0, socket_timeout=5.0
    )
    client = Redis.from_pool(pool)
    await client.script_load(SCRIPT)
    execute_command = client.execute_command
    if client_kind == "lane":
        execute_command, _ = lane_client(redis_url, client.response_callbacks)

    class Servicer(baseline_pb2_grpc.BaselineServicer):  # type: ignore[misc]
        async def Write(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC name
            key = request.key
            value = request.payload + _STORED[len(request.payload) :]
            version = await execute_command(
                "EVALSHA",
                SHA,
                2,
                f"b:{{{key}}}:t",
                f"b:{{{key}}}:e",
                request.version,
                value,
            )
            return baseline_pb2.WriteResponse(version=version, payload=value[:_ANSWERED])

    server = grpc.aio.server(
        options=[
            ("grpc.max_concurrent_streams", 1000),
            ("grpc.keepalive_time_ms", 30_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 10_000),
        ]
    )
    baseline_pb2_grpc.add_BaselineServicer_to_server(Servicer(), server)
    name = baseline_pb2.DESCRIPTOR.services_by_name["Baseline"].full_name
    reflection.enable_server_reflection((name, reflection.SERVICE_NAME), server)
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"baseline listening on 127.0.0.1:{bound}", flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)
    await client.aclose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--redis-url", required=True)
    parser.add_argument("--gen-dir", required=True)
    parser.add_argument(
        "--client",
        choices=("lane", "redis-py"),
        default="lane",
        help="the Redis client: the Hearts server's multiplexed connection, or redis-py's pool",
    )
    args = parser.parse_args()
    sys.path.insert(0, args.gen_dir)
    asyncio.run(serve(args.port, args.redis_url, args.client))


if __name__ == "__main__":
    main()
