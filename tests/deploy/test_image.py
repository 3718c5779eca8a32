"""The server image's build stage, run on this machine: what it installs works without /src.

No Docker engine runs here, so this test does what ``deploy/Dockerfile``'s build stage does,
from its own lines: it copies the paths the stage copies into a scratch ``src``, runs the stage's
``RUN`` command with ``/opt/hearts`` moved under the scratch directory, removes ``src`` (the final
stage copies only the venv), and starts the entrypoint. An install that links back into the
sources (uv installs workspace members editable unless told otherwise) fails here as every
container of the image would.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"

pytestmark = pytest.mark.timeout(600)


def _build_stage() -> tuple[list[tuple[list[str], str]], str, str]:
    """The build stage's COPY instructions (sources, target), its last RUN command (with its
    continuation lines joined), and the final stage's entrypoint."""
    stages: list[list[str]] = []
    for line in DOCKERFILE.read_text().replace("\\\n", " ").splitlines():
        if line.startswith("FROM "):
            stages.append([])
        elif stages:
            stages[-1].append(line)
    build, final = stages[0], stages[-1]
    copies = [
        (words[1:-1], words[-1])
        for words in (line.split() for line in build)
        if words and words[0] == "COPY"
    ]
    runs = [line[len("RUN ") :] for line in build if line.startswith("RUN ")]
    (entrypoint,) = [
        match for line in final for match in re.findall(r'^ENTRYPOINT \["([^"]+)"', line)
    ]
    return copies, runs[-1], entrypoint


@pytest.mark.skipif(shutil.which("uv") is None, reason="uv is not installed")
def test_the_server_image_installs_packages_that_run_without_the_sources(tmp_path: Path) -> None:
    copies, run, entrypoint = _build_stage()
    assert copies
    assert "/opt/hearts" in run
    src = tmp_path / "src"
    src.mkdir()
    for sources, target in copies:
        for name in sources:
            origin = ROOT / name
            destination = src / origin.name if target.endswith(("/", ".")) else src / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            if origin.is_dir():
                skip = shutil.ignore_patterns(".venv", "__pycache__", "node_modules", "*.egg-info")
                shutil.copytree(origin, destination, ignore=skip)
            else:
                shutil.copy2(origin, destination)
    venv = tmp_path / "opt" / "hearts"
    command = run.replace("/opt/hearts", str(venv)).replace("--no-cache", "")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UV_", "VIRTUAL_ENV"))}
    subprocess.run(["bash", "-c", command], cwd=src, env=env, check=True, timeout=540)
    shutil.rmtree(src)  # the final stage has the venv only
    started = subprocess.run(
        [str(venv / "bin" / entrypoint), "--help"],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    assert started.returncode == 0, started.stderr
    assert "--redis-url" in started.stdout
