"""Settings from command-line flags or ``HEARTS_*`` environment variables, with sane defaults.

A flag wins over its environment variable, which wins over the default. Every setting is listed
in ``docs/operations.md``.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import ipaddress
import json
import math
import os
import sys
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import NoReturn

from redis.asyncio.connection import parse_url as parse_redis_url

from hearts_server.record import WRITABLE_SCHEMAS
from hearts_server.tokens import MIN_SECRET_BYTES

__all__ = [
    "MAX_CONNECTION_AGE_SECONDS",
    "MIN_CONNECTION_AGE_SECONDS",
    "MIN_KEEPALIVE_SECONDS",
    "Settings",
    "networks",
    "parse_settings",
]

MIN_CONNECTION_AGE_SECONDS = 0.1
MIN_KEEPALIVE_SECONDS = 0.1
MAX_CONNECTION_AGE_SECONDS = 2_000_000  # about 23 days; gRPC's limit is 2**31 - 1 milliseconds


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    """Everything the server can be told at start-up."""

    host: str = "127.0.0.1"
    port: int = 50051
    redis_url: str = ""
    token_secret: str = ""
    token_extra_secret: str = ""
    token_ttl_seconds: int = 7 * 24 * 3600
    table_ttl_seconds: int = 3600
    finished_table_ttl_seconds: int = 600
    max_events: int = 5000
    metrics_port: int = 9464
    log_level: str = "INFO"
    log_format: str = "text"
    grace_seconds: float = 10.0
    max_streams: int = 10_000
    max_streams_per_client: int = 0
    max_concurrent_rpcs: int = 128
    max_pending_rpcs: int = 64
    max_message_bytes: int = 1 << 20
    bot_workers: int = 1
    record_cache_size: int = 4096
    record_schema: int = 3
    max_connection_age_seconds: float = 300.0
    keepalive_seconds: float = 30.0
    keepalive_timeout_seconds: float = 10.0
    identity_secret: str = ""
    identity_jwks_url: str = ""
    identity_issuer: str = ""
    identity_audience: str = ""
    identity_required: bool = False
    webhook_url: str = ""
    webhook_secret: str = ""
    max_tables_per_hour: int = 0
    trusted_proxies: str = ""


_FIELDS = {field.name: field for field in dataclasses.fields(Settings)}


def parse_settings(
    argv: Sequence[str] | None = None, environ: Mapping[str, str] | None = None
) -> Settings:
    """Settings from ``argv`` and ``environ`` (the process's own when None)."""
    environ = os.environ if environ is None else environ
    parser = _Parser(
        prog="hearts-server",
        description="Hearts game server (gRPC). Without --redis-url it keeps tables in memory.",
        allow_abbrev=False,  # so that the log format below is read as argparse reads it
    )
    parser.json_errors = _log_format(sys.argv[1:] if argv is None else argv, environ) == "json"
    helps = {
        "host": "address to listen on (0.0.0.0 in a container; IPv6 as ::1 or [::1])",
        "port": "gRPC port (0 picks a free one)",
        "redis_url": "redis://host:port/db; empty runs the embedded in-memory store",
        "token_secret": "secret that signs seat tokens; replicas must share it",
        "token_extra_secret": "a second secret whose tokens are accepted too, but never signed "
        "with (read exactly as --token-secret is): for rotating the secret",
        "token_ttl_seconds": "how long a seat token stays valid",
        "table_ttl_seconds": "an idle table expires after this long",
        "finished_table_ttl_seconds": "a finished game's table expires after this long",
        "max_events": "events kept per table for resuming streams",
        "metrics_port": "Prometheus metrics HTTP port (0 disables)",
        "log_level": "DEBUG, INFO, WARNING or ERROR",
        "log_format": "text, or json for JSON lines",
        "grace_seconds": "on SIGTERM, how long in-flight calls may finish",
        "max_streams": "open WatchTable streams allowed per process",
        "max_streams_per_client": "open WatchTable streams one caller (its address, as for "
        "--max-tables-per-hour) may hold on this process; more are refused (RESOURCE_EXHAUSTED, "
        "reason TOO_MANY_STREAMS_FROM_ADDRESS); 0: no limit",
        "max_concurrent_rpcs": "unary calls in flight before new ones are refused "
        "(RESOURCE_EXHAUSTED, reason OVERLOADED); streams count against max_streams",
        "max_pending_rpcs": "calls waiting in gRPC for the process past which up to every other "
        "call is refused (RESOURCE_EXHAUSTED, reason OVERLOADED); gRPC's own limit, at 2x and 4x "
        "it, refuses what the process cannot pick up (as CANCELLED)",
        "max_message_bytes": "largest request or response message",
        "bot_workers": "worker processes for Monte Carlo bots (0: a thread)",
        "record_cache_size": "tables whose newest record this process keeps decoded (0: none)",
        "record_schema": "the table record's schema this process writes: 3, or 2 while a fleet "
        "is upgraded from a version that reads no schema 3 (every version reads both)",
        "max_connection_age_seconds": "after this long a client connection is asked to move on "
        "(its calls and streams go on; new calls reconnect, so new replicas get their share); "
        "0: never",
        "keepalive_seconds": "how long a client connection may be silent before the server pings "
        "it (a watcher whose network vanished is found out, and shown as not connected, by the "
        "ping that gets no answer)",
        "keepalive_timeout_seconds": "how long the server waits for a ping's answer before it "
        "closes the connection",
        "identity_secret": "secret that checks HS256/384/512 identity tokens (JWTs the app's "
        "backend signs); at least 32 bytes",
        "identity_jwks_url": "https URL of the JSON Web Key Set that checks RS/PS/ES/EdDSA "
        "identity tokens (an identity provider's); needs --identity-issuer and "
        "--identity-audience",
        "identity_issuer": "the iss an identity token must carry (checked when set)",
        "identity_audience": "the aud an identity token must carry (checked when set; when "
        "unset, a token that names any audience is refused)",
        "identity_required": "refuse CreateTable, JoinTable and QuickJoin without a valid "
        "identity token (renewing a seat token needs none)",
        "webhook_url": "https URL that finished games' results, and players' turns at tables "
        "that ask for them, are POSTed to (empty: none)",
        "webhook_secret": "secret that signs the webhooks (Hearts-Signature); at least 32 bytes",
        "max_tables_per_hour": "tables one player (by identity token) or one address may create "
        "per hour; more are refused (RESOURCE_EXHAUSTED, reason TOO_MANY_TABLES); 0: no limit",
        "trusted_proxies": "comma-separated networks (CIDR) of proxies, such as the web gateway, "
        "whose x-forwarded-for header names the caller's address",
    }
    for name, field in _FIELDS.items():
        env = f"HEARTS_{name.upper()}"
        kind: type = type(field.default)
        default: object = field.default
        raw = environ.get(env)
        # A variable that does not parse is an error only if its flag is not given: a flag wins.
        if kind is bool:
            if raw is not None:
                if raw.lower() in _BOOLEANS:
                    default = _BOOLEANS[raw.lower()]
                else:
                    default = _BadVariable(f"{env}: not true or false: {raw!r}")
            parser.add_argument(
                f"--{name.replace('_', '-')}",
                dest=name,
                action=argparse.BooleanOptionalAction,
                default=default,
                help=f"{helps[name]} (env {env}; default {field.default!r})",
            )
            continue
        if raw is not None:
            try:
                default = kind(raw)
            except ValueError:
                default = _BadVariable(f"{env}: not a valid {_KIND_NAMES[kind]}: {raw!r}")
        parser.add_argument(
            f"--{name.replace('_', '-')}",
            dest=name,
            type=kind,
            default=default,
            help=f"{helps[name]} (env {env}; default {field.default!r})",
        )
    namespace = parser.parse_args(argv)
    for value in vars(namespace).values():
        if isinstance(value, _BadVariable):
            parser.error(value.message)
    settings = Settings(**vars(namespace))
    problem = _problem(settings)
    if problem is not None:
        parser.error(problem)
    # An IPv6 address is taken with or without its brackets; it is kept bare (the metrics
    # server wants it so) and bracketed where a port follows (host_port).
    host = settings.host
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return dataclasses.replace(settings, host=host, log_level=settings.log_level.upper())


def host_port(host: str, port: int) -> str:
    """``host:port`` as gRPC and clients take it: an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


@dataclasses.dataclass(frozen=True)
class _BadVariable:
    """The default of a setting whose environment variable does not parse: an error unless
    its flag is given."""

    message: str

    def __repr__(self) -> str:
        return "invalid"


def _log_format(argv: Sequence[str], environ: Mapping[str, str]) -> str:
    """The log format asked for, read before the full parse (which may fail) as it will read
    it: argparse itself, on --log-format alone, over the environment's value."""
    default = environ.get("HEARTS_LOG_FORMAT", "text")
    first = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    first.add_argument("--log-format", default=default)
    try:
        known, _ = first.parse_known_args(argv)
    except argparse.ArgumentError:  # --log-format without a value: the full parse says so
        return default
    return str(known.log_format)


class _Parser(argparse.ArgumentParser):
    """argparse, but a bad setting is one line (for logs), not the whole usage first.

    With JSON logs asked for (by flag or environment), that line is a JSON object like the
    log's own lines, so that a log collector reads it too.
    """

    json_errors = False

    def error(self, message: str) -> NoReturn:
        text = f"{message} (see --help)"
        if self.json_errors:
            now = datetime.datetime.now(datetime.UTC).isoformat()
            entry = {"time": now, "level": "ERROR", "logger": self.prog, "message": text}
            self.exit(2, json.dumps(entry) + "\n")
        self.exit(2, f"{self.prog}: error: {text}\n")


MIN_MESSAGE_BYTES = 512 * 1024
"""The smallest message limit: a finished game's view at the highest target score, with its
whole history, takes up to about 300 KB (see ``convert.MAX_TARGET_SCORE``)."""

MAX_TABLE_TTL_SECONDS = 10 * 365 * 86_400
"""The longest ``--table-ttl-seconds`` and ``--finished-table-ttl-seconds`` (ten years)."""

_KIND_NAMES = {int: "whole number", float: "number", str: "string"}
_BOOLEANS = {
    "true": True,
    "1": True,
    "yes": True,
    "false": False,
    "0": False,
    "no": False,
    "": False,
}
_LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
_AT_LEAST_ONE = (
    "token_ttl_seconds",
    "table_ttl_seconds",
    "finished_table_ttl_seconds",
    "max_events",
    "max_streams",
    "max_concurrent_rpcs",
    "max_pending_rpcs",
    "max_message_bytes",
)


def networks(text: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The networks of a comma-separated list of CIDRs (or addresses); ``ValueError`` names a
    bad one."""
    found = []
    for part in text.split(","):
        if part.strip():
            try:
                found.append(ipaddress.ip_network(part.strip(), strict=False))
            except ValueError:
                raise ValueError(f"not a network (CIDR) or address: {part.strip()!r}") from None
    return tuple(found)


def _https(text: str) -> bool:
    """Whether ``text`` is an https URL (in any case), or an http one to a loopback address,
    that can be requested as it is: ASCII without spaces or control characters (a path in
    another script is percent-encoded), no user name or password, a port that is one."""
    if not text.isascii() or not text.isprintable() or " " in text:
        return False
    url = urllib.parse.urlsplit(text)
    try:
        url.port  # noqa: B018 - reading it checks it
    except ValueError:
        return False
    scheme = url.scheme.lower()
    loopback = url.hostname == "localhost" or _loopback_address(url.hostname or "")
    return (
        bool(url.hostname)
        and url.username is None
        and (scheme == "https" or (scheme == "http" and loopback))
    )


def _loopback_address(host: str) -> bool:
    """Whether ``host`` is a loopback address (all of 127.0.0.0/8, and ::1)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


_ESCAPE = (
    "Make the password of letters, digits and -._~ only (as docs/deploy.md does), or "
    "percent-encode its other characters in the URL."
)


def _problem(settings: Settings) -> str | None:
    """What is wrong with ``settings``, as the message for the operator; None if nothing."""
    host = settings.host
    bare = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if not bare or "[" in bare or "]" in bare:
        return f"--host must be an address or a host name, IPv6 in brackets or not (got {host!r})"
    for name in ("port", "metrics_port"):
        value = getattr(settings, name)
        if not 0 <= value <= 65535:
            return f"--{name.replace('_', '-')} must be a port, 0 to 65535 (got {value})"
    if settings.log_level.upper() not in _LOG_LEVELS:
        return f"--log-level must be one of {', '.join(_LOG_LEVELS)} (got {settings.log_level!r})"
    if settings.log_format not in ("text", "json"):
        return "--log-format must be text or json"
    if settings.token_secret and len(settings.token_secret.encode()) < MIN_SECRET_BYTES:
        return f"--token-secret must be at least {MIN_SECRET_BYTES} bytes (or unset)"
    if settings.token_extra_secret:
        if len(settings.token_extra_secret.encode()) < MIN_SECRET_BYTES:
            return f"--token-extra-secret must be at least {MIN_SECRET_BYTES} bytes (or unset)"
        if not settings.token_secret:
            return "--token-extra-secret needs --token-secret"
    for name in _AT_LEAST_ONE:
        if getattr(settings, name) < 1:
            return f"--{name.replace('_', '-')} must be at least 1"
    for name in ("table_ttl_seconds", "finished_table_ttl_seconds"):
        # Redis takes an expiry in milliseconds from now in a 64-bit int; far below that, a
        # decade is longer than any table needs to wait.
        if getattr(settings, name) > MAX_TABLE_TTL_SECONDS:
            return (
                f"--{name.replace('_', '-')} must be at most {MAX_TABLE_TTL_SECONDS:,} (ten years)"
            )
    age = settings.max_connection_age_seconds
    if age and not MIN_CONNECTION_AGE_SECONDS <= age <= MAX_CONNECTION_AGE_SECONDS:
        # gRPC takes whole milliseconds in a 32-bit int.
        return (
            f"--max-connection-age-seconds must be 0 or {MIN_CONNECTION_AGE_SECONDS:g} to "
            f"{MAX_CONNECTION_AGE_SECONDS:,} (got {age:g})"
        )
    if settings.record_schema not in WRITABLE_SCHEMAS:
        schemas = " or ".join(map(str, WRITABLE_SCHEMAS))
        return f"--record-schema must be {schemas} (got {settings.record_schema})"
    for name in ("keepalive_seconds", "keepalive_timeout_seconds"):
        # gRPC takes whole milliseconds in a 32-bit int; under 1 ms would be 0, its "never".
        if not MIN_KEEPALIVE_SECONDS <= getattr(settings, name) <= MAX_CONNECTION_AGE_SECONDS:
            return (
                f"--{name.replace('_', '-')} must be {MIN_KEEPALIVE_SECONDS:g} to "
                f"{MAX_CONNECTION_AGE_SECONDS:,} (got {getattr(settings, name):g})"
            )
    for field in dataclasses.fields(Settings):
        value = getattr(settings, field.name)
        if isinstance(value, float) and not math.isfinite(value):  # nan passes every comparison
            return f"--{field.name.replace('_', '-')} must be a finite number (got {value})"
    for name in (
        "grace_seconds",
        "bot_workers",
        "record_cache_size",
        "max_tables_per_hour",
        "max_streams_per_client",
    ):
        if getattr(settings, name) < 0:
            return f"--{name.replace('_', '-')} must not be negative"
    if settings.redis_url:
        # A URL with a password must not reach the log: a password holding "/", "#" or "?"
        # (base64 does) cuts the URL short where a parser reads it, so a part of the password
        # shows up in the parser's message as a port or a path.
        secret = "@" in settings.redis_url
        try:
            parse_redis_url(settings.redis_url)  # as the store will read it
        except ValueError as error:
            if secret:
                return f"--redis-url is not a Redis URL (not shown: it holds a password). {_ESCAPE}"
            return f"--redis-url is not a Redis URL: {error}"
        url = urllib.parse.urlsplit(settings.redis_url)
        database = url.path.strip("/") if url.scheme in ("redis", "rediss") else ""
        if database and not database.isdigit():
            # redis-py ignores a path that is not a number: the store would use database 0,
            # which may be another deployment's.
            if secret:
                return (
                    "--redis-url: the database must be a number, as in redis://host:6379/0 "
                    f"(the URL is not shown: it holds a password). {_ESCAPE}"
                )
            return (
                "--redis-url: the database must be a number, as in redis://host:6379/0 "
                f"(got /{database})"
            )
    if settings.identity_secret and len(settings.identity_secret.encode()) < 32:
        # RFC 7518: an HMAC key as long as the hash, 256 bits for HS256.
        return "--identity-secret must be at least 32 bytes (or unset)"
    if settings.identity_jwks_url:
        # Keys fetched over plain HTTP could be swapped on the way: anyone's identity forged.
        if not _https(settings.identity_jwks_url):
            return "--identity-jwks-url must be an https:// URL (http:// only on loopback)"
        if not (settings.identity_issuer and settings.identity_audience):
            # An identity provider signs every customer's tokens with the same keys.
            return "--identity-jwks-url needs --identity-issuer and --identity-audience"
    checks_identity = settings.identity_secret or settings.identity_jwks_url
    if settings.identity_required and not checks_identity:
        return "--identity-required needs --identity-secret or --identity-jwks-url"
    for name in ("identity_issuer", "identity_audience"):
        if getattr(settings, name) and not checks_identity:
            # Nothing would check identity tokens: the claim set for them would do nothing.
            return f"--{name.replace('_', '-')} needs --identity-secret or --identity-jwks-url"
    if settings.webhook_url:
        # Results sent over plain HTTP could be read and changed on the way.
        if not _https(settings.webhook_url):
            return "--webhook-url must be an https:// URL (http:// only on loopback)"
        if len(settings.webhook_secret.encode()) < 32:
            return "--webhook-url needs --webhook-secret, at least 32 bytes"
    elif settings.webhook_secret:
        return "--webhook-secret needs --webhook-url"
    try:
        networks(settings.trusted_proxies)
    except ValueError as error:
        return f"--trusted-proxies: {error}"
    if settings.max_message_bytes < MIN_MESSAGE_BYTES:
        # A finished game's view, which carries the whole game, must fit in one message.
        return f"--max-message-bytes must be at least {MIN_MESSAGE_BYTES}"
    return None
