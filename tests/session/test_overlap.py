"""Evaluating the inventory's strata on a thread while authorization and graph facts are computed
(verifier/session/overlap.py): the same report as one evaluation, the same errors, nothing left running.

At fleet scale only (OVERLAP_ROWS input rows); here the threshold is lowered to 0 so that a shipped
example takes the overlapped path, and each run is compared with the one evaluation it replaces.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Set
from pathlib import Path

import pytest
from cli_helpers import run_cli

import verifier.session.overlap as overlap
import verifier.session.session as session
from verifier.core.errors import SourceLocation, TopologError
from verifier.engine import duckdb_backend
from verifier.engine.duckdb_backend import DuckDBBackend

POD = Path(__file__).resolve().parents[2] / "inventories" / "dgx-h100-pod.yaml"
MIXED = POD.with_name("mixed-fleet.yaml")


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Set[str]]]:
    """The relations each evaluate_without() call was told to wait for, in order."""
    calls: list[Set[str]] = []
    original = DuckDBBackend.evaluate_without

    def spy(self: DuckDBBackend, pending: Set[str]) -> None:
        calls.append(pending)
        original(self, pending)

    monkeypatch.setattr(DuckDBBackend, "evaluate_without", spy)
    yield calls


def _verify(*args: str, before: tuple[str, ...] = ()) -> tuple[int, str, str]:
    return run_cli(*before, "verify", *args, env={"TOPOLOG_CACHE_DIR": ""})


@pytest.mark.parametrize("inventory", [POD, MIXED], ids=["dgx-h100-pod", "mixed-fleet"])
def test_the_overlapped_evaluation_reports_what_one_evaluation_does(
    inventory: Path, monkeypatch: pytest.MonkeyPatch, started: list[Set[str]]
) -> None:
    args = (str(inventory), "--engine", "duckdb", "--format", "json")
    one = _verify(*args)
    assert started == []  # a shipped example is far under OVERLAP_ROWS
    monkeypatch.setattr(overlap, "OVERLAP_ROWS", 0)
    both = _verify(*args)
    # It ran, waiting for the decisions and the summaries.
    assert len(started) == 1 and {"permitted", "pcie_path"} <= started[0]
    # The same findings with the same proofs (json carries each finding's proof tree), byte for byte.
    assert both == one
    assert '"premises"' in both[1]


def test_a_limit_reached_on_the_thread_is_the_error_one_evaluation_reports(
    monkeypatch: pytest.MonkeyPatch, started: list[Set[str]]
) -> None:
    # 10 tuples: the pod's first strata (evaluated on the thread) derive more than that.
    before = ("--input-limit", "derived_tuples=10")
    args = (str(POD), "--engine", "duckdb")
    one = _verify(*args, before=before)
    monkeypatch.setattr(overlap, "OVERLAP_ROWS", 0)
    both = _verify(*args, before=before)
    assert len(started) == 1
    code, _out, err = both
    assert code == 2 and "over the limit derived_tuples = 10" in err and "Traceback" not in err
    assert both == one  # the same message, naming the same relation with the same counts


def test_a_failure_after_the_thread_is_evaluated_again_in_one_go(
    monkeypatch: pytest.MonkeyPatch, started: list[Set[str]]
) -> None:
    # No stage kept for the strata left for later: the first of them that is followed by another
    # stratum fails, and the run starts over as one evaluation, which reports as usual.
    monkeypatch.setattr(duckdb_backend, "LATER_STAGES", 0)
    args = (str(POD), "--engine", "duckdb", "--format", "json")
    one = _verify(*args)
    monkeypatch.setattr(overlap, "OVERLAP_ROWS", 0)
    assert _verify(*args) == one
    assert len(started) == 1


def test_an_error_computing_the_late_facts_stops_the_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(overlap, "OVERLAP_ROWS", 0)
    problem = TopologError.at(SourceLocation(str(POD), 1), "made to fail while the rules are evaluated")
    closed: list[DuckDBBackend] = []
    close = DuckDBBackend.close

    def graph_facts(*_args: object) -> object:
        raise problem

    def recorded_close(self: DuckDBBackend) -> None:
        closed.append(self)
        close(self)

    monkeypatch.setattr(session, "graph_facts", graph_facts)
    monkeypatch.setattr(DuckDBBackend, "close", recorded_close)
    with pytest.raises(TopologError) as raised:
        session.open_evaluation([POD], engine="duckdb")
    assert raised.value is problem
    assert len(closed) == 1  # the engine that evaluated the first strata meanwhile
    assert not [t for t in threading.enumerate() if t.name == "topolog-late-facts"]
