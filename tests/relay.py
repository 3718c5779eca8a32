"""A TCP relay on loopback whose traffic can be stopped dead: a network that vanishes without a
word, for the tests of keepalive pings."""

from __future__ import annotations

import asyncio

__all__ = ["Link"]


class Link:
    """A TCP relay on loopback in front of a server, whose traffic can be stopped dead: a
    client's network vanishing without a word (no FIN, no RST reaches either end)."""

    def __init__(self, target: str) -> None:
        host, _, port = target.rpartition(":")
        self._target = (host, int(port))
        self._pumps: list[asyncio.Task[None]] = []
        self._writers: list[asyncio.StreamWriter] = []
        self._listener: asyncio.Server | None = None
        self.address = ""

    async def start(self) -> Link:
        self._listener = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        self.address = f"127.0.0.1:{self._listener.sockets[0].getsockname()[1]}"
        return self

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        upstream_reader, upstream_writer = await asyncio.open_connection(*self._target)
        self._writers += [writer, upstream_writer]
        self._pumps.append(asyncio.ensure_future(self._pump(reader, upstream_writer)))
        self._pumps.append(asyncio.ensure_future(self._pump(upstream_reader, writer)))

    @staticmethod
    async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()

    def cut(self) -> None:
        """Stop relaying, both ways, and leave every socket open."""
        for pump in self._pumps:
            pump.cancel()

    async def close(self) -> None:
        self.cut()
        for writer in self._writers:
            writer.transport.abort()
        if self._listener is not None:
            self._listener.close()
            await self._listener.wait_closed()
