"""Checks that the committed generated code is what scripts/generate.sh makes from proto/ now.

It must never write into the repository: it regenerates into a temporary directory.
"""

import os
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
GENERATED = Path("clients/python/src/hearts")


def _tree(root: Path) -> dict[str, bytes]:
    return {
        path.relative_to(root).as_posix(): path.read_bytes()
        for path in sorted(root.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_generated_python_code_is_current(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHON": sys.executable}
    subprocess.run(
        [
            "bash",
            str(REPO_ROOT / "scripts" / "generate.sh"),
            "--out-root",
            str(tmp_path),
            "--lang",
            "python",
        ],
        check=True,
        env=env,
        capture_output=True,
    )

    fresh = _tree(tmp_path / GENERATED)
    committed = _tree(REPO_ROOT / GENERATED)

    assert fresh, "scripts/generate.sh produced no files"
    assert sorted(committed) == sorted(fresh), "run scripts/generate.sh: the file list differs"
    stale = [name for name in fresh if committed[name] != fresh[name]]
    assert not stale, f"run scripts/generate.sh: these generated files are stale: {stale}"
