"""Random policy sets, analysed and compared schema-wide, against Cedar on random concrete requests.

The hand-derived tests pin each construct; this one looks for what they missed. For each seed
it writes one to three random policies per set over the constructs the encoding covers (Long
arithmetic near the 64-bit limits, optional attributes, `like` with `\\*`, sets, the hierarchy,
entity-typed attributes, `is ... in`, action groups, `if`; and again in a namespace with an
enumerated type, Group principals and an entity in the context), without Cedar's validator (so reads
a type lacks, unguarded optional reads and overflows all happen), then:
- every example is checked by Cedar (tests/cedar_oracle.py: analysed / compared);
- on random requests and entity stores (cedarpy is the judge): two sets the analysis calls
  equivalent for an (action, principal type, resource type) decide alike; a policy it calls
  dead is never satisfied; a policy Cedar reports an error for was reported as may-error.
Seeded, so a failure names the seed that reproduces it. Bugs it found are pinned by hand in
test_symbolic_examples.py.
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any

import cedarpy
import pytest
from cedar_oracle import analysed, compared

from verifier.authorization.observed import observe
from verifier.authorization.policies import Policy, PolicyBundle, split_statements
from verifier.core.errors import SourceLocation, TopologError

SCHEMA = """
entity Group in [Group];
entity User in [Group] = { tenant: String, teams: Set<String>, slots: Set<Long>, n?: Long, level: Long,
                           boss?: User, admin: Bool };
entity Gpu in [Group] = { gpus: Long, tenant: String, owner: User, tags: Set<String> };
action schedule appliesTo {
  principal: [User], resource: [Gpu], context: { incident?: Bool, load: Long, who?: String }
};
action share appliesTo { principal: [User], resource: [User, Gpu] };
action all;
action drain in [all] appliesTo { principal: [User], resource: [Gpu] };
"""
STRINGS = ['""', '"a"', '"b"', '"a*"', '"\\u{1F680}"', "principal.tenant", "resource.tenant", "context.who"]
LONGS = ["0", "1", "-1", "3", "9223372036854775807", "-9223372036854775807", "4611686018427387904"]
LONG_READS = ["principal.level", "resource.gpus", "context.load", "principal.n"]
PATTERNS = ['"a*"', '"*"', '"a\\*"', '""', '"*b*"']
ATOMS = [
    "principal has n",
    "context has incident",
    "context has who",
    "principal has boss",
    "resource has gpus",
    "resource has owner",
    "principal.admin",
    "context.incident",
    "true",
    "false",
    'principal in Group::"g"',
    'resource in Group::"g"',
    'resource.owner in Group::"g"',
    'principal in Group::"h"',
    "principal == resource.owner",
    "principal.boss == resource.owner",
    "resource is Gpu",
    'resource is User in Group::"h"',
    'principal == User::"a"',
    "resource == principal",
    'resource.owner == User::"a"',
    'principal.teams.containsAny(["a", "b"])',
    'principal.teams.containsAll(["a"])',
    "principal.teams.isEmpty()",
    "principal.slots.containsAny([1, 3])",
    "principal.slots.isEmpty()",
    "principal.teams.containsAny(resource.tags)",
]
PRINCIPALS = ["principal", 'principal in Group::"g"', 'principal == User::"a"', "principal is User"]
ACTIONS = [
    "action",
    'action == Action::"schedule"',
    'action in Action::"all"',
    'action in [Action::"share", Action::"drain"]',
]
RESOURCES = ["resource", 'resource in Group::"g"', "resource is Gpu", 'resource is User in Group::"h"']


def long_expr(r: random.Random, depth: int) -> str:
    if depth > 2 or r.random() < 0.4:
        return r.choice(LONGS + LONG_READS)
    op = r.choice(["+", "-", "*"])
    right = r.choice(LONGS) if op == "*" else long_expr(r, depth + 1)
    return f"({long_expr(r, depth + 1)} {op} {right})"


def condition(r: random.Random, atoms: list[str], depth: int = 0) -> str:
    c = r.randrange(8 if depth > 3 else 16)
    if c == 0:
        return f"{long_expr(r, depth)} {r.choice(['<', '<=', '>', '>=', '==', '!='])} {long_expr(r, depth)}"
    if c == 1:
        return f"{r.choice(STRINGS)} {r.choice(['==', '!='])} {r.choice(STRINGS)}"
    if c == 2:
        return f"{r.choice(STRINGS)} like {r.choice(PATTERNS)}"
    if c == 3:
        return f"principal.teams.contains({r.choice(STRINGS)})"
    if c == 4:
        return f"principal.slots.contains({long_expr(r, depth)})"
    if c == 5:
        return f"resource.tags.contains({r.choice(STRINGS)})"
    if c in (6, 7):
        return r.choice(atoms)
    if c in (8, 9, 10):
        return f"({condition(r, atoms, depth + 1)} && {condition(r, atoms, depth + 1)})"
    if c in (11, 12):
        return f"({condition(r, atoms, depth + 1)} || {condition(r, atoms, depth + 1)})"
    if c == 13:
        return f"!({condition(r, atoms, depth + 1)})"
    if c == 14:
        cond, then, other = (condition(r, atoms, depth + 1) for _ in range(3))
        return f"(if {cond} then {then} else {other})"
    return f"(if {condition(r, atoms, depth + 1)} then {long_expr(r, depth + 1)} else {long_expr(r, depth + 1)}) > 0"


def policies(r: random.Random, atoms: list[str]) -> str:
    out = []
    for i in range(r.randrange(1, 4)):
        effect = r.choice(["permit", "permit", "forbid"])
        clauses = " ".join(f"{r.choice(['when', 'unless'])} {{ {condition(r, atoms)} }}" for _ in range(r.randrange(3)))
        scope = f"{r.choice(PRINCIPALS)}, {r.choice(ACTIONS)}, {r.choice(RESOURCES)}"
        out.append(f'@id("p{i}") {effect} ({scope}) {clauses};')
    return "\n".join(out)


def unvalidated(folder: Path, text: str, schema: str) -> PolicyBundle:
    """A bundle without Cedar's validator (which would refuse many random policies)."""
    found: dict[str, Policy] = {}
    for line, statement in split_statements(text):
        (template,) = cedarpy.PolicySet.from_str(statement).to_pst().static_policies.values()
        pid = template.annotations["id"]
        found[pid] = Policy(pid, template.effect, SourceLocation(str(folder / "p.cedar"), line), statement)
    return PolicyBundle(folder, schema, str(cedarpy.Schema.from_str(schema)), found, observe([]), "")


def some_long(r: random.Random) -> int:
    return r.choice([0, 1, -1, 2, 3, 5, 2**63 - 1, -(2**63), 2**62, -(2**62)])


def some_string(r: random.Random) -> str:
    return r.choice(["", "a", "b", "a*", "ab", "ba", "\U0001f680"])


def user_attrs(r: random.Random) -> dict[str, Any]:
    attrs: dict[str, Any] = {
        "tenant": some_string(r),
        "teams": r.sample(["a", "b", "c"], r.randrange(4)),
        "slots": r.sample([0, 1, 3, 7], r.randrange(5)),
        "level": some_long(r),
        "admin": r.random() < 0.5,
    }
    if r.random() < 0.5:
        attrs["n"] = some_long(r)
    if r.random() < 0.5:
        attrs["boss"] = {"__entity": {"type": "User", "id": r.choice(["a", "b", "u"])}}
    return attrs


def some_request(r: random.Random) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[str, str, str]]:
    """A request, an entity store for it (users a, b, u; groups g, h, g sometimes in h), and its
    (action, principal type, resource type)."""

    def groups() -> list[dict[str, str]]:
        return [{"type": "Group", "id": g} for g in r.sample(["g", "h"], r.randrange(3))]

    action = r.choice(["schedule", "share", "drain"])
    principal = r.choice(["a", "b", "u"])
    store: dict[tuple[str, str], dict[str, Any]] = {
        ("User", u): {"attrs": user_attrs(r), "parents": groups()} for u in ("a", "b", "u")
    }
    resource_type = "Gpu" if action != "share" or r.random() < 0.5 else "User"
    resource = r.choice(["a", "b", "x"]) if resource_type == "Gpu" else r.choice(["a", "b", "u"])
    if resource_type == "Gpu":
        owner = {"__entity": {"type": "User", "id": r.choice(["a", "b", "u"])}}
        attrs = {
            "gpus": some_long(r),
            "tenant": some_string(r),
            "owner": owner,
            "tags": r.sample(["a", "b"], r.randrange(3)),
        }
        store[("Gpu", resource)] = {"attrs": attrs, "parents": groups()}
    store[("Group", "g")] = {"attrs": {}, "parents": [{"type": "Group", "id": "h"}] if r.random() < 0.3 else []}
    store[("Group", "h")] = {"attrs": {}, "parents": []}
    context: dict[str, Any] = {}
    if action == "schedule":
        context["load"] = some_long(r)
        if r.random() < 0.5:
            context["incident"] = r.random() < 0.5
        if r.random() < 0.5:
            context["who"] = some_string(r)
    entities = [{"uid": {"type": t, "id": i}, **e} for (t, i), e in store.items()]
    entities.append(
        {"uid": {"type": "Action", "id": "drain"}, "attrs": {}, "parents": [{"type": "Action", "id": "all"}]}
    )
    entities.append({"uid": {"type": "Action", "id": "all"}, "attrs": {}, "parents": []})
    request = {
        "principal": f'User::"{principal}"',
        "action": f'Action::"{action}"',
        "resource": f'{resource_type}::"{resource}"',
        "context": context,
    }
    return request, entities, (f'Action::"{action}"', "User", resource_type)


def decide(
    bundle: PolicyBundle, request: dict[str, Any], entities: list[dict[str, Any]], only: str = ""
) -> tuple[str, bool, bool]:
    """Topolog's decision, whether Cedar raised, whether some policy was satisfied."""
    text = "\n".join(p.text for pid, p in sorted(bundle.policies.items()) if only in ("", pid))
    result = cedarpy.is_authorized(request, text, entities)
    erred = bool(list(result.diagnostics.errors))
    allowed = result.decision == cedarpy.Decision.Allow and not erred
    return ("allow" if allowed else "deny"), erred, bool(list(result.diagnostics.reasons))


NAMESPACED = """
namespace App {
  entity Region enum ["eu", "us"];
  entity Group in [Group] = { region?: Region };
  entity User in [Group] = { tenant: String, teams: Set<String>, slots: Set<Long>, n?: Long, level: Long,
                             boss?: User, admin: Bool, region: Region };
  entity Gpu in [Group] = { gpus: Long, tenant: String, owner: User, tags: Set<String>, region: Region };
  action schedule appliesTo {
    principal: [User, Group], resource: [Gpu],
    context: { incident?: Bool, load: Long, who?: String, target?: Gpu }
  };
  action share appliesTo { principal: [User], resource: [User, Gpu, Group] };
  action all;
  action drain in [all] appliesTo { principal: [User], resource: [Gpu] };
}
"""
"""The same in a namespace, with an enumerated type, Group principals and an entity in the context."""
NAMESPACED_ATOMS = [
    "principal.region == resource.region",
    'resource.region == Region::"eu"',
    "context has target && context.target == resource",
    'context has target && context.target in Group::"g"',
    "principal is Group",
    'resource is Group in Group::"g"',
    'principal has region && principal.region == Region::"us"',
]


def qualified(text: str) -> str:
    """Policies written for SCHEMA, with every type named in the App namespace."""
    text = re.sub(r"\b(Group|User|Gpu|Action|Region)::", r"App::\1::", text)
    return re.sub(r"\bis (Gpu|User|Group)\b", r"is App::\1", text)


def in_namespace(
    r: random.Random, request: dict[str, Any], entities: list[dict[str, Any]], key: tuple[str, str, str]
) -> tuple[dict[str, Any], list[dict[str, Any]], tuple[str, str, str]]:
    """A request of some_request moved into the App namespace, with regions and a context target."""
    for e in entities:
        if e["uid"]["type"] in ("User", "Gpu"):
            e["attrs"]["region"] = {"__entity": {"type": "Region", "id": r.choice(["eu", "us"])}}
        for ref in [e["uid"], *e["parents"], *(v["__entity"] for v in e["attrs"].values() if isinstance(v, dict))]:
            ref["type"] = "App::" + ref["type"]
    if "load" in request["context"] and r.random() < 0.5:
        request["context"]["target"] = {"__entity": {"type": "App::Gpu", "id": r.choice(["a", "b", "x"])}}
    request = {**request, **{k: "App::" + request[k] for k in ("principal", "action", "resource")}}
    action, principal, resource = key
    return request, entities, ("App::" + action, "App::" + principal, "App::" + resource)


def check_seed(seed: int, folder: Path, requests: int, namespaced: bool = False) -> bool:
    """False where the analysis refused the policies (OutsideAnalysis), else True once checked."""
    r = random.Random(seed)
    schema, atoms = (NAMESPACED, ATOMS + NAMESPACED_ATOMS) if namespaced else (SCHEMA, ATOMS)
    first_text, second_text = policies(r, atoms), policies(r, atoms)
    if namespaced:
        first_text, second_text = qualified(first_text), qualified(second_text)
    first, second = unvalidated(folder, first_text, schema), unvalidated(folder, second_text, schema)
    try:
        findings = analysed(first)
        differences = compared(first, second)
    except TopologError:
        return False  # outside the encoding (a refusal with the policy's line): nothing to check
    differ = {(d.action, d.principal.partition('::"')[0], d.resource.partition('::"')[0]) for d in differences}
    dead = {f.policy for f in findings if f.kind == "dead"}
    may_err = {f.policy for f in findings if f.kind == "may-error"}
    for _ in range(requests):
        request, entities, key = some_request(r)
        if namespaced:
            request, entities, key = in_namespace(r, request, entities, key)
        if key not in differ:
            assert decide(first, request, entities)[0] == decide(second, request, entities)[0], (
                f"seed {seed}: called equivalent on {key}, Cedar differs on {request}\n{first_text}\n--\n{second_text}"
            )
        for pid in first.policies:
            _, erred, satisfied = decide(first, request, entities, only=pid)
            assert not (pid in dead and satisfied and not erred), f"seed {seed}: {pid} dead, satisfied by {request}"
            assert not erred or pid in may_err, f"seed {seed}: {pid} raised on {request}, not reported\n{first_text}"
    return True


@pytest.mark.parametrize("seed", range(8))
def test_random_policies_against_cedar(seed: int, tmp_path: Path) -> None:
    # These seeds' policies are all within the encoding: each is analysed, then checked.
    assert check_seed(seed, tmp_path, requests=20)


@pytest.mark.parametrize("seed", range(4))
def test_random_namespaced_policies_against_cedar(seed: int, tmp_path: Path) -> None:
    assert check_seed(seed, tmp_path, requests=20, namespaced=True)


@pytest.mark.slow
def test_many_random_policies_against_cedar(tmp_path: Path) -> None:
    checked = sum(check_seed(seed, tmp_path, requests=40) for seed in range(8, 400))
    checked += sum(check_seed(seed, tmp_path, requests=40, namespaced=True) for seed in range(4, 200))
    assert checked > 500  # the generator stays within the encoding (2 of 300 were refused)
