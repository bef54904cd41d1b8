"""AUTHZ014 reads a rota written with `like`, `containsAny` or `containsAll` as Cedar does (round 61).

Base (42fed5f) read none of these forms, so a forbid lifted in an incident for team oncall alone was
reported as opening quarantined hardware to principals off the rota (a false alarm). Each form is
read from its text, exactly: a pattern of wildcards alone and a set the principal's attribute must
fit inside (`[...].containsAll(principal.teams)`) let in more than a chosen few, and
are reported.

Fleet and principals (authorization/incident_inputs.py): rack r0 (tenant render) holds ws0
(quarantined) and ws1, one RTX-4090 each; rhea (engineer, teams [render]) and otto (sre, teams
[render, oncall]); teams render and oncall (role sre), in no team themselves (`teams` empty). Nobody
is on call. tenant-own-hardware admits all four to r0's GPUs; the forbid below closes ws0 outside an
incident.

Who each forbid lets onto ws0 in the context {incident: true}, by hand:
- `role like "sr*"`, `like "s*e"`: principals of role sre: otto and team oncall; `like "*"`: all four.
- `teams.containsAny(["oncall"])`: otto; `["oncall", "x"].containsAny(principal.teams)`: otto;
  `[principal.role].containsAny(["sre"])`: otto, team oncall; `teams.containsAll(["oncall"])`: otto.
- `["render", "oncall"].containsAll(principal.teams)`: all four (each one's teams are inside it,
  the teams' own empty sets included); `principal.tenant like "ren*"`: all four, tenant render (a
  tenant is everyone's, no rota: as `principal.tenant == "render"` is read).
Nobody is on call, so a form that lets all four in is reported as "4 principal(s) not on call".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from authorization.incident_inputs import INVENTORY, PRINCIPALS
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ["memory", "duckdb"]
Q = "when { resource.quarantined } "
INCIDENT = "context has incident && context.incident"


def _authz014(tmp_path: Path, engine: str, forbid: str) -> list[str]:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    (tmp_path / "policies" / "quarantine.cedar").write_text(
        f'@id("quarantine-closed")\nforbid (principal, action, resource) {forbid};\n'
    )
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ014")


ROTAS = {
    "like-prefix": 'principal.role like "sr*"',
    "like-inner": 'principal.role like "s*e"',
    "contains-any-teams": 'principal.teams.containsAny(["oncall"])',
    "contains-any-reversed": '["oncall", "x"].containsAny(principal.teams)',
    "contains-any-role": '[principal.role].containsAny(["sre"])',
    "contains-all-teams": 'principal.teams.containsAll(["oncall"])',
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("rota", sorted(ROTAS))
def test_a_rota_written_so_is_not_reported(tmp_path: Path, engine: str, rota: str) -> None:
    assert _authz014(tmp_path, engine, Q + f"unless {{ {INCIDENT} && {ROTAS[rota]} }}") == []


EVERYONE = {
    "like-star": 'principal.role like "*"',
    "fits-inside": '["render", "oncall"].containsAll(principal.teams)',
    "tenant-like": 'principal.tenant like "ren*"',
}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("form", sorted(EVERYONE))
def test_a_form_that_lets_everyone_in_is_reported(tmp_path: Path, engine: str, form: str) -> None:
    found = _authz014(tmp_path, engine, Q + f"unless {{ {INCIDENT} && {EVERYONE[form]} }}")
    assert len(found) == 1
    assert "4 principal(s) not on call" in found[0], found
