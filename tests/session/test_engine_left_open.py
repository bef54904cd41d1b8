"""In the console script a verification leaves its last engine open for the exit; elsewhere every engine is closed.

Closing DuckDB frees every table one by one just before a process that frees nothing at its exit
(verifier.core.exit_soon). Only the engine of the last cluster is left, and the next verification
in the same process closes it before it evaluates anything.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from verifier.core import exit_soon
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.session import verify_run
from verifier.session.verify_run import VerifyRun, verify

ROOT = Path(__file__).resolve().parents[2]
EDGE = ROOT / "inventories" / "edge-soc.yaml"
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"


@pytest.fixture
def closes(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[DuckDBBackend]]:
    """The DuckDB engines closed, in order; none is left open once the test is over."""
    closed: list[DuckDBBackend] = []
    real = DuckDBBackend.close

    def counted(self: DuckDBBackend) -> None:
        closed.append(self)
        real(self)

    monkeypatch.setattr(DuckDBBackend, "close", counted)
    monkeypatch.setattr(verify_run, "_LEFT_OPEN", [])
    yield closed
    verify_run._close_left_open()


def test_a_library_process_closes_every_engine(closes: list[DuckDBBackend]) -> None:
    # edge-soc and the DGX pod are two clusters: two evaluations, both closed.
    verify([EDGE, POD], VerifyRun(engine="duckdb"))
    assert len(closes) == 2 and closes[0] is not closes[1]
    assert verify_run._LEFT_OPEN == []


def test_the_console_script_leaves_the_last_clusters_engine_open(
    closes: list[DuckDBBackend], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(exit_soon, "_ENDS_WITH_COMMAND", True)
    first = verify([EDGE, POD], VerifyRun(engine="duckdb"))
    # The first cluster's engine is closed; the second's is left open, and still answers.
    assert len(closes) == 1
    [left] = verify_run._LEFT_OPEN
    assert left is not closes[0]
    assert left.count("object") > 0
    # A second verification in the process closes it before evaluating, and leaves its own.
    second = verify([POD], VerifyRun(engine="duckdb"))
    assert closes[1] is left
    assert len(closes) == 2 and len(verify_run._LEFT_OPEN) == 1 and verify_run._LEFT_OPEN[0] is not left
    # The pod's finding is the same alone as beside edge-soc: leaving an engine open changes no answer.
    alone = {r.fingerprint for r in second.results}
    assert alone and alone <= {r.fingerprint for r in first.results}


def test_a_failed_verification_closes_its_engine(closes: list[DuckDBBackend], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(exit_soon, "_ENDS_WITH_COMMAND", True)

    def broken(*_args: object, **_kwargs: object) -> object:
        raise RuntimeError("collecting failed")

    monkeypatch.setattr(verify_run, "collect_results", broken)
    with pytest.raises(RuntimeError, match="collecting failed"):
        verify([EDGE], VerifyRun(engine="duckdb"))
    assert len(closes) == 1
    assert verify_run._LEFT_OPEN == []
