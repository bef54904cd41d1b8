"""A run that reports no check (a query, a placement) neither loads what checks' `@needs` read nor asks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engine.ast import Query
from verifier.engine.memory_backend import MemoryBackend
from verifier.session.session import load_rules, needs_queries, open_evaluation

ROOT = Path(__file__).resolve().parents[2]
EDGE = ROOT / "inventories" / "edge-soc.yaml"


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = MemoryBackend.holds

    def counted(self: MemoryBackend, query: Query) -> bool:
        asked.append(query.text)
        return real(self, query)

    monkeypatch.setattr(MemoryBackend, "holds", counted)
    return asked


def test_a_verification_judges_each_check_it_has_data_for(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _asked(monkeypatch)
    with open_evaluation([EDGE], load_rules(), engine="memory") as ev:
        # edge-soc comes with no jobs: PLACE001's `@needs: job(_, _, _)` finds nothing.
        assert "PLACE001" in ev.not_applicable
        # Each different @needs is asked once: checks that need the same thing share the answer.
        # PLACE001 and PLACE002 both need `job(_, _, _)`: one question, and neither applies.
        bodies = {q.body for q in needs_queries(ev.checks, ev.program).values()}
        assert len(asked) == len(set(asked)) == len(bodies) < sum(1 for c in ev.checks if c.needs is not None)
        assert asked.count("job(_, _, _)") == 1
        assert {"PLACE001", "PLACE002"} <= ev.not_applicable


def test_without_judging_checks_nothing_is_asked_and_none_is_called_not_applicable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _asked(monkeypatch)
    with open_evaluation([EDGE], load_rules(), engine="memory", judge_checks=False) as ev:
        assert ev.not_applicable == frozenset()
        assert asked == []
