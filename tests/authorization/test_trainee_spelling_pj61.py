"""AUTHZ008 and AUTHZ017 judge a site's own consistent spelling of a trainee role (round 61).

A site whose principals hold role `Intern` and whose policies compare `principal.role == "Intern"`
spells the role its own way, consistently: AUTHZ018 is quiet there (review R-PJ round 14), and base
(42fed5f) also skipped its interns in AUTHZ008 and AUTHZ017, whose trainee_role is exactly "intern"
or "contractor". So an `Intern` in team sre, which drains anything (policies/operations.cedar,
sre-drain), went unreported, where the same principal spelt `intern` is reported.

By hand: rack r0 (tenant render), node n0 with one RTX 4090. Team render (tenant render) and team
sre; ivan (role Intern, teams render and sre), rhea (engineer, render). sre-drain permits ivan to
drain n0's GPU, naming team sre, not ivan: one AUTHZ008 finding for ivan (drain, sre-drain). The
interns' forbid compares "Intern" (the site's spelling). Spelt "intern" on both sides, the same
finding names role intern. A site whose policy compares "intern" while ivan holds `Intern` is
AUTHZ018's (one finding), and AUTHZ008 leaves ivan to it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: r0
    kind: rack
    labels: {tenant: render}
    children:
      - {name: n0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""


def _principals(role: str) -> str:
    return f"""apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {{id: render, tenant: render}}
  - {{id: sre, tenant: render}}
users:
  - {{id: ivan, teams: [render, sre], role: {role}}}
  - {{id: rhea, teams: [render], role: engineer}}
"""


def _findings(tmp_path: Path, engine: str, held: str, compared: str) -> dict[str, list[str]]:
    shutil.copytree(ROOT / "policies", tmp_path / "policies")
    (tmp_path / "policies" / "interns.cedar").write_text(
        '@id("interns-consumer-only")\n'
        'forbid (principal, action in [Action::"schedule", Action::"reserve"], resource)\n'
        f'when {{ principal.role == "{compared}" && !resource.consumer }};\n'
    )
    (tmp_path / "principals.yml").write_text(_principals(held))
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    found: dict[str, list[str]] = {}
    for f in json.loads(out)["findings"]:
        if f["rule"] in ("AUTHZ008", "AUTHZ018"):
            found.setdefault(f["rule"], []).append(f["message"])
    return found


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("spelt", ["Intern", "intern"])
def test_a_consistent_spelling_is_judged_as_a_trainee(tmp_path: Path, engine: str, spelt: str) -> None:
    found = _findings(tmp_path, engine, spelt, spelt)
    assert sorted(found) == ["AUTHZ008"], found
    (message,) = found["AUTHZ008"]
    assert message.startswith(f"ivan (role {spelt}) may drain GPUs, permitted by sre-drain"), message


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_spelling_the_policy_passes_by_is_one_finding(tmp_path: Path, engine: str) -> None:
    found = _findings(tmp_path, engine, "Intern", "intern")
    assert sorted(found) == ["AUTHZ018"], found
