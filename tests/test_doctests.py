"""Every docstring example in the packages runs as a test: they are part of the documentation.

The modules are found by looking for examples, so a new one is never left out, and each module
listed must run at least one (a module without any would pass without testing anything).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent.parent
_SOURCES = (_ROOT / "engine" / "src", _ROOT / "server" / "src", _ROOT / "clients/python/src")


def _modules_with_examples() -> list[str]:
    names = []
    for source in _SOURCES:
        for path in sorted(source.rglob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                parts = path.relative_to(source).with_suffix("").parts
                names.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return names


MODULES = _modules_with_examples()


def test_the_examples_are_found() -> None:
    assert {"hearts_engine.game", "hearts_server.store.keys", "hearts_client.cards"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    examples = sum(len(test.examples) for test in doctest.DocTestFinder().find(module))
    assert examples > 0, f"{name} mentions '>>>' but doctest finds no example in it"
    outcome = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert outcome.failed == 0, f"{outcome.failed} doctest(s) failed in {name}"
