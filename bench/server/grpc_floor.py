"""gRPC's own cost per call: a grpc.aio server whose unary handler does nothing (or a little).

The floor under both servers of ``run.py``: what grpcio's Python server spends on a call before
and after any handler, measured as the server process's CPU time per call. The server runs in a
child process (pinned to CPU 0 where the machine has two or more), the load from this one (CPU
1), 16 calls in flight, with a request of 60 bytes carrying an ``authorization`` header as long
as a seat token and a response of 480 bytes, as the baseline's calls are shaped. Each handler
variant runs ``--reps`` times in turn for ``--seconds`` each; the best (least CPU per call) of
each is printed, since noise from the rest of the machine only ever adds.

Handlers: ``none`` answers at once; ``await3`` awaits three futures the event loop resolves
(three suspensions, as a handler that waits on I/O has); ``work90`` runs about 90 µs of Python
first (a loop calibrated in the child).

Run it with ``uv run python bench/server/grpc_floor.py [--reps 4] [--seconds 3]``. Loopback only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import subprocess
import sys
import time

import grpc

_METHOD = "/floor.Floor/Call"
_RESPONSE = bytes(480)
_REQUEST = bytes(60)
_METADATA = (("authorization", "Bearer " + "t" * 150),)
_VARIANTS = ("none", "await3", "work90")


def _spin(n: int) -> int:
    total = 0
    for i in range(n):
        total += i
    return total


def _loops_per_90_us() -> int:
    n = 20_000
    started = time.process_time()
    _spin(n)
    return max(1, int(n * 90e-6 / max(time.process_time() - started, 1e-9)))


async def _serve(variant: str) -> None:
    """The child: serve until stdin closes; print the process's CPU seconds at each line read."""
    loops = _loops_per_90_us()
    loop = asyncio.get_running_loop()

    async def handler(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        if variant == "await3":
            for _ in range(3):
                future = loop.create_future()
                loop.call_soon(future.set_result, None)
                await future
        elif variant == "work90":
            _spin(loops)
        return _RESPONSE

    server = grpc.aio.server()
    method = grpc.unary_unary_rpc_method_handler(
        handler, request_deserializer=bytes, response_serializer=bytes
    )
    service, name = _METHOD.strip("/").split("/")
    generic = grpc.method_handlers_generic_handler(service, {name: method})
    server.add_generic_rpc_handlers((generic,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    print(port, flush=True)
    while await loop.run_in_executor(None, sys.stdin.readline):
        usage = resource.getrusage(resource.RUSAGE_SELF)
        print(usage.ru_utime + usage.ru_stime, flush=True)
    await server.stop(0)


async def _load(port: int, seconds: float, in_flight: int) -> int:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary(_METHOD, request_serializer=bytes, response_deserializer=bytes)
        await call(_REQUEST, metadata=_METADATA)
        done, end = 0, time.monotonic() + seconds

        async def caller() -> None:
            nonlocal done
            while time.monotonic() < end:
                await call(_REQUEST, metadata=_METADATA, timeout=10)
                done += 1

        await asyncio.gather(*(caller() for _ in range(in_flight)))
        return done


def _pin(cpu: int) -> None:
    if hasattr(os, "sched_setaffinity") and (os.cpu_count() or 1) >= 2:
        os.sched_setaffinity(0, {cpu})


def _measure(variant: str, seconds: float) -> tuple[float, float]:
    """(calls a second, server CPU µs a call) of one run."""
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", variant],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    try:
        port = int(child.stdout.readline())
        child.stdin.write("\n")
        child.stdin.flush()
        before = float(child.stdout.readline())
        calls = asyncio.run(_load(port, seconds, 16))
        child.stdin.write("\n")
        child.stdin.flush()
        after = float(child.stdout.readline())
    finally:
        child.stdin.close()
        try:
            child.wait(10)
        except subprocess.TimeoutExpired:
            child.kill()
    return calls / seconds, (after - before) / max(calls, 1) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=4, help="runs of each handler (1 to 20)")
    parser.add_argument("--seconds", type=float, default=3.0, help="seconds a run (0.5 to 30)")
    parser.add_argument("--serve", choices=_VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _pin(0)
        asyncio.run(_serve(args.serve))
        return
    reps, seconds = min(max(args.reps, 1), 20), min(max(args.seconds, 0.5), 30.0)
    _pin(1)
    best: dict[str, tuple[float, float]] = {}
    for _ in range(reps):
        for variant in _VARIANTS:
            rate, cpu = _measure(variant, seconds)
            if variant not in best or cpu < best[variant][1]:
                best[variant] = (rate, cpu)
    print(f"grpcio {grpc.__version__}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"best of {reps} runs of {seconds:g} s, 16 calls in flight:")
    for variant, (rate, cpu) in best.items():
        print(f"  {variant:7s} {rate:8,.0f} calls/s   server CPU {cpu:6.1f} µs a call")


if __name__ == "__main__":
    main()
