"""AUTHZ014 (review R-PJ, round 13): a site whose incident rota is not the `on_call` attribute.

AUTHZ014 reports principals not on call (`on_call` false) whom the context {incident: true} lets
onto quarantined hardware. Sites write the rota other ways too: a team (`principal in
Team::"oncall"`), the team list (`principal.teams.contains("oncall")`), a role (`principal.role ==
"sre"`) or a named user. The exception is then written for those principals, and reporting them as
"not on call" is a false alarm (an error). An exception that lost its principal condition (the
shipped fault: quarantine-closed's `unless` without `principal.on_call`) or widened it to the tenant
(`principal.tenant == resource.tenant`) still lets in principals nobody chose: still reported.

Fleet: rack r0 (tenant render) holds node ws0 (quarantined) and ws1, one GPU each. Principals: team
render (tenant render), team oncall (tenant render), rhea (engineer, in render), otto (sre, in render
and oncall); nobody has `on_call: true`. tenant-own-hardware (shipped) admits render's principals to
r0's GPUs.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from authorization.incident_inputs import INVENTORY, PRINCIPALS
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _quarantine(exception: str, permit_scope: str = "principal", permit_condition: str = "") -> str:
    """quarantine-closed and oncall-incident-access (policies/quarantine.cedar) with the rota written
    as `exception` (the forbid's unless and the permit's condition) and `permit_scope`."""
    extra = f" && {permit_condition}" if permit_condition else ""
    return (
        '@id("quarantine-closed")\n'
        "forbid (principal, action, resource) when { resource.quarantined }\n"
        f"unless {{ context has incident && context.incident{exception} }};\n"
        '@id("oncall-incident-access")\n'
        f'permit ({permit_scope}, action in [Action::"schedule", Action::"drain"], resource)\n'
        f"when {{ resource.quarantined && context has incident && context.incident{extra} }};\n"
    )


def _authz014(tmp_path: Path, engine: str, quarantine: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    (tmp_path / "policies" / "quarantine.cedar").write_text(quarantine)
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ014")


def _message(count: int, named: str, policies: str) -> str:
    return (
        "Quarantined hardware opens during an incident: 1 object(s) carry label quarantine "
        '"true", the first by id ws0, yet in the context '
        f"{{incident: true}} {count} principal(s) not on call may schedule on their GPUs, the first by id {named} "
        f"(permitted by {policies})."
    )


ENGINES = ["memory", "duckdb"]

# Each rota lets in team oncall and otto (in oncall, role sre) or otto alone: the principals the site
# chose, not an exception that lost its condition.
ROTAS = {
    "team": (' && principal in Team::"oncall"', 'principal in Team::"oncall"', ""),
    "teams-attribute": (' && principal.teams.contains("oncall")', "principal", 'principal.teams.contains("oncall")'),
    "role": (' && principal.role == "sre"', "principal", 'principal.role == "sre"'),
    "named-user": (' && principal == User::"otto"', 'principal == User::"otto"', ""),
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rota", sorted(ROTAS))
def test_rota_written_without_on_call_is_not_reported(tmp_path: Path, engine: str, rota: str) -> None:
    exception, scope, condition = ROTAS[rota]
    assert _authz014(tmp_path, engine, _quarantine(exception, scope, condition)) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_exception_without_principal_condition_is_reported(tmp_path: Path, engine: str) -> None:
    # The shipped fault: the unless reads no principal, so the incident lifts the forbid for all four
    # principals, and tenant-own-hardware admits them all (each is of tenant render); the permit reads
    # nobody either. 4 principals, first by id oncall < otto < render (rhea is fourth); permitted by
    # both policies (each admits every one of them).
    assert _authz014(tmp_path, engine, _quarantine("")) == [
        _message(4, "oncall, otto, render", "oncall-incident-access, tenant-own-hardware")
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_exception_widened_to_the_tenant_is_reported(tmp_path: Path, engine: str) -> None:
    # The unless admits every principal of the hardware's tenant (render: all four) and the permit
    # keeps the team rota: the forbid is lifted for all four, tenant-own-hardware admits all four.
    # 4 principals, first three oncall, otto, render; permitted by tenant-own-hardware (all four) and
    # oncall-incident-access (oncall and otto).
    quarantine = _quarantine(" && principal.tenant == resource.tenant", 'principal in Team::"oncall"')
    assert _authz014(tmp_path, engine, quarantine) == [
        _message(4, "oncall, otto, render", "oncall-incident-access, tenant-own-hardware")
    ]


def test_trainee_roles_agree_with_authz008() -> None:
    # incident_permitted keeps rows for on-call principals of the trainee roles only; AUTHZ017 judges
    # AUTHZ008's trainee_role. A role added to one list and not the other would lose AUTHZ017 findings.
    from verifier.authorization.facts import _TRAINEE_ROLES

    rule = (ROOT / "rules" / "authz" / "AUTHZ008_trainee_administers.dl").read_text()
    assert set(re.findall(r'^trainee_role\("([^"]+)"\)\.', rule, re.MULTILINE)) == _TRAINEE_ROLES


# Round 14 (PJ): the exception is read by meaning, not by the words in it. `a || principal.on_call`
# lifts the forbid for everyone in an incident though it names the rota; a rota written as a list of
# roles chooses as `principal.role == "sre"` does.
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    ("exception", "count", "named"),
    [(" || principal.on_call", 4, "oncall, otto, render"), (' || principal in Team::"oncall"', 2, "render, rhea")],
)
def test_exception_or_the_rota_is_reported(tmp_path: Path, engine: str, exception: str, count: int, named: str) -> None:
    # `context has incident && context.incident || X` parses as `(... && context.incident) || X`: in an
    # incident the first side holds for all four principals, whoever is on the rota, and the permit reads
    # nobody. With X = principal.on_call (nobody on call) the context {} denies all four: 4 principals,
    # first oncall, otto, render, permitted by both policies, as the shipped fault. With X = `principal in
    # Team::"oncall"`, team oncall and otto pass the forbid outside an incident too (tenant-own-hardware
    # lets them in: AUTHZ003's, not judged here); render and rhea are let in by the incident alone.
    assert _authz014(tmp_path, engine, _quarantine(exception)) == [
        _message(count, named, "oncall-incident-access, tenant-own-hardware")
    ]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "exception",
    [
        ' && ["sre", "oncall"].contains(principal.role)',
        ' && (principal.on_call == true || principal in Team::"oncall")',
        ' && (if principal.on_call then true else principal.role == "sre")',
    ],
)
def test_rota_written_by_meaning_is_not_reported(tmp_path: Path, engine: str, exception: str) -> None:
    # Each exception lets in only principals chosen by role, team or the rota (team oncall has role
    # sre; otto is sre and in oncall): the site's rota, as in test_rota_written_without_on_call_is_not
    # _reported. The permit keeps the team rota.
    assert _authz014(tmp_path, engine, _quarantine(exception, 'principal in Team::"oncall"')) == []
