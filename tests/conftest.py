"""Shared fixtures: a real Redis server for the tests marked ``redis``.

* ``redis_url`` (session): a Redis in a container when a Docker engine answers, else a local
  ``redis-server`` on a free loopback port (no persistence, in a temporary directory). Tests that
  need it are skipped, with the reason, when neither is available.
* ``clean_redis``: the session server's URL, emptied (FLUSHALL) before the test.
* ``redis_server``: a private ``redis-server`` for one test, which it may restart (same port;
  data and loaded scripts are lost, as after a real restart).

This module must never touch a Redis it did not start.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
import redis

_STARTUP_SECONDS = 10.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class LocalRedis:
    """A ``redis-server`` child process on 127.0.0.1, without persistence."""

    def __init__(self, binary: str, directory: Path, extra_args: Sequence[str] = ()) -> None:
        self.binary = binary
        self.directory = directory
        self.extra_args = tuple(extra_args)
        self.port = free_port()
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The ``redis://`` URL of this server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Start the server and wait until it answers PING."""
        log = self.directory / "redis.log"
        # `--save ""` and no AOF: nothing is written to disk, and a restart really loses all data.
        command = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(self.directory),
            "--logfile",
            str(log),
            *self.extra_args,
        ]
        self._process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2, socket_timeout=0.5)
        deadline = time.monotonic() + _STARTUP_SECONDS
        try:
            while True:
                if self._process.poll() is not None:
                    stderr = self._process.stderr.read().decode() if self._process.stderr else ""
                    text = log.read_text() if log.exists() else ""
                    raise RuntimeError(f"redis-server exited: {stderr}{text}")
                with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
                    if client.ping():
                        return
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server did not answer on port {self.port}")
                time.sleep(0.02)
        finally:
            client.close()

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL if it lingers)."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stderr:
            process.stderr.close()

    def restart(self) -> None:
        """Stop and start again on the same port: data and scripts are gone."""
        self.stop()
        self.start()


def _docker_engine_answers() -> bool:
    if shutil.which("docker") is None:
        return False
    try:
        result = subprocess.run(["docker", "info"], capture_output=True, timeout=5, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URL of a Redis started for this test session."""
    if _docker_engine_answers():
        try:
            from testcontainers.redis import RedisContainer

            container = RedisContainer("redis:7.0")
            container.start()
        except Exception as exc:  # no image and no network, and the like: try the local binary
            print(f"testcontainers Redis did not start ({exc!r}); trying redis-server")
        else:
            try:
                host = container.get_container_host_ip()
                port = container.get_exposed_port(6379)
                yield f"redis://{host}:{port}/0"
            finally:
                container.stop()
            return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs Redis: no Docker engine answers and no redis-server on PATH")
    server = LocalRedis(binary, tmp_path_factory.mktemp("redis"))
    server.start()
    try:
        yield server.url
    finally:
        server.stop()


@pytest.fixture
def clean_redis(redis_url: str) -> str:
    """The session Redis's URL, with every database emptied first."""
    client = redis.Redis.from_url(redis_url)
    try:
        client.flushall()
    finally:
        client.close()
    return redis_url


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[LocalRedis]:
    """A private redis-server that the test may restart."""
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("needs a redis-server binary on PATH (restart tests control the process)")
    server = LocalRedis(binary, tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.stop()
