"""What a change does to each job: placements before and after, compared (docs/placement.md, "What-if").

`place --drain/--fail/--fail-link` compares the inventory with the scenario applied to it;
`diff --jobs` compares two revisions. Both sides are ranked by `place`'s own ranking, so a
job's "bottleneck" here is the bottleneck of its best-ranked placement, as `place` shows it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from verifier.engine.ast import Program
from verifier.engine.backend import Backend
from verifier.engine.records import Columns
from verifier.placement.place import JobPlacements, Placement, PlaceReport

OUTCOMES = ("loses", "slower", "moved", "unchanged", "faster", "gains", "unplaceable")
"""A job's outcome, worst first: it loses its placement; keeps one at a lower bottleneck; keeps
one elsewhere (or on other GPUs) at the same bottleneck; keeps the same; keeps one at a higher
bottleneck; gains one it lacked; fits nowhere either way."""


@dataclass(frozen=True)
class Permitted:
    """The GPUs a principal may schedule on (Cedar `permitted(_, "schedule", class)`), per side."""

    before: frozenset[str]
    after: frozenset[str]

    @property
    def granted(self) -> list[str]:
        return sorted(self.after - self.before)

    @property
    def revoked(self) -> list[str]:
        return sorted(self.before - self.after)

    @property
    def changed(self) -> bool:
        return self.before != self.after


@dataclass(frozen=True)
class JobChange:
    job: str
    principal: str
    outcome: str
    before: Placement | None
    """The best-ranked placement before the change (None: none)."""
    after: Placement | None
    hosting_before: int
    hosting_after: int
    permitted: Permitted | None = None
    """The job's principal's scheduling decisions on both sides; None when authorization was not checked."""
    never: tuple[str, ...] = ()
    """Why the job can never run on any node, whatever the change (PLACE002's reasons), sorted."""


@dataclass
class WhatIfReport:
    changes: list[str]
    """What changed: the scenario's changes (`drain dgx03`), or the two revisions compared."""
    rank: str
    jobs: list[JobChange]
    authorization_checked: bool = True

    def named(self, outcome: str) -> list[str]:
        return [c.job for c in self.jobs if c.outcome == outcome]

    @property
    def lost(self) -> list[str]:
        return self.named("loses")

    @property
    def exit_code(self) -> int:
        """1 when the change costs some job its placement: the question a drain asks first."""
        return 1 if self.lost else 0


def outcome(before: Placement | None, after: Placement | None) -> str:
    """How a job's best placement changed (see OUTCOMES)."""
    if before is None:
        return "unplaceable" if after is None else "gains"
    if after is None:
        return "loses"
    # A placement of one GPU has no pair, so no bottleneck: -1 ranks it below every figure.
    was = before.bottleneck_mbps if before.bottleneck_mbps is not None else -1
    now = after.bottleneck_mbps if after.bottleneck_mbps is not None else -1
    if now < was:
        return "slower"
    if now > was:
        return "faster"
    if (before.domain, before.gpus) != (after.domain, after.gpus):
        return "moved"
    return "unchanged"


def compare(
    changes: list[str],
    before: PlaceReport,
    after: PlaceReport,
    permitted_before: dict[str, frozenset[str]] | None = None,
    permitted_after: dict[str, frozenset[str]] | None = None,
) -> WhatIfReport:
    """Each job of `before` (both reports place the same jobs, in the same order) compared."""
    after_of = {jp.job.name: jp for jp in after.jobs}
    out: list[JobChange] = []
    for jp in before.jobs:
        other = after_of[jp.job.name]
        first, then = _best(jp), _best(other)
        permitted = None
        if permitted_before is not None and permitted_after is not None:
            principal = jp.job.principal
            permitted = Permitted(
                permitted_before.get(principal, frozenset()), permitted_after.get(principal, frozenset())
            )
        out.append(
            JobChange(
                jp.job.name,
                jp.job.principal,
                outcome(first, then),
                first,
                then,
                jp.hosting,
                other.hosting,
                permitted,
                tuple(sorted({*jp.never, *other.never})),
            )
        )
    return WhatIfReport(changes, before.rank, out, before.authorization_checked and after.authorization_checked)


def _best(jp: JobPlacements) -> Placement | None:
    return jp.placements[0] if jp.placements else None


PERMITTED_READS = ("authz_class", "permitted")
"""The relations `permitted_gpus` reads: loaded for it whatever the rules evaluated read."""


def permitted_gpus(engine: Backend, program: Program, principals: Iterable[str]) -> dict[str, frozenset[str]]:
    """Per principal, the GPUs Cedar lets it schedule on, from the evaluation's authorization facts.

    Only GPUs whose facts were loaded count (`place` loads every GPU).
    """
    wanted = set(principals)
    if "authz_class" not in program.relations or "permitted" not in program.relations:
        return {p: frozenset() for p in wanted}
    cls = Columns.of(program, "authz_class", ("resource", "class"))
    c_gpu, c_class = cls.index["resource"], cls.index["class"]
    members: dict[str, list[str]] = defaultdict(list)
    for row in engine.query("authz_class", None, False):
        members[str(row[c_class])].append(str(row[c_gpu]))
    allow = Columns.of(program, "permitted", ("principal", "action", "class"))
    p_at, a_at, k_at = allow.index["principal"], allow.index["action"], allow.index["class"]
    out: dict[str, set[str]] = {p: set() for p in wanted}
    for row in engine.query("permitted", {a_at: "schedule"}, False):
        principal = str(row[p_at])
        if principal in out:
            out[principal].update(members.get(str(row[k_at]), ()))
    return {p: frozenset(gpus) for p, gpus in out.items()}
