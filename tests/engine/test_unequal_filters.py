"""Rows that every rule reading them rejects with a `!=` are left out before loading (pruning.Excluded).

BW001 reads `gpu_pair_bottleneck(A, B, C, M), C != "NV"`: in a fleet of NVSwitch nodes every GPU pair
is NV, so none of its rows can match. Every expectation below is worked out by hand from the rules.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.engine.ast import Row
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.memory_backend import MemoryBackend
from verifier.engine.parser import parse_program
from verifier.engine.pruning import Excluded, constant_filters, filter_rows

PROGRAM = """
.input pair(a: symbol, b: symbol, class: symbol, mbps: number)
.input state(x: symbol, s: symbol)
.input gpu(x: symbol)
.input want(x: symbol, s: symbol)
.decl off_nvlink(a: symbol, b: symbol, class: symbol)
off_nvlink(A, B, C) :- pair(A, B, C, _), C != "NV".
.decl slow_sys(a: symbol)
slow_sys(A) :- pair(A, _, "SYS", M), M < 100.
.decl working(x: symbol)
working(X) :- gpu(X), state(X, S), S != "down", "drained" != S.
.decl calm(x: symbol, s: symbol)
calm(X, S) :- want(X, S), !state(X, S), S != "down".
"""

PAIRS: list[Row] = [
    ("g0", "g1", "NV", 450_000),
    ("g0", "g2", "SYS", 50),
    ("g1", "g2", "PIX", 120),
]
STATES: list[Row] = [("g0", "down"), ("g1", "drained"), ("g2", "degraded"), ("g2", "g0")]
GPUS: list[Row] = [("g0",), ("g1",), ("g2",)]
WANTS: list[Row] = [("g0", "down"), ("g1", "drained"), ("g1", "ok"), ("g2", "degraded")]


def test_filters_from_unequal_comparisons() -> None:
    program = parse_program(PROGRAM, "t.dl")
    filters = constant_filters(program, set())
    # pair, column 2: off_nvlink says C != "NV", slow_sys asks for "SYS": together every value but NV.
    # state, column 1: working says S is neither "down" nor "drained"; calm's negation says S != "down"
    # only: together only "down" can match neither. want, column 1: calm alone, S != "down".
    # gpu: read with a variable, no filter.
    assert filters == {
        "pair": [(2, frozenset({"NV"}))],
        "state": [(1, frozenset({"down"}))],
        "want": [(1, frozenset({"down"}))],
    }
    assert all(isinstance(values, Excluded) for rows in filters.values() for _, values in rows)
    # A relation read elsewhere with any value there (a query: `unfiltered`) is loaded whole.
    assert constant_filters(program, {"pair", "want"}) == {"state": [(1, frozenset({"down"}))]}


def test_plain_and_stamped_rows_lose_the_excluded_values() -> None:
    nv = Excluded({"NV"})
    assert filter_rows(PAIRS, [(2, nv)]) == PAIRS[1:]
    assert filter_rows(PAIRS, [(2, nv), (0, frozenset({"g1"}))]) == PAIRS[2:]
    # Two nodes of one plan: gpu0-gpu1 over NV, gpu0-gpu2 over SYS (the class a constant of the plan).
    block = StampBlock.of(
        [(0, 1, "NV", 450_000), (0, 2, "SYS", 50)], 4, 2, [["a/g0", "a/g1", "a/g2"], ["b/g0", "b/g1", "b/g2"]]
    )
    stamped = StampedRows([("c/g0", "c/g1", "NV", 1)], [block])
    kept = filter_rows(stamped, [(2, nv)])
    assert sorted(kept) == [("a/g0", "a/g2", "SYS", 50), ("b/g0", "b/g2", "SYS", 50)]
    assert isinstance(kept, StampedRows) and not kept.plain  # the block kept as a block, one plan row
    # On a column of names an Excluded filter is passed over (nothing is left out, nothing wrong).
    assert sorted(filter_rows(stamped, [(0, Excluded({"a/g0"}))])) == sorted(stamped)


def _derived(engine: DuckDBBackend | MemoryBackend, facts: Mapping[str, Sequence[Row]]) -> dict[str, list[Row]]:
    engine.load(parse_program(PROGRAM, "t.dl"))
    for relation, rows in facts.items():
        engine.add_facts(relation, rows)
    engine.evaluate()
    return {r: sorted(engine.query(r)) for r in ("off_nvlink", "slow_sys", "working", "calm")}


def test_filtered_rows_derive_what_all_rows_derive() -> None:
    program = parse_program(PROGRAM, "t.dl")
    filters = constant_filters(program, set())
    whole: dict[str, Sequence[Row]] = {"pair": PAIRS, "state": STATES, "gpu": GPUS, "want": WANTS}
    kept = {r: filter_rows(rows, filters.get(r, ())) for r, rows in whole.items()}
    # Left out: the NV pair, g0's "down" state and g0's wish for "down".
    assert (len(kept["pair"]), len(kept["state"]), len(kept["want"])) == (2, 3, 3)
    # By hand: off_nvlink: the SYS and PIX pairs. slow_sys: g0 (SYS at 50 < 100). working: g2 (degraded,
    # and "g0"; g0 is down, g1 drained). calm: a wish that is not "down" and not the GPU's state: g1's
    # "ok" (g1 is drained, so its wish for "drained" is not calm; g2 is degraded, as it wishes).
    expected = {
        "off_nvlink": [("g0", "g2", "SYS"), ("g1", "g2", "PIX")],
        "slow_sys": [("g0",)],
        "working": [("g2",)],
        "calm": [("g1", "ok")],
    }
    for facts in (whole, kept):
        duck = DuckDBBackend()
        try:
            assert _derived(duck, facts) == expected
        finally:
            duck.close()
        assert _derived(MemoryBackend(), facts) == expected
