"""role_near (AUTHZ018, review R-PJ round 14 of e0736d3): linear in distinct roles plus role literals, and
no finding where a policy compares the principals' own spelling (the site's, not a fault).

e0736d3 compared every distinct role with every literal a policy compares `principal.role` with,
spelling both sides each time: 20,000 distinct roles (a site whose role is a job title) and a policy
listing 100 roles were 2,000,000 pairs (4 s), 1,000 roles 40 s. Roles are now indexed by spelling.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def test_roles_near_spells_each_role_and_literal_once(monkeypatch: pytest.MonkeyPatch) -> None:
    from cedarpy import pst

    from verifier.authorization import facts

    # 2,000 principals with distinct roles Role-0 .. Role-1999 (and one with no role); policy p
    # compares principal.role with the list "role-0" .. "role-99". Role-i is role-i but for case,
    # for i < 100: 100 rows (Role-i, role-i, p). AUTHZ008's reader (intern, contractor) matches no
    # role. Spellings asked: 2,000 roles + 100 literals + 2 trainee roles = 2,102 (e0736d3: each of
    # 2,000 roles against each of 102 literals, both sides: 408,000).
    principals = [SimpleNamespace(role=f"Role-{i}") for i in range(2000)] + [SimpleNamespace(role="")]
    role = pst.GetAttr(base=pst.Var("principal"), attr="role")
    listed = pst.Set(elements=tuple(pst.StringLit(value=f"role-{i}") for i in range(100)))
    tree = SimpleNamespace(clauses=[pst.When(expr=pst.BinaryOp(op="contains", left=listed, right=role))])
    setup = SimpleNamespace(
        principals=SimpleNamespace(sorted=lambda: principals),
        bundle=SimpleNamespace(policies={"p": SimpleNamespace(id="p")}),
    )
    spelt: list[str] = []
    spelling = facts._spelling

    def counted(text: str) -> str:
        spelt.append(text)
        assert len(spelt) <= 2102, "a role or literal spelt more than once"
        return spelling(text)

    monkeypatch.setattr(facts, "_spelling", counted)
    rows = facts._roles_near(setup, {"p": tree})  # type: ignore[arg-type,dict-item]
    assert rows == sorted((f"Role-{i}", f"role-{i}", "p") for i in range(100))
    assert len(spelt) == 2102


INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: r0
    kind: rack
    labels: {tenant: render}
    children:
      - {name: n0, kind: node, children: [{name: gpu0, kind: gpu, model: H100-SXM5-80GB}]}
      - {name: n1, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
"""

PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: render, tenant: render}
users:
  - {id: ivan, teams: [render], role: Intern}
  - {id: rhea, teams: [render], role: engineer}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("spelt", ["Intern", "intern"])
def test_site_spelling_kept_by_its_policy_is_not_reported(tmp_path: Path, engine: str, spelt: str) -> None:
    # The site's interns' forbid compares principal.role == spelt; ivan's role is "Intern" and ivan
    # may schedule on n1's RTX 4090 (tenant render's, consumer). Spelt "Intern", the policy keeps
    # ivan off n0's H100 as written: the site's own spelling, no finding (e0736d3 warned that
    # AUTHZ008/AUTHZ017 read "intern"). Spelt "intern", the policy passes ivan by: one finding, 1
    # principal (ivan), readers AUTHZ008/AUTHZ017 and the policy.
    shutil.copytree(ROOT / "tests" / "rules" / "fixtures" / "AUTHZ018" / "policies", tmp_path / "policies")
    (tmp_path / "policies" / "interns.cedar").write_text(
        '@id("interns-consumer-only")\n'
        'forbid (principal, action in [Action::"schedule", Action::"reserve"], resource)\n'
        f'when {{ principal.role == "{spelt}" && !resource.consumer }};\n'
    )
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    found = [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ018"]
    expected = [
        '1 principal(s) with hardware here hold role "Intern", the first by id ivan: it differs only in case, '
        'spaces or punctuation from role "intern" as read by AUTHZ008/AUTHZ017, interns-consumer-only, which '
        'compare(s) roles exactly and so never take(s) them for "intern".'
    ]
    assert found == ([] if spelt == "Intern" else expected)
