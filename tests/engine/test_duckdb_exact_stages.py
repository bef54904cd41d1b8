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


def _coarse_closures(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every closure as the UNION query, with one stage for all its tuples: LINKS are a chain (each
    source once), which DuckDB would otherwise store with their rounds' stages at once (`_chain`)."""
    monkeypatch.setattr(DuckDBBackend, "_chain_step", lambda *_: None)


def test_each_tuple_of_a_closure_gets_its_round_and_later_strata_stay_above(monkeypatch: pytest.MonkeyPatch) -> None:
    _coarse_closures(monkeypatch)
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


# into(Y) reads reach(X, Y) with Y fixed by the head and X free: reach passes X through, so a proof
# of into(d) derives again the tuples from every X with a tuple ending at d (a, b and c: a>b>c>d),
# up to ROUNDS_VALUES of them; past that, the whole closure.
INTO = """\
.input link(src: symbol, dst: symbol)
.decl reach(src: symbol, dst: symbol)
.decl into(dst: symbol)
reach(X, Y) :- link(X, Y).
reach(X, Y) :- reach(X, Z), link(Z, Y).
into(Y) :- reach(X, Y), link(X, _).
"""


@pytest.mark.parametrize("cap", [3, 2])
def test_a_proof_fixing_another_column_derives_again_the_values_it_allows(
    monkeypatch: pytest.MonkeyPatch, cap: int
) -> None:
    monkeypatch.setattr("verifier.engine.duckdb_backend.ROUNDS_VALUES", cap)
    _coarse_closures(monkeypatch)
    links = [("a", "b"), ("b", "c"), ("c", "d"), ("x", "y")]
    fast, rounds = make_backend("duckdb"), make_backend("memory")
    assert isinstance(fast, DuckDBBackend)
    try:
        for engine in (fast, rounds):
            engine.load(parse_program(INTO, "t.dl"))
            engine.add_facts("link", links)
            engine.evaluate()
        proof = fast.explain("into", ("d",))
        # into(d) <- reach(c, d), link(c, d): the earliest instance (reach(c, d) is a link).
        assert _tree(proof) == _tree(rounds.explain("into", ("d",))) and proof.height() == 2
        if cap == 3:
            # a, b and c fit: only their tuples are derived again; x's keep the query's stage.
            assert fast._rounds_for["reach"] == {fast._encode(v) for v in "abc"}
            assert "reach" in fast._coarse
        else:
            # Three values past a cap of two: the whole closure is derived again, once.
            assert "reach" not in fast._coarse and "reach" not in fast._rounds_for
        assert _tree(fast.explain("reach", ("a", "d"))) == _tree(rounds.explain("reach", ("a", "d")))
    finally:
        fast.close()
        rounds.close()
