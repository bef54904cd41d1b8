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
