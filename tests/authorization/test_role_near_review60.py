"""role_near (AUTHZ018, review R-PJ round 14 of e0736d3): linear in distinct roles plus role literals.

e0736d3 compared every distinct role with every literal a policy compares `principal.role` with,
spelling both sides each time: 20,000 distinct roles (a site whose role is a job title) and a policy
listing 100 roles were 2,000,000 pairs (4 s), 1,000 roles 40 s. Roles are now indexed by spelling.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest


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
