"""DuckDB's closures as one query: proofs get each tuple's round without evaluating the program again."""

from __future__ import annotations

import pytest

from verifier.engine.backend import Backend, Proof
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

# reach is a closure (one WITH RECURSIVE query in DuckDB); far is a later stratum that reads it
# and link, so its proofs compare the stages of both; pair comes before reach and stays as it is.
PROGRAM = """\
.input link(src: symbol, dst: symbol)
.decl pair(src: symbol, dst: symbol)
.decl reach(src: symbol, dst: symbol)
.decl far(src: symbol, dst: symbol)
pair(X, Y) :- link(X, Y).
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
far(X, Y) :- reach(X, Y), !pair(X, Y).
"""
LINKS = [("a", "b"), ("b", "c"), ("c", "d")]


def _engines() -> tuple[DuckDBBackend, Backend]:
    """The DuckDB engine and the memory engine, each with PROGRAM evaluated over LINKS."""
    fast, rounds = make_backend("duckdb"), make_backend("memory")
    assert isinstance(fast, DuckDBBackend)
    for engine in (fast, rounds):
        engine.load(parse_program(PROGRAM, "t.dl"))
        engine.add_facts("link", LINKS)
        engine.evaluate()
    return fast, rounds


def _tree(proof: Proof) -> tuple[object, ...]:
    """A proof as reports show it: stage numbers are the engines' own (DuckDB leaves gaps), only their order counts."""
    return (proof.relation, proof.row, proof.rule, tuple(_tree(p) for p in proof.premises), proof.absent)


def test_proofs_match_the_memory_engines_without_evaluating_again(monkeypatch: pytest.MonkeyPatch) -> None:
    fast, rounds = _engines()
    try:

        def no_evaluation() -> None:
            raise AssertionError("explain evaluated the whole program again")

        monkeypatch.setattr(fast, "evaluate", no_evaluation)
        # far(a,d) <- reach(a,d), !pair(a,d); reach(a,d) <- reach(a,c), link(c,d)
        # <- reach(a,b), link(b,c) <- link(a,b): four rules deep.
        proof = fast.explain("far", ("a", "d"))
        assert proof.height() == 4
        assert _tree(proof) == _tree(rounds.explain("far", ("a", "d")))
        # Later proofs read the same stages: reach(b,d) <- reach(b,c), link(c,d) <- link(b,c).
        assert _tree(fast.explain("reach", ("b", "d"))) == _tree(rounds.explain("reach", ("b", "d")))
        assert fast.explain("reach", ("b", "d")).height() == 2
        assert _tree(fast.explain("pair", ("a", "b"))) == _tree(rounds.explain("pair", ("a", "b")))
    finally:
        fast.close()
        rounds.close()


def test_each_tuple_of_a_closure_gets_its_round_and_later_strata_stay_above() -> None:
    fast, rounds = _engines()
    try:
        # A proof derives again in rounds the tuples of reach it reads: reach passes its first
        # column through, so a proof of reach(a, _) derives only the tuples from a.
        fast.explain("reach", ("a", "b"))
        assert fast._rounds_for["reach"] == {fast._encode("a")}
        fast.explain("reach", ("b", "c"))
        fast.explain("reach", ("c", "d"))
        stage = {row: fast._stage_of("reach", row) for row in fast.query("reach")}
        # Round 1: the links themselves; round 2: two hops (a>c, b>d); round 3: a>d.
        first = stage[("a", "b")]
        assert first is not None
        assert stage == {
            ("a", "b"): first,
            ("b", "c"): first,
            ("c", "d"): first,
            ("a", "c"): first + 1,
            ("b", "d"): first + 1,
            ("a", "d"): first + 2,
        }
        # far comes after reach: every far tuple is newer than every reach tuple.
        far = [fast._stage_of("far", row) for row in fast.query("far")]
        assert fast.query("far") == [("a", "c"), ("a", "d"), ("b", "d")]
        assert min(s for s in far if s is not None) > first + 2
    finally:
        fast.close()
        rounds.close()
