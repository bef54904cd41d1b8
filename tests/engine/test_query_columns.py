"""Backend.query with `columns`: only the positions asked for, in that order, a row per tuple matched
(duplicates kept), on every engine. Every expectation is worked out by hand from the facts below.
"""

from __future__ import annotations

import pytest

from verifier.engine.ast import Row
from verifier.engine.backend import Backend
from verifier.engine.checks import check_program
from verifier.engine.engines import make_backend
from verifier.engine.parser import parse_program

PROGRAM = """
.input slot(job: symbol, node: symbol, model: symbol, gpus: number)
.decl fits(job: symbol, node: symbol, model: symbol, gpus: number)
fits(J, N, M, G) :- slot(J, N, M, G), G >= 2.
"""

SLOTS: list[Row] = [
    ("a", "n0", "h100", 8),
    ("a", "n1", "h100", 8),
    ("a", "n1", "a100", 1),
    ("b", "n0", "h100", 4),
    ("b", "n2", "a100", 4),
]


@pytest.fixture(params=["duckdb", "memory", "pydatalog"])
def engine(request: pytest.FixtureRequest) -> Backend:
    program = parse_program(PROGRAM, "t.dl")
    check_program(program)
    backend = make_backend(request.param)
    backend.load(program)
    backend.add_facts("slot", SLOTS)
    backend.evaluate()
    return backend


def test_columns_picked_in_the_order_asked(engine: Backend) -> None:
    # fits: every slot of 2 GPUs or more, i.e. all but ("a", "n1", "a100", 1). Job a's rows: n0 and
    # n1, both h100 with 8 GPUs; as (gpus, node): (8, n0), (8, n1).
    assert engine.query("fits", {0: "a"}, True, (3, 1)) == [(8, "n0"), (8, "n1")]
    # Job b, node only: n0 and n2.
    assert sorted(engine.query("fits", {0: "b"}, False, (1,))) == [("n0",), ("n2",)]


def test_columns_keep_a_row_per_tuple(engine: Backend) -> None:
    # Every fits row's model: h100 (a n0), h100 (a n1), h100 (b n0), a100 (b n2): duplicates stay.
    assert engine.query("fits", None, True, (2,)) == [("a100",), ("h100",), ("h100",), ("h100",)]
    # A column may be asked twice; the bound column can be left out.
    assert engine.query("fits", {2: "a100"}, True, (1, 1, 3)) == [("n2", "n2", 4)]


def test_columns_without_a_match_or_unknown(engine: Backend) -> None:
    assert engine.query("fits", {0: "c"}, True, (1,)) == []
    with pytest.raises(Exception, match="position 4"):
        engine.query("fits", None, True, (1, 4))
