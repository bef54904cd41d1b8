"""DuckDB's closure over a keyed step (containment: `within` over `parent`) without UNION's hash.

`R(X, Y) :- S(X, Y).` and `R(X, Z) :- R(X, Y), S(Y, Z).`, with S's first column holding no value
twice, derive no tuple twice unless a chain runs into a cycle: the engine runs them as a UNION ALL
query that stops at CHAIN_DEPTH, and runs a cycle (or a deeper chain) again as the UNION query.
Each expectation below is worked out by hand from the facts.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from verifier.engine import duckdb_backend
from verifier.engine.backend import Proof
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

PROGRAM = """\
.input parent(child: symbol, parent: symbol)
.decl within(x: symbol, a: symbol)
within(X, A) :- parent(X, A).
within(X, A) :- within(X, P), parent(P, A).
"""


@pytest.fixture
def chains(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The relations each evaluation ran a chain query over."""
    seen: list[str] = []
    original = DuckDBBackend._chain

    def spy(self: DuckDBBackend, keyed: str, start: int | None = None) -> str:
        seen.append(keyed)
        return original(self, keyed, start)

    monkeypatch.setattr(DuckDBBackend, "_chain", spy)
    yield seen


def _within(batches: list[list[tuple[str, str]]], program: str = PROGRAM) -> list[tuple[object, ...]]:
    engine = DuckDBBackend()
    try:
        engine.load(parse_program(program, "t.dl"))
        for rows in batches:
            engine.add_facts("parent", rows)
        engine.evaluate()
        # count() is the table's rows: a tuple stored twice would show here, not in query().
        assert engine.count("within") == len(engine.query("within"))
        return list(engine.query("within"))
    finally:
        engine.close()


def test_a_tree_runs_as_a_chain(chains: list[str]) -> None:
    # gpu0 -> node -> rack -> pod, gpu1 -> node: each child has one parent (a key). Ancestors:
    # gpu0: node, rack, pod; gpu1: node, rack, pod; node: rack, pod; rack: pod. 9 tuples.
    rows = [("gpu0", "node"), ("gpu1", "node"), ("node", "rack"), ("rack", "pod")]
    assert _within([rows]) == sorted(
        [
            ("gpu0", "node"),
            ("gpu0", "pod"),
            ("gpu0", "rack"),
            ("gpu1", "node"),
            ("gpu1", "pod"),
            ("gpu1", "rack"),
            ("node", "pod"),
            ("node", "rack"),
            ("rack", "pod"),
        ]
    )
    assert chains == ["parent"]


def test_a_cycle_is_run_again_as_the_union_query(chains: list[str]) -> None:
    # a -> b -> c -> a (keyed: each child once) and d -> a: the chain query goes round the cycle
    # until CHAIN_DEPTH and stops; the UNION query gives every pair within {a, b, c} (9) and d's
    # ancestors a, b, c (3): 12 tuples, each once.
    rows = [("a", "b"), ("b", "c"), ("c", "a"), ("d", "a")]
    found = _within([rows])
    cycle = [(x, y) for x in "abc" for y in "abc"]
    assert found == sorted([*cycle, ("d", "a"), ("d", "b"), ("d", "c")])
    assert chains == ["parent"]


def test_a_chain_deeper_than_the_limit_is_run_again(chains: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # With the limit at 3, n0 -> n1 -> n2 -> n3 -> n4 is 4 steps deep: run again as UNION. Every
    # pair (ni, nj) with i < j is a tuple: 4 + 3 + 2 + 1 = 10.
    monkeypatch.setattr(duckdb_backend, "CHAIN_DEPTH", 3)
    rows = [(f"n{i}", f"n{i + 1}") for i in range(4)]
    assert _within([rows]) == sorted((f"n{i}", f"n{j}") for i in range(5) for j in range(i + 1, 5))
    assert chains == ["parent"]


def test_two_parents_keep_the_union(chains: list[str]) -> None:
    # x has two parents a and b, both under r: within(x, r) comes by both. No key on the child,
    # so no chain query: 5 tuples, (x, r) once.
    rows = [("x", "a"), ("x", "b"), ("a", "r"), ("b", "r")]
    assert _within([rows]) == [("a", "r"), ("b", "r"), ("x", "a"), ("x", "b"), ("x", "r")]
    assert chains == []


def test_a_key_lost_by_a_second_batch_keeps_the_union(chains: list[str]) -> None:
    # Alone, each batch is keyed by the child; together x has parents a and b (as above).
    assert _within([[("x", "a"), ("a", "r")], [("x", "b"), ("b", "r")]]) == [
        ("a", "r"),
        ("b", "r"),
        ("x", "a"),
        ("x", "b"),
        ("x", "r"),
    ]
    assert chains == []


def test_other_shapes_keep_the_union(chains: list[str]) -> None:
    # Right-linear (the step reads parent first, then within of the parent): the same 3 tuples for
    # a -> b -> c, but not the shape the chain query is written for.
    right = PROGRAM.replace("within(X, P), parent(P, A)", "parent(X, P), within(P, A)")
    assert _within([[("a", "b"), ("b", "c")]], right) == [("a", "b"), ("a", "c"), ("b", "c")]
    # The step's join column is the key only if it is the first: parent(A, P) reversed reads by parent.
    reversed_step = PROGRAM.replace("within(X, P), parent(P, A)", "within(X, P), parent(A, P)")
    # a -> b, c -> b: within(a, b), within(c, b), and within(X, P), parent(A, P) adds (a, a), (a, c),
    # (c, a), (c, c) (A any child of the same parent P = b).
    assert _within([[("a", "b"), ("c", "b")]], reversed_step) == [
        ("a", "a"),
        ("a", "b"),
        ("a", "c"),
        ("c", "a"),
        ("c", "b"),
        ("c", "c"),
    ]
    assert chains == []


def _tree(proof: Proof) -> tuple[object, ...]:
    """A proof as reports show it (stage numbers are each engine's own; only their order counts)."""
    return (proof.relation, proof.row, proof.rule, tuple(_tree(p) for p in proof.premises), proof.absent)


def test_a_chain_stores_each_tuple_at_its_round(chains: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # gpu -> node -> rack -> pod. Semi-naive rounds: 1 the parent rows (gpu>node, node>rack,
    # rack>pod), 2 two levels up (gpu>rack, node>pod), 3 gpu>pod. The chain query stores those
    # stages at once, so a proof derives nothing again and reads the same stages as the memory engine.
    rows = [("gpu", "node"), ("node", "rack"), ("rack", "pod")]
    fast, rounds = DuckDBBackend(), make_backend("memory")
    try:
        for engine in (fast, rounds):
            engine.load(parse_program(PROGRAM, "t.dl"))
            engine.add_facts("parent", rows)
            engine.evaluate()
        assert chains == ["parent"] and "within" not in fast._coarse

        def no_rounds(*_: object) -> None:
            raise AssertionError("a proof derived the chain again")

        monkeypatch.setattr(fast, "_derive_in_rounds", no_rounds)
        stage = {row: fast._stage_of("within", row) for row in fast.query("within")}
        first = stage[("gpu", "node")]
        assert first is not None
        assert stage == {
            ("gpu", "node"): first,
            ("node", "rack"): first,
            ("rack", "pod"): first,
            ("gpu", "rack"): first + 1,
            ("node", "pod"): first + 1,
            ("gpu", "pod"): first + 2,
        }
        # within(gpu, pod) <- within(gpu, rack), parent(rack, pod) <- within(gpu, node), parent(node, rack).
        proof = fast.explain("within", ("gpu", "pod"))
        assert proof.height() == 3
        assert _tree(proof) == _tree(rounds.explain("within", ("gpu", "pod")))
    finally:
        fast.close()
        rounds.close()
