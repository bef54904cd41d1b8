"""AUTHZ013's report is linear in forbids: a finding counts the principals a forbid scoped `resource ==`
leaves on its group's GPUs and names the first three by id, never every principal (300 such forbids and
20,000 principals made forbids x principals rows, past engine_memory on the memory engine).

Fleet: rack r-mix holds node n-a (tenant acme) and node n-g (tenant globex), one GPU each. Principals:
team acme (tenant acme) with users a1..a4, team globex (tenant globex) with user g1; a user's tenant is
its team's. tenant-own-hardware admits a principal to GPUs labelled with its own tenant.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: authz013-report}
objects:
  - name: r-mix
    kind: rack
    children:
      - {name: n-a, kind: node, labels: {tenant: acme}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: n-g, kind: node, labels: {tenant: globex}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""

PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: acme, tenant: acme}
  - {id: globex, tenant: globex}
users:
  - {id: a1, teams: [acme], role: engineer}
  - {id: a2, teams: [acme], role: engineer}
  - {id: a3, teams: [acme], role: engineer}
  - {id: a4, teams: [acme], role: engineer}
  - {id: g1, teams: [globex], role: engineer}
"""

TENANTS = """@id("tenant-own-hardware")
permit (principal, action in [Action::"schedule", Action::"reserve"], resource)
when { principal.tenant != "" && resource.tenant == principal.tenant };
"""

ENGINES = ["memory", "duckdb"]


def _authz013(tmp_path: Path, engine: str, forbids: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "schema.cedarschema").write_bytes((ROOT / "policies" / "schema.cedarschema").read_bytes())
    (tmp_path / "policies" / "tenants.cedar").write_text(TENANTS)
    (tmp_path / "policies" / "maintenance.cedar").write_text(forbids)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ013")


def _message(policy: str, scope: str, group: str, count: int, named: str) -> str:
    return (
        f'Forbid {policy} is scoped resource == {scope}::"{group}", which matches requests on {group} itself and '
        f"none on its GPUs: {count} principal(s) the forbid is for may still schedule on them, the first by id "
        f"{named} (Cedar, context {{}})."
    )


@pytest.mark.parametrize("engine", ENGINES)
def test_node_forbid_counts_and_names_three(tmp_path: Path, engine: str) -> None:
    # n-a's GPU admits acme, a1, a2, a3, a4 (tenant acme): 5 principals; by id a1 < a2 < a3 < a4 < acme,
    # so the first three are a1, a2, a3. Twenty copies of the forbid on the same node: twenty findings,
    # each with the same count and names.
    forbids = "".join(
        f'@id("off-{i:02d}")\nforbid (principal, action == Action::"schedule", resource == Node::"n-a");\n'
        for i in range(20)
    )
    assert _authz013(tmp_path, engine, forbids) == [
        _message(f"off-{i:02d}", "Node", "n-a", 5, "a1, a2, a3") for i in range(20)
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_rack_forbid_counts_the_union_of_its_classes(tmp_path: Path, engine: str) -> None:
    # r-mix's GPUs are of two classes: acme's (acme, a1..a4: 5) and globex's (globex, g1: 2). Nobody is
    # on both, so 7 principals; the first three by id of all seven are a1, a2, a3.
    forbids = '@id("rack-off")\nforbid (principal, action == Action::"schedule", resource == Rack::"r-mix");\n'
    assert _authz013(tmp_path, engine, forbids) == [_message("rack-off", "Rack", "r-mix", 7, "a1, a2, a3")]


@pytest.mark.parametrize("engine", ENGINES)
def test_scoped_forbid_counts_its_own_principals(tmp_path: Path, engine: str) -> None:
    # Scoped to Team globex: the forbid is for globex and g1, both admitted to n-g's GPU in r-mix: 2,
    # named g1, globex (g1 < globex). The acme principals it is not for are not counted.
    forbids = (
        '@id("globex-off")\n'
        'forbid (principal in Team::"globex", action == Action::"schedule", resource == Rack::"r-mix");\n'
    )
    assert _authz013(tmp_path, engine, forbids) == [_message("globex-off", "Rack", "r-mix", 2, "g1, globex")]
