"""AUTHZ016 (review R-PJ, round 13): a tenant label a tenant-reading permit gives to its tenant.

AUTHZ016 says a label spelled as a principal's tenant but for punctuation ("ml_a" for "ml-a") "is not
ml-a's hardware to Cedar". Where the site's permit gives hardware to the teams its label names
(`principal.teams.contains(resource.tenant)`, team ml_a of tenant ml-a), ml-a's principals do reach
the "ml_a" GPUs through a permit that reads the label: the claim is false (a false alarm). A label
that ml-a's principals reach only through a permit that never reads it (a pool of consumer GPUs for
everyone) is still reported.

Fleet: nodes n0 (label tenant ml_a) and n1 (label tenant ml-b), one RTX-4090 each (consumer).
Principals: team ml_a (tenant ml-a), team ml-b (tenant ml-b), users u1 (in ml_a) and u2 (in ml-b).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - {name: n0, kind: node, labels: {tenant: ml_a}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
  - {name: n1, kind: node, labels: {tenant: ml-b}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""

PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: ml_a, tenant: ml-a}
  - {id: ml-b, tenant: ml-b}
users:
  - {id: u1, teams: [ml_a], role: engineer}
  - {id: u2, teams: [ml-b], role: engineer}
"""

TEAM_PERMIT = """@id("team-hardware")
permit (principal, action in [Action::"schedule", Action::"reserve"], resource)
when { principal.teams.contains(resource.tenant) };
"""

POOL_PERMIT = """@id("consumer-pool")
permit (principal, action == Action::"schedule", resource) when { resource.consumer };
"""

ENGINES = ["memory", "duckdb"]


def _authz016(tmp_path: Path, engine: str, policies: dict[str, str]) -> list[str]:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "schema.cedarschema").write_bytes((ROOT / "policies" / "schema.cedarschema").read_bytes())
    for name, text in policies.items():
        (tmp_path / "policies" / name).write_text(text)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ016")


@pytest.mark.parametrize("engine", ENGINES)
def test_label_a_tenant_permit_gives_its_tenant_is_not_reported(tmp_path: Path, engine: str) -> None:
    # team-hardware admits ml_a and u1 (teams contain "ml_a", tenant ml-a) to n0: ml-a's hardware.
    assert _authz016(tmp_path, engine, {"teams.cedar": TEAM_PERMIT}) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_label_reached_only_through_a_pool_is_reported(tmp_path: Path, engine: str) -> None:
    # The shipped tenant permit compares the label with principal.tenant: "ml_a" is no principal's
    # tenant, so ml-a's principals reach n0 only through consumer-pool, which never reads the label.
    tenants = (ROOT / "policies" / "tenants.cedar").read_text()
    assert _authz016(tmp_path, engine, {"tenants.cedar": tenants, "pool.cedar": POOL_PERMIT}) == [
        'n0: labelled tenant "ml_a", which is no principal\'s tenant, spelled as tenant "ml-a" is but for case, '
        "spaces or punctuation: the tenants' permits compare labels exactly, so it is not ml-a's hardware to Cedar."
    ]
