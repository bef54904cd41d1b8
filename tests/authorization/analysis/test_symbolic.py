"""The schema-wide (SMT) policy analysis on small policy sets whose answers are derived by hand.

Each test writes a schema and policies, runs the analysis, and compares with what reading the
policies says; the derivation is the comment beside each expectation.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from cedar_oracle import analysed, compared

from verifier.authorization.analysis.symbolic import (
    Difference,
    OutsideAnalysis,
    SymbolicFinding,
)
from verifier.authorization.observed import observe
from verifier.authorization.policies import Policy, PolicyBundle, load_policies, split_statements
from verifier.core.errors import SourceLocation, TopologError

SCHEMA = """
entity Group;
entity User in [Group] = { tenant: String, role: String, teams: Set<String> };
entity Gpu = { gpus: Long, tenant: String };
action schedule appliesTo {
  principal: [User],
  resource: [Gpu],
  context: { incident?: Bool }
};
"""
LONG_MAX = 2**63 - 1


def bundle(folder: Path, policies: str, schema: str = SCHEMA) -> PolicyBundle:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "schema.cedarschema").write_text(schema)
    (folder / "p.cedar").write_text(policies)
    return load_policies(folder)


def kinds(findings: list[SymbolicFinding]) -> list[tuple[str, str]]:
    return [(f.policy, f.kind) for f in findings]


def test_contradictory_bounds_are_dead(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("impossible") permit (principal, action, resource) when { resource.gpus > 8 && resource.gpus < 4 };
@id("big") permit (principal, action, resource) when { resource.gpus > 8 };
""",
    )
    # No Long is both above 8 and below 4: "impossible" is dead. "big" is the only other
    # permit, satisfied by gpus = 9, nothing forbids and nothing else allows: no finding.
    assert kinds(analysed(b)) == [("impossible", "dead")]


def unvalidated(folder: Path, policies: str, schema: str = SCHEMA) -> PolicyBundle:
    """A bundle assembled without Cedar's validator, which load_policies runs and which already
    refuses unguarded optional reads and scopes no action allows. The analysis does not lean on
    it: these bundles prove it finds the same problems by itself."""
    import cedarpy

    folder.mkdir(parents=True, exist_ok=True)
    found: dict[str, Policy] = {}
    for line, text in split_statements(policies):
        (template,) = cedarpy.PolicySet.from_str(text).to_pst().static_policies.values()
        pid = template.annotations["id"]
        found[pid] = Policy(pid, template.effect, SourceLocation(str(folder / "p.cedar"), line), text)
    return PolicyBundle(folder, schema, str(cedarpy.Schema.from_str(schema)), found, observe([]), "")


def test_scope_dead_through_the_hierarchy_and_the_types(tmp_path: Path) -> None:
    b = unvalidated(
        tmp_path,
        """
@id("gpu-in-group") permit (principal, action, resource in Group::"g");
@id("user-in-group") permit (principal in Group::"g", action, resource);
@id("group-principal") permit (principal is Group, action, resource);
""",
    )
    findings = {f.policy: f for f in analysed(b)}
    # Gpu declares no parents and is not Group: no Gpu is ever `in Group::"g"`. Group is no
    # principal type of `schedule` (only User is). Both scopes match no request.
    for pid in ("gpu-in-group", "group-principal"):
        assert findings[pid].kind == "dead"
        assert "scope matches no action" in findings[pid].message
    # User in [Group]: a user below Group::"g" satisfies it, and it is the only live permit.
    assert "user-in-group" not in findings


def test_optional_context_attribute_without_has_may_error(tmp_path: Path) -> None:
    b = unvalidated(
        tmp_path,
        """
@id("unguarded") permit (principal, action, resource) when { context.incident };
@id("guarded") forbid (principal, action, resource) when { context has incident && context.incident };
@id("guarded-if") forbid (principal, action, resource)
  when { if context has incident then context.incident else false };
@id("guarded-or") forbid (principal, action, resource) unless { !(context has incident) || context.incident };
@id("guard-too-late") forbid (principal, action, resource) when { context.incident && context has incident };
""",
    )
    findings = {(f.policy, f.kind): f for f in analysed(b)}
    # `incident?` is optional: a request without it makes `context.incident` raise. The three
    # guarded forbids test `has` first; && / if / || short-circuit before the read. The last
    # one reads before it tests: the same error as "unguarded".
    errs = sorted(p for p, k in findings if k == "may-error")
    assert errs == ["guard-too-late", "unguarded"]
    example = findings[("unguarded", "may-error")]
    assert example.example.endswith("context {}")
    assert example.message == "reads context.incident without `has` (optional attribute)"


def test_overflow_guarded_by_short_circuit(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("and-guard") permit (principal, action, resource)
  when { resource.gpus >= 0 && resource.gpus < 1000 && resource.gpus * 1000000000000 > 5 };
@id("if-guard") permit (principal, action, resource)
  when { if resource.gpus >= 0 && resource.gpus < 1000 then resource.gpus * 1000000000000 > 5 else false };
@id("or-guard") permit (principal, action, resource)
  when { resource.gpus < 0 || resource.gpus >= 1000 || resource.gpus * 1000000000000 > 5 };
@id("guard-after") permit (principal, action, resource)
  when { resource.gpus * 1000000000000 > 5 && resource.gpus >= 0 && resource.gpus < 1000 };
""",
    )
    # Below 1000 (and not negative) the product is at most 999 * 10^12 < 2^63: the first three
    # multiply only there (&&, if, || stop before the product otherwise). "guard-after"
    # multiplies first, for any gpus: |gpus| >= 9223373 overflows.
    errs = [f.policy for f in analysed(b) if f.kind == "may-error"]
    assert errs == ["guard-after"]


def test_permit_shadowed_by_a_wider_forbid(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("big") permit (principal, action, resource) when { resource.gpus > 8 };
@id("wide") forbid (principal, action, resource) when { resource.gpus > 4 };
""",
    )
    # Every gpus > 8 is > 4: whatever "big" permits, "wide" forbids. "wide" is not redundant:
    # without it gpus = 9 would be allowed by "big".
    (finding,) = analysed(b)
    assert (finding.policy, finding.kind, finding.related) == ("big", "shadowed", ("wide",))
    gpus = int(re.search(r"gpus: (-?\d+)", finding.example).group(1))  # type: ignore[union-attr]
    assert gpus > 8


def test_redundant_permit_and_forbid(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("big") permit (principal, action, resource) when { resource.gpus > 8 };
@id("some") permit (principal, action, resource) when { resource.gpus > 4 };
@id("no-negative") forbid (principal, action, resource) when { resource.gpus < 0 };
""",
    )
    # gpus > 8 implies gpus > 4: "some" allows all that "big" allows ("big" redundant, "some"
    # deciding instead). "no-negative" forbids gpus < 0, where no permit applies anyway: removing
    # it changes nothing, and no other forbid overlaps it. "some" alone allows gpus = 5.
    findings = analysed(b)
    assert [(f.policy, f.kind, f.related) for f in findings] == [
        ("big", "redundant", ("some",)),
        ("no-negative", "redundant", ()),
    ]


def test_long_overflow_may_error(tmp_path: Path) -> None:
    b = bundle(tmp_path, '@id("huge") permit (principal, action, resource) when { resource.gpus * 1000000000000 > 5 };')
    (finding,) = analysed(b)
    assert (finding.kind, finding.policy) == ("may-error", "huge")
    assert "may overflow a Long" in finding.message
    # The example's gpus must really overflow: |gpus| * 10^12 > 2^63 - 1, i.e. |gpus| >= 9223373.
    gpus = int(re.search(r"gpus: (-?\d+)", finding.example).group(1))  # type: ignore[union-attr]
    assert abs(gpus * 10**12) > LONG_MAX


def test_like_and_sets(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("a-roles") permit (principal, action, resource) when { principal.role like "a*" };
@id("all-roles") forbid (principal, action, resource) when { principal.role like "*" };
@id("no-such-role") permit (principal, action, resource) when { principal.role like "ab*" && principal.role == "ba" };
@id("member-of-empty") permit (principal, action, resource)
  when { principal.teams.contains(resource.tenant) && principal.teams.isEmpty() };
""",
    )
    # `*` matches every string: "all-roles" forbids every request, so each live permit is
    # shadowed. "ba" does not start with "ab": dead. An empty set contains nothing: dead.
    assert kinds(analysed(b)) == [
        ("a-roles", "shadowed"),
        ("member-of-empty", "dead"),
        ("no-such-role", "dead"),
    ]


def test_sets_differing_for_an_empty_tenant_only(tmp_path: Path) -> None:
    first = bundle(
        tmp_path / "a",
        '@id("same-tenant") permit (principal, action, resource) when { principal.tenant == resource.tenant };',
    )
    second = bundle(
        tmp_path / "b",
        '@id("same-tenant") permit (principal, action, resource) '
        'when { principal.tenant != "" && principal.tenant == resource.tenant };',
    )
    # The two conditions differ exactly when principal.tenant == "" == resource.tenant: the first
    # allows that request, the second denies it (no permit applies). One action, one type pair:
    # one difference.
    (d,) = compared(first, second)
    assert isinstance(d, Difference)
    assert (d.action, d.first, d.second) == ('Action::"schedule"', "allow", "deny")
    assert 'tenant: ""' in d.principal and 'tenant: ""' in d.resource
    assert (d.first_policies, d.second_policies) == (("same-tenant",), ())
    assert compared(second, second) == []


def test_compare_needs_one_schema(tmp_path: Path) -> None:
    first = bundle(tmp_path / "a", '@id("x") permit (principal, action, resource);')
    second = bundle(tmp_path / "b", '@id("x") permit (principal, action, resource);', SCHEMA.replace("gpus", "cores"))
    with pytest.raises(TopologError, match="schema differs"):
        compared(first, second)


def test_extension_functions_are_refused_with_the_policy_line(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        '@id("fine") permit (principal, action, resource);\n\n'
        '@id("loopback") permit (principal, action, resource) when { ip("127.0.0.1").isLoopback() };\n',
    )
    with pytest.raises(OutsideAnalysis) as caught:
        analysed(b)
    (diag,) = caught.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line) == ("p.cedar", 3)
    assert "'loopback'" in diag.message and "ip()" in diag.message


def test_shipped_policies_have_no_finding() -> None:
    """policies/ by hand (schema: actions schedule, reserve, drain, administer; principals User,
    Team, ServiceAccount, all `in [Team]`; resources Gpu, Node, Rack, Pod, NvlinkDomain):

    - dead: none. Every scope fits some action and type pair, and each condition holds for some
      entity: e.g. fp64 = true, fp64_tflops = 50 for the HPC ones; owner "a" in teams ["a"].
    - may-error: none. The only optional attribute is context.incident, and both policies that
      read it (quarantine-closed, oncall-incident-access) test `context has incident` first;
      no arithmetic.
    - shadowed: none. Each permit has a request no forbid touches: a User, role "", not quarantined,
      not fp64, consumer (or any resource for drain/administer, which only quarantine-closed
      forbids, and oncall-incident-access's requests are exactly its `unless`).
    - redundant: none. Each permit allows a request no other permit does: hpc-fp64-hardware a Team
      in hpc on fp64 hardware of another tenant; node-drainer-drains the drainer with no teams,
      not in sre; sre-drain a member of sre with no teams; owners-administer `administer` with
      owner in teams (the only other administer permit needs quarantine); oncall-incident-access
      schedule on quarantined hardware for a principal with tenant "". Each forbid stops a
      request some permit allows: fp64-reserved-for-hpc and interns-consumer-only and
      service-accounts-never-schedule each stop tenant-own-hardware (same tenant "t"; non-hpc on
      fp64 / an intern on data-centre GPUs / a service account), quarantine-closed stops
      tenant-own-hardware on quarantined hardware outside an incident.
    """
    assert analysed(load_policies(Path("policies"))) == []


def test_an_error_denies_in_comparisons_and_is_never_redundant(tmp_path: Path) -> None:
    plain = '@id("any-gpus") permit (principal, action, resource) when { resource.gpus > 0 };\n'
    huge = '@id("huge") permit (principal, action, resource) when { resource.gpus * 1000000000000 > 5 };\n'
    first, second = bundle(tmp_path / "a", plain), bundle(tmp_path / "b", plain + huge)
    # topolog denies when any policy raises: with "huge" added, gpus >= 9223373 overflows and is
    # denied, though "any-gpus" alone allows it. For gpus < 9223373 "huge" adds nothing that
    # "any-gpus" lacks only when gpus <= 0 and gpus * 10^12 > 5: impossible, so the one
    # difference is an overflow: first allow, second deny, "huge" the policy that raised.
    (d,) = compared(first, second)
    assert (d.first, d.second, d.first_policies, d.second_policies) == ("allow", "deny", ("any-gpus",), ("huge",))
    gpus = int(re.search(r"gpus: (-?\d+)", d.resource).group(1))  # type: ignore[union-attr]
    assert gpus * 10**12 > LONG_MAX
    # Removing "huge" changes decisions (the overflowing requests are allowed again), so it is not
    # redundant, though every request it satisfies "any-gpus" satisfies too; it may raise.
    # "any-gpus" is: where it applies (gpus >= 1) "huge" allows too (gpus * 10^12 > 5) or
    # raises (gpus >= 9223373, denied with or without "any-gpus").
    findings = analysed(second)
    assert [(f.policy, f.kind, f.related) for f in findings] == [
        ("any-gpus", "redundant", ("huge",)),
        ("huge", "may-error", ()),
    ]


def test_hierarchy_in_and_equality(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("members") permit (principal in Group::"g", action, resource) when { resource.gpus == 1 };
@id("u") permit (principal == User::"u", action, resource) when { resource.gpus == 2 };
@id("not-u") forbid (principal in User::"u", action, resource) when { resource.gpus == 2 };
""",
    )
    # members: a User may be in Group::"g" (User in [Group]): live, nothing else applies at gpus 1.
    # u: `principal == User::"u"` implies `principal in User::"u"` (an entity is in itself), so
    # not-u forbids all u permits: shadowed. not-u stops u (its only overlap), so it is needed.
    findings = analysed(b)
    assert [(f.policy, f.kind, f.related) for f in findings] == [("u", "shadowed", ("not-u",))]
    assert 'User::"u"' in findings[0].example


def test_importing_the_analysis_loads_no_solver() -> None:
    # verify and authorize import the authorization package; z3 (a tenth of a second and more)
    # must load only when an analysis runs, as cedarpy loads only when Cedar must decide.
    code = (
        "import sys, verifier.authorization.analysis.symbolic\n"
        "print('z3.z3' in sys.modules, 'cedarpy._internal' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_strings_are_compared_character_for_character(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        r"""
@id("escape-is-text") permit (principal, action, resource)
  when { principal.role == "a\\u{41}" && principal.role == "aA" };
@id("emoji") permit (principal, action, resource) when { principal.role == "🚀\\" };
""",
    )
    # Cedar's "a\\u{41}" is seven characters (a, backslash, u, {, 4, 1, }): never "aA", so
    # "escape-is-text" is dead. "emoji" is satisfiable and its example shows the role as written.
    findings = analysed(b)
    assert kinds(findings) == [("escape-is-text", "dead")]
    live = bundle(
        tmp_path / "live", '@id("emoji") forbid (principal, action, resource) when { principal.role == "🚀\\\\" };'
    )
    (redundant,) = analysed(live)  # a forbid with no permit: redundant, with an example
    assert 'role: "🚀\\\\"' in redundant.example


GROUPED = """
namespace Lab {
  type Level = Long;
  entity Color enum ["red", "blue"];
  entity User = { n: Level };
  action "all";
  action view in ["all"] appliesTo { principal: [User], resource: [User, Color] };
  action edit appliesTo { principal: [User], resource: [User] };
}
"""


def test_action_groups_enums_and_one_entity_in_two_roles(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("grouped") permit (principal, action in Lab::Action::"all", resource is Lab::User);
@id("other-color") permit (principal, action, resource is Lab::Color)
  when { resource != Lab::Color::"red" && resource != Lab::Color::"blue" };
@id("self-unequal") permit (principal, action == Lab::Action::"edit", resource)
  when { principal == resource && principal.n != resource.n };
""",
        GROUPED,
    )
    # grouped: view is in the group "all", so it applies to view on a User: live and alone.
    # other-color: an enumerated type has only its listed ids, red and blue: dead.
    # self-unequal: principal == resource is one entity, with one `n`: dead. (`n` is declared
    # through the common type Level = Long.)
    assert kinds(analysed(b)) == [("other-color", "dead"), ("self-unequal", "dead")]


def test_attributes_of_one_principal_type_behind_is(tmp_path: Path) -> None:
    schema = """
entity Robot = { serial: Long };
entity User = { tags: Set<String> };
entity Gpu;
action use appliesTo { principal: [User, Robot], resource: [Gpu] };
"""
    b = bundle(
        tmp_path,
        """
@id("tagged") permit (principal, action, resource) when { principal is User && principal.tags.contains("gpu") };
@id("robots") permit (principal, action, resource) when { principal is Robot && principal.serial + 1 > 1 };
""",
        schema,
    )
    # For a Robot, `principal is User` is false and `tags` (which Robots lack) is never read;
    # for a User, `principal is Robot` is false. tagged: live for a User tagged "gpu". robots:
    # live for serial 1, and serial + 1 overflows at serial = 2^63 - 1: may-error only.
    findings = analysed(b)
    assert [(f.policy, f.kind, f.message) for f in findings] == [
        ("robots", "may-error", "`principal.serial + 1` may overflow a Long")
    ]
    assert "Robot::" in findings[0].example and f"serial: {LONG_MAX}" in findings[0].example


OWNED = """
entity Team;
entity User in [Team] = { level: Long };
entity Doc = { owner: User, reviewer?: User };
action read appliesTo { principal: [User], resource: [Doc] };
"""


def test_entity_typed_attributes_are_ids_with_one_hierarchy(tmp_path: Path) -> None:
    b = bundle(
        tmp_path,
        """
@id("owner") permit (principal, action, resource) when { resource.owner == principal };
@id("owner-team-mismatch") permit (principal, action, resource)
  when { resource.owner == principal && resource.owner in Team::"t" && !(principal in Team::"t") };
@id("reviewer") permit (principal, action, resource)
  when { resource has reviewer && resource.reviewer == principal && resource.reviewer != resource.owner };
""",
        OWNED,
    )
    # owner: the only permit where the reader owns the doc and reviews nothing: needed.
    # owner-team-mismatch: the owner *is* the principal, one entity, so it cannot both be and
    #   not be in Team::"t": dead.
    # reviewer: a reviewer who is not the owner: satisfiable (guarded by `has`), and only it
    #   allows that request: needed.
    findings = analysed(b)
    assert kinds(findings) == [("owner-team-mismatch", "dead")]


def test_attribute_of_an_attribute_entity_is_refused(tmp_path: Path) -> None:
    b = bundle(
        tmp_path, '@id("senior-owner") permit (principal, action, resource) when { resource.owner.level > 3 };', OWNED
    )
    with pytest.raises(OutsideAnalysis, match=r"reads an attribute of resource\.owner"):
        analysed(b)
