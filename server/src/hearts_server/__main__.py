"""``hearts-server`` / ``python -m hearts_server``: run one server process until SIGTERM."""

from __future__ import annotations

import asyncio
import datetime
import gc
import json
import logging
import signal
import sys
from collections.abc import Sequence

from prometheus_client import start_http_server

from hearts_server.config import Settings, host_port, parse_settings
from hearts_server.server import HeartsServer
from hearts_server.store.base import StoreUnsupportedError

__all__ = ["main"]


class JsonFormatter(logging.Formatter):
    """One JSON object per line, for log collectors."""

    def format(self, record: logging.LogRecord) -> str:
        entry = {
            "time": datetime.datetime.fromtimestamp(record.created, datetime.UTC).isoformat(),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update(getattr(record, "fields", {}))  # extra fields: log.info(..., extra=...)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry)


def configure_logging(settings: Settings) -> None:
    """Root logging by the settings: level, and text or JSON lines on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    if settings.log_format == "json":
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=settings.log_level.upper(), handlers=[handler], force=True)
    logging.captureWarnings(True)  # library warnings as log records too (JSON lines with json)


_FULL_PASS_AFTER = 100
"""Middle-generation collections before the collector considers a full pass (default 10)."""


def _serve_metrics(port: int, host: str) -> None:
    """Serve /metrics on ``host``; on every address when that is 0.0.0.0, as gRPC serves then.

    gRPC takes 0.0.0.0 for every address of the host, IPv6 included; an HTTP server bound there
    takes IPv4 only, and in an IPv6-only cluster the pods could not be scraped. "::" takes both
    (Linux accepts IPv4 on it unless bindv6only is set); a host without IPv6 refuses it, and then
    IPv4 is all there is anyway.
    """
    if host == "0.0.0.0":
        try:
            start_http_server(port, addr="::")
            return
        except OSError:
            pass
    start_http_server(port, addr=host)


async def serve(settings: Settings) -> None:
    """Run until SIGTERM or SIGINT, then drain."""
    # Signals first: a SIGTERM that arrives as soon as the server is up must drain, not kill.
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        server = HeartsServer(settings)  # binds the gRPC port
    except (OSError, RuntimeError) as error:  # a port in use, an address not on this host
        where = host_port(settings.host, settings.port)
        raise _StartupError(f"cannot listen on {where} (--port): {error}") from None
    if settings.metrics_port:
        try:
            _serve_metrics(settings.metrics_port, settings.host)
        except OSError as error:
            where = host_port(settings.host, settings.metrics_port)
            raise _StartupError(f"cannot listen on {where} (--metrics-port): {error}") from None
    try:
        await server.start()
    except StoreUnsupportedError as error:
        raise _StartupError(f"cannot use the table store: {error}") from None
    # Everything made so far (modules, protobuf descriptors, the engine's tables) lives as long
    # as the process: keep it out of the collector's full passes, which otherwise walk it all
    # and stall the event loop for tens of milliseconds each time (measured: 25-45 ms).
    gc.collect()
    gc.freeze()
    # The full passes left still walk every live object: the tables' records, their tricks and
    # rounds, open streams (about 90,000 objects with 1,000 tables in play, 10-60 ms a pass).
    # By default one came every ~4 s under load, each time ten middle-generation passes had
    # gone by; the tail latency of the benchmark at half load was those stalls. A full pass now
    # waits for _FULL_PASS_AFTER of them instead: about once a minute at saturation. Garbage
    # cycles wait that much longer to be freed (a few hundred objects a pass in the benchmark).
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, _FULL_PASS_AFTER)
    log = logging.getLogger("hearts_server")
    # The first line on stdout says where the server listens (tools wait for it): a JSON line,
    # with the address as its own field, when the logs are JSON lines.
    listening = f"hearts-server listening on {server.address}"
    if settings.log_format == "json":
        record = log.makeRecord(log.name, logging.INFO, "", 0, listening, (), None)
        record.fields = {"address": server.address}
        listening = JsonFormatter().format(record)
    print(listening, flush=True)
    await stop.wait()
    log.info("signal received: draining")
    await server.stop()


class _StartupError(Exception):
    """The server cannot start; the message says why, for the operator."""


def main(argv: Sequence[str] | None = None) -> None:
    """The console entry point."""
    settings = parse_settings(argv)
    configure_logging(settings)
    try:
        asyncio.run(serve(settings))
    except _StartupError as error:
        logging.getLogger("hearts_server").error("%s", error)
        sys.exit(2)


if __name__ == "__main__":
    main()
