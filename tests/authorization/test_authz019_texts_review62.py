"""AUTHZ019's one finding per policy and attribute (review R-HI, round 16).

7d6f51c5 grouped the texts one policy compares a resource's attribute with into one finding, but each
text kept a row of its own, and the group joined their `values` strings as they were: "H100" (the start
of three models) and "h100-sxm5-80gb" (one of them in other case) printed H100-SXM5-80GB twice in
"it is one of: ...". The models meant are listed once each.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "rules" / "fixtures" / "AUTHZ019"

POLICY = """@id("interns-no-h100")
forbid (principal, action == Action::"schedule", resource)
when { principal.role == "intern" && (resource.model == "H100" || resource.model == "h100-sxm5-80gb") };
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_models_meant_by_several_texts_are_named_once(tmp_path: Path, engine: str) -> None:
    shutil.copy(FIXTURE / "fail.yaml", tmp_path / "inv.yaml")
    shutil.copy(FIXTURE / "principals.yml", tmp_path / "principals.yml")
    (tmp_path / "policies").mkdir()
    shutil.copy(FIXTURE / "fail.policies" / "schema.cedarschema", tmp_path / "policies")
    shutil.copy(FIXTURE / "fail.policies" / "tenants.cedar", tmp_path / "policies")
    (tmp_path / "policies" / "maintenance.cedar").write_text(POLICY, encoding="utf-8")
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ019"]
    # One policy, one attribute: one finding. The catalogue's GPU models starting with "h100" in any
    # case are H100-NVL-94GB, H100-PCIE-80GB and H100-SXM5-80GB (catalog.yaml); "h100-sxm5-80gb" means
    # the last of them. Each is named once, sorted; the texts are quoted, "H100" before "h100-..."
    # (capitals sort first).
    assert len(found) == 1, found
    message = found[0]["message"]
    assert (
        'compares resource.model with "H100", "h100-sxm5-80gb", which no resource\'s model ever is '
        "(it is one of: H100-NVL-94GB, H100-PCIE-80GB, H100-SXM5-80GB):"
    ) in message, message


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_finding_of_one_text_keeps_its_baseline_fingerprint(tmp_path: Path, engine: str) -> None:
    # Before 7d6f51c5 each text was a finding grouped by (policy, attribute, literal): its fingerprint
    # (verifier.checks.baseline's recipe) was the rule, the subject and the group's quoted values other
    # than subjects, attribute and literal (the text as written). A baseline holding the fixture's two
    # findings (interns-no-h100 on "H100"; no-jobs-on-drained on "drain", which now shares its finding
    # with "Drained") keeps the one-text finding; the merged one is new.
    from verifier.checks.baseline import fingerprint

    shutil.copy(FIXTURE / "fail.yaml", tmp_path / "inv.yaml")
    shutil.copy(FIXTURE / "principals.yml", tmp_path / "principals.yml")
    shutil.copytree(FIXTURE / "fail.policies", tmp_path / "policies")
    old = [
        ("interns-no-h100", [("attribute", "model"), ("literal", "H100")]),
        ("no-jobs-on-drained", [("attribute", "state"), ("literal", "drain")]),
    ]
    rows = [
        {"fingerprint": fingerprint("AUTHZ019", [p], v), "rule": "AUTHZ019", "subjects": [p], "message": ""}
        for p, v in old
    ]
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps({"schemaVersion": 1, "tool": "topolog", "findings": rows}), encoding="utf-8")
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine, "--baseline", str(baseline)
    )
    assert code in (0, 1), err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ019"]
    assert [f["subjects"] for f in found] == [["no-jobs-on-drained"]], found
