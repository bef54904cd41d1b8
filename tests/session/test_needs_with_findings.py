"""A check whose `@needs` has no answer but whose rule still fires is judged, not "not applicable".

A report never says both: a check listed as having nothing to judge while it reports a finding
reads as a contradiction.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"


def _check(tmp_path: Path, cid: str, needs: str, kind: str) -> Path:
    """A warning check that reports every object of `kind`, asking `needs` first."""
    path = tmp_path / f"{cid}.dl"
    relation = f"re_{cid.lower()}"
    path.write_text(
        f"# @id: {cid}\n# @severity: warning\n# @summary: a test check.\n# @remediation: none.\n"
        f"# @reports: {relation}\n# @needs: {needs}\n# @subjects: g\n# @message: {{g}}.\n"
        f'.decl {relation}(g: symbol)\n{relation}(G) :- object(G, "{kind}").\n'
    )
    return path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_check_with_findings_is_not_called_not_applicable(tmp_path: Path, engine: str) -> None:
    # dgx-h100-pod holds NVSwitch chips and no TPU (it has no object of kind "tpu").
    # RE991 needs a TPU (no answer) but reports every NVSwitch: 8 nodes x 4 chips (the template's
    # `nvsw{i}` line, count 4, stamped on dgx00..dgx07), all written on one line, so one finding.
    # It found something: it is judged (failed), not "not applicable".
    # RE992 needs a TPU and reports TPUs: nothing to judge, still "not applicable".
    paths = [
        _check(tmp_path, "RE991", 'object(_, "tpu")', "nvswitch"),
        _check(tmp_path, "RE992", 'object(_, "tpu")', "tpu"),
    ]
    rules = [a for p in paths for a in ("--rules", str(p))]
    ids = ["--check", "RE991", "--check", "RE992"]
    code, out, err = run_cli("verify", str(POD), *rules, *ids, "--engine", engine, "--format", "json")
    assert code == 0, err  # warnings only: passes under the default --fail-on error
    report = json.loads(out)
    assert report["summary"]["notApplicable"] == ["RE992"]
    assert report["summary"]["findings"] == 1
    (finding,) = report["findings"]
    assert finding["rule"] == "RE991"
    assert len(finding["subjects"]) == 8 * 4

    code, out, err = run_cli("verify", str(POD), *rules, *ids, "--engine", engine)
    assert code == 0, err
    assert "from 2 checks (1 not applicable: nothing to judge)" in out + err
