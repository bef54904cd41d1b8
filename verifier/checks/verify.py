"""`topolog verify`: every check's rows become findings, located in the inventory.

Then waivers mark findings as suppressed (they stay in the report), and a baseline
drops the findings a team already knew about when it adopted topolog.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date

from verifier.checks.baseline import Baseline, fingerprint
from verifier.checks.check import Check, CheckSelection
from verifier.checks.findings import Finding, Severity, count_by_severity, fails
from verifier.checks.settings import RunSettings
from verifier.checks.waivers import (
    EXPIRED_ID,
    UNUSED_ID,
    Waiver,
    WaiverFile,
    check_rule_ids,
    expired_finding,
    unused_finding,
)
from verifier.core.errors import SourceLocation
from verifier.core.frozen import Frozen, Record
from verifier.engine.ast import Row
from verifier.engine.backend import Backend
from verifier.facts.relation_sources import override_relations
from verifier.sources.inventory.model import CABLES_UNMADE, Inventory, LinkRow

_PLACEHOLDER = re.compile(r"\{([A-Za-z0-9_]+)\}")

Locate = Callable[[Sequence[str]], SourceLocation | None]
"""Where a finding with these subjects is reported."""

MAX_PROOFS = 500
"""Proofs cost a few engine queries each; past this many findings the rest carry none."""


@dataclass(frozen=True, repr=False, eq=False)
class Result(Frozen):
    """A finding as reported: its fingerprint, and the waiver that suppresses it, if any."""

    finding: Finding
    fingerprint: str
    waiver: Waiver | None = None


@dataclass(repr=False, eq=False)
class VerifyReport(Record):
    inventories: tuple[str, ...]
    checks: list[Check]
    results: list[Result]
    """Active and waived findings in report order; baselined ones are not here."""
    fail_on: Severity
    proofs_omitted: int = 0
    baselined: int = 0
    """Findings left out because their fingerprint is in the baseline."""
    baseline_fixed: int = 0
    """Baseline entries that no longer occur (fixed since the baseline was written)."""
    authorization_checked: bool = True
    """False under `--no-authorization`: jobs were judged as if every principal may use every GPU."""
    not_applicable: list[str] = field(default_factory=list)
    """Ids of the checks that had no data to judge on any cluster (not applicable, not passed)."""
    proofs_unavailable: str | None = None
    """Why proofs were asked for and none could be given (the engine records no derivations)."""
    notes: list[str] = field(default_factory=list)
    """What an importer read but topolog does not model (`verify --from`)."""
    topology: list[Inventory] = field(default_factory=list, repr=False, compare=False)
    """Each cluster's inventory, for the reports that draw it (html); empty when not kept."""
    settings: RunSettings = field(default_factory=RunSettings)
    """The configuration file and the waivers' date that shaped the run, which every format names."""

    @property
    def active(self) -> list[Result]:
        return [r for r in self.results if r.waiver is None]

    @property
    def suppressed(self) -> list[Result]:
        return [r for r in self.results if r.waiver is not None]

    @property
    def findings(self) -> list[Finding]:
        """The findings that count: neither waived nor in the baseline."""
        return [r.finding for r in self.active]

    @property
    def counts(self) -> dict[Severity, int]:
        return count_by_severity(self.findings)

    @property
    def failed(self) -> bool:
        return fails(self.findings, self.fail_on)

    @property
    def exit_code(self) -> int:
        return 1 if self.failed else 0


def finding_fingerprint(check: Check, row: Row) -> str:
    """Rule, subjects, and the values the message quotes that are not subjects (see verifier.checks.baseline).

    For a check with `@group` only the group's columns count: every row of one root cause
    has the finding's fingerprint, which stays the same as rows join or leave the group.
    """
    quoted = set(_PLACEHOLDER.findall(check.message))
    counted = set(check.group) if check.group else set(range(len(check.columns)))
    values = [
        (name, str(v))
        for i, (name, v) in enumerate(zip(check.columns, row, strict=True))
        if name in quoted and i not in check.subjects and i in counted
    ]
    subjects = [str(row[i]) for i in check.subjects if i in counted]
    return fingerprint(check.id, subjects, values)


MadeAt = Callable[[str, frozenset[str] | None], SourceLocation | None]


def root_causes(
    check: Check,
    rows: Sequence[Row],
    locate: Locate,
    wiring: Callable[[str], object | None] = lambda s: s,
    made_at: MadeAt = lambda _s, _r: None,
) -> list[list[Row]]:
    """The check's rows, one list per finding, each list sorted, in the order of their first rows.

    Rows are one finding when the check's `@group` columns agree, and when they say the same
    of copies of one written thing: subjects located on one line (a template's line, a
    `count:` line, a link's `foreach:` line), the same figures in every column that is not a
    subject, and the same wiring where the check reads the links at all (`Check.reads_links`):
    the lines that wrote the links a finding names, else, for objects, `wiring` (the lines that
    wrote the links of each subject and of what it holds; None for a link). A copy an override
    changed is placed where it was made (`made_at`) when the override changed nothing the check
    reads.
    Four workstations of one template whose NIC slot is too narrow are one finding naming
    the four NICs; three GPUs of one `count:` line cut off by three links written apart are
    three findings, as their causes are three.
    """
    groups: dict[Row, list[Row]] = {}
    for row in sorted(rows, key=_row_order):
        groups.setdefault(check.group_key(row), []).append(row)
    # First by place and figures; the wiring (an index of every link, costly at fleet scale)
    # is looked at only where two groups could be one.
    placed: dict[tuple[object, ...], list[tuple[list[Row], tuple[str, ...]]]] = {}
    for members in groups.values():
        subjects = check.subjects_of_rows(members)
        location = place(check, subjects, locate, made_at)
        if location is None or not location.line or not subjects:
            placed[("alone", len(placed))] = [(members, subjects)]
            continue
        said = tuple(
            tuple(sorted({str(row[i]) for row in members}))
            for i in range(len(check.columns))
            if i not in check.subjects
        )
        placed.setdefault((location.file, location.line, location.col, said), []).append((members, subjects))
    merged: dict[tuple[object, ...], list[Row]] = {}
    for key, candidates in placed.items():
        if len(candidates) == 1:
            merged[key] = candidates[0][0]
            continue
        for members, subjects in candidates:
            wired: object
            if not check.reads_links:
                # What the check judges (software, a device's own figures) is the same however the
                # copies are wired: an override of one copy's links does not make it a cause apart.
                wired = None
            elif links := [x for x in subjects if wiring(x) is None]:
                # The finding names the links it is about: the lines that wrote them are what copies
                # share, whatever else their ends are wired by (a GPU whose NVLink an override
                # changed, in a finding about its PCIe link written on the template's line).
                wired = ("links", frozenset(_line_of(locate([x])) for x in links))
            else:
                # Subject by subject: copies name the same kinds of objects in the same order (a GPU,
                # its NIC, the NIC's leaf), each wired by the same lines as its counterpart.
                wired = ("objects", tuple(wiring(x) for x in subjects))
            merged.setdefault((*key, wired), []).extend(members)
    found = [sorted(members, key=_row_order) for members in merged.values()]
    return sorted(found, key=lambda members: _row_order(members[0]))


def _line_of(location: SourceLocation | None) -> tuple[str, int, int] | None:
    return (location.file, location.line, location.col) if location is not None else None


def place(check: Check, subjects: Sequence[str], locate: Locate, made_at: MadeAt) -> SourceLocation | None:
    """Where the finding about `subjects` is reported: where its first subject was made, for a copy
    whose override changed nothing the check reads (a node whose links an override changed, in a
    finding about its software), else `locate`'s place.
    """
    made = made_at(subjects[0], check.reads) if subjects else None
    return made if made is not None else locate(subjects)


def made_places(inv: Inventory) -> MadeAt:
    """`made_at` for `root_causes`: the line that made an overridden copy, when its override
    changed none of the input relations read (None: unknown, read as all of them).
    """

    def made_at(subject: str, reads: frozenset[str] | None) -> SourceLocation | None:
        entry = inv.overridden.get(subject)
        if entry is None or reads is None:
            return None
        changed = override_relations(entry[1])
        return entry[0] if changed is not None and changed.isdisjoint(reads) else None

    return made_at


Place = tuple[str, int, int]
"""A line of the inventory, as (file, line, col)."""


def link_lines(inv: Inventory) -> Callable[[str], object | None]:
    """Per id, the places that wrote the links of it and of everything inside it (built once, on first use).

    Two instances of one template, or of one `count:` line, are wired alike when the same
    lines wrote their links; an instance with a link of its own (an override, a cable
    written for it alone) is not.
    """
    index: _WiringIndex | _MadeWiring | None = None

    def wiring(subject: str) -> object | None:
        nonlocal index
        if inv.has_link(subject):  # asked without making a fleet's deferred links (Inventory.defer_links)
            return None  # a link is placed by its own line, which locate already compares
        if index is None:
            # With every link made (an inventory of a few hundred, read without deferring) the
            # plain walk over them is cheaper than reading plans and runs: the same table.
            deferred = inv.unmade_links() or inv.unmade_cables()
            index = _WiringIndex(inv) if deferred else _MadeWiring(inv)
        return tuple(sorted(index.places(subject)))

    return wiring


class _MadeWiring:
    """For `link_lines` when the inventory has made all its links: each id's lines, walked link by link."""

    __slots__ = ("_lines",)

    def __init__(self, inv: Inventory) -> None:
        self._lines: dict[str, set[Place]] = {}
        for link in inv.links.values():
            where = (link.loc.file, link.loc.line, link.loc.col)
            for end in (link.a, link.b):
                while end:
                    self._lines.setdefault(end, set()).add(where)
                    end = end.rpartition("/")[0]

    def places(self, subject: str) -> frozenset[Place] | set[Place]:
        return self._lines.get(subject, set())


class _WiringIndex:
    """For `link_lines`: the lines that wrote the links of each id and of everything inside it
    (by "/" in ids: a link's ends, their parents, theirs...), read from what the inventory holds
    without making the links it has not made yet (Inventory.defer_links).

    At 131,072 GPUs making those (a million links of stamped nodes, 196,352 cables) to place one
    finding about 16 spines took 1.4 s and 370 MB. Here a node stamped from a plan is looked up in
    its plan's table (relative names, worked out once per plan), and the ids a line's links reach
    are walked once per line, each up to the first parent already reached by that line.
    """

    __slots__ = ("_nodes", "_own")

    def __init__(self, inv: Inventory) -> None:
        unmade = inv.unmade_links()
        # The runs first: should another thread make the links meanwhile, these hold no placeholder.
        runs = inv.unmade_cables()
        ends: dict[Place, list[str]] = {}  # every line but a plan's, with the ends of the links it wrote
        plans: dict[int, Mapping[str, frozenset[Place]]] = {}  # by id(plan): its table by relative name
        self._nodes: dict[str, Mapping[str, frozenset[Place]]] = {}  # stamped node -> its plan's table
        for lk in inv.links_but(unmade.keys(), cables=True).values():
            origin = lk.origin
            if origin is not None and origin in unmade:
                plan, names = unmade[origin]
                table = plans.get(id(plan))
                if table is None:
                    table = plans[id(plan)] = _plan_table(plan.names, plan.link_rows, names, ends)
                self._nodes[origin] = table
            elif lk.loc is CABLES_UNMADE:
                run = runs[lk.id]
                loc = run[5]
                at = ends.setdefault((loc.file, loc.line, loc.col), [])
                at += run[1]
                at += run[2]
            else:
                loc = lk.loc
                ends.setdefault((loc.file, loc.line, loc.col), []).extend((lk.a, lk.b))
        own: dict[str, frozenset[Place]] = {}
        unions: dict[tuple[frozenset[Place], frozenset[Place]], frozenset[Place]] = {}
        for where, names_at in ends.items():
            alone = frozenset((where,))
            reached = _reached(names_at)
            # Set operations, not a step per id: a fleet's lines reach a hundred thousand ids.
            again = reached & own.keys()
            own.update(dict.fromkeys(reached - again, alone))
            for x in again:
                had = own[x]
                if where not in had:
                    # Copies share their sets (one per line, and one per mix of lines): a fleet's
                    # hundred thousand ids hold a few hundred sets.
                    both = unions.get((had, alone))
                    if both is None:
                        both = unions[had, alone] = had | alone
                    own[x] = both
        self._own = own

    def places(self, subject: str) -> frozenset[Place]:
        """The lines that wrote the links of `subject` and of everything inside it."""
        out = self._own.get(subject, frozenset())
        # A stamped node's id has no "/" and its objects' ids are its id, "/" and their names in the
        # plan (templates.py _stamp): the node is `subject`'s first part.
        head, slash, rest = subject.partition("/")
        table = self._nodes.get(head)
        if table is not None:
            inside = table.get(slash + rest)
            if inside is not None:
                out = out | inside
        return out


def _reached(names: Sequence[str]) -> set[str]:
    """`names` and every id above each (cut at its last "/", while one is left)."""
    seen = set(names)
    seen.discard("")
    todo = seen
    while todo:
        # Level by level, each name cut once: a run of cables names each leaf hundreds of times.
        up = {name.rpartition("/")[0] for name in todo}
        up.discard("")
        todo = up - seen
        seen |= todo
    return seen


def _plan_table(
    relative: Sequence[str], rows: Sequence[LinkRow], names: Sequence[str], ends: dict[Place, list[str]]
) -> dict[str, frozenset[Place]]:
    """Per name relative to a node stamped from a plan ("" the node, "/gpu0", ...), the lines that
    wrote the plan's links of it and of what is inside it; the ends of its links outside the node
    (slots past `relative`, the same names for every node, here `names`'s) go to `ends`.
    """
    by_name: dict[str, set[Place]] = {}
    inside = len(relative)
    for a, b, _kind, _mbps, loc, *_rest in rows:
        where = (loc.file, loc.line, loc.col)
        for slot in (a, b):
            if slot > inside:
                ends.setdefault(where, []).append(names[slot])
                continue
            # The node's id has no "/": the ids above one of its names are the node's id and a cut
            # of the relative name, down to the node itself ("").
            name = relative[slot - 1] if slot else ""
            while True:
                by_name.setdefault(name, set()).add(where)
                cut = name.rfind("/")
                if cut < 0:
                    break
                name = name[:cut]
    return {name: frozenset(places) for name, places in by_name.items()}


def _row_order(row: Row) -> tuple[tuple[int, int | str], ...]:
    # A column may hold numbers in some rows and text in others: (kind, value) never compares the two.
    return tuple((0, v) if isinstance(v, int) else (1, str(v)) for v in row)


def locator(inv: Inventory, elsewhere: Mapping[str, SourceLocation] | None = None) -> Locate:
    """Where a finding with these subjects is reported: its first subject written in the
    inventory, else one that `elsewhere` places (a team in the principals file, a job in its
    job file), else the inventory file itself.
    """
    extra = elsewhere or {}

    def written(subject: str) -> SourceLocation | None:
        if subject in inv.found or inv.has_link(subject) or subject in inv.models or subject in inv.templates:
            return inv.location(subject)
        return extra.get(subject)

    def locate(subjects: Sequence[str]) -> SourceLocation | None:
        location = next((loc for loc in map(written, subjects) if loc is not None), None)
        if location is None and subjects:
            location = inv.location(subjects[0])
        return location

    return locate


def check_findings(
    engine: Backend,
    check: Check,
    locate: Locate,
    wiring: Callable[[str], object | None] = lambda s: s,
    made_at: MadeAt = lambda _s, _r: None,
) -> list[tuple[Finding, str, list[Row]]]:
    """The check's findings (one per root cause), each with its fingerprint and the rows it is made of."""
    out: list[tuple[Finding, str, list[Row]]] = []
    for rows in root_causes(check, engine.query(check.reports), locate, wiring, made_at):
        subjects = check.subjects_of_rows(rows)
        where = place(check, subjects, locate, made_at)
        finding = Finding(check.id, check.severity, subjects, check.message_for_rows(rows), where)
        out.append((finding, finding_fingerprint(check, rows[0]), rows))
    return out


def collect_results(
    engine: Backend,
    checks: Sequence[Check],
    inv: Inventory,
    with_proofs: bool,
    elsewhere: Mapping[str, SourceLocation] | None = None,
) -> tuple[list[Result], int]:
    """Every check's findings with fingerprints, sorted; proofs for the first MAX_PROOFS.

    One root cause is one finding (`root_causes`), located by `locator`.
    """
    locate, wiring, made_at = locator(inv, elsewhere), link_lines(inv), made_places(inv)
    found: list[tuple[Result, Check, Row]] = []
    for check in checks:
        for finding, fp, rows in check_findings(engine, check, locate, wiring, made_at):
            found.append((Result(finding, fp), check, rows[0]))
    found.sort(key=lambda item: item[0].finding.sort_key())
    if not with_proofs or not engine.proves:
        return [result for result, _check, _row in found], 0
    # The row each finding came from is kept, so its proof is asked for directly.
    results = [
        replace(result, finding=replace(result.finding, proof=engine.explain(check.reports, row)))
        if i < MAX_PROOFS
        else result
        for i, (result, check, row) in enumerate(found)
    ]
    return results, max(0, len(found) - MAX_PROOFS)


def apply_waivers(results: list[Result], waivers: WaiverFile, today: date, check_ids: set[str]) -> list[Result]:
    """Mark waived results; add a finding per expired waiver and per waiver that matches nothing.

    A waiver naming a rule id that no check has is bad input (TopologError), not a finding.
    """
    check_rule_ids(waivers, check_ids)
    live = [w for w in waivers.waivers if not w.expired(today)]
    used: set[Waiver] = set()
    out: list[Result] = []
    for r in results:
        matching = [w for w in live if w.matches(r.finding)]
        used.update(matching)
        # The first matching waiver in file order is the one reported; later ones are still "used".
        out.append(replace(r, waiver=matching[0]) if matching else r)
    for w in waivers.waivers:
        if w.expired(today):
            out.append(Result(*expired_finding(w)))
        elif w not in used:
            out.append(Result(*unused_finding(w, check_ids)))
    out.sort(key=lambda r: r.finding.sort_key())
    return out


def apply_baseline(results: list[Result], baseline: Baseline) -> tuple[list[Result], int, int]:
    """Drop active rule findings whose fingerprint is in the baseline: (kept, dropped, entries fixed)."""
    kept: list[Result] = []
    seen: set[str] = set()
    for r in results:
        seen.add(r.fingerprint)
        # Waived findings stay visible as waived, and waiver findings must never be baselined away.
        if r.waiver is None and r.fingerprint in baseline.fingerprints and not _is_waiver_finding(r):
            continue
        kept.append(r)
    return kept, len(results) - len(kept), len(baseline.fingerprints - seen)


def baseline_entries(report: VerifyReport) -> list[tuple[Finding, str]]:
    """What `--write-baseline` records: rule findings that are not waived (baselined ones included)."""
    return [(r.finding, r.fingerprint) for r in report.active if not _is_waiver_finding(r)]


def _is_waiver_finding(r: Result) -> bool:
    return r.finding.rule in (EXPIRED_ID, UNUSED_ID)


def select_report(report: VerifyReport, selection: CheckSelection) -> VerifyReport:
    """The report of the selected checks only (`--check` / `--skip`), waiver findings included.

    Waivers and the baseline were matched against the whole run, so a waiver of a check
    left out is not called unused; the selection decides only what is reported and counts.
    """
    if selection.everything:
        return report
    return replace(
        report,
        checks=[c for c in report.checks if selection.reports(c.id)],
        results=[r for r in report.results if selection.reports(r.finding.rule)],
        not_applicable=[c for c in report.not_applicable if selection.reports(c)],
    )
