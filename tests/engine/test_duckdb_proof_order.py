"""Which instance a DuckDB proof step shows: earliest premises first, then by value as strings.

The instances of a proof step are ordered in Python (symbols decoded by list index) up to
INSTANCE_ROWS of them, and in SQL past that (`DuckDBBackend._instance_rows`). Both must pick the
same instance, the one the memory engine picks too, whatever order the symbols were interned in.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from verifier.engine import duckdb_backend
from verifier.engine.ast import Row
from verifier.engine.backend import Backend, Proof
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

ANY_TARGET = """
.input link(src: symbol, dst: symbol)
.decl linked(src: symbol)
linked(X) :- link(X, _).
"""

COUNTED = """
.input member(group: symbol, name: symbol, size: number)
.decl total(group: symbol, n: number)
total(G, sum(S)) :- member(G, N, S).
"""


@pytest.fixture(params=["python", "sql"])
def duckdb(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[Backend]:
    if request.param == "sql":
        # No instance is few enough to be ordered in Python: every step takes the SQL ordering.
        monkeypatch.setattr(duckdb_backend, "INSTANCE_ROWS", 0)
    engine = make_backend("duckdb")
    yield engine
    engine.close()


def _explain(engine: Backend, program: str, relation: str, facts: Sequence[Row], row: Row) -> Proof:
    engine.load(parse_program(program, "t.dl"))
    engine.add_facts(relation, facts)
    engine.evaluate()
    head = "linked" if relation == "link" else "total"
    return engine.explain(head, row)


def test_the_smallest_instance_by_text_not_by_symbol_id(duckdb: Backend) -> None:
    # Interned in the order given: "z" gets a smaller id than "m", which gets a smaller one than "b".
    # All three link facts are inputs (stage 0), so the earliest-premise key ties and the values
    # decide as strings: ("a", "b") < ("a", "m") < ("a", "z").
    facts = [("a", "z"), ("a", "m"), ("a", "b")]
    proof = _explain(duckdb, ANY_TARGET, "link", facts, ("a",))
    assert [p.fact for p in proof.premises] == ['link("a", "b")']
    memory = make_backend("memory")
    try:
        assert _explain(memory, ANY_TARGET, "link", facts, ("a",)).premises == proof.premises
    finally:
        memory.close()


def test_an_aggregate_lists_the_first_members_of_its_group_by_text(duckdb: Backend) -> None:
    # 60 members m00..m59 of group g, size 1 each, interned from m59 down to m00 (ids in reverse
    # text order): total(g, 60). The proof lists AGGREGATE_PREMISES (50) of them, the first by
    # text: m00..m49, in that order.
    facts = [("g", f"m{i:02d}", 1) for i in reversed(range(60))]
    proof = _explain(duckdb, COUNTED, "member", facts, ("g", 60))
    assert duckdb_backend.AGGREGATE_PREMISES == 50
    assert [p.row for p in proof.premises] == [("g", f"m{i:02d}", 1) for i in range(50)]
