"""`topolog audit`: who may do what where, and what a policy or inventory change alters.

Principals and resources are grouped into equivalence classes (verifier/authorization/classes.py)
and Cedar is asked once per (principal class, action, context, resource class); the answer
is then spread over the members. The matrix rows are principals (or teams), its columns
hardware groups (the rack of each GPU, else its node or pod), its cells GPU counts.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

from verifier.authorization.classes import EntityClass, PolicyReads, class_key, contexts, partition, policy_reads
from verifier.authorization.entities import PRINCIPAL_TYPES, Entity, EntityGraph
from verifier.authorization.evaluate import Decision, Request
from verifier.authorization.setup import AuthzSetup

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


def group_of(entity: Entity, graph: EntityGraph) -> str:
    if entity.type == "Gpu":
        return graph.gpu_group.get(entity.uid, entity.id)
    rack = next((p for p in entity.parents if p.startswith("Rack::")), None)
    return graph.entities[rack].id if rack is not None else entity.id


def _gpus(entity: Entity) -> int:
    value = entity.attrs.get("gpus", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def audit(
    setup: AuthzSetup,
    actions: Sequence[str],
    resource_type: str = "Gpu",
    teams_only: bool = False,
    grouping: bool = True,
) -> AuditResult:
    """The matrix; `grouping=False` asks once per entity instead (to measure, and to check the classes)."""
    graph = setup.graph
    reads = policy_reads(setup.bundle)
    if not grouping:
        reads = dataclasses.replace(reads, groupable=False)
    ctxs = contexts(reads)
    principals = graph.of_type(*(("Team",) if teams_only else PRINCIPAL_TYPES))
    resources = graph.of_type(resource_type)
    pcs = partition(principals, graph, reads)
    rcs = partition(resources, graph, reads)
    per_class: dict[str, dict[str, int]] = {}
    groups: dict[str, int] = {}
    for rc in rcs:
        counts: dict[str, int] = {}
        for m in rc.members:
            e = graph.entities[m]
            g = group_of(e, graph)
            counts[g] = counts.get(g, 0) + _gpus(e)
            groups[g] = groups.get(g, 0) + _gpus(e)
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
        [p.uid for p in principals],
        {},
    )
    for (action, ci, pc, rc), d in decisions.items():
        for policy, message in d.errors:
            result.errors.append(AuditError(pc.representative, action, rc.representative, ctxs[ci], policy, message))
        if not d.allowed:
            continue
        for member in pc.members:
            cell = result.cells.setdefault((action, ci, member), {})
            for g, n in per_class[rc.id].items():
                cell[g] = cell.get(g, 0) + n
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


def _ask(
    setup: AuthzSetup,
    pcs: list[EntityClass],
    rcs: list[EntityClass],
    actions: Sequence[str],
    ctxs: list[dict[str, object]],
) -> dict[tuple[str, int, EntityClass, EntityClass], Decision]:
    keys = [(a, ci, pc, rc) for a in actions for ci in range(len(ctxs)) for pc in pcs for rc in rcs]
    requests = [Request(pc.representative, a, rc.representative, ctxs[ci]) for a, ci, pc, rc in keys]
    return dict(zip(keys, setup.authorizer.decide(requests), strict=True))


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
    old_p = {e.uid for e in old.graph.of_type(*ptypes)}
    new_p = {e.uid for e in new.graph.of_type(*ptypes)}
    old_r = {e.uid for e in old.graph.of_type(resource_type)}
    new_r = {e.uid for e in new.graph.of_type(resource_type)}
    pcs = _joint_classes(sorted(old_p & new_p), old, new, reads)
    rcs = _joint_classes(sorted(old_r & new_r), old, new, reads)
    requests_before = old.authorizer.requests + new.authorizer.requests
    calls_before = old.authorizer.calls + new.authorizer.calls
    d_old = _ask(old, pcs, rcs, actions, ctxs)
    d_new = _ask(new, pcs, rcs, actions, ctxs)
    changes: dict[tuple[str, int, str, str], Change] = {}
    for key, before in d_old.items():
        after = d_new[key]
        if before.allowed == after.allowed:
            continue
        action, ci, pc, rc = key
        ch = changes.setdefault(
            (action, ci, before.word, after.word), Change(action, ctxs[ci], before.word, after.word)
        )
        ch.decisions += len(pc.members) * len(rc.members)
        ch.gpus += len(pc.members) * sum(_gpus(new.graph.entities[m]) for m in rc.members)
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
    groups: dict[tuple[object, ...], list[str]] = {}
    for u in uids:
        key = (class_key(old.graph.entities[u], old.graph, reads), class_key(new.graph.entities[u], new.graph, reads))
        groups.setdefault(key, []).append(u)
    return sorted((EntityClass(min(m), tuple(sorted(m))) for m in groups.values()), key=lambda c: c.id)
