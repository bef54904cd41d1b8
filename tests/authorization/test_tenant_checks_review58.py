"""Review of AUTHZ006-AUTHZ013 (R-PJ): designs real sites write that the checks took for faults.

- AUTHZ006 (error): a user in two tenants' teams (acme-ml and globex-ml) has tenant acme, the first
  team's; the tenants' permit written as team membership (`principal.teams.contains(resource.tenant)`)
  lets her onto globex's rack through globex-ml. That crosses no tenant: she is globex's too.
- AUTHZ012: a break-glass account (no team, no tenant, on the incident rota) acts during an incident
  through a permit that reads `principal.on_call`; the decisions in the context {} do not show it.
- AUTHZ008: a permit naming the contractor itself (`principal == User::"vic"`), or its role
  (`principal.role == "contractor"`), is the grant meant for it.
- AUTHZ009: a team nested in its company's team with a tenant of its own (a research group with its
  own rack) is a sub-tenant by design.
- AUTHZ010: an owner label that no policy reads (an e-mail address) gives nobody anything: no policy
  grants owners what it names.
- AUTHZ013: a forbid scoped `resource == Node` and to one user is judged for that user only: those it
  is not for stay on the node's GPUs by design.
Each has its control: the same input with the fault the check is for still gives the finding.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: review58}
objects:
  - name: r-acme
    kind: rack
    labels: {tenant: acme, owner: acme-ml}
    children:
      - {name: a0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
  - name: r-globex
    kind: rack
    labels: {tenant: globex, owner: globex-ml}
    children:
      - {name: g0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
  - name: r-res
    kind: rack
    labels: {tenant: acme-research}
    children:
      - {name: x0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""

TEAMS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: acme, tenant: acme}
  - {id: acme-ml, teams: [acme]}
  - {id: globex, tenant: globex}
  - {id: globex-ml, teams: [globex]}
  - {id: acme-research, tenant: RESEARCH_TENANT, teams: [acme]}
  - {id: res-vision, teams: [acme-research]}
  - {id: sre}
users:
  - {id: alice, teams: [acme-ml], role: engineer}
  - {id: bob, teams: [globex-ml], role: engineer}
  - {id: hana, teams: [acme-ml, globex-ml], role: engineer}
  - {id: rae, teams: [acme-research], role: engineer}
  - {id: vic, teams: [acme], role: contractor}
  - {id: breakglass-ops, role: sre, on_call: ON_CALL}
"""

BY_TEAM = """@id("tenant-by-team")
permit (principal, action in [Action::"schedule", Action::"reserve"], resource)
when { resource.tenant != "" && principal.teams.contains(resource.tenant) };
"""
LOOSENED = """@id("tenant-by-team")
permit (principal, action in [Action::"schedule", Action::"reserve"], resource)
when { resource.tenant != "" && principal.tenant != "" };
"""
OPERATIONS = """@id("sre-drain")
permit (principal in Team::"sre", action == Action::"drain", resource);

@id("breakglass")
permit (principal, action, resource)
when { context has incident && context.incident && principal.on_call };

@id(\"VIC_POLICY\")
permit (VIC_SCOPE, action == Action::"drain", resource in Rack::"r-acme");
"""


def _findings(
    tmp_path: Path,
    engine: str,
    *,
    tenants: str = BY_TEAM,
    on_call: str = "true",
    research_tenant: str = "acme-research",
    vic_scope: str = 'principal == User::"vic"',
    acme_owner: str = "acme-ml",
    extra: str = "",
) -> set[tuple[str, str]]:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "schema.cedarschema").write_bytes((ROOT / "policies" / "schema.cedarschema").read_bytes())
    (tmp_path / "policies" / "tenants.cedar").write_text(tenants)
    vic_policy = "vic-drains-acme" if vic_scope.startswith("principal ==") else "acme-drains-acme"
    ops = OPERATIONS.replace("VIC_POLICY", vic_policy).replace("VIC_SCOPE", vic_scope)
    (tmp_path / "policies" / "operations.cedar").write_text(ops + extra)
    people = TEAMS.replace("RESEARCH_TENANT", research_tenant).replace("ON_CALL", on_call)
    (tmp_path / "principals.yml").write_text(people)
    (tmp_path / "inv.yaml").write_text(INVENTORY.replace("owner: acme-ml", f"owner: {acme_owner}"))
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine, "--fail-on", "error"
    )
    assert code in (0, 1), err
    return {(f["rule"], f["message"]) for f in json.loads(out)["findings"] if f["rule"].startswith("AUTHZ")}


ENGINES = ["memory", "duckdb"]


def _rules(found: set[tuple[str, str]], rule: str) -> list[str]:
    return sorted(m for r, m in found if r == rule)


@pytest.mark.parametrize("engine", ENGINES)
def test_membership_tenant_permit_crosses_no_tenant(tmp_path: Path, engine: str) -> None:
    # tenant-by-team admits alice (teams acme-ml, acme) to r-acme, bob to r-globex, rae (acme-research,
    # acme) to r-acme and r-res, hana (acme-ml, acme, globex-ml, globex) to r-acme and r-globex. hana's
    # tenant attribute is acme (her first team's) but she is in globex through globex-ml; rae's is
    # acme-research and she is in acme through acme-research (res-vision likewise, one level deeper).
    # Everyone admitted is of the rack's tenant by a team: no AUTHZ006.
    assert _rules(_findings(tmp_path, engine), "AUTHZ006") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_loosened_tenant_permit_still_crosses(tmp_path: Path, engine: str) -> None:
    # Control: `principal.tenant != ""` admits everyone with a tenant to every labelled rack: alice
    # (acme) to r-globex, bob (globex) to r-acme, ... One finding on the permit.
    found = _rules(_findings(tmp_path, engine, tenants=LOOSENED), "AUTHZ006")
    assert len(found) == 1 and found[0].startswith("Permit tenant-by-team names no principal")


@pytest.mark.parametrize("engine", ENGINES)
def test_break_glass_account_on_the_rota_is_not_locked_out(tmp_path: Path, engine: str) -> None:
    # breakglass-ops: no team, no tenant, named by no policy, permitted nothing in the context {}; but
    # on_call, and the breakglass permit reads principal.on_call: it acts in an incident.
    assert _rules(_findings(tmp_path, engine), "AUTHZ012") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_account_off_the_rota_belongs_nowhere(tmp_path: Path, engine: str) -> None:
    # Control: the same account off the rota reaches nothing at all.
    found = _rules(_findings(tmp_path, engine, on_call="false"), "AUTHZ012")
    assert found == [
        "User breakglass-ops is in no team, has no tenant and no policy names it: it may do nothing on this inventory."
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_contractor_named_by_its_own_permit(tmp_path: Path, engine: str) -> None:
    # vic-drains-acme names User::"vic" (a contractor): the grant is meant for vic. sre-drain does not
    # reach vic (not in sre); breakglass needs an incident. No AUTHZ008.
    assert _rules(_findings(tmp_path, engine), "AUTHZ008") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_contractor_through_a_team_permit(tmp_path: Path, engine: str) -> None:
    # Control: scoped `principal in Team::"acme"`, the drain reaches vic through his team (and alice,
    # hana, rae, acme-ml, acme-research, acme, who are no trainees): one finding, vic's drain.
    found = _rules(_findings(tmp_path, engine, vic_scope='principal in Team::"acme"'), "AUTHZ008")
    assert found == [
        "vic (role contractor) may drain GPUs, permitted by acme-drains-acme (Cedar, context {}): "
        "interns and contractors hold an administrative action."
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_sub_tenant_team_is_a_design(tmp_path: Path, engine: str) -> None:
    # acme-research (tenant acme-research, its own rack r-res) is in acme (tenant acme); the teams of
    # tenant acme-research are acme-research and res-vision, which is inside it (and takes its tenant
    # from it, as rae does): no team outside it holds the tenant. No AUTHZ009.
    assert _rules(_findings(tmp_path, engine), "AUTHZ009") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_team_with_another_teams_tenant_is_judged(tmp_path: Path, engine: str) -> None:
    # Control: acme-research given globex's tenant (copied): globex and globex-ml, outside it, hold
    # globex (res-vision, inside it, takes globex from it, among its teams' then); its team acme has
    # tenant acme. One finding on acme-research.
    found = _rules(_findings(tmp_path, engine, research_tenant="globex"), "AUTHZ009")
    assert len(found) == 1 and found[0].startswith('acme-research has tenant "globex", but its teams acme')


OWNERS = """@id("owners-administer")
permit (principal, action in [Action::"drain", Action::"administer"], resource)
when { resource.owner != "" && principal.teams.contains(resource.owner) };
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_owner_label_no_policy_reads(tmp_path: Path, engine: str) -> None:
    # r-acme's owner label is an e-mail address, no principal's id; but tenant-by-team, sre-drain,
    # breakglass and vic-drains-acme read no resource.owner: the label grants nothing to anyone by
    # design. No AUTHZ010.
    assert _rules(_findings(tmp_path, engine, acme_owner="ml-infra@acme.example"), "AUTHZ010") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_owner_label_a_policy_reads(tmp_path: Path, engine: str) -> None:
    # Control: with owners-administer (it reads resource.owner) the same label names nobody it could
    # grant: one finding, r-acme (r-globex's owner globex-ml is a team).
    found = _rules(
        _findings(tmp_path, engine, tenants=BY_TEAM + OWNERS, acme_owner="ml-infra@acme.example"), "AUTHZ010"
    )
    assert len(found) == 1 and found[0].startswith('r-acme: labelled owner "ml-infra@acme.example"')


@pytest.mark.parametrize("engine", ENGINES)
def test_forbid_eq_for_one_user_who_cannot_reach(tmp_path: Path, engine: str) -> None:
    # bob is in globex-ml, globex alone: tenant-by-team keeps him off a0 (rack r-acme, tenant acme)
    # whatever the forbid's scope. alice and others may schedule there, but the forbid is not for them.
    extra = (
        '@id("bob-off-a0")\nforbid (principal == User::"bob", action == Action::"schedule", resource == Node::"a0");\n'
    )
    assert _rules(_findings(tmp_path, engine, extra=extra), "AUTHZ013") == []


@pytest.mark.parametrize("engine", ENGINES)
def test_forbid_eq_for_a_team_names_its_members_only(tmp_path: Path, engine: str) -> None:
    # Control: scoped to Team globex, the forbid is for globex, globex-ml, bob and hana (in globex through
    # globex-ml). Of them only hana may schedule on a0/gpu0 (in acme through acme-ml): one finding, hana.
    extra = (
        '@id("globex-off-a0")\n'
        'forbid (principal in Team::"globex", action == Action::"schedule", resource == Node::"a0");\n'
    )
    assert _rules(_findings(tmp_path, engine, extra=extra), "AUTHZ013") == [
        'Forbid globex-off-a0 is scoped resource == Node::"a0", which matches requests on a0 itself and none '
        "on its GPUs: 1 principal(s) the forbid is for may still schedule on them, the first by id hana "
        "(Cedar, context {})."
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_contractor_permitted_by_a_permit_for_its_role(tmp_path: Path, engine: str) -> None:
    # contractors-drain-acme compares principal.role with "contractor": written for vic's role. With
    # vic-drains-acme (naming vic) nothing else reaches vic's drain or administer: no AUTHZ008.
    extra = (
        '@id("contractors-drain-acme")\n'
        'permit (principal, action == Action::"drain", resource in Rack::"r-acme")\n'
        'when { principal.role == "contractor" };\n'
    )
    assert _rules(_findings(tmp_path, engine, extra=extra), "AUTHZ008") == []


NEGATED_WITH_ROLE_GUARD = """@id("tenant-own-no-interns")
permit (principal, action in [Action::"schedule", Action::"reserve"], resource)
when { principal.tenant != "" && resource.tenant != principal.tenant && principal.role != "intern" };
"""
SRE_EVERYWHERE = """@id("sre-reserve-anywhere")
permit (principal, action == Action::"reserve", resource)
when { principal.role == "sre" };
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_negated_tenant_permit_with_a_role_guard_crosses(tmp_path: Path, engine: str) -> None:
    # The tenants' permit with `==` turned `!=`, and a guard keeping interns out: alice (acme, engineer)
    # may schedule on r-globex, bob (globex) on r-acme and r-res. `principal.role != "intern"` singles
    # out nobody (every other role is let in): one finding on the permit.
    found = _rules(_findings(tmp_path, engine, tenants=NEGATED_WITH_ROLE_GUARD), "AUTHZ006")
    assert len(found) == 1 and found[0].startswith("Permit tenant-own-no-interns names no principal")


@pytest.mark.parametrize("engine", ENGINES)
def test_permit_for_a_role_is_a_grant(tmp_path: Path, engine: str) -> None:
    # Control: `when { principal.role == "sre" }` is written for sre: breakglass-ops (role sre, no
    # tenant) may reserve on r-acme, r-globex and r-res, by design. No AUTHZ006.
    found = _rules(_findings(tmp_path, engine, tenants=BY_TEAM + SRE_EVERYWHERE), "AUTHZ006")
    assert found == []
