"""`topolog audit`: who may do what where, and what a policy or inventory change alters.

Principals and resources are grouped into equivalence classes (verifier/authorization/classes.py)
and Cedar is asked once per (principal class, action, context, resource class); the answer
is then spread over the members. The matrix rows are principals (or teams), its columns
hardware groups (the rack of each GPU, else its node or pod), its cells GPU counts.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from verifier.authorization.classes import (
    EntityClass,
    PolicyReads,
    class_keys,
    contexts,
    partition,
    partition_rows,
    policy_reads,
)
from verifier.authorization.entities import PRINCIPAL_TYPES, EntityGraph
from verifier.authorization.evaluate import Decision, Request
from verifier.authorization.setup import AuthzSetup
from verifier.core.gc_pause import collector_paused

Cell = tuple[str, int, str]  # (action, context index, principal uid)


@dataclass
class AuditStats:
    principals: int = 0
    resources: int = 0
    principal_classes: int = 0
    resource_classes: int = 0
    actions: int = 0
    contexts: int = 0
    requests: int = 0  # asked of Cedar
    requests_without_classes: int = 0  # one per principal, resource, action and context
    cedar_calls: int = 0  # batch calls (the handles are parsed once, not per call)

    def to_dict(self) -> dict[str, int]:
        return dict(sorted(vars(self).items()))


@dataclass
class AuditError:
    principal: str
    action: str
    resource: str
    context: dict[str, object]
    policy: str
    message: str


@dataclass
class AuditResult:
    inventories: tuple[str, ...]
    policies: str
    principals_file: str
    actions: tuple[str, ...]
    contexts: list[dict[str, object]]
    groups: dict[str, int]  # hardware group -> GPUs in it
    rows: list[str]  # principal uids
    cells: dict[Cell, dict[str, int]]  # GPUs allowed per group
    errors: list[AuditError] = field(default_factory=list)
    stats: AuditStats = field(default_factory=AuditStats)

    @property
    def exit_code(self) -> int:
        """1 when a policy failed somewhere (those requests were denied, fail closed)."""
        return 1 if self.errors else 0


def group_of(entity_uid: str, graph: EntityGraph) -> str:
    """The hardware group of a resource: a GPU's rack (else node, pod, itself), another's rack or itself."""
    ident = graph.ident(entity_uid)
    if ident is None:
        raise KeyError(entity_uid)
    if ident[0] == "Gpu":
        return graph.group(entity_uid)
    rack = next((p for p in graph.parents(entity_uid, domains=False) if p.startswith("Rack::")), None)
    rack_ident = graph.ident(rack) if rack is not None else None
    return rack_ident[1] if rack_ident is not None else ident[1]


def _gpus(entity_uid: str, graph: EntityGraph) -> int:
    return _count(graph.attrs(entity_uid))


def _count(attrs: Mapping[str, object]) -> int:
    value = attrs.get("gpus", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _add_run(
    counts: dict[str, int],
    groups: dict[str, int],
    counted: dict[int, int],
    group: str,
    attrs: Mapping[str, object],
    run: int,
) -> None:
    """`run` GPUs of `group` with the attributes `attrs`, counted into the class's and the audit's totals."""
    n = counted.get(id(attrs))
    if n is None:
        n = counted[id(attrs)] = _count(attrs)
    counts[group] = counts.get(group, 0) + n * run
    groups[group] = groups.get(group, 0) + n * run


def audit(
    setup: AuthzSetup,
    actions: Sequence[str],
    resource_type: str = "Gpu",
    teams_only: bool = False,
    grouping: bool = True,
) -> AuditResult:
    """The matrix; `grouping=False` asks once per entity instead (to measure, and to check the classes)."""
    with collector_paused():
        return _audit(setup, actions, resource_type, teams_only, grouping)


def _audit(
    setup: AuthzSetup, actions: Sequence[str], resource_type: str, teams_only: bool, grouping: bool
) -> AuditResult:
    graph = setup.graph
    reads = policy_reads(setup.bundle)
    if not grouping:
        reads = dataclasses.replace(reads, groupable=False)
    ctxs = contexts(reads)
    principals = graph.uids_of_type(*(("Team",) if teams_only else PRINCIPAL_TYPES))
    pcs = partition(principals, graph, reads)
    rows: list[tuple[EntityClass, list[str], Sequence[Mapping[str, object]]]] = []
    if resource_type == "Gpu":
        # Every GPU's uid, attributes and group read in one pass (EntityGraph.gpu_rows), not
        # looked up again from each uid for its class key, its group and its count.
        resources, gpu_attrs, gpu_groups = graph.gpu_rows()
        for rc, at in partition_rows(resources, gpu_attrs, graph, reads):
            rows.append((rc, [gpu_groups[i] for i in at], [gpu_attrs[i] for i in at]))
    else:
        resources = graph.uids_of_type(resource_type)
        for rc in partition(resources, graph, reads):
            members = list(rc.members)
            rows.append((rc, [group_of(m, graph) for m in members], graph.attrs_many(members)))
    rcs = [rc for rc, _, _ in rows]
    per_class: dict[str, dict[str, int]] = {}
    groups: dict[str, int] = {}
    counted: dict[int, int] = {}  # GPUs that look alike share one attribute mapping: counted once
    for rc, in_group, member_attrs in rows:
        counts: dict[str, int] = {}
        # Sorted members of one group that share one attribute mapping come in runs (a rack's
        # GPUs): each run is added once. Runs are added in the order they start, so every group
        # enters `counts` and `groups` where its first member would have put it.
        run_group: str | None = None
        run_attrs: Mapping[str, object] | None = None
        run = 0
        for g, attrs in zip(in_group, member_attrs, strict=True):
            if attrs is run_attrs and g == run_group:
                run += 1
                continue
            if run_group is not None and run_attrs is not None:
                _add_run(counts, groups, counted, run_group, run_attrs, run)
            run_group, run_attrs, run = g, attrs, 1
        if run_group is not None and run_attrs is not None:
            _add_run(counts, groups, counted, run_group, run_attrs, run)
        per_class[rc.id] = counts
    before = (setup.authorizer.requests, setup.authorizer.calls)
    decisions = _ask(setup, pcs, rcs, actions, ctxs)
    result = AuditResult(
        setup.inventories,
        str(setup.bundle.directory),
        setup.principals.file,
        tuple(actions),
        ctxs,
        dict(sorted(groups.items())),
        principals,
        {},
    )
    allowed: dict[tuple[str, int, str], tuple[EntityClass, list[EntityClass]]] = {}
    for action, ci, pc, rc, d in decisions:
        for policy, message in d.errors:
            result.errors.append(AuditError(pc.representative, action, rc.representative, ctxs[ci], policy, message))
        if d.allowed:
            allowed.setdefault((action, ci, pc.id), (pc, []))[1].append(rc)
    merged: dict[tuple[str, ...], dict[str, int]] = {}
    for (action, ci, _), (pc, rcs_allowed) in allowed.items():
        # Every member of a class gets the same cell, and so does every class allowed the same
        # resource classes: built once and shared (cells are read-only).
        which = tuple(rc.id for rc in rcs_allowed)
        cell = merged.get(which)
        if cell is None:
            cell = merged[which] = {}
            for rc in rcs_allowed:
                for g, n in per_class[rc.id].items():
                    cell[g] = cell.get(g, 0) + n
        for member in pc.members:
            result.cells[(action, ci, member)] = cell
    result.stats = AuditStats(
        principals=len(principals),
        resources=len(resources),
        principal_classes=len(pcs),
        resource_classes=len(rcs),
        actions=len(actions),
        contexts=len(ctxs),
        requests=setup.authorizer.requests - before[0],
        requests_without_classes=len(principals) * len(resources) * len(actions) * len(ctxs),
        cedar_calls=setup.authorizer.calls - before[1],
    )
    return result


Asked = tuple[str, int, EntityClass, EntityClass, Decision]  # action, context index, classes, decision


def _ask(
    setup: AuthzSetup,
    pcs: list[EntityClass],
    rcs: list[EntityClass],
    actions: Sequence[str],
    ctxs: list[dict[str, object]],
) -> list[Asked]:
    """One decision per action, context, principal class and resource class, in that order.

    A list, not a dict keyed by the classes: hashing a class hashes all its members (a fleet's
    GPUs), once per key.
    """
    keys = [(a, ci, pc, rc) for a in actions for ci in range(len(ctxs)) for pc in pcs for rc in rcs]
    requests = [Request(pc.representative, a, rc.representative, ctxs[ci]) for a, ci, pc, rc in keys]
    return [(*k, d) for k, d in zip(keys, setup.authorizer.decide(requests), strict=True)]


def context_label(ctx: dict[str, object]) -> str:
    return json.dumps(ctx, sort_keys=True)


# -- diff --------------------------------------------------------------------------


@dataclass
class Change:
    action: str
    context: dict[str, object]
    before: str  # ALLOW / DENY
    after: str
    decisions: int = 0  # principal x resource pairs that changed
    gpus: int = 0  # principal x GPU pairs that changed
    examples: list[dict[str, object]] = field(default_factory=list)


@dataclass
class DiffResult:
    old: str
    new: str
    changes: list[Change]
    only_old: list[str]  # principals or resources present only before
    only_new: list[str]
    stats: AuditStats

    @property
    def changed(self) -> int:
        return sum(c.decisions for c in self.changes)


MAX_EXAMPLES = 3


def diff(
    old: AuthzSetup,
    new: AuthzSetup,
    actions: Sequence[str],
    resource_type: str = "Gpu",
    teams_only: bool = False,
) -> DiffResult:
    """Every decision that differs between two setups (policy sets and/or inventories).

    Classes are the common refinement of both sides: two entities share a class only if no
    policy of either side can tell them apart in either inventory, so one request per class
    and side is exact.
    """
    reads = policy_reads(old.bundle, new.bundle)
    ctxs = contexts(reads)
    ptypes = ("Team",) if teams_only else PRINCIPAL_TYPES
    old_p = set(old.graph.uids_of_type(*ptypes))
    new_p = set(new.graph.uids_of_type(*ptypes))
    old_r = set(old.graph.uids_of_type(resource_type))
    new_r = set(new.graph.uids_of_type(resource_type))
    pcs = _joint_classes(sorted(old_p & new_p), old, new, reads)
    rcs = _joint_classes(sorted(old_r & new_r), old, new, reads)
    requests_before = old.authorizer.requests + new.authorizer.requests
    calls_before = old.authorizer.calls + new.authorizer.calls
    d_old = _ask(old, pcs, rcs, actions, ctxs)
    d_new = _ask(new, pcs, rcs, actions, ctxs)
    changes: dict[tuple[str, int, str, str], Change] = {}
    for (action, ci, pc, rc, before), (*_, after) in zip(d_old, d_new, strict=True):
        if before.allowed == after.allowed:
            continue
        ch = changes.setdefault(
            (action, ci, before.word, after.word), Change(action, ctxs[ci], before.word, after.word)
        )
        ch.decisions += len(pc.members) * len(rc.members)
        ch.gpus += len(pc.members) * sum(_gpus(m, new.graph) for m in rc.members)
        if len(ch.examples) < MAX_EXAMPLES:
            ch.examples.append(
                {
                    "principal": pc.representative,
                    "resource": rc.representative,
                    "before": list(before.reasons),
                    "after": list(after.reasons),
                }
            )
    stats = AuditStats(
        principals=len(old_p & new_p),
        resources=len(old_r & new_r),
        principal_classes=len(pcs),
        resource_classes=len(rcs),
        actions=len(actions),
        contexts=len(ctxs),
        requests=old.authorizer.requests + new.authorizer.requests - requests_before,
        requests_without_classes=2 * len(old_p & new_p) * len(old_r & new_r) * len(actions) * len(ctxs),
        cedar_calls=old.authorizer.calls + new.authorizer.calls - calls_before,
    )
    return DiffResult(
        f"{', '.join(old.inventories)} with {old.bundle.directory}",
        f"{', '.join(new.inventories)} with {new.bundle.directory}",
        [changes[k] for k in sorted(changes, key=lambda k: (k[0], k[1], k[2]))],
        sorted((old_p - new_p) | (old_r - new_r)),
        sorted((new_p - old_p) | (new_r - old_r)),
        stats,
    )


def _joint_classes(uids: list[str], old: AuthzSetup, new: AuthzSetup, reads: PolicyReads) -> list[EntityClass]:
    if old.graph is new.graph:  # two policy sets on one entity graph (`topolog policy compare`): keyed once
        return partition(uids, old.graph, reads)
    groups: dict[tuple[object, ...], list[str]] = {}
    old_keys, new_keys = class_keys(old.graph, reads)(uids), class_keys(new.graph, reads)(uids)
    for u, key in zip(uids, zip(old_keys, new_keys, strict=True), strict=True):
        groups.setdefault(key, []).append(u)
    return sorted((EntityClass(min(m), tuple(sorted(m))) for m in groups.values()), key=lambda c: c.id)
