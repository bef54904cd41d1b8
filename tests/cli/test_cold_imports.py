"""A plain `verify` of a shipped example imports neither the graph library nor the code of options it
was not given (issue 46: every module is paid for by every fresh CI runner).

Each check starts a fresh interpreter with the cache off (a CI runner's first run) and names
modules, never times. networkx may sit in sys.modules as a deferred stub (verifier.core.lazy), so
what is checked is whether its package ran: `networkx.algorithms`, which its import loads. While
verifier/engine/shipped_program.json lags behind rules/ the pack is parsed, and stratifying it
imports networkx: tests/engine/test_shipped_program.py fails then, and this test says so and stops.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import modules_after

ROOT = Path(__file__).resolve().parents[2]
POD = str(ROOT / "inventories" / "dgx-h100-pod.yaml")
JOBS = str(ROOT / "inventories" / "jobs" / "training.yaml")

NOT_FOR_A_PLAIN_VERIFY = {
    "networkx.algorithms": "node-class max-flows run in plain Python (verifier.facts.small_graph)",
    "verifier.sources.jobs": "--jobs / --principal-from only",
    "verifier.placement.place": "--jobs with a what-if only",
    "verifier.sources.importers.build": "--from only (the option's choices are the importers' KINDS)",
}


def _modules_after(args: list[str]) -> set[str]:
    """Every module loaded once `topolog ARGS...` has run in a fresh interpreter, the cache off."""
    return modules_after(args, {"TOPOLOG_CACHE_DIR": ""})


def test_a_plain_verify_imports_none_of_them() -> None:
    loaded = _modules_after(["--quiet", "verify", POD])
    if "verifier.engine.parser" in loaded:
        pytest.skip("shipped_program.json is not current (test_shipped_program fails): the pack was parsed")
    assert "verifier.facts.small_graph" in loaded  # the node classes were worked out (no cache to read them from)
    assert {m: why for m, why in NOT_FOR_A_PLAIN_VERIFY.items() if m in loaded} == {}


def test_the_same_detection_sees_jobs_when_given() -> None:
    # With --jobs the jobs package runs: the check above would see it if a plain run loaded it.
    loaded = _modules_after(["--quiet", "verify", POD, "--jobs", JOBS])
    assert "verifier.sources.jobs" in loaded


def test_the_same_detection_sees_the_importers_when_asked_for() -> None:
    # With --from the importer runs (and fails: the pod is YAML, not nvidia-smi output), its code loaded.
    loaded = _modules_after(["--quiet", "verify", POD, "--from", "nvidia-smi"])
    assert "verifier.sources.importers.build" in loaded
