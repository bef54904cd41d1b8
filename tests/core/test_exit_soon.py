"""Closed evaluations are left for the exit only in a process that ends with its command (the console script)."""

from __future__ import annotations

import pytest

from verifier.core import exit_soon
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program

CHAIN = (
    ".input edge(a: symbol, b: symbol)\n.decl path(a: symbol, b: symbol)\n"
    "path(X, Y) :- edge(X, Y).\npath(X, Z) :- edge(X, Y), path(Y, Z).\n"
)


def _closed_engine() -> MemoryBackend:
    engine = MemoryBackend()
    engine.load(parse_program(CHAIN, "t.dl"))
    engine.add_facts("edge", [("a", "b"), ("b", "c"), ("c", "d")])
    engine.evaluate()
    # 3 edges in a chain a-b-c-d: paths a-b, a-c, a-d, b-c, b-d, c-d.
    assert engine.count("path") == 6
    engine.close()
    return engine


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exit_soon, "_KEPT", {})


@pytest.mark.usefixtures("fresh")
def test_a_library_process_frees_what_an_engine_closes() -> None:
    engine = _closed_engine()
    assert exit_soon.kept("memory engine") is None
    assert engine.count("path") == 0  # closed: nothing held by the engine either


@pytest.mark.usefixtures("fresh")
def test_the_console_script_leaves_the_last_closed_evaluation_for_the_exit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exit_soon, "_ENDS_WITH_COMMAND", True)
    first = _closed_engine()
    held = exit_soon.kept("memory engine")
    assert isinstance(held, tuple)
    relations, _plans = held
    assert len(relations["path"].rows) == 6  # the 6 paths, still referenced
    assert first.count("path") == 0  # the engine itself is closed as before
    first.close()  # closed again: nothing to leave, and what the first close left stays
    assert exit_soon.kept("memory engine") is held
    _closed_engine()
    # A second closed evaluation takes the first one's place: one at most is held.
    assert exit_soon.kept("memory engine") is not held
