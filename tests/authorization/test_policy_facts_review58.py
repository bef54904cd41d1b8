"""The policy facts (forbid_resource_eq, forbid_eq_principal, permit_reads_principal,
policy_reads_resource, permit_role_literal) read the policies' syntax trees from one conversion of
the authorizer's policy set (R-CP review, round 12). They must be the trees of the statements as
written, filed under the `@id`s people wrote, however the bundle was made: validated from files,
read from the release's compiled JSON (the shipped policies) or read back from the cache (the
policy set rebuilt from each statement's text).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import cedarpy
import pytest

from verifier.authorization.facts import _facts, policy_trees
from verifier.authorization.policies import PolicyBundle, load_policies
from verifier.authorization.setup import AuthzSetup, build_setup
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "tests" / "authorization" / "small"

# One file at the top, comments holding `;` and quotes, an annotation beside @id, `unless`, `has`
# guards, `is ... in` scopes, if-then-else, an escaped non-ASCII literal, forbids of every scope.
TOP = """// a comment; with a semicolon and a "quote
@id("sre-on-call")
@note("kept")
permit (principal, action == Action::"drain", resource)
when { "sre" == principal.role && principal has on_call && principal.on_call }
unless { principal.role == "intern" || resource.owner like "*@x" };

@id("ops-racks")
permit (principal is User in Team::"sre", action in [Action::"administer"], resource is Node in Rack::"ra")
when { if principal.role == "caf\\u{e9}" then resource.gpus > 0 else principal.tenant == resource.tenant };

@id("keep-na0")
forbid (principal is User in Team::"a", action == Action::"schedule", resource == Node::"na0");

@id("u2-off-ra")
forbid (principal == User::"u2", action in [Action::"reserve", Action::"drain"], resource == Rack::"ra")
when { context has incident && context.incident } unless { resource.quarantined };

@id("everyone-off-p0")
forbid (principal, action, resource == Pod::"p0") when { principal.role == "intern" };

@id("drain-only")
forbid (principal, action == Action::"drain", resource == Node::"nb0");

@id("contractors-copy")
permit (principal, action, resource)
when { principal.role == "contractor" && principal.teams.contains(resource.tenant) };
"""

# A subfolder, Windows line ends, upper-case suffix, and a policy whose text is the same as one
# in the other file but for its @id.
SUB = (
    '@id("contractors")\r\n'
    "permit (principal, action, resource)\r\n"
    'when { principal.role == "contractor" && principal.teams.contains(resource.tenant) };\r\n'
    "\r\n"
    '@id("not-interns")\r\n'
    'permit (principal, action, resource) when { principal.role != "intern" };\r\n'
    "\r\n"
    '@id("not-trainees")\r\n'
    'permit (principal, action, resource) when { !(principal.role == "trainee") };\r\n'
)


def _directory(tmp_path: Path) -> Path:
    directory = tmp_path / "policies"
    (directory / "more").mkdir(parents=True)
    (directory / "schema.cedarschema").write_text((ROOT / "policies" / "schema.cedarschema").read_text())
    (directory / "top.cedar").write_text(TOP)
    (directory / "more" / "sub.CEDAR").write_bytes(SUB.encode())
    return directory


def _setup(policies: Path) -> AuthzSetup:
    inventory = SMALL / "cluster.yaml"
    return build_setup(load_inventory([inventory]), [inventory], policies, load_principals(SMALL / "principals.yml"))


def _rebuilt(bundle: PolicyBundle) -> PolicyBundle:
    """The bundle as the cache gives it back: no cedarpy handle, the policy set made from the texts."""
    return PolicyBundle(
        bundle.directory, bundle.schema_text, bundle.schema_shown, bundle.policies, bundle.observed, bundle.digest
    )


RELATIONS = (
    "forbid_resource_eq",
    "forbid_eq_principal",
    "permit_reads_principal",
    "policy_reads_resource",
    "permit_role_literal",
)


def _rows(setup: AuthzSetup) -> dict[str, list[tuple[str, ...]]]:
    facts = _facts(setup)
    return {name: [tuple(str(c) for c in r) for r in facts[name]] for name in RELATIONS}


# By hand from TOP and SUB, and tests/authorization/small/principals.yml (users u1 in team a,
# u2 in team b, oc in team sre):
EXPECTED = {
    # Forbids scoped `resource ==` a node, rack or pod for schedule/reserve or any action, by id:
    # drain-only is for drain alone (no row).
    "forbid_resource_eq": [
        ("everyone-off-p0", "Pod", "p0"),
        ("keep-na0", "Node", "na0"),
        ("u2-off-ra", "Rack", "ra"),
    ],
    # Their principal scopes: a bare principal is "", `is User in Team::"a"` is u1 (the one user
    # in a), `== User::"u2"` is u2.
    "forbid_eq_principal": [("everyone-off-p0", ""), ("keep-na0", "u1"), ("u2-off-ra", "u2")],
    # Principal attributes permits read (forbids' reads do not count): role everywhere it is
    # compared; on_call in sre-on-call (`has` and `.`); tenant in ops-racks' else branch; teams in
    # both contractor permits.
    "permit_reads_principal": [
        ("contractors", "role"),
        ("contractors", "teams"),
        ("contractors-copy", "role"),
        ("contractors-copy", "teams"),
        ("not-interns", "role"),
        ("not-trainees", "role"),
        ("ops-racks", "role"),
        ("ops-racks", "tenant"),
        ("sre-on-call", "on_call"),
        ("sre-on-call", "role"),
    ],
    # Resource attributes any policy reads: tenant (contractor permits, ops-racks), gpus
    # (ops-racks), owner (sre-on-call's unless), quarantined (the forbid u2-off-ra's unless).
    "policy_reads_resource": [
        ("contractors", "tenant"),
        ("contractors-copy", "tenant"),
        ("ops-racks", "gpus"),
        ("ops-racks", "tenant"),
        ("sre-on-call", "owner"),
        ("u2-off-ra", "quarantined"),
    ],
    # Roles a permit's `when` compares principal.role equal to where that lets the role in, either
    # side of `==`; not the `unless` (intern), not `!=` (not-interns), not under a `!` (not-trainees:
    # the same as `!=`), not an if-condition (ops-racks' "caf\u{e9}" picks a branch, both of which let
    # principals in), not a forbid's.
    "permit_role_literal": [
        ("contractors", "contractor"),
        ("contractors-copy", "contractor"),
        ("sre-on-call", "sre"),
    ],
}


def test_policy_facts_by_hand(tmp_path: Path) -> None:
    setup = _setup(_directory(tmp_path))
    assert _rows(setup) == EXPECTED


def test_policy_facts_the_same_from_a_bundle_read_back(tmp_path: Path) -> None:
    setup = _setup(_directory(tmp_path))
    again = dataclasses.replace(setup, bundle=_rebuilt(setup.bundle))
    assert "policy_set" not in again.bundle.__dict__  # made anew from the texts, as after a cache hit
    assert _rows(again) == EXPECTED


def _alone(text: str) -> tuple[object, ...]:
    """The statement parsed on its own: what each relation read before the one conversion."""
    (template,) = cedarpy.PolicySet.from_str(text).to_pst().static_policies.values()
    return (template.effect, template.principal, template.action, template.resource, template.clauses)


@pytest.mark.parametrize("where", ["shipped", "written"])
@pytest.mark.parametrize("rebuilt", [False, True], ids=["as-loaded", "read-back"])
def test_each_tree_is_its_statement_under_its_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str, rebuilt: bool
) -> None:
    # Cache off: a cache hit would give back a rebuilt bundle, never the compiled JSON's.
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    directory = ROOT / "policies" if where == "shipped" else _directory(tmp_path)
    bundle = load_policies(directory)
    if rebuilt:
        bundle = _rebuilt(bundle)
    elif where == "shipped":
        assert bundle.policy_json  # the policy set read from the release's compiled JSON
    setup = dataclasses.replace(_setup(directory), bundle=bundle)
    trees = policy_trees(setup)
    assert sorted(trees) == sorted(bundle.policies)
    for pid, policy in bundle.policies.items():
        t = trees[pid]
        assert (t.effect, t.principal, t.action, t.resource, t.clauses) == _alone(policy.text), pid
