"""The policies judged over one inventory: dead here, shadowed permits, redundant policies.

Complete for the inventory: principals and resources (GPUs and the groups a policy can name:
nodes, racks, pods, NVLink domains) are grouped into equivalence classes that no policy can
tell apart (verifier/authorization/classes.py), and every (principal class, action, context,
resource class) is asked once of the probe (analysis/probe.py), which says which policies each
request satisfies and which raise. The request count is the audit's, never one per GPU.

From those sets, per policy (effects from the bundle; topolog's decision: allowed iff some
permit is satisfied, no forbid is, and no policy raised):
- dead: satisfied by no request and raising on none (a policy that only raises still denies,
  fail closed: AUTHZ002 and POLICY005 report that, so it is not called dead);
- shadowed (a permit, not dead): every request that satisfies it satisfies a forbid too;
- redundant (not dead, not shadowed): removing it changes no request's decision.

Contexts: every context attribute the policies read, with each literal it is compared with;
booleans take false and true, whole numbers each literal and the numbers beside it, strings
each literal and one text equal to none; "absent" too where a policy tests `has`. Beyond
MAX_CONTEXTS combinations the analysis is refused, never cut short.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from verifier.authorization.analysis.context_reads import refuse_uncovered_context_reads
from verifier.authorization.analysis.probe import Probed, Prober, describe
from verifier.authorization.classes import (
    MAX_CONTEXTS,
    PolicyReads,
    context_combinations,
    contexts,
    partition,
    policy_reads,
)
from verifier.authorization.entities import PRINCIPAL_TYPES, RESOURCE_TYPES
from verifier.authorization.evaluate import ACTIONS, Request
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.gc_pause import collector_paused

NO_PERMIT = "(no permit)"
"""What decides a request a redundant forbid applies to when no other policy does: no permit applies."""


@dataclass(frozen=True)
class InventoryFinding:
    kind: str  # "dead" | "shadowed" | "redundant"
    policy: str  # the policy's @id
    related: tuple[str, ...]  # shadowed: the forbids that shadow it; redundant: what decides instead (NO_PERMIT too)
    example: str  # one line: a request that shows it (dead: the classes asked about)
    denying: tuple[str, ...] = ()  # redundant: those of `related` that deny in its place (NO_PERMIT too)


@dataclass
class InventoryAnalysis:
    findings: list[InventoryFinding]
    principal_classes: int = 0
    resource_classes: int = 0
    contexts: int = 0
    requests: int = 0  # asked of Cedar
    errors: dict[str, str] = field(default_factory=dict)  # policy -> first request it raised on


def analyse_inventory(setup: AuthzSetup) -> InventoryAnalysis:
    with collector_paused():
        return _analyse(setup)


def _analyse(setup: AuthzSetup) -> InventoryAnalysis:
    graph, bundle = setup.graph, setup.bundle
    refuse_uncovered_context_reads(bundle, "the inventory analysis")
    reads = policy_reads(bundle)
    ctxs = analysis_contexts(reads, str(bundle.directory))
    pcs = partition(graph.uids_of_type(*PRINCIPAL_TYPES), graph, reads)
    rcs = partition(graph.uids_of_type(*RESOURCE_TYPES), graph, reads)
    requests = [
        Request(pc.representative, action, rc.representative, ctx)
        for pc in pcs
        for action in ACTIONS
        for ctx in ctxs
        for rc in rcs
    ]
    prober = Prober(bundle, graph)
    probed = prober.probe(requests)
    effects = {pid: p.effect for pid, p in bundle.policies.items()}
    tally = _Tally(effects)
    for request, answer in zip(requests, probed, strict=True):
        tally.add(request, answer)
    asked = (
        f"{len(pcs)} principal classes x {len(ACTIONS)} actions x {len(ctxs)} contexts x {len(rcs)} resource classes"
    )
    return InventoryAnalysis(
        tally.findings(asked),
        principal_classes=len(pcs),
        resource_classes=len(rcs),
        contexts=len(ctxs),
        requests=prober.requests,
        errors=dict(sorted(tally.errors.items())),
    )


def analysis_contexts(reads: PolicyReads, where: str) -> list[dict[str, object]]:
    """Every combination of the context values worth asking (classes.values_to_ask); refused past MAX_CONTEXTS."""
    total = context_combinations(reads)
    if total > MAX_CONTEXTS:
        names = sorted(reads.context_values)
        raise TopologError.at(
            SourceLocation(where),
            f"the policies read {len(names)} context attributes ({', '.join(names)}) whose values make {total:,} "
            f"combinations; the inventory analysis asks at most {MAX_CONTEXTS} and is refused rather than incomplete",
        )
    return contexts(reads)


class _Tally:
    """What the requests asked so far say about each policy."""

    def __init__(self, effects: dict[str, str]) -> None:
        self.effects = effects
        self.permits = frozenset(p for p, e in effects.items() if e == "permit")
        self.forbids = frozenset(effects) - self.permits
        self.first_satisfied: dict[str, str] = {}
        self.errors: dict[str, str] = {}
        self.unshadowed: set[str] = set()  # permits satisfied on a request no forbid is satisfied on
        self.shadowers: dict[str, set[str]] = {}
        self.decisive: set[str] = set()  # policies whose removal changes some decision
        self.instead: dict[str, set[str]] = {}
        self.denying: dict[str, set[str]] = {}  # the part of `instead` that decides by denying

    def add(self, request: Request, answer: Probed) -> None:
        sat, err = answer.satisfied, answer.errored
        permits, forbids = sat & self.permits, sat & self.forbids
        allowed = bool(permits) and not forbids and not err
        for p in sorted(err):
            self.errors.setdefault(p, describe(request))
        for p in sat | err:
            if p in sat:
                self.first_satisfied.setdefault(p, describe(request))
                if p in self.permits:
                    if forbids:
                        self.shadowers.setdefault(p, set()).update(forbids)
                    else:
                        self.unshadowed.add(p)
            without = bool(permits - {p}) and not (forbids - {p}) and not (err - {p})
            if without != allowed:
                self.decisive.add(p)
            elif p in sat:
                # Who decides in its place: the other permits of an Allow, else whatever denies, which
                # for a forbid alone on a request is the lack of any permit.
                others = (permits - {p}) if allowed else ((forbids | err) - {p})
                self.instead.setdefault(p, set()).update(others or (NO_PERMIT,))
                if not allowed:
                    self.denying.setdefault(p, set()).update(others or (NO_PERMIT,))

    def findings(self, asked: str) -> list[InventoryFinding]:
        out: list[InventoryFinding] = []
        for p in sorted(self.effects):
            if p not in self.first_satisfied:
                if p not in self.errors:
                    out.append(InventoryFinding("dead", p, (), asked))
                continue
            if p in self.permits and p not in self.unshadowed:
                out.append(InventoryFinding("shadowed", p, tuple(sorted(self.shadowers[p])), self.first_satisfied[p]))
            elif p not in self.decisive:
                related = tuple(sorted(self.instead.get(p, ())))
                denying = tuple(sorted(self.denying.get(p, ())))
                out.append(InventoryFinding("redundant", p, related, self.first_satisfied[p], denying))
        return out
