"""`--engine auto`: small inputs evaluate in memory, and a join that outgrows it starts over in DuckDB."""

from __future__ import annotations

from pathlib import Path

import pytest

import verifier.engine.engines as engines
from verifier.session.session import open_evaluation

POD = Path(__file__).resolve().parents[2] / "inventories" / "dgx-h100-pod.yaml"


def _findings(engine: str) -> tuple[str, list[tuple[str, ...]]]:
    with open_evaluation([POD], engine=engine) as ev:
        rows = [tuple(map(str, r)) for c in ev.checks for r in ev.engine.query(c.reports)]
        return ev.engine.name, sorted(rows)


def test_a_shipped_example_runs_in_memory_with_the_same_answers_as_duckdb() -> None:
    # The pod has about 3,000 fact rows, under MEMORY_ENGINE_ROWS.
    name, auto = _findings("auto")
    assert name == "memory"
    assert auto == _findings("duckdb")[1]


def test_a_join_that_outgrows_the_memory_engine_starts_over_in_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    # A cap of 10 bindings: the pack's first join over the pod's 247 objects passes it.
    monkeypatch.setattr(engines, "AUTO_MAX_BINDINGS", 10)
    name, auto = _findings("auto")
    assert name == "duckdb"
    assert auto == _findings("duckdb")[1]


def test_a_deep_recursion_starts_over_in_duckdb(monkeypatch: pytest.MonkeyPatch) -> None:
    from verifier.engine.backend import OutgrewEngine
    from verifier.engine.parser import parse_program

    # The closure of a chain of 40 nodes takes 40 rounds (39 lengths of path, then nothing new):
    # past a cap of 10 the memory engine gives up, and only when --engine auto chose it.
    program = parse_program(
        ".input edge(a: number, b: number)\n.decl path(a: number, b: number)\n"
        "path(X, Y) :- edge(X, Y).\npath(X, Z) :- path(X, Y), edge(Y, Z).\n",
        "chain.dl",
    )
    edges = [(i, i + 1) for i in range(39)]
    monkeypatch.setattr(engines, "AUTO_MAX_ROUNDS", 10)
    capped = engines.make_backend("memory", chosen_by_auto=True)
    capped.load(program)
    capped.add_facts("edge", edges)
    with pytest.raises(OutgrewEngine) as caught:
        capped.evaluate()
    assert "takes more than 10 rounds" in caught.value.diagnostics[0].message
    plain = engines.make_backend("memory")
    plain.load(program)
    plain.add_facts("edge", edges)
    plain.evaluate()
    assert plain.count("path") == 40 * 39 // 2  # every pair i < j of the 40 nodes
