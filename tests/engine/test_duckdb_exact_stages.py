"""DuckDB's closures as one query: the exact stages proofs need are derived once, not once per proof."""

from __future__ import annotations

import pytest

from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.parser import parse_program

PROGRAM = """\
.input link(src: symbol, dst: symbol)
.decl reach(src: symbol, dst: symbol)
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
"""


def test_proofs_after_the_first_reuse_its_exact_stages(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(PROGRAM, "t.dl"))
        engine.add_facts("link", [("a", "b"), ("b", "c"), ("c", "d")])
        engine.evaluate()  # reach as one WITH RECURSIVE query: every tuple in one stage
        evaluations = []
        evaluate = engine.evaluate

        def counted() -> None:
            evaluations.append(1)
            evaluate()

        monkeypatch.setattr(engine, "evaluate", counted)
        # reach(a,d) <- reach(a,c), link(c,d) <- reach(a,b), link(b,c) <- link(a,b): three rules deep.
        assert engine.explain("reach", ("a", "d")).height() == 3
        assert len(evaluations) == 1  # the first proof derives everything again, in rounds
        # reach(b,d) <- reach(b,c), link(c,d) <- link(b,c); reach(a,c) likewise: the same stages serve.
        assert engine.explain("reach", ("b", "d")).height() == 2
        assert engine.explain("reach", ("a", "c")).height() == 2
        assert len(evaluations) == 1
    finally:
        engine.close()
