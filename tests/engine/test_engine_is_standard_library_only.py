"""The engine's no-dependency rule, checked on every import statement of its source.

import-linter's contract forbids the project's other packages and the known third-party ones;
this test closes the gap for any other package: every absolute import in ``hearts_engine`` must
name the standard library or the engine itself.
"""

import ast
import sys
from pathlib import Path

import hearts_engine

ENGINE = Path(hearts_engine.__file__).parent


def _imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            roots.add(node.module.split(".")[0])
    return roots


def test_engine_imports_only_the_standard_library() -> None:
    allowed = set(sys.stdlib_module_names) | {"hearts_engine", "__future__"}
    sources = sorted(ENGINE.rglob("*.py"))
    assert sources, "no engine sources found"
    offenders = {
        str(path.relative_to(ENGINE)): sorted(_imported_roots(path) - allowed) for path in sources
    }
    assert {path: bad for path, bad in offenders.items() if bad} == {}


def test_engine_distribution_declares_no_dependencies() -> None:
    import tomllib

    pyproject = ENGINE.parents[1] / "pyproject.toml"
    assert tomllib.loads(pyproject.read_text())["project"]["dependencies"] == []
