"""`compare`: two policy sets, first over the inventory's classes, then for every entity the schema allows.

Small hand-made sets on tests/authorization/small (rack ra: tenant a, node na0 with 4
H100-SXM5-80GB GPUs in one NVLink domain; rack rb: tenant b, quarantined, node nb0 with 2 RTX 4090;
pod p0 holds both and has no tenant; teams a, b, sre; u1 in a, u2 in b, oc in sre). The schema is
the shipped one: every principal type (User, Team, ServiceAccount) may be `in` a Team, and the
actions apply to the five resource types (Gpu, Node, Rack, Pod, NvlinkDomain).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from policy_sets import ONE_PERMIT, SPLIT, TWO_GPUS

from verifier.authorization.analysis.equivalence import compare, compare_in_inventory, with_policies
from verifier.authorization.analysis.smt_errors import OutsideAnalysis
from verifier.authorization.setup import AuthzSetup
from verifier.session.api import load_authorization

ROOT = Path(__file__).resolve().parents[3]
SMALL = ROOT / "tests" / "authorization" / "small" / "cluster.yaml"
SCHEMA = (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8")
PRINCIPAL_TYPES = ("ServiceAccount", "Team", "User")
RESOURCE_TYPES = ("Gpu", "Node", "NvlinkDomain", "Pod", "Rack")

# One condition more, which every tenant-a resource of the inventory meets (all H100): the two
# sets differ only for hardware that does not exist yet.
H100_ONLY = """
@id("a-schedules-own-h100")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" && resource.model like "H100*" };
"""
# An extension function: outside what the schema-wide encoding covers.
DECIMAL = """
@id("decimal-use")
permit (principal in Team::"a", action == Action::"schedule", resource)
when { resource.tenant == "a" && decimal("1.5").lessThan(decimal("2.0")) };
"""


def _setup(tmp_path: Path, name: str, text: str) -> AuthzSetup:
    folder = tmp_path / name
    folder.mkdir()
    (folder / "schema.cedarschema").write_text(SCHEMA, encoding="utf-8")
    (folder / "policies.cedar").write_text(text, encoding="utf-8")
    return load_authorization([SMALL], folder)


def test_a_permit_split_in_two_is_equivalent_in_both_analyses(tmp_path: Path) -> None:
    r = compare(_setup(tmp_path, "one", ONE_PERMIT), _setup(tmp_path, "split", SPLIT))
    assert r.inventory.decisions == 0
    assert r.schema_wide is not None and r.schema_wide.differences == []
    assert r.equivalent and r.exit_code == 0
    # No context attribute is read: {} is the only context, and it covers every context.
    assert r.inventory.contexts.contexts == [{}] and r.inventory.contexts.complete


def test_a_condition_the_inventory_fails_differs_in_both_analyses(tmp_path: Path) -> None:
    # Inventory: team a and u1 may schedule on the 4 GPUs of na0 under the first set only (gpus = 1
    # < 2); na0, ra and the domain hold 4 GPUs and p0 has no tenant: 2 x 4 = 8 decisions differ,
    # the first (sorted by action, principal, resource) Team::"a" on Gpu::"na0/gpu0".
    r = compare(_setup(tmp_path, "one", ONE_PERMIT), _setup(tmp_path, "two", TWO_GPUS))
    assert r.inventory.decisions == 8
    first = r.inventory.differences[0]
    assert (first.action, first.principal, first.resource, first.context) == (
        "schedule",
        'Team::"a"',
        'Gpu::"na0/gpu0"',
        "{}",
    )
    assert (first.first, first.second, first.first_policies, first.second_policies) == (
        "allow",
        "deny",
        ("a-schedules-own",),
        (),
    )
    # Schema-wide: for every principal type (each may be in Team::"a") and every resource type
    # (each has tenant and gpus) some entity has tenant "a" and gpus < 2: 3 x 5 = 15 counterexamples,
    # one per pair, all for schedule, the first set allowing and the second not.
    assert r.schema_wide is not None
    assert len(r.schema_wide.differences) == len(PRINCIPAL_TYPES) * len(RESOURCE_TYPES)
    for d in r.schema_wide.differences:
        assert "schedule" in d.action
        assert (d.first, d.second, d.first_policies, d.second_policies) == ("allow", "deny", ("a-schedules-own",), ())
        assert 'tenant: "a"' in d.resource and "gpus: " in d.resource
    pairs = {(d.principal.split("::")[0], d.resource.split("::")[0]) for d in r.schema_wide.differences}
    assert pairs == {(p, t) for p in PRINCIPAL_TYPES for t in RESOURCE_TYPES}
    assert r.exit_code == 1


def test_sets_that_differ_only_for_hardware_not_there_yet(tmp_path: Path) -> None:
    # Every tenant-a resource of the inventory (na0's GPUs, na0, ra, its NVLink domain) has model
    # H100-SXM5-80GB, which is like "H100*": the inventory analysis finds no difference. The schema
    # allows a tenant-a resource of another model: 15 counterexamples, as above.
    r = compare(_setup(tmp_path, "one", ONE_PERMIT), _setup(tmp_path, "h100", H100_ONLY))
    assert r.inventory.decisions == 0
    assert r.schema_wide is not None
    assert len(r.schema_wide.differences) == 15
    assert all("model: " in d.resource and "H100" not in d.resource for d in r.schema_wide.differences)
    assert not r.equivalent


def test_inventory_only_does_not_ask_the_solver(tmp_path: Path) -> None:
    r = compare(_setup(tmp_path, "one", ONE_PERMIT), _setup(tmp_path, "h100", H100_ONLY), schema_wide=False)
    assert r.schema_wide is None
    assert r.equivalent  # for this inventory, which is all that was asked


def test_a_policy_set_outside_the_encoding_is_refused(tmp_path: Path) -> None:
    with pytest.raises(OutsideAnalysis, match="'decimal-use' is outside what the schema-wide analysis covers"):
        compare(_setup(tmp_path, "one", ONE_PERMIT), _setup(tmp_path, "decimal", DECIMAL))


def test_sharing_the_entity_graph_changes_no_answer(tmp_path: Path) -> None:
    # `policy compare` judges the second set on the first's entity graph (read once); two graphs
    # built apart must give the very same differences (audit.diff's classes keyed once or twice).
    first = _setup(tmp_path, "one", ONE_PERMIT)
    apart = _setup(tmp_path, "two", TWO_GPUS)
    shared = with_policies(first, tmp_path / "two")
    assert shared.graph is first.graph and apart.graph is not first.graph
    one, other = compare_in_inventory(first, shared), compare_in_inventory(first, apart)
    assert (one.decisions, one.differences, one.requests) == (other.decisions, other.differences, other.requests)
    assert one.decisions == 8  # derived in test_a_condition_the_inventory_fails_differs_in_both_analyses
