"""The principals' attributes and the GPU classes' tenants beside the decisions (principal_attr,
class_tenant: AUTHZ006-AUTHZ012 read them), checked by hand on the shipped mixed fleet.
"""

from __future__ import annotations

from pathlib import Path

from verifier.authorization.facts import _facts
from verifier.authorization.setup import build_setup
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
PATH = ROOT / "inventories" / "mixed-fleet.yaml"


def _rows() -> dict[str, list[tuple[str, ...]]]:
    setup = build_setup(
        load_inventory([PATH]), [PATH], ROOT / "policies", load_principals(ROOT / "inventories" / "principals.yml")
    )
    return {k: [tuple(str(c) for c in r) for r in v] for k, v in _facts(setup).items()}


def test_principal_attributes_are_the_entities() -> None:
    attrs = {(p, a): v for p, a, v in _rows()["principal_attr"]}
    # By hand from inventories/principals.yml: ivan is in interns, a team with no tenant of its own
    # in students (tenant students): his tenant is students, his role intern. hana's first team is
    # team-vision: her tenant, though she is in hpc too. sre has no tenant and role "team" (a team's
    # default). casefold of an all-lower-case id is itself.
    assert attrs[("ivan", "tenant")] == "students"
    assert attrs[("ivan", "role")] == "intern"
    assert attrs[("hana", "tenant")] == "team-vision"
    assert attrs[("sre", "tenant")] == ""
    assert attrs[("sre", "role")] == "team"
    assert attrs[("ci-runner", "casefold")] == "ci-runner"


def test_a_class_carries_its_nearest_tenant_label() -> None:
    rows = _rows()
    tenant_of_class = {c: t for c, t in rows["class_tenant"]}
    class_of = {g: c for g, c in rows["authz_class"]}
    # By hand from inventories/mixed-fleet.yaml: the node templates label the A100 nodes tenant
    # team-nlp, the H100 nodes team-vision and the RTX workstations students; rtx-n2's override
    # (lent) says robotics, and a GPU inherits from its node.
    assert tenant_of_class[class_of["a100-n0/gpu0"]] == "team-nlp"
    assert tenant_of_class[class_of["h100-n0/gpu0"]] == "team-vision"
    assert tenant_of_class[class_of["rtx-n3/gpu0"]] == "students"
    assert tenant_of_class[class_of["rtx-n2/gpu0"]] == "robotics"
    # Every class has one row.
    assert sorted(tenant_of_class) == sorted(set(class_of.values()))
