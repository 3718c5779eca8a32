"""The images' build context: ``.dockerignore`` keeps out secrets and local clutter, never a file
that a Dockerfile copies.

No Docker engine runs here, so these tests read ``.dockerignore`` as Docker does (Go's
``filepath.Match`` patterns plus ``**``, rooted at the context, ``!`` exceptions, the last pattern
that matches deciding, a pattern that matches a directory covering everything under it) and check
it against the ``COPY`` lines of both Dockerfiles and the files git tracks under them.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = (ROOT / "deploy" / "Dockerfile", ROOT / "deploy" / "gateway" / "Dockerfile")
KUSTOMIZATION = ROOT / "deploy" / "kubernetes" / "kustomization.yaml"


def _regex(pattern: str) -> re.Pattern[str]:
    """One ``.dockerignore`` pattern as a regular expression over a slash-separated path."""
    parts = ["^"]
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            parts.append("(.*/)?")  # any number of directories, none included
            i += 3
        elif pattern.startswith("**", i):
            parts.append(".*")
            i += 2
        elif pattern[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            parts.append("[^/]")
            i += 1
        elif pattern[i] in "[\\":
            raise AssertionError(f"{pattern}: teach this test character classes and escapes first")
        else:
            parts.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(parts) + "$")


def _rules() -> list[tuple[bool, re.Pattern[str]]]:
    """The patterns of ``.dockerignore`` in order, each with whether it is an exception (``!``)."""
    rules = []
    for raw in (ROOT / ".dockerignore").read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        pattern = posixpath.normpath(line.removeprefix("!").strip()).lstrip("/")
        rules.append((exception, _regex(pattern)))
    return rules


def _left_out(path: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Whether Docker leaves ``path`` (relative to the context) out of the build context."""
    parts = path.split("/")
    paths = ["/".join(parts[:n]) for n in range(1, len(parts) + 1)]  # the path and its parents
    left_out = False
    for exception, regex in rules:
        if any(regex.match(p) for p in paths):
            left_out = not exception
    return left_out


def _copied() -> list[str]:
    """The context paths that the Dockerfiles' ``COPY`` lines name (not those from a stage)."""
    sources: list[str] = []
    for dockerfile in DOCKERFILES:
        for line in dockerfile.read_text().replace("\\\n", " ").splitlines():
            words = line.split()
            if not words or words[0] != "COPY" or any(w.startswith("--from") for w in words):
                continue
            sources.extend(w for w in words[1:-1] if not w.startswith("--"))
    return sources


def test_the_matcher_reads_patterns_as_docker_does() -> None:
    rules = [(False, _regex("**/__pycache__")), (False, _regex("docs")), (True, _regex("docs/a*"))]
    assert _left_out("__pycache__/x.pyc", rules)
    assert _left_out("server/src/pkg/__pycache__/x.pyc", rules)
    assert not _left_out("server/src/pkg/x.py", rules)
    assert _left_out("docs/deploy.md", rules)
    assert not _left_out("docs/api.md", rules)  # the later exception wins
    assert not _left_out("server/docs/api.md", rules)  # rooted at the context


def test_nothing_the_dockerfiles_copy_is_left_out() -> None:
    rules = _rules()
    sources = _copied()
    assert "server" in sources
    assert "deploy/gateway" in sources
    for source in sources:
        tracked = subprocess.run(
            ["git", "ls-files", "--", source],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        assert tracked, f"{source}: git tracks nothing there"
        left_out = [path for path in tracked if _left_out(path, rules)]
        assert not left_out, f"COPY {source}, but .dockerignore leaves out {left_out}"


@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".venv/bin/python",
        "clients/python/.venv/bin/python",
        "clients/typescript/node_modules/typescript/package.json",
        "clients/rust/target/debug/hearts",
        "server/src/hearts_server/__pycache__/server.cpython-311.pyc",
        "engine/src/hearts_engine/rules.pyc",
        "server/src/hearts_server.egg-info/PKG-INFO",
        ".mypy_cache/3.11/cache.db",
        "clients/python/.pytest_cache/README.md",
        ".hypothesis/examples/x",
        "deploy/gateway/gateway",
    ],
)
def test_local_clutter_stays_out(path: str) -> None:
    assert _left_out(path, _rules())


def test_the_secret_files_stay_out() -> None:
    # Every file a Secret is generated from, and every one the docs have the operator write.
    kustomization = yaml.safe_load(KUSTOMIZATION.read_text())
    names = {name for gen in kustomization["secretGenerator"] for name in gen["files"]}
    docs = (ROOT / "docs" / "deploy.md").read_text()
    names |= set(re.findall(r"> deploy/kubernetes/([\w.-]+)", docs))
    names |= set(re.findall(r"`([a-z][a-z-]*-(?:secret|password))`", docs))
    assert {"token-secret", "redis-password", "webhook-secret"} <= names
    rules = _rules()
    for name in sorted(names):
        assert _left_out(f"deploy/kubernetes/{name}", rules), name
