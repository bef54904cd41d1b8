"""A stratum's thread lets go of the engine's lock while it reads the ids whose texts a statement
needs (`DuckDBBackend._store_texts`), as it does while the statement itself runs.

At fleet scale those reads are joins as big as a rule's (TOPO002's self-join of every link): held
under the lock, they kept the other thread from starting any statement. Here the thread reading
them waits, inside the read, until the other thread has run its stratum's statement: that can only
happen if the lock was let go (else the wait runs out and the evaluation fails).
"""

from __future__ import annotations

import threading

import pytest

from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

# Strata in evaluation order (strata.stratify: by relation name): `pairs`, then `tagged`; neither
# reads the other, so on two threads each takes one. `pairs` compares symbols by their text (X < Y):
# its statement first reads the ids of the texts it compares.
PROGRAM = """
.input node(x: symbol)
.input tag(x: symbol)
.decl pairs(x: symbol, y: symbol)
.decl tagged(x: symbol)
pairs(X, Y) :- node(X), node(Y), X < Y.
tagged(X) :- tag(X).
"""

WAIT = 30.0
"""Seconds the reading thread waits for the other one (only a failing run waits that long)."""


def test_the_other_stratum_runs_while_text_ids_are_read(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = DuckDBBackend()
    engine.workers = 2
    engine.concurrent_rows = 0
    engine.concurrent_strata = 2
    engine.load(parse_program(PROGRAM, "t.dl"))
    assert [s.relations for s in engine._strata] == [("pairs",), ("tagged",)]
    engine.add_facts("node", [("n2",), ("n1",), ("n3",)])
    engine.add_facts("tag", [("t1",)])
    tagged_ran = threading.Event()
    waited: list[bool] = []
    read_ids = engine._text_ids
    insert = engine._insert

    def text_ids(*args: object, **kwargs: object) -> object:
        waited.append(tagged_ran.wait(WAIT))
        return read_ids(*args, **kwargs)  # type: ignore[arg-type]

    def inserting(relation: str, *args: object, **kwargs: object) -> int:
        count = insert(relation, *args, **kwargs)  # type: ignore[arg-type]
        if relation == "tagged":
            tagged_ran.set()
        return count

    monkeypatch.setattr(engine, "_text_ids", text_ids)
    monkeypatch.setattr(engine, "_insert", inserting)
    engine.evaluate()
    # `tagged`'s statement ran while `pairs`' thread was inside its read of the ids, every time.
    assert waited and all(waited)
    # By hand: the pairs of n1, n2, n3 whose first text sorts before the second: (n1, n2), (n1, n3),
    # (n2, n3); `tagged` copies the one tag.
    assert engine.query("pairs") == [("n1", "n2"), ("n1", "n3"), ("n2", "n3")]
    assert engine.query("tagged") == [("t1",)]
