"""The docstring examples of the engine run as tests (they are part of its documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "hearts_engine",
    "hearts_engine.cards",
    "hearts_engine.errors",
    "hearts_engine.events",
    "hearts_engine.game",
    "hearts_engine.history",
    "hearts_engine.rules",
    "hearts_engine.serialize",
    "hearts_engine.views",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    outcome = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert outcome.failed == 0, f"{outcome.failed} doctest(s) failed in {name}"
