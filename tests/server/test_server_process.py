"""The ``hearts-server`` command as operators run it: a real process, signals, health, metrics.

Each test starts ``python -m hearts_server`` on free loopback ports, exactly as the console
script does, and talks to it over real sockets.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from grpc_status import rpc_status

from hearts.v1 import table_pb2 as pb
from hearts.v1 import table_service_pb2 as api
from hearts.v1 import table_service_pb2_grpc as api_grpc
from hearts_server import __main__ as hearts_main
from tests.conftest import free_port


class ServerProcess:
    """A running ``python -m hearts_server`` and its address."""

    def __init__(
        self, *args: str, env: dict[str, str] | None = None, new_session: bool = False
    ) -> None:
        self.metrics_port = free_port()
        command = [
            sys.executable, "-m", "hearts_server", "--host", "127.0.0.1", "--port", "0",
            "--metrics-port", str(self.metrics_port), "--bot-workers", "0", "--grace-seconds", "2",
            *args,
        ]  # fmt: skip
        self.process = subprocess.Popen(
            command,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **(env or {})},
            start_new_session=new_session,  # a process group of its own, as under a terminal
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        if line.startswith("{"):  # --log-format json: stdout has JSON lines too
            self.address = json.loads(line)["address"]
            return
        match = re.search(r"listening on (\S+)", line)
        if match is None:
            self.process.kill()
            raise AssertionError(f"server did not start: {line!r} {self.process.stderr.read()}")  # type: ignore[union-attr]
        self.address = match.group(1)

    def stop(self) -> tuple[int, str]:
        """SIGTERM, wait, and return the exit code and stderr."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        _, stderr = self.process.communicate(timeout=20)
        return self.process.returncode, stderr


@pytest.fixture
def server_process() -> Iterator[ServerProcess]:
    server = ServerProcess(
        "--token-secret", "process-tests-secret-0123456789", "--log-format", "json"
    )
    try:
        yield server
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate(timeout=10)


def test_health_reports_serving_for_the_service(server_process: ServerProcess) -> None:
    with grpc.insecure_channel(server_process.address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "hearts.v1.TableService"):
            answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
            assert answer.status == health_pb2.HealthCheckResponse.SERVING


def test_reflection_lists_the_table_service(server_process: ServerProcess) -> None:
    with grpc.insecure_channel(server_process.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(list_services="")
        (answer,) = list(stub.ServerReflectionInfo(iter([request]), timeout=5))
        names = {service.name for service in answer.list_services_response.service}
        assert {"hearts.v1.TableService", "grpc.health.v1.Health"} <= names


def test_metrics_count_requests_by_method_and_code(server_process: ServerProcess) -> None:
    with grpc.insecure_channel(server_process.address) as channel:
        stub = api_grpc.TableServiceStub(channel)
        stub.CreateTable(api.CreateTableRequest(table=pb.Table(display_name="m")), timeout=5)
        with pytest.raises(grpc.RpcError):
            stub.GetTable(api.GetTableRequest(name="tables/nosuchtable"), timeout=5)
    url = f"http://127.0.0.1:{server_process.metrics_port}/metrics"
    wanted = [
        'hearts_requests_total{code="OK",method="CreateTable"} 1.0',
        'hearts_requests_total{code="NOT_FOUND",method="GetTable"} 1.0',
    ]
    # The server counts a call as it finishes, which may be just after the client has its answer.
    deadline = time.monotonic() + 5
    while True:
        text = urllib.request.urlopen(url, timeout=5).read().decode()
        if all(line in text for line in wanted) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    for line in wanted:
        assert line in text
    assert "hearts_request_seconds_bucket" in text
    assert "hearts_open_streams" in text
    # The event loop's gauges are sampled every 10 ms from the start: a value in [0, 1] for the
    # busy share, a non-negative lag.
    samples = dict(
        line.rsplit(" ", 1) for line in text.splitlines() if line.startswith("hearts_event_loop_")
    )
    assert 0.0 <= float(samples["hearts_event_loop_busy_ratio"]) <= 1.0
    assert float(samples["hearts_event_loop_lag_seconds"]) >= 0.0


def test_sigterm_drains_streams_with_a_reconnect_status_and_exits_cleanly(
    server_process: ServerProcess,
) -> None:
    with grpc.insecure_channel(server_process.address) as channel:
        stub = api_grpc.TableServiceStub(channel)
        created = stub.CreateTable(api.CreateTableRequest(table=pb.Table()), timeout=5)
        stream = stub.WatchTable(api.WatchTableRequest(name=created.view.table.name), timeout=30)
        first = next(stream)
        assert first.HasField("snapshot")
        started = time.monotonic()
        server_process.process.send_signal(signal.SIGTERM)
        with pytest.raises(grpc.RpcError) as ended:
            next(stream)
        assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
        status = rpc_status.from_call(ended.value)
        assert status is not None
        assert any(b"SHUTTING_DOWN" in detail.value for detail in status.details)
    # One SIGTERM only: a second one could land after the drain, in interpreter shutdown.
    _, stderr = server_process.process.communicate(timeout=20)
    assert server_process.process.returncode == 0
    assert time.monotonic() - started < 15
    # JSON lines: every log line parses, and the drain is logged.
    records = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert any("draining" in record["message"] for record in records)


def _stderr_of_a_server_started_and_stopped(env: dict[str, str]) -> str:
    server = ServerProcess(env=env)
    try:
        code, stderr = server.stop()
    finally:
        if server.process.poll() is None:
            server.process.kill()
    assert code == 0
    return stderr


def test_without_a_secret_the_server_warns_that_replicas_cannot_share_tokens() -> None:
    stderr = _stderr_of_a_server_started_and_stopped({"HEARTS_TOKEN_SECRET": ""})
    assert "no token secret configured" in stderr


def test_a_secret_that_ends_in_a_newline_is_used_but_warned_about() -> None:
    # echo "$SECRET" > identity-secret: every identity token then failed its signature check,
    # on a server that looked healthy.
    secret = "0123456789abcdef0123456789abcdef"
    stderr = _stderr_of_a_server_started_and_stopped(
        {"HEARTS_TOKEN_SECRET": secret, "HEARTS_IDENTITY_SECRET": secret + "\n"}
    )
    warned = [line for line in stderr.splitlines() if "whitespace" in line]
    assert len(warned) == 1, stderr
    assert "HEARTS_IDENTITY_SECRET" in warned[0]
    assert secret not in stderr


@pytest.mark.parametrize(
    "url",
    [
        "redis://:Ab3/xY+9zQ==@hearts-redis:6379/0",
        "redis://:Ab3#xY+9zQ==@hearts-redis:6379/0",
        "redis://:Ab3?xY+9zQ==@hearts-redis:6379/0",
        "redis://:pw/Ab3x@hearts-redis:6379/0",
    ],
)
def test_a_redis_url_that_does_not_parse_keeps_its_password_out_of_the_message(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # The parser's message quoted the start of a base64 password as the port or database.
    from hearts_server.config import parse_settings

    with pytest.raises(SystemExit):
        parse_settings(["--redis-url", url], {})
    err = capsys.readouterr().err
    assert "--redis-url" in err
    assert "holds a password" in err
    for part in ("Ab3", "xY", "pw"):
        assert part not in err, err


def test_settings_come_from_the_environment_and_flags_win() -> None:
    from hearts_server.config import parse_settings

    env = {"HEARTS_PORT": "6000", "HEARTS_LOG_FORMAT": "json", "HEARTS_TABLE_TTL_SECONDS": "5"}
    settings = parse_settings(["--port", "7000"], env)
    assert (settings.port, settings.log_format, settings.table_ttl_seconds) == (7000, "json", 5)


@pytest.mark.parametrize(
    ("argv", "env", "message"),
    [
        ([], {"HEARTS_PORT": "abc"}, "HEARTS_PORT: not a valid whole number: 'abc'"),
        ([], {"HEARTS_GRACE_SECONDS": "x"}, "HEARTS_GRACE_SECONDS: not a valid number"),
        (["--port", "70000"], {}, "--port must be a port, 0 to 65535"),
        (["--log-level", "LOUD"], {}, "--log-level must be one of DEBUG, INFO, WARNING, ERROR"),
        (["--token-secret", "short"], {}, "--token-secret must be at least 16 bytes"),
        (
            ["--token-secret", "a" * 16, "--token-extra-secret", "short"],
            {},
            "--token-extra-secret must be at least 16 bytes",
        ),
        (
            [],
            {"HEARTS_TOKEN_EXTRA_SECRET": "b" * 16},
            "--token-extra-secret needs --token-secret",
        ),
        (["--max-events", "0"], {}, "--max-events must be at least 1"),
        # Was taken, and then every CreateTable failed INTERNAL (Redis refused the expiry).
        (
            ["--table-ttl-seconds", "9300000000000000"],
            {},
            "--table-ttl-seconds must be at most 315,360,000 (ten years)",
        ),
        (
            [],
            {"HEARTS_FINISHED_TABLE_TTL_SECONDS": "315360001"},
            "--finished-table-ttl-seconds must be at most",
        ),
        (["--bot-workers", "-1"], {}, "--bot-workers must not be negative"),
        (["--max-connection-age-seconds", "-1"], {}, "--max-connection-age-seconds must be 0 or"),
        (["--max-connection-age-seconds", "2592000"], {}, "--max-connection-age-seconds must be"),
        (["--max-connection-age-seconds", "0.0004"], {}, "--max-connection-age-seconds must be"),
        (["--keepalive-seconds", "0"], {}, "--keepalive-seconds must be 0.1 to 2,000,000"),
        ([], {"HEARTS_KEEPALIVE_TIMEOUT_SECONDS": "0.05"}, "--keepalive-timeout-seconds must be"),
        (["--keepalive-timeout-seconds", "nan"], {}, "(got nan)"),
        (["--max-message-bytes", "65536"], {}, "--max-message-bytes must be at least 524288"),
        (["--record-schema", "1"], {}, "--record-schema must be 2 or 3 (got 1)"),
        ([], {"HEARTS_RECORD_SCHEMA": "4"}, "--record-schema must be 2 or 3 (got 4)"),
        (["--log-format", "json", "--port", "70000"], {}, '"message": "--port must be a port'),
        ([], {"HEARTS_LOG_FORMAT": "json", "HEARTS_PORT": "x"}, '"level": "ERROR"'),
        # The format argparse takes: the last flag, over the environment; no abbreviations.
        (["--log-format", "json", "--log-format", "text", "--port", "x"], {}, "hearts-server: "),
        (["--log-format", "text", "--port", "x"], {"HEARTS_LOG_FORMAT": "json"}, "hearts-server: "),
        (["--log-f", "json"], {}, "hearts-server: error: unrecognized arguments: --log-f"),
        (["--identity-secret", "s" * 31], {}, "--identity-secret must be at least 32 bytes"),
        (["--max-tables-per-hour", "-1"], {}, "--max-tables-per-hour must not be negative"),
        (["--max-streams-per-client", "-1"], {}, "--max-streams-per-client must not be negative"),
        # nan passes every comparison: a grace of nan cut every call at once (was taken).
        (["--grace-seconds", "nan"], {}, "--grace-seconds must be a finite number (got nan)"),
        ([], {"HEARTS_GRACE_SECONDS": "inf"}, "--grace-seconds must be a finite number (got inf)"),
        # Was a traceback from the store, exit 1.
        (["--redis-url", "notaurl"], {}, "--redis-url is not a Redis URL: Redis URL must"),
        (["--redis-url", "redis://127.0.0.1:abc/0"], {}, "--redis-url is not a Redis URL: Port"),
        # redis-py reads these as database 0 (was taken, and wrote to another database).
        (["--redis-url", "redis://127.0.0.1:6379/1x"], {}, "the database must be a number"),
        ([], {"HEARTS_REDIS_URL": "redis://127.0.0.1:6379/db1"}, "(got /db1)"),
        (
            ["--trusted-proxies", "10.0.0.0/8,10.0.0.0/33"],
            {},
            "--trusted-proxies: not a network (CIDR) or address: '10.0.0.0/33'",
        ),
        ([], {"HEARTS_TRUSTED_PROXIES": "gateway"}, "--trusted-proxies: not a network"),
        (
            ["--identity-jwks-url", "https://idp.example/jwks.json"],
            {},
            "--identity-jwks-url needs --identity-issuer and --identity-audience",
        ),
        (
            ["--identity-jwks-url", "file:///etc/passwd", "--identity-issuer", "i"],
            {"HEARTS_IDENTITY_AUDIENCE": "a"},
            "--identity-jwks-url must be an https:// URL",
        ),
        (
            ["--identity-jwks-url", "http://idp.example/jwks", "--identity-issuer", "i"],
            {"HEARTS_IDENTITY_AUDIENCE": "a"},
            "--identity-jwks-url must be an https:// URL (http:// only on loopback)",
        ),
        (["--identity-required"], {}, "--identity-required needs --identity-secret or"),
        (["--identity-issuer", "i"], {}, "--identity-issuer needs --identity-secret or"),
        *(
            (["--host", host], {}, "--host must be an address")
            for host in ("[::1", "::1]", "[]", "")
        ),
        ([], {"HEARTS_IDENTITY_AUDIENCE": "a"}, "--identity-audience needs --identity-secret or"),
        (["--trusted-proxies", "10.0.0.0/33"], {}, "--trusted-proxies:"),
        (["--redis-url", "http://127.0.0.1:6379"], {}, "--redis-url is not a Redis URL"),
        ([], {"HEARTS_IDENTITY_REQUIRED": "maybe"}, "HEARTS_IDENTITY_REQUIRED: not true or false"),
        (
            ["--webhook-url", "http://backend.example/hooks", "--webhook-secret", "s" * 32],
            {},
            "--webhook-url must be an https:// URL (http:// only on loopback)",
        ),
        (["--webhook-url", "https://backend.example/hooks"], {}, "--webhook-url needs --webhook"),
        ([], {"HEARTS_WEBHOOK_SECRET": "s" * 32}, "--webhook-secret needs --webhook-url"),
        *(
            (["--webhook-url", url], {"HEARTS_WEBHOOK_SECRET": "s" * 32}, "--webhook-url must")
            for url in (
                "https://user:pass@backend.example/hooks",
                "https://backend.example/a b",
                "https://backend.example:99999/hooks",
                "https://backend.example/résultats",
                "https://backend.example/\x07",
            )
        ),
    ],
)
def test_a_bad_setting_is_refused_with_a_message(
    argv: list[str], env: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from hearts_server.config import parse_settings

    with pytest.raises(SystemExit) as caught:
        parse_settings(argv, env)
    assert caught.value.code == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err  # one line for the log, not argparse's usage first


def test_a_flag_wins_over_a_variable_that_does_not_parse() -> None:
    # "a flag wins" (docs/operations.md): the variable was refused before the flags were read.
    from hearts_server.config import parse_settings

    assert parse_settings(["--port", "0"], {"HEARTS_PORT": "abc"}).port == 0
    secret = {"HEARTS_IDENTITY_SECRET": "s" * 32, "HEARTS_IDENTITY_REQUIRED": "maybe"}
    assert not parse_settings(["--no-identity-required"], secret).identity_required


def test_a_switch_comes_from_the_environment_and_a_flag_wins() -> None:
    from hearts_server.config import parse_settings

    secret = {"HEARTS_IDENTITY_SECRET": "s" * 32}
    assert not parse_settings([], secret).identity_required
    assert parse_settings([], {**secret, "HEARTS_IDENTITY_REQUIRED": "true"}).identity_required
    required = {**secret, "HEARTS_IDENTITY_REQUIRED": "1"}
    assert not parse_settings(["--no-identity-required"], required).identity_required
    assert parse_settings(["--identity-required"], secret).identity_required


def test_a_key_set_url_is_https_in_any_case_or_http_on_loopback() -> None:
    from hearts_server.config import parse_settings

    for url in ("HTTPS://idp.example/jwks", "http://127.0.0.1:8080/jwks", "http://[::1]/k"):
        argv = ["--identity-jwks-url", url, "--identity-issuer", "i", "--identity-audience", "a"]
        assert parse_settings(argv, {}).identity_jwks_url == url
    # All of 127.0.0.0/8 is loopback (only three host names were taken).
    for url in ("http://127.0.0.2:9/h", "http://localhost/h", "http://[0:0:0:0:0:0:0:1]/h"):
        argv = ["--webhook-url", url, "--webhook-secret", "s" * 32]
        assert parse_settings(argv, {}).webhook_url == url
    with pytest.raises(SystemExit):  # a name is not an address, whatever it resolves to
        parse_settings(
            ["--webhook-url", "http://127.0.0.1.example/h", "--webhook-secret", "s" * 32], {}
        )


def test_log_levels_are_taken_in_any_case() -> None:
    from hearts_server.config import parse_settings

    assert parse_settings(["--log-level", "warning"], {}).log_level == "WARNING"


def test_a_port_in_use_stops_a_second_server_with_a_message(server_process: ServerProcess) -> None:
    port = server_process.address.rsplit(":", 1)[1]
    command = [sys.executable, "-m", "hearts_server", "--port", port, "--metrics-port", "0"]
    second = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert second.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port} (--port)" in second.stderr
    assert "Traceback" not in second.stderr
    assert second.stdout == ""  # it never said it was listening
    # The metrics port in use: the message names that one (it said only "Address in use").
    metrics = str(server_process.metrics_port)
    command = [sys.executable, "-m", "hearts_server", "--port", "0", "--metrics-port", metrics]
    third = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    assert third.returncode == 2
    assert f"cannot listen on 127.0.0.1:{metrics} (--metrics-port)" in third.stderr


def test_sigterm_ends_health_watches_with_not_serving_at_once() -> None:
    # A long grace period: a watch that lasted until its end would fail the time bound below.
    server = ServerProcess("--grace-seconds", "60", "--log-format", "json")
    try:
        with grpc.insecure_channel(server.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            watch = health.Watch(health_pb2.HealthCheckRequest(service=""), timeout=120)
            assert next(watch).status == health_pb2.HealthCheckResponse.SERVING
            started = time.monotonic()
            server.process.send_signal(signal.SIGTERM)
            rest = [reply.status for reply in watch]  # the stream ends, with OK
            assert rest[-1:] == [health_pb2.HealthCheckResponse.NOT_SERVING]
            assert time.monotonic() - started < 30
        _, stderr = server.process.communicate(timeout=60)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate(timeout=10)
    assert server.process.returncode == 0
    records = [json.loads(line) for line in stderr.splitlines() if line.strip()]
    assert not [record for record in records if record["level"] == "ERROR"], stderr


@pytest.mark.redis
def test_a_redis_cluster_node_stops_the_server_with_a_message(tmp_path: Path) -> None:
    # The store's client does not follow Cluster redirects: every call would fail, so the
    # server refuses at start-up instead of reporting itself ready.
    from tests.conftest import LocalRedis

    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs a redis-server binary on PATH")
    node = LocalRedis(
        binary,
        tmp_path,
        ("--cluster-enabled", "yes", "--cluster-config-file", str(tmp_path / "nodes.conf")),
    )
    for _ in range(100):  # a Cluster node also listens on its port + 10000
        if node.port <= 55535:
            break
        node.port = free_port()
    node.start()
    try:
        command = [
            sys.executable, "-m", "hearts_server", "--port", "0", "--metrics-port", "0",
            "--redis-url", node.url,
        ]  # fmt: skip
        result = subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)
    finally:
        node.stop()
    assert result.returncode == 2
    assert "cannot use the table store" in result.stderr
    assert "Redis Cluster" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def _monte_carlo_table(stub: api_grpc.TableServiceStub) -> str:
    """A one-round table of four Monte Carlo bots, which play it in the bot worker; its name."""
    bots = [
        pb.Seat(seat=s, occupant=pb.SEAT_OCCUPANT_BOT, bot_level=pb.BOT_LEVEL_MONTE_CARLO)
        for s in range(4)
    ]
    table = pb.Table(display_name="workers", seats=bots, rules=pb.Rules(target_score=1))
    return stub.CreateTable(api.CreateTableRequest(table=table)).view.table.name


def test_ctrl_c_drains_without_a_traceback_from_the_bot_workers() -> None:
    # Ctrl-C at a terminal reaches the whole process group, bot workers included: they leave it
    # to the server, which drains and stops them. Nothing but JSON lines may reach the log.
    server = ServerProcess("--bot-workers", "1", "--log-format", "json", new_session=True)
    try:
        with grpc.insecure_channel(server.address) as channel:
            stub = api_grpc.TableServiceStub(channel)
            name = _monte_carlo_table(stub)
            for _ in range(300):  # the worker plays the round: at most 30 s
                view = stub.GetTable(api.GetTableRequest(name=name)).view
                if view.table.phase == pb.PHASE_GAME_OVER:
                    break
                time.sleep(0.1)
            assert view.table.phase == pb.PHASE_GAME_OVER
        time.sleep(1)  # the worker waits for work: where Ctrl-C made it print a traceback
        os.killpg(server.process.pid, signal.SIGINT)
        _, stderr = server.process.communicate(timeout=60)
    finally:
        if server.process.poll() is None:
            server.process.kill()
            server.process.communicate()
    assert server.process.returncode == 0
    assert "KeyboardInterrupt" not in stderr
    for line in stderr.splitlines():
        json.loads(line)  # every line a JSON object


def _workers(pid: int) -> set[int]:
    """The bot worker processes of the server ``pid``."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                if int(fields[1]) == pid and b"spawn_main" in (entry / "cmdline").read_bytes():
                    found.add(int(entry.name))
    return found


def _running(pid: int) -> bool:
    """Whether ``pid`` is a process that has not ended (a zombie has, even before it is reaped)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl(PR_SET_PDEATHSIG)")
def test_a_killed_server_takes_its_bot_workers_with_it() -> None:
    # SIGKILL (the OOM killer) leaves no time to stop the workers; outside a container nothing
    # else would, so they ask the kernel to end them with their parent.
    server = ServerProcess("--bot-workers", "1")
    try:
        with grpc.insecure_channel(server.address) as channel:  # a Monte Carlo bot starts one
            stub = api_grpc.TableServiceStub(channel)
            name = _monte_carlo_table(stub)
            for _ in range(300):  # until the worker has made a move: it is running
                view = stub.GetTable(api.GetTableRequest(name=name)).view
                if view.current_trick.cards or view.completed_tricks:
                    break
                time.sleep(0.1)
        workers = _workers(server.process.pid)
        assert workers, "no bot worker started"
    finally:
        server.process.kill()
        server.process.wait(timeout=10)  # not communicate: a worker left alive holds the pipes
        for pipe in (server.process.stdout, server.process.stderr):
            if pipe is not None:
                pipe.close()
    deadline = time.monotonic() + 10
    while (alive := {pid for pid in workers if _running(pid)}) and time.monotonic() < deadline:
        time.sleep(0.1)
    for pid in alive:  # do not leave them behind if the test fails
        os.kill(pid, signal.SIGKILL)
    assert not alive, "bot workers outlived the killed server"


@pytest.mark.redis
def test_a_quick_join_sent_twice_at_once_to_two_replicas_seats_its_caller_once(
    clean_redis: str,
) -> None:
    # A retry that overlaps the first call (a client that gave up waiting), on another replica:
    # both copies must give the one seat. Before, a copy that read the lobby a moment after the
    # other went on to the next table and took a second seat (about 1 caller in 30 here).
    secret = "process-tests-secret-0123456789"
    replicas = [ServerProcess("--redis-url", clean_redis, "--token-secret", secret) for _ in "abc"]
    callers, rounds = 60, 3
    try:

        async def send() -> list[api.QuickJoinResponse]:
            channels = [grpc.aio.insecure_channel(replica.address) for replica in replicas]
            stubs = [api_grpc.TableServiceStub(channel) for channel in channels]
            answers: list[api.QuickJoinResponse] = []
            try:
                for game in range(rounds):  # a game of its own each round: fresh lobbies
                    requests = [
                        api.QuickJoinRequest(
                            rules=pb.Rules(target_score=20 + game),
                            player_display_name=f"p{game}-{index}",
                            request_id=f"quick-{game}-{index}",
                        )
                        for index in range(callers)
                    ]
                    answers += await asyncio.gather(
                        *(
                            stubs[(index + copy) % len(stubs)].QuickJoin(request, timeout=20)
                            for index, request in enumerate(requests)
                            for copy in (0, 1)
                        )
                    )
            finally:
                for channel in channels:
                    await channel.close()
            return answers

        answers = asyncio.run(send())
        with grpc.insecure_channel(replicas[0].address) as channel:
            stub = api_grpc.TableServiceStub(channel)
            tables = [
                stub.GetTable(api.GetTableRequest(name=name), timeout=10).view.table
                for name in sorted({answer.view.table.name for answer in answers})
            ]
    finally:
        for replica in replicas:
            replica.stop()
    twice = [
        index
        for index in range(callers * rounds)
        if (answers[2 * index].view.table.name, answers[2 * index].seat)
        != (answers[2 * index + 1].view.table.name, answers[2 * index + 1].seat)
    ]
    assert not twice, f"{len(twice)} of {callers * rounds} requests got two different seats"
    names = sorted(seat.player_display_name for table in tables for seat in table.seats)
    assert [name for name in names if name] == sorted(
        f"p{game}-{index}" for game in range(rounds) for index in range(callers)
    )


@pytest.mark.parametrize(
    ("host", "ipv6", "bound"),
    [
        ("0.0.0.0", True, ["::"]),  # every address, IPv6 included, as gRPC binds 0.0.0.0
        ("0.0.0.0", False, ["::", "0.0.0.0"]),  # a host without IPv6: IPv4 is all there is
        ("127.0.0.1", True, ["127.0.0.1"]),
        ("::1", True, ["::1"]),
    ],
)
def test_metrics_listen_where_grpc_does(
    monkeypatch: pytest.MonkeyPatch, host: str, ipv6: bool, bound: list[str]
) -> None:
    # Binding a wildcard address for real would listen beyond loopback: the binding is recorded.
    tried: list[str] = []

    def start_http_server(port: int, addr: str) -> None:
        tried.append(addr)
        if addr == "::" and not ipv6:
            raise OSError("Address family not supported by protocol")

    monkeypatch.setattr(hearts_main, "start_http_server", start_http_server)
    hearts_main._serve_metrics(9464, host)
    assert tried == bound


@pytest.mark.parametrize("host", ["::1", "[::1]"])
def test_an_ipv6_host_is_taken_with_or_without_brackets(host: str) -> None:
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this host")
    server = ServerProcess("--host", host)
    try:
        assert server.address.startswith("[::1]:")
        with grpc.insecure_channel(server.address) as channel:
            answer = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(), timeout=5
            )
        assert answer.status == health_pb2.HealthCheckResponse.SERVING
        url = f"http://[::1]:{server.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as response:
            assert b"hearts_requests_total" in response.read()
    finally:
        code, stderr = server.stop()
    assert code == 0, stderr
