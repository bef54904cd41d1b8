"""AUTHZ015 (review R-PJ, round 13): a forbid scoped `resource is Node` for every action.

`forbid (principal, action, resource is Node) when { principal.role == "intern" }` keeps interns from
draining or administering whole nodes: requests on a Node are what it is for, and a drain is asked on
the node (`topolog authorize --resource <node>`, the gate's /v1/authorize). It names no action, so it
was not written for jobs; calling it a scheduling forbid that "closes nothing" (an error) is a false
alarm. A forbid that names schedule (`action == Action::"schedule"`, or the shipped house style
`action in [Action::"schedule", Action::"reserve"]`) while scoped `resource is Node` is still
reported: scheduling is asked on GPUs only.

Fleet: rack r0 (tenant render) holds nodes ws0, ws1, one GPU each. Principals: team render (tenant
render), rhea (engineer) and ivy (intern), both in render. tenant-own-hardware (shipped) admits all
three to both GPUs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authorization.incident_inputs import TRAINEE_INVENTORY as INVENTORY
from authorization.incident_inputs import TRAINEE_PRINCIPALS as PRINCIPALS
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

ENGINES = ["memory", "duckdb"]


def _authz015(tmp_path: Path, engine: str, forbid: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    (tmp_path / "policies" / "nodes.cedar").write_text(forbid)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ015")


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("scope", ["resource is Node", 'resource is Node in Rack::"r0"'])
def test_forbid_for_every_action_on_nodes_is_not_reported(tmp_path: Path, engine: str, scope: str) -> None:
    forbid = f'@id("interns-no-node-ops")\nforbid (principal, action, {scope}) when {{ principal.role == "intern" }};\n'
    assert _authz015(tmp_path, engine, forbid) == []


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "actions", ['action == Action::"schedule"', 'action in [Action::"schedule", Action::"reserve"]']
)
def test_forbid_naming_schedule_is_reported(tmp_path: Path, engine: str, actions: str) -> None:
    # The forbid's principal scope is bare: all three principals are judged, and each may schedule on
    # r0's GPUs (tenant render): 3, first by id ivy < render < rhea.
    forbid = f'@id("no-node-jobs")\nforbid (principal, {actions}, resource is Node) when {{ resource.consumer }};\n'
    assert _authz015(tmp_path, engine, forbid) == [
        "Forbid no-node-jobs is scoped resource is Node, which matches requests on a Node and none on GPUs: its "
        "condition never applies to a job, and 3 principal(s) it is for may schedule on GPUs, the first by id "
        "ivy, render, rhea (Cedar, context {})."
    ]
