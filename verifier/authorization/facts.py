"""Authorization decisions as Datalog facts, so rules can join them with the topology.

Cedar is asked once per (principal class, action, GPU class) in the context {}; the rows
of the relations below (declared in rules/schema.dl) go into the engine with the inventory's
facts, before the one evaluation. Without a principals file there are none and rules/authz/
has nothing to judge.

Working out the classes reads every GPU's attributes: half a second at 131,072 GPUs, for rows
that only the inventory, the principals, the policies and this code decide. So the rows are
kept in the cache (verifier.core.cache), named by all of those: `place` asked again about an
unchanged fleet (new jobs, the same hardware) and a repeated `verify` read them back.
"""

from __future__ import annotations

import json
from bisect import bisect_left
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import fields, is_dataclass
from functools import cache
from typing import TYPE_CHECKING

from verifier.authorization.classes import EntityClass, gpu_classes, partition, partition_gpus, policy_reads
from verifier.authorization.entities import DOMAIN_TYPE, HARDWARE_TYPES, PRINCIPAL_TYPES, parse_uid
from verifier.authorization.evaluate import ACTIONS, Decision, Request
from verifier.authorization.observed import walk
from verifier.authorization.relations import AUTHZ_RELATIONS
from verifier.authorization.setup import AuthzSetup
from verifier.core.cache import code_digest, enabled, entry_key, package_digest, read_pickled, write_pickled
from verifier.core.gc_pause import collector_paused
from verifier.core.lookalike import described, odd_character, skeleton
from verifier.core.stamped_rows import StampBlock, StampedRows
from verifier.core.suggest import closest
from verifier.engine.ast import Row

if TYPE_CHECKING:
    from cedarpy import pst

KIND = "authz-facts"
KEEP = 8
"""Entries kept: a 131,072-GPU fleet's is about 3 MB."""
_FORMAT = 15
Packed = tuple[int, dict[str, Sequence[Row]]]


def authz_facts(setup: AuthzSetup) -> dict[str, Sequence[Row]]:
    """The rows of every relation in AUTHZ_RELATIONS: kept in the cache when the setup knows what
    its inventory was loaded from (AuthzSetup.inventory_parts; not a tool's output), else worked out.
    """
    key = _key(setup)
    if key is not None:
        kept = _unpack(read_pickled(KIND, key))
        if kept is not None:
            return kept
    with collector_paused():
        rows = _facts(setup)
    if key is not None:
        packed: Packed = (_FORMAT, rows)
        write_pickled(KIND, key, packed, KEEP)
    return rows


def _key(setup: AuthzSetup) -> str | None:
    """The entry of these rows: the inventory's bytes, the policies and schema with the cedarpy
    that validated them (the bundle's digest), every principal's fields, and the code between them.
    """
    if setup.inventory_parts is None or not setup.bundle.digest or not enabled():
        return None
    # The files' bytes in order, not their names: no row holds a location, so a copy of the
    # inventory elsewhere (a scheduler's temporary folder) reads the same entry.
    inventory = [part for part in setup.inventory_parts if isinstance(part, bytes)]
    # Every field but where it was written (a new field is read here without a change).
    people = [tuple(getattr(p, f.name) for f in fields(p) if f.name != "loc") for p in setup.principals.sorted()]
    import pickle  # only with the cache on: a cold run never pickles

    principals = pickle.dumps(people, protocol=pickle.HIGHEST_PROTOCOL)
    # Whose decisions the rows carry: every principal's, or those asked for (`place`).
    deciding = "every principal" if setup.deciding_for is None else json.dumps(sorted(setup.deciding_for))
    return entry_key(_code(), ["authz facts", *inventory, setup.bundle.digest, principals, deciding])


@cache
def _code() -> bytes:
    """Everything that turns those inputs into rows: the inventory loader and the core it builds on,
    the entities, classes and decisions (this package), the NVLink domains (verifier.facts.graph)
    and the principals' loader.
    """
    parts = [
        package_digest("verifier.sources.inventory"),
        package_digest("verifier.core"),
        package_digest("verifier.authorization"),
        code_digest("verifier.facts", ("graph.py",)),
        code_digest("verifier.sources", ("principals.py",)),
    ]
    return b"".join(parts)


def _unpack(stored: object) -> dict[str, Sequence[Row]] | None:
    """The rows of an entry this code wrote; None for anything else (a miss, never a crash)."""
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != _FORMAT:
        return None
    rows = stored[1]
    if not isinstance(rows, dict) or sorted(rows) != sorted(AUTHZ_RELATIONS):
        return None
    if not all(_rows_ok(v) for v in rows.values()):
        return None
    return rows


def _rows_ok(rows: object) -> bool:
    """Plain rows (a list of tuples), or StampedRows of such and blocks (authz_class's)."""
    if isinstance(rows, StampedRows):
        return (
            _rows_ok(rows.plain)
            and isinstance(rows.blocks, list)
            and all(isinstance(b, StampBlock) for b in rows.blocks)
        )
    return isinstance(rows, list) and all(isinstance(r, tuple) for r in rows)


def policy_names(setup: AuthzSetup) -> list[Row]:
    """`policy_names(policy, type, id, nearest)`: each entity a policy names, with the nearest existing
    id of its type when it does not exist (AUTHZ004 reports those). Existence is the entity graph's:
    the principals file, the inventory's objects, the NVLink domains.
    """
    rows: list[Row] = []
    for policy in sorted(setup.bundle.policies.values(), key=lambda p: p.id):
        for named in policy.named:
            parsed = parse_uid(named)
            if parsed is None:
                continue
            etype, eid = parsed
            nearest = "" if setup.graph.ident(named) is not None else _nearest(setup, etype, eid)
            rows.append((policy.id, etype, eid, nearest))
    return rows


NEAREST_IDS = 5_000
"""The most ids an unknown name in a policy is compared with, one by one, for the nearest (AUTHZ004):
past it, only those under the name's own parent are, or else the NEIGHBOUR_IDS beside it in sorted
order (`_nearest`)."""
NEIGHBOUR_IDS = 1_000
"""The ids beside an unknown name in sorted order compared with it, past NEAREST_IDS, where no parent narrows them."""
_GROUP_TYPES = ("Node", "Rack", "Pod", DOMAIN_TYPE)
_SCHEDULING = ("schedule", "reserve")


def policy_trees(setup: AuthzSetup) -> dict[str, pst.Template]:
    """Each policy's syntax tree, by id, from one conversion of the policy set the authorizer
    decides with (parsing each statement again for every relation below cost more than all
    the rules that read them, on a shipped example).
    """
    if not setup.bundle.policies:
        return {}
    return dict(setup.bundle.policy_set.to_pst().static_policies)


def _named_actions(action: object) -> set[str] | None:
    """The actions a policy's action scope names (`action == A`, `action in [A, B]`); None when unscoped."""
    from cedarpy import pst

    if isinstance(action, pst.ActionEq):
        return {action.entity.id}
    if isinstance(action, pst.ActionIn):
        return {a.id for a in action.entities}
    return None


def forbid_resource_eq(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> list[Row]:
    """`forbid_resource_eq(policy, type, id)`: a forbid scoped `resource == T::"id"` to a group of GPUs
    (a node, rack, pod or NVLink domain) for any action or for schedule or reserve. `==` matches
    requests on the group itself and never those on the GPUs inside it, where jobs are scheduled
    (AUTHZ013 reports the GPUs it leaves open).
    """
    forbids = [p for p in setup.bundle.policies.values() if p.effect == "forbid"]
    if not forbids:
        return []
    from cedarpy import pst

    rows: list[Row] = []
    for policy in sorted(forbids, key=lambda p: p.id):
        template = trees[policy.id]
        scope, action = template.resource, template.action
        # A static policy has no slot (templates are refused when the policies are read).
        if not isinstance(scope, pst.ScopeEq) or not isinstance(scope.entity, pst.EntityUid):
            continue
        group = scope.entity
        if str(group.type) not in _GROUP_TYPES:
            continue
        # Unscoped: any action (an action group is not in the shipped schema).
        actions = _named_actions(action)
        if actions is None or actions & set(_SCHEDULING):
            rows.append((policy.id, str(group.type), group.id))
    return rows


def forbid_resource_is(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> list[Row]:
    """`forbid_resource_is(policy, type)`: a forbid scoped `resource is T` (or `resource is T in ...`) to a
    group type (node, rack, pod or NVLink domain) whose action scope names schedule. Jobs are
    scheduled on GPUs, and such a scope matches no request on a GPU: the forbid closes nothing there
    (AUTHZ015). A forbid for every action (`action` unscoped) on nodes is one for draining and
    administering them, requests made on the node itself: not judged (review R-PJ, round 13).
    """
    forbids = [p for p in setup.bundle.policies.values() if p.effect == "forbid"]
    if not forbids:
        return []
    from cedarpy import pst

    rows: list[Row] = []
    for policy in sorted(forbids, key=lambda p: p.id):
        template = trees[policy.id]
        scope, action = template.resource, template.action
        if not isinstance(scope, pst.ScopeIs | pst.ScopeIsIn) or str(scope.entity_type) not in _GROUP_TYPES:
            continue
        actions = _named_actions(action)
        if actions is None:
            continue
        # Reserving a whole node by its id is a request of its own that a site may forbid by design;
        # scheduling is asked on GPUs only.
        if "schedule" in actions:
            rows.append((policy.id, str(scope.entity_type)))
    return rows


def forbid_eq_principal(setup: AuthzSetup, trees: Mapping[str, pst.Template], scoped: Sequence[Row]) -> list[Row]:
    """`forbid_eq_principal(policy, principal)`: for each forbid of forbid_resource_eq, the principals its
    principal scope matches (`principal == User::"bob"`, `principal in Team::"t"`, `principal is User`;
    "" for a bare `principal`, every one): AUTHZ013 names only those, not everyone who may schedule on the group's GPUs
    (a forbid scoped to bob leaves alice on them by design). Its conditions are not read.
    """
    if not scoped:
        return []
    from cedarpy import pst

    people = setup.principals.sorted()
    rows: list[Row] = []
    for policy_id in sorted({str(r[0]) for r in scoped}):
        scope = trees[policy_id].principal
        if isinstance(scope, pst.ScopeAny):
            # Every principal: one row with the empty id (no principal has it), not one per principal,
            # so that a forbid per node in maintenance does not multiply the principals file.
            rows.append((policy_id, ""))
            continue
        kind = str(scope.entity_type) if isinstance(scope, pst.ScopeIs | pst.ScopeIsIn) else None
        within = scope.entity if isinstance(scope, pst.ScopeEq | pst.ScopeIn | pst.ScopeIsIn) else None
        if within is not None and not isinstance(within, pst.EntityUid):
            continue  # a slot: templates are refused when the policies are read
        for p in people:
            if kind is not None and p.type != kind:
                continue
            if within is not None:
                same = p.type == str(within.type) and p.id == within.id
                # `in` reaches the members of a team, nested too (a team's all_teams holds itself).
                inside = not isinstance(scope, pst.ScopeEq) and str(within.type) == "Team" and within.id in p.all_teams
                if not (same or inside):
                    continue
            rows.append((policy_id, p.id))
    return rows


def condition_reads(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> tuple[list[Row], list[Row], list[Row]]:
    """What policies' conditions read, from one walk of each policy's conditions.

    - `permit_reads_principal(policy, attribute)`: each principal attribute a permit's conditions read
      (`principal.role`, `principal has on_call`): AUTHZ006 leaves alone a permit that singles out its
      principals by an attribute other than the tenant;
    - `policy_reads_resource(policy, attribute)`: each hardware attribute a policy's conditions read
      (`resource.owner`, `resource has tenant`): AUTHZ010 judges an owner label only where some policy
      reads the owner (where none does, the label is a note for people, an e-mail or a cost centre);
    - `permit_role_literal(policy, role)`: each role a permit's `when` conditions compare `principal.role`
      equal to (`principal.role == "contractor"`): AUTHZ006 and AUTHZ008 leave alone a permit written for a
      role (`principal.role != "intern"` singles out nobody: it lets in every other role).
    """
    if not trees:
        return [], [], []
    from cedarpy import pst

    principal, resource = pst.Var("principal"), pst.Var("resource")
    role = pst.GetAttr(base=principal, attr="role")
    principal_reads: set[Row] = set()
    resource_reads: set[Row] = set()
    role_literals: set[Row] = set()
    for policy in setup.bundle.policies.values():
        permit = policy.effect == "permit"
        for clause in trees[policy.id].clauses:
            # `when` conditions only for a role literal: `unless { principal.role == "intern" }` keeps a
            # role out, not in.
            when = permit and isinstance(clause, pst.When)
            for node in walk(clause):
                if isinstance(node, pst.GetAttr | pst.HasAttr):
                    read = [node.attr] if isinstance(node, pst.GetAttr) else node.attrs
                    if node.base == resource:
                        resource_reads.update((policy.id, a) for a in read)
                    elif permit and node.base == principal:
                        principal_reads.update((policy.id, a) for a in read)
            if when:
                role_literals.update((policy.id, r) for r in _roles_let_in(clause.expr, role))
    return sorted(principal_reads), sorted(resource_reads), sorted(role_literals)


def _roles_let_in(expr: object, role: object) -> Iterator[str]:
    """Roles an expression compares `principal.role` equal to where that lets the role in.

    Under a `!` the comparison keeps the role out (`!(principal.role == "intern")` is `!=`), and an
    if-then-else's condition lets in one branch or the other: neither singles out the role admitted.
    """
    from cedarpy import pst

    stack: list[tuple[object, bool]] = [(expr, False)]
    while stack:
        node, negated = stack.pop()
        if isinstance(node, pst.UnaryOp):
            stack.append((node.arg, negated != (node.op == "not")))
        elif isinstance(node, pst.IfThenElse):
            stack.extend(((node.then_expr, negated), (node.else_expr, negated)))
        elif isinstance(node, pst.BinaryOp):
            if node.op == "eq" and not negated:
                for a, b in ((node.left, node.right), (node.right, node.left)):
                    if a == role and isinstance(b, pst.StringLit):
                        yield b.value
            stack.extend(((node.left, negated), (node.right, negated)))
        elif is_dataclass(node) and not isinstance(node, type):
            stack.extend((getattr(node, f.name), negated) for f in fields(node))
        elif isinstance(node, tuple):
            stack.extend((n, negated) for n in node)
        elif isinstance(node, Mapping):
            stack.extend((n, negated) for n in node.values())


def _nearest(setup: AuthzSetup, etype: str, eid: str) -> str:
    graph = setup.graph
    if etype in PRINCIPAL_TYPES:
        ids = [p.id for p in setup.principals.principals.values() if p.type == etype]
    elif etype == DOMAIN_TYPE:
        ids = list(graph.domains().members)
    else:
        kind = next((k for k, t in HARDWARE_TYPES.items() if t == etype), "")
        ids = [o.id for o in graph.inv.objects.values() if o.kind == kind]
    drawn = skeleton(eid)
    if not eid.isascii():
        # A look-alike (a Cyrillic a in `ivan`) prints as the id it imitates: "did you mean 'ivan'?"
        # beside 'ivan' told the reader nothing. The id drawn the same is named with the odd letter.
        same = next((i for i in ids if i != eid and skeleton(i) == drawn), None)
        if same is not None:
            return f"did you mean {same!r}? it looks the same but holds {described(odd_character(eid, same))}"
    if len(ids) > NEAREST_IDS:
        # A 131,072-GPU fleet: difflib over every GPU id took 6-12 s per unknown name, paid at every
        # verify and at every revision `serve` prepares (on its admit thread), so a policy naming a
        # few mistyped GPUs held admissions up for a minute. The ids under the same parent are the
        # ones compared (`dgx0012/gpu9` beside dgx0012's GPUs).
        head, slash, _ = eid.rpartition("/")
        near = [i for i in ids if i.startswith(head + "/")] if slash else []
        if not near or len(near) > NEAREST_IDS:
            # A node's own id (no parent: 16,384 nodes at 131,072 GPUs) or a GPU of a mistyped node
            # (`su0000-r0-m3/gpu1`): the NEIGHBOUR_IDS ids beside it in sorted order are compared, which
            # hold the id a typo past its first characters was meant for (`su0000-r0-n3`).
            ordered = sorted(ids)
            at = bisect_left(ordered, eid)
            half = NEIGHBOUR_IDS // 2
            match = closest(eid, ordered[max(0, at - half) : at + half])
            if match:
                return f"did you mean {match!r}?"
            if slash and not near:
                return f"no id of that type is under {head + '/'!r}"
            return f"not compared with each of the {len(ids):,} ids of that type"
        ids = near
    match = closest(eid, ids)
    return f"did you mean {match!r}?" if match else "no existing id of that type is close"


def _facts(setup: AuthzSetup) -> dict[str, Sequence[Row]]:
    graph = setup.graph
    reads = policy_reads(setup.bundle)
    principal_uids = graph.uids_of_type(*PRINCIPAL_TYPES)
    asked = setup.deciding_for
    if asked is not None:
        # Only these principals' decisions are read (`place`: its jobs'): each is decided as a
        # member of its class among them, the same decision as among every principal.
        known = setup.principals.principals
        wanted = {known[i].uid for i in asked if i in known}
        principal_uids = [u for u in principal_uids if u in wanted]
    principal_classes = partition(principal_uids, graph, reads)
    # The GPUs' classes by node groups (classes.gpu_classes): a fleet's nodes stamped whole give
    # their rows as blocks, with nothing made per GPU. Otherwise every GPU's attributes in one pass,
    # each class with its representative and its members' positions in the GPUs' sorted ids
    # (classes.partition_gpus): a GPU's row is the id at its position, with no uid made, parsed
    # back (`ident`) or sorted per GPU.
    by_blocks = gpu_classes(graph, reads)
    if by_blocks is not None:
        classes, class_rows = by_blocks
    else:
        gpu_ids, partitioned = partition_gpus(graph, reads)
        classes = [(representative, name) for representative, name, _at in partitioned]
        class_rows = [(gpu_ids[i], name) for _uid, name, at in partitioned for i in at]

    def id_of(entity_uid: str) -> str:
        ident = graph.ident(entity_uid)
        if ident is None:
            raise KeyError(entity_uid)
        return ident[1]

    rows: dict[str, list[Row]] = {name: [] for name in sorted(AUTHZ_RELATIONS)}
    known = setup.principals.principals
    for p in setup.principals.sorted():
        rows["authz_principal"].append((p.id, p.type))
        rows["member_of"].extend((p.id, t) for t in p.teams)
        # The attributes rules judge principals by (AUTHZ006-AUTHZ009, AUTHZ012: on the incident
        # rota), as the entity has them, and the id case-folded (AUTHZ011: ids a reader takes for one).
        rows["principal_attr"].extend(
            (
                (p.id, "tenant", p.tenant),
                (p.id, "role", p.role),
                (p.id, "on_call", "true" if p.on_call else "false"),
                (p.id, "casefold", p.id.casefold()),
            )
        )
        # Every tenant it belongs to (AUTHZ006): its own and each of its teams', directly or through
        # nested teams; `tenant` is only the first of them. A few rows a principal, made from the
        # teams the principals' loader has already listed (no recursion in the rules).
        tenants = {p.tenant, *(known[t].tenant for t in p.all_teams)} - {""}
        rows["principal_attr"].extend((p.id, "in_tenant", x) for x in sorted(tenants))
        if p.type == "Team":
            # The teams a team is in, directly or not (AUTHZ009: a sub-tenant's teams are inside it).
            rows["principal_attr"].extend((p.id, "in_team", t) for t in p.all_teams if t != p.id)
    # A class's tenant is its representative's: `permitted` holds for every GPU of a class, so
    # what a rule says of the representative is true, though a class that no policy splits by
    # tenant may hold GPUs of other tenants too.
    rows["class_tenant"] = [(cls, str(graph.attrs(rep).get("tenant", ""))) for rep, cls in classes]
    rows["tenant_label_near"] = _tenant_labels_near(rows["class_tenant"], setup)
    requests = [
        Request(pc.representative, action, representative)
        for pc in principal_classes
        for action in ACTIONS
        for representative, _id in classes
    ]
    rows["policy_names"] = policy_names(setup)
    trees = policy_trees(setup)
    rows["forbid_resource_eq"] = forbid_resource_eq(setup, trees)
    rows["forbid_resource_is"] = forbid_resource_is(setup, trees)
    rows["forbid_eq_principal"] = forbid_eq_principal(
        setup, trees, [*rows["forbid_resource_eq"], *rows["forbid_resource_is"]]
    )
    # The forbids AUTHZ013 and AUTHZ015 judge whose `when` or `unless` reads the principal: those their
    # scope matches may be more than those their condition is for, which the count then says.
    judged = {str(r[0]) for r in (*rows["forbid_resource_eq"], *rows["forbid_resource_is"])}
    rows["forbid_reads_principal"] = sorted((pid,) for pid in judged if _reads_principal(trees[pid]))
    conditions = condition_reads(setup, trees)
    rows["permit_reads_principal"], rows["policy_reads_resource"], rows["permit_role_literal"] = conditions
    rows["policy_value_never"] = _values_never(setup, trees)
    compared = _compared_roles(setup, trees)
    rows["role_near"] = _roles_near(setup, trees, compared)
    rows["trainee_spelling"] = [(r,) for r in sorted(_trainee_spellings(setup, compared))]
    # The incident's requests (context {incident: true}, schedule on quarantined classes) go in the
    # same batch as the others: one more cedarpy call would build and load the entities again.
    quarantined = [(rep, cls) for rep, cls in classes if graph.attrs(rep).get("quarantined") is True]
    incident = [
        Request(pc.representative, "schedule", rep, {"incident": True})
        for pc in principal_classes
        for rep, _cls in quarantined
    ]
    decided = setup.authorizer.decide([*requests, *incident]) if incident else setup.authorizer.decide(requests)
    decisions = iter(decided)
    plain: dict[tuple[str, str], Decision] = {}  # (principal class, GPU class): schedule in the context {}
    for pc in principal_classes:
        for action in ACTIONS:
            for _uid, cls in classes:
                d = next(decisions)
                if action == "schedule":
                    plain[(pc.representative, cls)] = d
                if d.allowed:
                    members = [id_of(m) for m in pc.members]
                    rows["permitted"].extend((m, action, cls) for m in members)
                    rows["permitted_by"].extend((m, action, cls, policy) for policy in d.reasons for m in members)
                for policy, message in d.errors:
                    rows["authz_error"].append((id_of(pc.representative), action, cls, policy, message))
    if rows["tenant_label_near"]:
        rows["tenant_label_near"] = _labels_not_given(rows, setup)
    trainee_roles = _TRAINEE_ROLES | {str(r[0]) for r in rows["trainee_spelling"]}
    rows["incident_permitted"] = _incident_permitted(
        setup, principal_classes, quarantined, decisions, plain, id_of, trees, trainee_roles
    )
    return {**rows, "authz_class": class_rows}


def _spelling(tenant: str) -> str:
    """A tenant as a reader takes it: case, surrounding space and `_`, `.` or a space for `-` ignored."""
    return "-".join(tenant.casefold().strip().replace("_", " ").replace(".", " ").split())


def _tenant_labels_near(class_tenants: Sequence[Row], setup: AuthzSetup) -> list[Row]:
    """(label, tenant): a tenant label on GPUs (a class's) that is no principal's tenant, spelled as a
    principal's tenant is but for case, spaces or `_`/`.` for `-` (AUTHZ016: one tenant written two ways).
    A few rows: one per distinct label, not per GPU.
    """
    tenants = {p.tenant for p in setup.principals.sorted()} - {""}
    by_spelling: dict[str, set[str]] = {}
    for tenant in tenants:
        by_spelling.setdefault(_spelling(tenant), set()).add(tenant)
    labels = {str(row[1]) for row in class_tenants} - tenants - {""}
    return sorted((label, known) for label in labels for known in by_spelling.get(_spelling(label), ()))


def _labels_not_given(rows: Mapping[str, Sequence[Row]], setup: AuthzSetup) -> list[Row]:
    """tenant_label_near less each (label, tenant) where a permit that reads `resource.tenant` lets a
    principal of that tenant schedule on GPUs with that label: the site's permits give the label to the
    tenant (`principal.teams.contains(resource.tenant)` with team ml_a of tenant ml-a), so the label
    is that tenant's hardware to Cedar (review R-PJ, round 13). Asked only when some label is near a
    tenant (none on a fleet spelled one way): a pass over permitted_by then.
    """
    near = {(str(label), str(known)) for label, known in rows["tenant_label_near"]}
    reads_label = {str(pol) for pol, attr in rows["policy_reads_resource"] if attr == "tenant"}
    label_of = {str(cls): str(label) for cls, label in rows["class_tenant"]}
    labels = {label for label, _known in near}
    tenant_of = {p.id: p.tenant for p in setup.principals.sorted()}
    given = {
        (label_of[str(cls)], tenant_of.get(str(who), ""))
        for who, action, cls, pol in rows["permitted_by"]
        if action == "schedule" and str(pol) in reads_label and label_of.get(str(cls)) in labels
    }
    return sorted(near - given)


def _reads_principal(tree: pst.Template) -> bool:
    """Whether a policy's conditions read the principal (`principal.role`, `principal in Team::"t"`)."""
    from cedarpy import pst

    principal = pst.Var("principal")
    return any(node == principal for clause in tree.clauses for node in walk(clause))


_STATES = ("ok", "down", "degraded", "drained")
"""The values a resource's `state` takes (policies/schema.cedarschema; entities.py writes "ok" where
the inventory gives none)."""


_NOT_GPU_KINDS = frozenset({"cpu", "nic", "switch", "nvswitch", "pcie_switch", "system", "dpu"})


def _values_never(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> list[Row]:
    """(policy, attribute, literal, values): texts a policy compares a resource's attribute with, never taken.

    A policy compares a resource's `state` or `model` with a text it never takes (`==`, `!=`,
    `[...].contains(resource.x)`), so that comparison never holds (or always, under `!=`), in any
    inventory (AUTHZ019, round 61). Read exactly, never guessed:

    - `state` is one of ok, down, degraded, drained: any other text (`"drain"`, `"Down"`) is never one.
    - `model` is a GPU's exact catalogue name, "mixed" for a group of several, "" with none. A text
      that is no model of the built-in catalogue or the inventory's but spells one in other case
      (`"a100-sxm4-80gb"`) or is the start of some (`"H100"`, `"MI300"`, a family) names a model the
      way Cedar never compares: `values` lists the models meant (at most three, sorted). A text
      unlike any model (`"TPU-v5"`) may be a model still to come, and is not judged.

    One row per policy and attribute (AUTHZ019's finding): `literal` joins the texts by `", "`, and
    `values` the models meant by any of them, each once. Rows of one text each, joined by the
    finding's group, listed a model twice ("H100" and "h100-sxm5-80gb" both mean H100-SXM5-80GB).
    """
    if not trees:
        return []
    from cedarpy import pst

    from verifier.sources.inventory.catalog import builtin_models

    catalogue = [*builtin_models(), *setup.inventory.models.values()]
    models = {m.name for m in catalogue}
    # The models meant are those a GPU carries: not a CPU's, a NIC's, a switch's or a system's.
    folded = sorted({(m.name.casefold(), m.name) for m in catalogue if m.kind not in _NOT_GPU_KINDS})
    resource = pst.Var("resource")
    wanted: dict[object, str] = {pst.GetAttr(base=resource, attr=a): a for a in ("state", "model")}
    said_by: dict[tuple[str, str], set[str]] = {}
    meant_by: dict[tuple[str, str], set[tuple[str, str]]] = {}
    more: set[tuple[str, str]] = set()
    for policy in setup.bundle.policies.values():
        for clause in trees[policy.id].clauses:
            for node in walk(clause):
                if not isinstance(node, pst.BinaryOp):
                    continue
                literals: Sequence[object]
                if node.op in ("eq", "not_eq") and (node.left in wanted or node.right in wanted):
                    attr = wanted.get(node.left) or wanted[node.right]
                    literals = (node.left, node.right)
                elif node.op == "contains" and node.right in wanted and isinstance(node.left, pst.Set):
                    attr, literals = wanted[node.right], node.left.elements
                else:
                    continue
                for lit in literals:
                    if not isinstance(lit, pst.StringLit):
                        continue
                    text = lit.value
                    # The literal as Cedar writes it, within the message's quotes: the texts of one
                    # policy and attribute (a set literal's several, `["drain", "Down"]`) are one
                    # finding, joined by `", "` (a bare join would read as one text "Down, drain").
                    said = text.replace("\\", "\\\\").replace('"', '\\"')
                    if attr == "state":
                        if text not in _STATES:
                            said_by.setdefault((policy.id, attr), set()).add(said)
                        continue
                    if text in models or text in ("mixed", ""):
                        continue
                    key = text.casefold()
                    meant = [(f, m) for f, m in folded if f == key or f.startswith(key)]
                    if meant:
                        said_by.setdefault((policy.id, attr), set()).add(said)
                        meant_by.setdefault((policy.id, attr), set()).update(meant[:3])
                        if len(meant) > 3:
                            more.add((policy.id, attr))
    rows: list[Row] = []
    for (pid, attr), texts in said_by.items():
        if attr == "state":
            values = ", ".join(_STATES)
        else:
            values = ", ".join(m for _f, m in sorted(meant_by[pid, attr])) + (", ..." if (pid, attr) in more else "")
        rows.append((pid, attr, '", "'.join(sorted(texts)), values))
    return sorted(rows)


def _compared_roles(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> dict[str, set[str]]:
    """The roles each reader compares `principal.role` with (`==`, `!=`, `[...].contains(principal.role)`),
    by policy id; AUTHZ008's trainee roles, read by AUTHZ008 and AUTHZ017, under TRAINEE_READER.
    """
    compared: dict[str, set[str]] = {TRAINEE_READER: set(_TRAINEE_ROLES)}
    if trees:
        from cedarpy import pst

        role = pst.GetAttr(base=pst.Var("principal"), attr="role")
        for policy in setup.bundle.policies.values():
            for clause in trees[policy.id].clauses:
                for node in walk(clause):
                    if not isinstance(node, pst.BinaryOp):
                        continue
                    sides = (node.left, node.right)
                    if node.op in ("eq", "not_eq") and role in sides:
                        literals: Sequence[object] = sides
                    elif node.op == "contains" and node.right == role and isinstance(node.left, pst.Set):
                        literals = node.left.elements
                    else:
                        continue
                    compared.setdefault(policy.id, set()).update(
                        n.value for n in literals if isinstance(n, pst.StringLit)
                    )
    return compared


def _trainee_spellings(setup: AuthzSetup, compared: Mapping[str, set[str]]) -> set[str]:
    """Roles principals hold that spell intern or contractor but for case, spaces or punctuation
    (`Intern`), where a policy compares `principal.role` with that very spelling: the site's own
    spelling of the trainee role, kept consistently by its policies (AUTHZ018 is quiet there), so
    AUTHZ008 and AUTHZ017 judge its holders as trainees (round 61: an `Intern` site's interns who
    may drain went unreported). A spelling no policy compares is AUTHZ018's (`Intern` users beside
    a policy's "intern"): its holders are left to that one finding.
    """
    trainee = {_spelling(r) for r in _TRAINEE_ROLES}
    in_policies = {r for reader, knowns in compared.items() if reader != TRAINEE_READER for r in knowns}
    held = {p.role for p in setup.principals.sorted()}
    return {r for r in in_policies & held if r not in _TRAINEE_ROLES and _spelling(r) in trainee}


def _roles_near(
    setup: AuthzSetup, trees: Mapping[str, pst.Template], compared: Mapping[str, set[str]] | None = None
) -> list[Row]:
    """(role, known, reader): a principal's role spelled as a role `reader` compares `principal.role`
    with (`_compared_roles`; AUTHZ008's trainee roles, read by AUTHZ008 and AUTHZ017, too), but for
    case, spaces or `_`/`.` for `-` (`_spelling`), where the reader does not compare the principal's
    own spelling as well (AUTHZ018: `Intern` escapes `principal.role == "intern"`). A few rows: the
    distinct roles times the literals, none per principal. `compared`: `_compared_roles`, where worked out.
    """
    if compared is None:
        compared = _compared_roles(setup, trees)
    # Roles by their spelling, each spelt once: a pass over roles and one over literals, not their
    # product (20,000 distinct roles x a 100-role list were 2,000,000 pairs, 4 s; review R-PJ round 14).
    by_spelling: dict[str, set[str]] = {}
    for r in {p.role for p in setup.principals.sorted()} - {""}:
        by_spelling.setdefault(_spelling(r), set()).add(r)
    # A role a policy compares as the principals spell it (`principal.role == "Intern"` for users
    # `Intern`) is the site's own spelling, kept by its policies: that AUTHZ008 reads `intern` is no
    # fault the site should respell (review R-PJ round 14: a false alarm on a consistent site).
    in_policies = {r for reader, knowns in compared.items() if reader != TRAINEE_READER for r in knowns}
    return sorted(
        (r, known, reader)
        for reader, knowns in compared.items()
        for known in knowns
        for r in by_spelling.get(_spelling(known), ())
        if r not in knowns and not (reader == TRAINEE_READER and r in in_policies)
    )


TRAINEE_READER = "AUTHZ008/AUTHZ017"
"""The reader of AUTHZ008's trainee roles in role_near: topolog's own checks, not a policy."""

_TRAINEE_ROLES = frozenset({"intern", "contractor"})
"""AUTHZ008's trainee_role (rules/authz/AUTHZ008_trainee_administers.dl), which AUTHZ017 judges on the
rota: incident_permitted keeps rows for on-call principals of these roles only (tests/authorization/
test_incident_checks_review59.py checks the two lists agree)."""


def _incident_permitted(
    setup: AuthzSetup,
    principal_classes: Sequence[EntityClass],
    quarantined: Sequence[tuple[str, str]],
    decisions: Iterator[Decision],
    plain: Mapping[tuple[str, str], Decision],
    id_of: Callable[[str], str],
    trees: Mapping[str, pst.Template],
    trainee_roles: frozenset[str] = _TRAINEE_ROLES,
) -> list[Row]:
    """(principal, class, policy): schedule decided ALLOW in the context {incident: true} on a class
    of quarantined GPUs: the shipped policies open quarantined hardware during an incident to on-call
    staff alone, and the context {} never shows who else an edited exception lets in (AUTHZ014), or
    that an intern is on the rota (AUTHZ017). Only classes whose GPUs are quarantined are asked (a
    class splits on `quarantined` when a policy reads it): a few requests per principal class, their
    decisions `decisions` (principal class by principal class, then each of `quarantined`); `plain`
    holds each schedule decision in the context {}. Rows are kept only where the context {} denies
    it, for principals off the rota (AUTHZ014) and trainees on it (AUTHZ017, `trainee_roles`: `_TRAINEE_ROLES`
    and the site's own spellings of them, `_trainee_spellings`).

    A principal not on call (`on_call` false) is left out where the incident lets it in through an
    exception written for chosen principals (`_choosing_policies`): a site whose rota is a team, the
    team list, a role or named users (`unless { ... && principal in Team::"oncall" }`) let in whom it
    chose, not everyone an exception that lost its condition lets in (review R-PJ, round 13). What
    decides is the forbids the incident lifts (those that denied it in the context {}) or, where
    none denied it, the permits that admit it in the incident.
    """
    graph = setup.graph
    chosen: set[str] | None = None  # worked out at the first ALLOW: most runs have none
    rows: list[Row] = []
    for pc in principal_classes:
        off_rota: list[str] | None = None
        trainees: list[str] = []
        for _rep, cls in quarantined:
            d = next(decisions)
            before = plain[(pc.representative, cls)]
            # Both rules judge only what the context {} closes (a principal let in outside an incident
            # too is AUTHZ003's), and no rule reads the on-call staff's own rows (the design): rows for
            # them alone, 2,000 on call x 100 quarantined classes, were 200,000 rows (+110 MB on the
            # memory engine, review R-PJ round 13).
            if d.allowed and not before.allowed:
                if off_rota is None:
                    off_rota, trainees = [], []
                    for m in pc.members:
                        attrs = graph.attrs(m)
                        if attrs.get("on_call") is not True:
                            off_rota.append(id_of(m))
                        elif attrs.get("role") in trainee_roles:
                            trainees.append(id_of(m))
                if chosen is None:
                    chosen = _choosing_policies(setup, trees)
                # before.reasons of a Deny are the forbids that applied in the context {}.
                by_design = any(p in chosen for p in (before.reasons or d.reasons))
                judged = trainees if by_design else [*off_rota, *trainees]
                rows.extend((m, cls, policy) for policy in d.reasons for m in judged)
    return rows


def _choosing_policies(setup: AuthzSetup, trees: Mapping[str, pst.Template]) -> set[str]:
    """Policies that let in principals chosen by who they are: a permit scoped `principal ==` or `in`
    (`is ... in`), or a condition that lets in only a principal chosen by id, team (`principal in
    Team::"x"`, `principal.teams.contains("x")`), role (`principal.role == "sre"`) or the rota
    (`principal.on_call`). A condition lets in where it holds in a permit's `when` or a forbid's
    `unless`, and where it fails in a permit's `unless` or a forbid's `when` (`_chooses`).
    """
    if not trees:
        return set()
    from cedarpy import pst

    chosen: set[str] = set()
    memo: _Memo = {}  # the trees live through the loop: ids stay theirs
    for policy in setup.bundle.policies.values():
        tree = trees[policy.id]
        permit = policy.effect == "permit"
        if permit and isinstance(tree.principal, pst.ScopeEq | pst.ScopeIn | pst.ScopeIsIn):
            chosen.add(policy.id)
            continue
        # A permit admits where all its clauses let in, so one clause that chooses is enough. A forbid
        # is lifted where any one clause lets in, and only a clause that reads the context can be what
        # the incident lifted it by (the others held as they did in the context {}, where it applied):
        # each such clause must choose, read as turned by the incident (review R-PJ round 14: a second
        # `unless { context.incident }` beside `unless { principal.on_call }` lets everyone in).
        if permit:
            if any(_chooses(clause.expr, isinstance(clause, pst.When), memo) for clause in tree.clauses):
                chosen.add(policy.id)
            continue
        lifting = [clause for clause in tree.clauses if _reads_context(clause.expr, memo)]
        if lifting and all(_turned_chooses(c.expr, not isinstance(c, pst.When), memo) for c in lifting):
            chosen.add(policy.id)
    return chosen


_Memo = dict[tuple[str, int, bool], bool]
"""Answers of _reads_context, _chooses and _turned_chooses by (question, id of the node, holds): each
node of a condition is read once, not once per path to it (nested if-then-else conditions, each read
both ways, were 2**depth readings)."""


def _remember(memo: _Memo, key: tuple[str, int, bool], answer: Callable[[], bool]) -> bool:
    if key not in memo:
        memo[key] = answer()
    return memo[key]


def _reads_context(expr: object, memo: _Memo) -> bool:
    from cedarpy import pst

    return _remember(memo, ("context", id(expr), True), lambda: any(n == pst.Var("context") for n in walk(expr)))


def _turned_chooses(expr: object, holds: bool, memo: _Memo) -> bool:
    return _remember(memo, ("turned", id(expr), holds), lambda: _turned_chooses_at(expr, holds, memo))


def _turned_chooses_at(expr: object, holds: bool, memo: _Memo) -> bool:
    """Whether `expr`, evaluating to `holds` in the incident and to `not holds` in the context {},
    lets in only principals chosen by who they are (`_chooses`).

    A part that reads no context has the same value in both, so it is not what turned: in `a || b`
    turned true (both sides false before) each side that holds now turned, a context-free side never
    does; in `a && b` turned true (both hold now) one side choosing is enough, and where one side reads
    no context the other is what turned. `!` turns the question round; a literal never turns.
    """
    from cedarpy import pst

    if not _reads_context(expr, memo):
        return True  # cannot be what the incident changed
    if isinstance(expr, pst.UnaryOp):
        return expr.op == "not" and _turned_chooses(expr.arg, not holds, memo)
    if isinstance(expr, pst.BinaryOp) and expr.op in ("and", "or"):
        left, right = expr.left, expr.right
        if (expr.op == "and") == holds:
            # All sides hold `holds` now, at least one did not before.
            return (
                _chooses(left, holds, memo)
                or _chooses(right, holds, memo)
                or (not _reads_context(left, memo) and _turned_chooses(right, holds, memo))
                or (not _reads_context(right, memo) and _turned_chooses(left, holds, memo))
            )
        # Some side holds `holds` now and none did before: each that holds now turned.
        return _turned_chooses(left, holds, memo) and _turned_chooses(right, holds, memo)
    if isinstance(expr, pst.IfThenElse):
        # Each branch the incident may take: chosen by its condition or its branch, or (its branch
        # reading no context, so the same before) by the condition having turned.
        def branch(cond_holds: bool, value: object) -> bool:
            if isinstance(value, pst.BoolLit) and value.value != holds:
                return True  # this branch never gives `holds`
            if not _reads_context(value, memo):
                return (
                    _chooses(expr.cond, cond_holds, memo)
                    or _chooses(value, holds, memo)
                    or _turned_chooses(expr.cond, cond_holds, memo)
                )
            if not _reads_context(expr.cond, memo):
                return _chooses(expr.cond, cond_holds, memo) or _turned_chooses(value, holds, memo)
            return _chooses(expr.cond, cond_holds, memo) or _chooses(value, holds, memo)

        return branch(True, expr.then_expr) and branch(False, expr.else_expr)
    return _chooses(expr, holds, memo)


def _principal_attr(expr: object) -> bool:
    """`principal.role` or `principal.teams`: who a principal is, as a rota chooses by. Its tenant is not
    (`_chooses_at`: the tenants' permit reads it for everyone), nor is `on_call` compared as text.
    """
    from cedarpy import pst

    return isinstance(expr, pst.GetAttr) and expr.base == pst.Var("principal") and expr.attr in ("role", "teams")


def _literal_set(expr: object) -> bool:
    """A set written out of literals (`["sre", "oncall"]`): what it holds is read from the text."""
    from cedarpy import pst

    return isinstance(expr, pst.Set) and all(isinstance(e, pst.StringLit | pst.EntityLit) for e in expr.elements)


def _set_chooses(op: str, left: object, right: object) -> bool:
    """Whether `left.containsAny(right)` or `left.containsAll(right)` holding lets in only principals
    chosen by who they are, read exactly from the text (round 61: rotas written so were false alarms).

    containsAny of a principal's attribute (`principal.teams`, or `[principal.role]`) and a literal set
    holds only for principals holding one of its members, containsAll of them for those holding every
    member: chosen (validation refuses an empty set literal, so the set names one). The other way
    round, `["sre"].containsAll(principal.teams)` also holds for a principal in no team: no choice. Any
    other operand (a resource's or the context's set) is not read as a choice.
    """
    from cedarpy import pst

    def of_principal(side: object) -> bool:
        if _principal_attr(side):
            return True
        return isinstance(side, pst.Set) and len(side.elements) == 1 and _principal_attr(side.elements[0])

    if op == "contains_any":
        return (of_principal(left) and _literal_set(right)) or (of_principal(right) and _literal_set(left))
    return of_principal(left) and _literal_set(right)


def _chooses(expr: object, holds: bool, memo: _Memo) -> bool:
    return _remember(memo, ("chooses", id(expr), holds), lambda: _chooses_at(expr, holds, memo))


def _chooses_at(expr: object, holds: bool, memo: _Memo) -> bool:
    """Whether `expr` evaluating to `holds` lets in only principals chosen by who they are.

    Read by meaning, not by text (round 14): `a && b` holding chooses where either side does, `a || b`
    holding only where both do (`(context.incident) || principal.on_call` lets everyone in during an
    incident); a `!` turns the question round, and an if-then-else chooses where both branches do
    (or the condition does). Under `!` a comparison keeps principals out (`principal.role != "intern"`
    chooses nobody), and the tenant chooses nobody: the tenants' permit reads it for everyone.
    """
    from cedarpy import pst

    principal = pst.Var("principal")
    if expr == pst.GetAttr(base=principal, attr="on_call"):
        return holds
    if isinstance(expr, pst.Like):
        # `principal.role like "sre*"` holding lets in the roles its pattern spells; a pattern of
        # wildcards alone (`like "*"`) matches every string, so it chooses nobody. Not holding, it
        # lets in every other role: no choice either.
        return holds and _principal_attr(expr.base) and any(isinstance(elem, pst.Char) for elem in expr.pattern)
    if isinstance(expr, pst.BoolLit):
        return expr.value != holds  # `false` never lets anyone in (`if c then x else false`)
    if isinstance(expr, pst.UnaryOp):
        return expr.op == "not" and _chooses(expr.arg, not holds, memo)
    if isinstance(expr, pst.IfThenElse):
        return (_chooses(expr.cond, True, memo) or _chooses(expr.then_expr, holds, memo)) and (
            _chooses(expr.cond, False, memo) or _chooses(expr.else_expr, holds, memo)
        )
    if not isinstance(expr, pst.BinaryOp):
        return False
    left, right = expr.left, expr.right
    if expr.op in ("and", "or"):
        # `a && b` true, or `a || b` false (both sides false): either side choosing is enough.
        both = (expr.op == "and") == holds
        if both:
            return _chooses(left, holds, memo) or _chooses(right, holds, memo)
        return _chooses(left, holds, memo) and _chooses(right, holds, memo)
    if expr.op in ("eq", "not_eq"):
        # `principal.on_call == true` reads as `principal.on_call`, `... != true` as its negation.
        for side, other in ((left, right), (right, left)):
            if isinstance(other, pst.BoolLit):
                return _chooses(side, holds == ((expr.op == "eq") == other.value), memo)
    role = pst.GetAttr(base=principal, attr="role")
    teams = pst.GetAttr(base=principal, attr="teams")
    if holds and expr.op == "contains" and right == role and isinstance(left, pst.Set):
        return True  # ["sre", "oncall"].contains(principal.role)
    if holds and expr.op in ("contains_any", "contains_all"):
        return _set_chooses(expr.op, left, right)
    if holds and expr.op in ("eq", "in"):
        return principal in (left, right) or (expr.op == "eq" and role in (left, right))
    if not holds and expr.op == "not_eq":
        return principal in (left, right) or role in (left, right)
    return holds and expr.op == "contains" and left == teams
