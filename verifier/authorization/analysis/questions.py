"""Questions about a policy set: who may ever do ACTION on RESOURCE, what may PRINCIPAL ever do.

"Ever" means in some context the policies can tell apart: the inventory analysis's contexts
(analysis/inventory.py `analysis_contexts`), complete for the context reads that
analysis/context_reads.py covers (any other read is refused). Principals (for `who`) and
resources (for `what`) are grouped into equivalence classes and Cedar is asked once per class
and context: two members of a class get the same decision by the same policies in every request,
so the answer spread over the members is exact, not an estimate.

A decision with an evaluation error is a Deny (topolog fails closed, verifier.authorization.evaluate):
it is never counted as allowed, and is listed so that nobody mistakes it for an intended Deny.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from verifier.authorization.analysis.context_reads import refuse_uncovered_context_reads
from verifier.authorization.analysis.inventory import analysis_contexts
from verifier.authorization.audit import context_label, group_of
from verifier.authorization.classes import (
    MAX_CONTEXTS,
    EntityClass,
    PolicyReads,
    context_combinations,
    contexts,
    partition,
    policy_reads,
)
from verifier.authorization.entities import PRINCIPAL_TYPES, EntityGraph
from verifier.authorization.evaluate import Decision, Request
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.gc_pause import collector_paused

Context = dict[str, object]
QUESTION = "`policy who` / `policy what`"
"""The analysis named when a context read is refused (analysis/context_reads.py)."""
ASK_ONE = '; ask about one context with --context, e.g. --context \'{"tag": "ab"}\''
ByContext = tuple[tuple[int, tuple[str, ...]], ...]
"""(context index, the permit policies that allow it there), for each context where it is allowed."""


@dataclass(frozen=True)
class Failure:
    """Requests denied because a policy raised an error: never counted as allowed."""

    principal: str  # uid (the representative of its class)
    action: str
    resource: str  # uid (the representative of its class)
    context: Context
    policy: str  # "" when the error is not a policy's (the request itself)
    message: str
    requests: int  # principal x resource pairs of the classes, each denied the same way


@dataclass(frozen=True)
class Coverage:
    """Which contexts were asked, and whether they cover every context the schema allows."""

    contexts: list[Context]
    complete: bool
    why_not: str = ""  # when not complete: which context attributes are not covered, and why

    @property
    def note(self) -> str:
        return "every context the policies can tell apart" if self.complete else self.why_not


def coverage(reads: PolicyReads, given: Context | None = None) -> Coverage:
    """The contexts to ask: `given` alone, or every enumerated one (classes.contexts).

    The enumeration shows every outcome of the context reads it covers (both booleans, absent where a
    policy tests `has`, each number with its neighbours, each text and one equal to none of them;
    analysis/context_reads.py names the reads it does not cover, which its callers refuse); past
    MAX_CONTEXTS combinations it is cut, and the answer says so instead of being silently wrong.
    """
    if given is not None:
        return Coverage([dict(given)], False, "only the context given with --context")
    size = context_combinations(reads)
    if size > MAX_CONTEXTS:
        return Coverage(contexts(reads), False, f"the first {MAX_CONTEXTS} of {size} context combinations")
    return Coverage(contexts(reads), True)


def _asked(setup: AuthzSetup, reads: PolicyReads, given: Context | None) -> Coverage:
    """The contexts `who` and `what` ask: `given`, else every one the policies tell apart.

    The latter is the inventory analysis's enumeration (analysis/inventory.py `analysis_contexts`:
    both booleans, each literal with its neighbours, one text equal to no literal), which is
    complete once every context read is one it covers (refused otherwise, exit 2) and is refused
    past MAX_CONTEXTS combinations: "ever" is then every context, never a first few.
    """
    if given is not None:
        return coverage(reads, given)
    refuse_uncovered_context_reads(setup.bundle, QUESTION, ASK_ONE)
    return Coverage(analysis_contexts(reads, str(setup.bundle.directory)), True)


def _refuse_invalid(decisions: list[Decision], given: Context | None) -> None:
    """A context given by the user that the schema refuses is bad input (exit 2), as for `authorize`."""
    if given is None:
        return
    for d in decisions:
        invalid = [m for p, m in d.errors if not p and m.startswith("failed to build request")]
        if invalid:
            raise TopologError.at(SourceLocation("--context"), f"the request does not match the schema: {invalid[0]}")


def _failures(d: Decision, principal: EntityClass, action: str, resource: EntityClass, ctx: Context) -> list[Failure]:
    n = len(principal.members) * len(resource.members)
    return [
        Failure(principal.representative, action, resource.representative, ctx, policy, message, n)
        for policy, message in d.errors
    ]


def _sorted_failures(failures: list[Failure]) -> list[Failure]:
    return sorted(failures, key=lambda f: (f.action, f.principal, f.resource, context_label(f.context), f.policy))


# -- who ---------------------------------------------------------------------------


@dataclass(frozen=True)
class WhoEntry:
    principal: str  # uid
    allowed: ByContext


@dataclass
class WhoResult:
    inventories: tuple[str, ...]
    policies: str
    principals_file: str
    action: str
    resource: str  # uid
    coverage: Coverage
    allowed: list[WhoEntry]  # sorted by principal uid
    principals: int
    principal_classes: int
    requests: int  # asked of Cedar
    errors: list[Failure] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """1 when a policy failed on some request (denied, fail closed), as `topolog audit`."""
        return 1 if self.errors else 0


def who(setup: AuthzSetup, action: str, resource: str, context: Context | None = None) -> WhoResult:
    """Every principal (teams too) allowed `action` on the resource uid `resource` in some context."""
    with collector_paused():
        graph = setup.graph
        reads = policy_reads(setup.bundle)
        cov = _asked(setup, reads, context)
        principals = graph.uids_of_type(*PRINCIPAL_TYPES)
        pcs = partition(principals, graph, reads)
        target = EntityClass(resource, (resource,))
        keys = [(ci, pc) for pc in pcs for ci in range(len(cov.contexts))]
        before = setup.authorizer.requests
        decisions = setup.authorizer.decide(
            [Request(pc.representative, action, resource, cov.contexts[ci]) for ci, pc in keys]
        )
        _refuse_invalid(decisions, context)
        per_class: dict[str, list[tuple[int, tuple[str, ...]]]] = {}
        errors: list[Failure] = []
        for (ci, pc), d in zip(keys, decisions, strict=True):
            errors += _failures(d, pc, action, target, cov.contexts[ci])
            if d.allowed:
                per_class.setdefault(pc.id, []).append((ci, d.reasons))
        allowed = [
            WhoEntry(member, tuple(sorted(per_class[pc.id])))
            for pc in pcs
            if pc.id in per_class
            for member in pc.members
        ]
        return WhoResult(
            setup.inventories,
            str(setup.bundle.directory),
            setup.principals.file,
            action,
            resource,
            cov,
            sorted(allowed, key=lambda e: e.principal),
            len(principals),
            len(pcs),
            setup.authorizer.requests - before,
            _sorted_failures(errors),
        )


# -- what --------------------------------------------------------------------------


@dataclass(frozen=True)
class WhatRow:
    """Resources of one hardware group allowed one action, by the same policies in the same contexts."""

    action: str
    group: str  # a GPU's rack (else node, pod, itself), as `topolog audit` groups them
    allowed: ByContext
    resources: int
    gpus: int


@dataclass
class WhatResult:
    inventories: tuple[str, ...]
    policies: str
    principals_file: str
    principal: str  # uid
    resource_type: str
    actions: tuple[str, ...]
    coverage: Coverage
    groups: dict[str, int]  # hardware group -> GPUs in it (of the resource type asked)
    rows: list[WhatRow]  # sorted by action, group, contexts
    resources: int
    resource_classes: int
    requests: int
    errors: list[Failure] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.errors else 0


def _gpus(attrs: Mapping[str, object]) -> int:
    value = attrs.get("gpus", 0)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _groups(graph: EntityGraph, members: list[str], resource_type: str) -> list[str]:
    return graph.groups_many(members) if resource_type == "Gpu" else [group_of(m, graph) for m in members]


def what(
    setup: AuthzSetup,
    principal: str,
    actions: Sequence[str],
    resource_type: str = "Gpu",
    context: Context | None = None,
) -> WhatResult:
    """Every action on every resource of `resource_type` that the principal uid `principal` may ever do."""
    # Each action once, in the order given: `--action schedule --action schedule` is one question.
    actions = list(dict.fromkeys(actions))
    with collector_paused():
        graph = setup.graph
        reads = policy_reads(setup.bundle)
        cov = _asked(setup, reads, context)
        resources = graph.uids_of_type(resource_type)
        rcs = partition(resources, graph, reads)
        who_class = EntityClass(principal, (principal,))
        keys = [(a, ci, rc) for a in actions for rc in rcs for ci in range(len(cov.contexts))]
        before = setup.authorizer.requests
        decisions = setup.authorizer.decide(
            [Request(principal, a, rc.representative, cov.contexts[ci]) for a, ci, rc in keys]
        )
        _refuse_invalid(decisions, context)
        per_class: dict[tuple[str, str], list[tuple[int, tuple[str, ...]]]] = {}
        errors: list[Failure] = []
        for (a, ci, rc), d in zip(keys, decisions, strict=True):
            errors += _failures(d, who_class, a, rc, cov.contexts[ci])
            if d.allowed:
                per_class.setdefault((a, rc.id), []).append((ci, d.reasons))
        groups: dict[str, int] = {}
        where: dict[str, list[tuple[str, int]]] = {}  # class id -> (group, GPUs) of each member
        for rc in rcs:
            members = list(rc.members)
            placed = list(
                zip(_groups(graph, members, resource_type), map(_gpus, graph.attrs_many(members)), strict=True)
            )
            where[rc.id] = placed
            for g, n in placed:
                groups[g] = groups.get(g, 0) + n
        tally: dict[tuple[str, str, ByContext], list[int]] = {}
        for (a, rc_id), allowed in per_class.items():
            by_context = tuple(sorted(allowed))
            for g, n in where[rc_id]:
                counts = tally.setdefault((a, g, by_context), [0, 0])
                counts[0] += 1
                counts[1] += n
        order = {a: i for i, a in enumerate(actions)}
        rows = [
            WhatRow(a, g, by_context, counts[0], counts[1])
            for (a, g, by_context), counts in sorted(
                tally.items(), key=lambda kv: (order[kv[0][0]], kv[0][1], kv[0][2])
            )
        ]
        return WhatResult(
            setup.inventories,
            str(setup.bundle.directory),
            setup.principals.file,
            principal,
            resource_type,
            tuple(actions),
            cov,
            dict(sorted(groups.items())),
            rows,
            len(resources),
            len(rcs),
            setup.authorizer.requests - before,
            _sorted_failures(errors),
        )
