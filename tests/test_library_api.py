"""The library API, used as a pybatfish user would: only `from verifier import ...`.

Every expected value is read off the shipped inventories by hand (see each comment).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from verifier import TopologError, audit, authorize, explain, load, place, query, render, verify

ROOT = Path(__file__).resolve().parent.parent
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
NOTEBOOKS = ROOT / "inventories" / "jobs" / "notebooks.yaml"


def test_verify_finds_the_pods_documented_fault() -> None:
    # dgx-h100-pod.yaml overrides dgx03's gpu2<->nvsw1 bond to 3 of its 4 NVLinks, state
    # degraded: the one fault the pod carries (inventories/README.md). The fabric manager's
    # default takes gpu2 out of NVLink peer-to-peer: an error (TOPO005) naming the link and GPU.
    report = verify(POD)
    assert [(f.rule, f.severity, f.subjects) for f in report.findings] == [
        ("TOPO005", "error", ("dgx03/gpu2<->dgx03/nvsw1", "dgx03/gpu2"))
    ]
    assert report.exit_code == 1  # --fail-on error by default
    doc = json.loads(render(report, "json"))
    assert [f["rule"] for f in doc["findings"]] == ["TOPO005"]


def test_query_and_explain_on_one_loaded_model() -> None:
    # 8 DGX H100 nodes of 8 GPUs; inside a node every GPU reaches the 4 NVSwitches, and no
    # NVLink leaves a node: 8 domains named after their gpu0, and dgx03/gpu2 alone (its degraded
    # NVSwitch link takes it out of NVLink under the fabric manager's default).
    with load(POD) as model:
        result = query(model, "nvlink_domain(G, D)")
        assert result.variables == ("G", "D")
        assert len(result.rows) == 64
        assert sorted({str(d) for _g, d in result.rows}) == sorted([f"dgx0{i}/gpu0" for i in range(8)] + ["dgx03/gpu2"])
        # A query is data: a mistyped relation is an error with its place, not an empty answer.
        with pytest.raises(TopologError, match="nvlink_domian"):
            query(model, "nvlink_domian(G, D)")
        why = explain(model, 'within("dgx00/gpu0", "pod0")')
        [item] = why.items
        assert item.proof.relation == "within" and item.proof.row == ("dgx00/gpu0", "pod0")
        assert "within" in render(why, "text")


def test_place_fails_closed_and_places_with_authorization() -> None:
    # notebooks-mig wants 12 MIG 1g.10gb slices of one node as Team research: an H100 holds 7,
    # so 2 GPUs; each of the 8 DGX nodes (tenant research) can host it.
    report = place(POD, [NOTEBOOKS])
    [jp] = report.jobs
    assert jp.job.name == "notebooks-mig" and jp.hosting == 8
    assert report.exit_code == 0 and report.authorization_checked


def test_audit_and_authorize_read_the_policies_not_the_rules() -> None:
    # ivan is an intern (principals.yml); interns-consumer-only forbids schedule on a GPU that
    # is not consumer-class, and a100-n0/gpu0 is an A100 (ECC memory: not consumer).
    decision = authorize(MIXED, "ivan", "schedule", "a100-n0/gpu0")
    assert decision.decision.word == "DENY" and decision.decision.reasons == ("interns-consumer-only",)
    assert decision.exit_code == 1
    result = audit(MIXED, actions=["schedule"])
    assert 'User::"ivan"' in result.rows
    assert list(result.actions) == ["schedule"]


def test_audit_evaluates_no_rule() -> None:
    # Cedar's entities come from the inventory itself: no engine is ever started for an audit.
    code = (
        "import sys; from verifier import audit, authorize; "
        f"audit({str(MIXED)!r}); authorize({str(MIXED)!r}, 'ivan', 'schedule', 'a100-n0/gpu0'); "
        "print(sorted(m for m in sys.modules if m.endswith('_backend')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
