"""AUTHZ014 (review R-PJ, round 14, of fa57d56): the incident exception read by what the incident changes.

fa57d56 read each forbid clause as a whole boolean: `a || b` letting in chose only where both sides
did, and one clause that chose spared the whole forbid. The incident changes only what reads
`context`; a side that does not (`resource.quarantined`, `principal.tenant == "x"`, a literal
`false`) has the value it had in the context {}, where the forbid applied, so it is not what lets
anyone in. Two consequences, both checked here:

- false alarms (fa57d56 reported, base spared): a team rota written as `if context has incident
  then ... && principal in Team::"oncall" else false`, as `when { resource.quarantined && !(...) }`,
  or beside a context-free `||` side;
- a miss (base and fa57d56 spared): a forbid with a second `unless` clause that reads no principal
  (`unless { context has incident && context.incident } unless { principal.on_call }`) is lifted
  for everyone in an incident: any one true `unless` lifts a forbid.

Fleet and principals as in test_incident_checks_review59.py: rack r0 (tenant render) holds node ws0
(quarantined) and ws1, one GPU each; team render (tenant render), team oncall (tenant render, role
sre), rhea (engineer, in render), otto (sre, in render and oncall); nobody has `on_call: true`.
tenant-own-hardware (shipped) admits render's principals to r0's GPUs. The permit admits team
oncall (and otto, a member) to quarantined hardware in an incident.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authorization.incident_inputs import INVENTORY, PRINCIPALS
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

PERMIT = (
    '@id("oncall-incident-access")\n'
    'permit (principal in Team::"oncall", action in [Action::"schedule", Action::"drain"], resource)\n'
    "when { resource.quarantined && context has incident && context.incident };\n"
)

ENGINES = ["memory", "duckdb"]


def _authz014(tmp_path: Path, engine: str, forbid: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    policy = f'@id("quarantine-closed")\nforbid (principal, action, resource) {forbid};\n{PERMIT}'
    (tmp_path / "policies" / "quarantine.cedar").write_text(policy)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ014")


# Each forbid is lifted in an incident for team oncall (and otto) alone: the site's rota is the team.
Q = "when { resource.quarantined } "
INCIDENT = "context has incident && context.incident"
TEAM = 'principal in Team::"oncall"'
TEAM_ROTAS = {
    "if-then-else": Q + f"unless {{ if context has incident then context.incident && {TEAM} else false }}",
    "when-not": f"when {{ resource.quarantined && !({INCIDENT} && {TEAM}) }}",
    "context-free-or": Q + f'unless {{ principal.tenant == "nobody" || ({INCIDENT} && {TEAM}) }}',
    "two-unless": Q + f"unless {{ {INCIDENT} && {TEAM} }} unless {{ principal.on_call }}",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rota", sorted(TEAM_ROTAS))
def test_team_rota_is_not_reported(tmp_path: Path, engine: str, rota: str) -> None:
    # Cedar lifts each forbid in the context {incident: true} for members of team oncall only (the
    # literal false never holds; resource.quarantined holds on ws0 in both contexts; nobody's tenant
    # is "nobody"; nobody is on call): team oncall and otto, whom the site chose.
    assert _authz014(tmp_path, engine, TEAM_ROTAS[rota]) == []


# Each forbid is lifted in an incident for all four principals: tenant-own-hardware admits them all.
EVERYONE = {
    "second-unless": Q + f"unless {{ {INCIDENT} }} unless {{ principal.on_call }}",
    "if-then-else": Q + "unless { if context has incident then context.incident else false }",
    "context-free-or": Q + f'unless {{ principal.tenant == "nobody" || ({INCIDENT}) }}',
    "when-not": f"when {{ resource.quarantined && !({INCIDENT}) }}",
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("case", sorted(EVERYONE))
def test_exception_for_everyone_is_reported(tmp_path: Path, engine: str, case: str) -> None:
    # In an incident the context-reading clause lifts the forbid whoever asks (for second-unless the
    # first unless holds for all: any true unless lifts a forbid); tenant-own-hardware admits all four
    # (tenant render), the permit team oncall and otto. 4 principals, first by id oncall < otto <
    # render (rhea fourth); permitted by both policies.
    assert _authz014(tmp_path, engine, EVERYONE[case]) == [
        "Quarantined hardware opens during an incident: 1 object(s) carry label quarantine "
        '"true", the first by id ws0, yet in the context '
        "{incident: true} 4 principal(s) not on call may schedule on their GPUs, the first by id oncall, otto, "
        "render (permitted by oncall-incident-access, tenant-own-hardware)."
    ]


def test_nested_if_then_else_is_read_once_per_node(monkeypatch: pytest.MonkeyPatch) -> None:
    # fa57d56 read an if-then-else's condition both ways (does it choose when true, when false), and
    # a condition that is itself an if-then-else twice again: 2**depth readings. A permit `when { e40
    # }` with e0 = principal.on_call and e(k+1) = `if ek then principal.on_call else principal.on_call`
    # did not finish (depth 22: over 120 s; base 3.5 s). Each node is now read at most once per answer
    # asked of it (holds true, holds false): 40 if-then-else nodes and 81 `principal.on_call` nodes
    # (2 per level + e0), so at most 2 x 121 = 242 readings.
    from cedarpy import pst

    from verifier.authorization import facts

    on_call = pst.GetAttr(base=pst.Var("principal"), attr="on_call")
    expr: pst.Expr = on_call
    for _ in range(40):
        expr = pst.IfThenElse(cond=expr, then_expr=on_call, else_expr=on_call)
    calls = []
    reading = facts._chooses_at

    def counted(e: object, holds: bool, memo: dict[tuple[str, int, bool], bool]) -> bool:
        calls.append(e)
        assert len(calls) <= 242, "a node read more than once per answer"  # fails fast, not 2**40 readings
        return reading(e, holds, memo)

    monkeypatch.setattr(facts, "_chooses_at", counted)
    # Every branch is principal.on_call: true for the rota alone, whichever way the conditions go.
    assert facts._chooses(expr, True, {}) is True
    assert 0 < len(calls) <= 242
