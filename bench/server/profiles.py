"""Split a py-spy profile of a server into where a command's CPU goes, to compare two servers.

``load.py --profile-dir`` records each server during each closed-loop level of workload (a) in
py-spy's ``raw`` format (a line per stack, ``frame;frame;... count``, with ``--threads``). This
sorts the samples of the event loop's thread by what the loop was running:

* ``handler``: the servicer's method and everything it calls (our code, the engine, the record,
  the view, and the Redis client up to sending the command), or the baseline's ``Write``;
* ``grpc_asyncio``: a callback with no Python frame under it: gRPC's Cython layer (reading the
  request, sending the response and status) and asyncio's C core (tasks and futures);
* ``other_callbacks``: Python callbacks other than the handler: redis-py reading replies,
  asyncio's transports, the server's own timers;
* ``epoll``: the loop waiting for or collecting I/O events;
* ``partial``: stacks py-spy caught mid-change (sampling without stopping the process), whose
  outer frames are missing, and that hold no frame of a handler (those count as ``handler``);

and the samples of every other thread as ``other_threads`` (gRPC's poller and I/O threads).
Multiplied by the phase's server CPU per command, each share is µs per command.
"""

from __future__ import annotations

import collections
from pathlib import Path

__all__ = ["BUCKETS", "split"]

BUCKETS = ("handler", "grpc_asyncio", "other_callbacks", "epoll", "partial", "other_threads")

# The outermost frame of a servicer call: the Hearts server's RPC wrapper, or the baseline's.
_HANDLERS = ("_unary.<locals>.wrap.<locals>.run", "Servicer.Write")
# Frames that run only inside a handler: a partial stack that holds one is the handler's.
_HANDLER_CODE = ("(hearts_server/", "(hearts_engine/", "Servicer.Write (", "(redis/")
_OUTSIDE = ("(hearts_server/__main__.py", "(hearts_server/server.py")


def _bucket(frames: list[str]) -> str:
    if "MainThread" not in frames[0]:
        return "other_threads"
    for index, frame in enumerate(frames):
        if frame.startswith("Handle._run ("):
            called = frames[index + 1 :]
            if not called:
                return "grpc_asyncio"
            return "handler" if called[0].split(" (")[0].endswith(_HANDLERS) else "other_callbacks"
    if any(frame.startswith("EpollSelector.select (") for frame in frames):
        return "epoll"
    if any(
        any(code in frame for code in _HANDLER_CODE) and not any(o in frame for o in _OUTSIDE)
        for frame in frames
    ):
        return "handler"  # its outer frames missing, but the frames left are a handler's
    return "partial"


def split(path: Path) -> dict[str, float]:
    """Each bucket's share of the profile's samples (0 to 1; they add up to 1)."""
    counts: collections.Counter[str] = collections.Counter()
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            counts[_bucket(stack.split(";"))] += int(count)
    total = sum(counts.values()) or 1
    return {bucket: counts[bucket] / total for bucket in BUCKETS}
