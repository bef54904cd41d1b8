"""The schema-wide analysis' examples, read back and evaluated by Cedar (tests/cedar_oracle.py).

`analysed` / `compared` check every example the analysis gives against cedarpy: a may-error
example raises, a shadowed permit's example is allowed by the permit alone and denied by the
set, a compare counterexample gets the two decisions reported. Each test here also says, by
hand, what the answer must be.
"""

from __future__ import annotations

import re
from pathlib import Path

from cedar_oracle import analysed, compared

from verifier.authorization.policies import PolicyBundle, load_policies

SCHEMA = """
entity Group;
entity User in [Group] = { tenant: String, teams: Set<String>, slots: Set<Long>, n?: Long };
entity Gpu = { gpus: Long, tenant: String };
action schedule appliesTo { principal: [User], resource: [Gpu], context: { incident?: Bool } };
action share appliesTo { principal: [User], resource: [User] };
"""
ANY = '(principal, action == Action::"schedule", resource)'


def bundle(folder: Path, policies: str, schema: str = SCHEMA) -> PolicyBundle:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "schema.cedarschema").write_text(schema)
    (folder / "p.cedar").write_text(policies)
    return load_policies(folder)


def test_counterexample_over_a_set_intersection_reports_both_decisions(tmp_path: Path) -> None:
    # containsAny(["x"]) vs containsAny(["x", "y"]): they differ exactly for a user whose teams
    # hold "y" and not "x": the first set denies (no permit), the second allows through "a".
    # (The decisions were read from z3's model by evaluation, which leaves a set intersection
    # unreduced: both sides were reported "deny".)
    first = bundle(tmp_path / "1", f'@id("a") permit {ANY} when {{ principal.teams.containsAny(["x"]) }};')
    second = bundle(tmp_path / "2", f'@id("a") permit {ANY} when {{ principal.teams.containsAny(["x", "y"]) }};')
    (d,) = compared(first, second)
    assert (d.first, d.second, d.first_policies, d.second_policies) == ("deny", "allow", (), ("a",))
    assert '"y"' in d.principal and '"x"' not in d.principal


def test_a_non_empty_set_is_shown_with_a_member(tmp_path: Path) -> None:
    # isEmpty() vs no condition: they differ for a user with a non-empty set, which no policy
    # names a member of. The example must show a member (it showed `teams: []`, a request
    # both sets allow). Same for a set of Longs.
    for attr in ("teams", "slots"):
        first = bundle(tmp_path / attr / "1", f'@id("a") permit {ANY} when {{ principal.{attr}.isEmpty() }};')
        second = bundle(tmp_path / attr / "2", f'@id("a") permit {ANY};')
        (d,) = compared(first, second)
        assert (d.first, d.second) == ("deny", "allow")
        assert re.search(attr + r": \[[^\]]+\]", d.principal), d.principal


def test_ids_read_as_names(tmp_path: Path) -> None:
    # Ids the policies leave free are named by type and order: the principal User::"user0",
    # the resource Gpu::"gpu0"; for `share` (User to User) a request where the two differ
    # (principal != resource is the condition) names the resource User::"user1".
    first = bundle(tmp_path / "1", f'@id("a") permit {ANY};\n@id("b") permit (principal, action, resource);')
    second = bundle(
        tmp_path / "2",
        f'@id("a") permit {ANY};\n'
        '@id("b") permit (principal, action == Action::"share", resource) when { principal == resource };',
    )
    (d,) = compared(first, second)
    assert (d.action, d.principal, d.resource) == ('Action::"share"', 'User::"user0" {}', 'User::"user1" {}')
    # Long overflow on the optional n: its example names the entities the same way.
    b = bundle(
        tmp_path / "3", f'@id("sum") permit {ANY} when {{ principal has n && principal.n + resource.gpus > 0 }};'
    )
    (f,) = analysed(b)
    assert f.kind == "may-error"
    assert f.example.startswith('principal User::"user0" {n: ') and 'resource Gpu::"gpu0" {gpus: ' in f.example


OWNED = """
entity Group;
entity User in [Group];
entity Doc = { owner: User };
action read appliesTo { principal: [User], resource: [Doc] };
"""


def test_an_attribute_entity_is_shown_with_its_groups(tmp_path: Path) -> None:
    # Found by random differential testing against cedarpy. "team-docs" allows a doc whose
    # owner is in Group::"g"; without it nothing is allowed: they differ exactly there, and the
    # counterexample must say the owner is in Group::"g" (it showed only `owner: User::"user1"`,
    # a request Cedar denies under both sets). The owner may be the principal (user0) or not.
    first = bundle(
        tmp_path / "1", '@id("t") permit (principal, action, resource) when { resource.owner in Group::"g" };', OWNED
    )
    second = bundle(tmp_path / "2", '@id("t") forbid (principal, action, resource);', OWNED)
    (d,) = compared(first, second)
    assert (d.first, d.second) == ("allow", "deny")
    assert re.fullmatch(r'Doc::"doc0" \{owner: User::"user\d" in \[Group::"g"\]\}', d.resource), d.resource


NESTED = """
entity Group in [Group];
entity User in [Group];
action a appliesTo { principal: [User, Group], resource: [Group] };
"""


def test_the_hierarchy_is_transitive_and_acyclic(tmp_path: Path) -> None:
    # Cedar's entity store is a DAG with its transitive closure (cedarpy refuses a cycle: "input
    # graph has a cycle"). So:
    # - "cycle": principal Group::"g" in Group::"h" and resource Group::"h" in Group::"g" would
    #   be a cycle g -> h -> g: no store has it: dead.
    # - "not-transitive": the resource Group::"g" is in Group::"h" and the principal in
    #   Group::"g", so the principal is in Group::"h" too: `!(principal in Group::"h")` never
    #   holds: dead.
    # - "chain": the same without the negation: principal in g, g in h: live, and the only
    #   permit: no finding.
    b = bundle(
        tmp_path,
        """
@id("cycle") permit (principal == Group::"g", action, resource == Group::"h")
  when { principal in Group::"h" && resource in Group::"g" };
@id("not-transitive") permit (principal, action, resource == Group::"g")
  when { resource in Group::"h" && principal in Group::"g" && !(principal in Group::"h") };
@id("chain") permit (principal, action, resource == Group::"g")
  when { resource in Group::"h" && principal in Group::"g" };
""",
        NESTED,
    )
    assert [(f.policy, f.kind) for f in analysed(b)] == [("cycle", "dead"), ("not-transitive", "dead")]


def test_a_set_shows_the_computed_members_it_must_hold(tmp_path: Path) -> None:
    # Found by random differential testing. The permit needs slots to hold 2 * 3 = 6 and
    # 2 * 5 = 10, values no literal of the policy spells: the counterexample must show both
    # (it showed the literals' values only, a request Cedar denies).
    first = bundle(
        tmp_path / "1",
        f'@id("a") permit {ANY} when {{ principal.slots.contains(2 * 3) && principal.slots.contains(2 * 5) }};',
    )
    second = bundle(tmp_path / "2", '@id("a") forbid (principal, action, resource);')
    (d,) = compared(first, second)
    assert (d.first, d.second) == ("allow", "deny")
    slots = re.search(r"slots: \[([^\]]*)\]", d.principal)
    assert slots is not None and {"6", "10"} <= set(slots.group(1).split(", ")), d.principal
