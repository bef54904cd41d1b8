"""AUTHZ013 and AUTHZ015 (round 14): a forbid whose condition reads the principal is counted by its scope,
and the message says so.

`forbid (principal, action == Action::"schedule", resource is Node) when { principal.role == "intern" }`
is for interns; its principal scope (bare) matches everyone. The count is of the principals the scope
matches who may schedule on the GPUs, which is more than the forbid was written for: the message said
"principal(s) it is for" (review R-PJ, round 13: an over-claim). A forbid whose condition reads only the
resource (`when { resource.consumer }`) is for every principal its scope matches, and keeps the wording.

Fleet: rack r0 (tenant render) holds nodes ws0, ws1, one RTX-4090 each. Principals: team render (tenant
render), rhea (engineer) and ivy (intern), both in render. tenant-own-hardware (shipped) admits all three
to both GPUs, so each count is 3, first by id ivy < render < rhea.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authorization.incident_inputs import TRAINEE_INVENTORY as INVENTORY
from authorization.incident_inputs import TRAINEE_PRINCIPALS as PRINCIPALS
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

SCOPED = "its scope matches (its condition, not judged here, may be for fewer)"


def _messages(tmp_path: Path, engine: str, rule: str, forbid: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    (tmp_path / "policies" / "nodes.cedar").write_text(forbid)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == rule)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize(
    ("condition", "whom"),
    [
        ('when { principal.role == "intern" }', SCOPED),
        ('unless { principal in Team::"render" }', SCOPED),
        ("when { resource.consumer }", "it is for"),
    ],
)
def test_authz015_count_says_whom(tmp_path: Path, engine: str, condition: str, whom: str) -> None:
    forbid = f'@id("no-node-jobs")\nforbid (principal, action == Action::"schedule", resource is Node) {condition};\n'
    assert _messages(tmp_path, engine, "AUTHZ015", forbid) == [
        "Forbid no-node-jobs is scoped resource is Node, which matches requests on a Node and none on GPUs: its "
        f"condition never applies to a job, and 3 principal(s) {whom} may schedule on GPUs, the first by id ivy, "
        "render, rhea (Cedar, context {})."
    ]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize(
    ("condition", "whom"),
    [('when { principal.role == "intern" }', SCOPED), ("", "the forbid is for")],
)
def test_authz013_count_says_whom(tmp_path: Path, engine: str, condition: str, whom: str) -> None:
    # ws0's one GPU: the three principals of tenant render may schedule on it.
    forbid = f'@id("ws0-off")\nforbid (principal, action == Action::"schedule", resource == Node::"ws0") {condition};\n'
    assert _messages(tmp_path, engine, "AUTHZ013", forbid) == [
        'Forbid ws0-off is scoped resource == Node::"ws0", which matches requests on ws0 itself and none on its '
        f"GPUs: 3 principal(s) {whom} may still schedule on them, the first by id ivy, render, rhea (Cedar, "
        "context {})."
    ]
