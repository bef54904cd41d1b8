"""grouped_rows: a relation's rows grouped by some columns, the same from DuckDB (grouped in SQL)
and from the memory engine (grouped from `query`). Expected values worked out by hand beside them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from verifier.engine.ast import Row
from verifier.engine.backend import Grouped, grouped_rows
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

PROGRAM = """
.input gpu(name: symbol, node: symbol, fabric: number)
.decl fast(name: symbol, node: symbol, fabric: number)
fast(G, N, F) :- gpu(G, N, F), F >= 400.
"""
GPUS: list[Row] = [
    ("n1/g0", "n1", 400),
    ("n1/g1", "n1", 400),
    ("n1/g2", "n1", 200),
    ("n2/g0", "n2", 800),
]


@pytest.fixture(params=["duckdb", "memory"])
def engine(request: pytest.FixtureRequest) -> Iterator[Any]:
    e = make_backend(request.param)
    e.load(parse_program(PROGRAM, "t.dl"))
    e.add_facts("gpu", GPUS)
    e.evaluate()
    yield e
    e.close()


def settled(groups: Grouped) -> list[tuple[Row, list[Row]]]:
    """Groups and their rows come in no set order: sorted to compare."""
    return sorted((key, sorted(rows)) for key, rows in groups)


def test_grouped_by_node_and_fabric_collects_the_names(engine: Any) -> None:
    # (node, fabric) of each GPU: (n1, 400) twice, (n1, 200) once, (n2, 800) once: three groups.
    assert settled(grouped_rows(engine, "gpu", [1, 2], [0])) == [
        (("n1", 200), [("n1/g2",)]),
        (("n1", 400), [("n1/g0",), ("n1/g1",)]),
        (("n2", 800), [("n2/g0",)]),
    ]


def test_collected_columns_stay_together_row_by_row(engine: Any) -> None:
    # Grouped by node, each row's (name, fabric) kept as one pair: n1 holds g0/400, g1/400, g2/200.
    assert settled(grouped_rows(engine, "gpu", [1], [0, 2])) == [
        (("n1",), [("n1/g0", 400), ("n1/g1", 400), ("n1/g2", 200)]),
        (("n2",), [("n2/g0", 800)]),
    ]


def test_bound_positions_filter_a_derived_relation(engine: Any) -> None:
    # fast keeps fabric >= 400: n1/g0, n1/g1, n2/g0. Bound to node n1: one group, fabric 400, two names.
    assert settled(grouped_rows(engine, "fast", [2], [0], {1: "n1"})) == [((400,), [("n1/g0",), ("n1/g1",)])]
    # A node no GPU is on, and a number where a symbol belongs: no rows, no error.
    assert grouped_rows(engine, "fast", [2], [0], {1: "n9"}) == []
    assert grouped_rows(engine, "fast", [2], [0], {1: 7}) == []
