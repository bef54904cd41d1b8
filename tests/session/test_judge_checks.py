"""A run that reports no check (a query, a placement) neither loads what checks' `@needs` read nor asks them."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engine.memory_backend import MemoryBackend
from verifier.session.session import load_rules, open_evaluation

ROOT = Path(__file__).resolve().parents[2]
EDGE = ROOT / "inventories" / "edge-soc.yaml"


def _asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    asked: list[str] = []
    real = MemoryBackend.holds

    def counted(self: MemoryBackend, query: object) -> bool:
        asked.append(str(query))
        return real(self, query)  # type: ignore[arg-type]

    monkeypatch.setattr(MemoryBackend, "holds", counted)
    return asked


def test_a_verification_judges_each_check_it_has_data_for(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _asked(monkeypatch)
    with open_evaluation([EDGE], load_rules(), engine="memory") as ev:
        # edge-soc comes with no jobs: PLACE001's `@needs: job(_, _, _)` finds nothing.
        assert "PLACE001" in ev.not_applicable
        assert len(asked) == sum(1 for c in ev.checks if c.needs is not None)


def test_without_judging_checks_nothing_is_asked_and_none_is_called_not_applicable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked = _asked(monkeypatch)
    with open_evaluation([EDGE], load_rules(), engine="memory", judge_checks=False) as ev:
        assert ev.not_applicable == frozenset()
        assert asked == []
