"""`verify`: every cluster given evaluated once, its findings located, waived and baselined."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.checks.baseline import load_baseline
from verifier.checks.check import Check
from verifier.checks.findings import Severity
from verifier.checks.settings import RunSettings
from verifier.checks.verify import Result, VerifyReport, apply_baseline, apply_waivers, collect_results
from verifier.checks.waivers import load_waivers, waiver_checks
from verifier.core.errors import SourceLocation
from verifier.core.exit_soon import ends_with_command
from verifier.core.frozen import Frozen, Record
from verifier.engine.ast import Program
from verifier.engine.queries import program_for, query_relations
from verifier.engine.records import Columns
from verifier.engine.strata import sliced_strata
from verifier.session.inputs import authorization_for, read_inventory
from verifier.session.session import (
    Evaluation,
    PhaseListener,
    evaluate,
    load_rules,
    needs_queries,
    program_checks,
    require_job_principals,
)
from verifier.session.side_files import SideFiles, discover
from verifier.sources.inventory.clusters import ClusterFiles, cluster_files, several_clusters
from verifier.sources.inventory.model import Inventory
from verifier.sources.scenario import Scenario

if TYPE_CHECKING:
    from verifier.authorization.setup import AuthzSetup
    from verifier.engine.ast import Row
    from verifier.engine.backend import Backend
    from verifier.placement.whatif import WhatIfReport
    from verifier.session.inputs import Inputs
    from verifier.session.observed_input import ObservedRun
    from verifier.sources.jobs.principal_rules import PrincipalRule
    from verifier.sources.jobs.spec import Jobs
    from verifier.sources.observed.model import Observations


@dataclass(frozen=True, repr=False, eq=False)
class SideFileFlags(Frozen):
    """Side files named by flags (or the configuration file); the rest are discovered."""

    thresholds: Path | None = None
    waivers: Path | None = None
    baseline: Path | None = None
    principals: Path | None = None
    policies: Path | None = None

    def discover(self, inventory_paths: Sequence[Path]) -> SideFiles:
        return discover(
            inventory_paths,
            thresholds=self.thresholds,
            waivers=self.waivers,
            baseline=self.baseline,
            principals=self.principals,
            policies=self.policies,
        )


@dataclass(repr=False, eq=False)
class VerifyRun(Record):
    """What the report of a run depends on, besides the inventory."""

    rules: Sequence[Path] | None = None
    engine: str = "auto"
    fail_on: Severity = "error"
    with_proofs: bool = False
    flags: SideFileFlags = field(default_factory=SideFileFlags)
    today: date | None = None
    today_from: str = "--today"
    """Where `today` came from, as the reports name it ('TOPOLOG_TODAY', a configuration's line)."""
    from_kind: str | None = None
    jobs: Sequence[Path] = ()
    principal_from: tuple[PrincipalRule, ...] = ()
    """Whom a Kubernetes or Slurm job among `jobs` acts as (`--principal-from`)."""
    authorize: bool = True
    """False: run without authorization (`--no-authorization`); jobs are then placed as if every principal may."""
    evaluate_only: frozenset[str] = frozenset()
    """Check ids: evaluate only the rules their findings depend on (the same findings of those
    checks, under stratified semantics, for less work); empty: every rule."""
    scenario: Scenario = field(default_factory=Scenario)
    """A what-if (`--drain`, `--fail`, `--fail-link`, `--scenario`, with --jobs): the jobs placed with
    it too, its effect on them reported as WHATIF00x findings (verifier.session.whatif_checks)."""
    observed: ObservedRun | None = None
    """Observations (`--observed`): judged by rules/observed/ against each inventory (docs/observed.md)."""
    analyse_policies: bool = False
    """Run the policy analyses (`topolog policy check`): their facts make rules/policy/ judge the Cedar
    policies; a principals file is then required. Also done when `evaluate_only` keeps a check that reads them."""
    schema_wide: bool = True
    """With the policy analyses: run the schema-wide one too (False: `policy check --inventory-only`)."""


_LEFT_OPEN: list[Backend] = []
"""In the console script, the engine of the last cluster a verification evaluated: left open for the exit."""


def _close_left_open() -> None:
    while _LEFT_OPEN:
        _LEFT_OPEN.pop().close()


@contextmanager
def _done_at_exit(evaluation: Evaluation, last: bool) -> Iterator[Evaluation]:
    """The evaluation, closed once used; with `last` (nothing evaluates after it) in the console script,
    which ends with its command, its engine is left open instead: closing DuckDB frees every table
    (0.05 s at 131,072 GPUs) just before a process that frees nothing at its exit (verifier.core.exit_soon).
    At most one engine is left: the next verification in the process (`topolog test`) closes it first.
    """
    try:
        yield evaluation
    except BaseException:
        evaluation.close()
        raise
    if last and ends_with_command():
        _LEFT_OPEN.append(evaluation.engine)
    else:
        evaluation.close()


def verify(
    inventory_paths: Sequence[Path], run: VerifyRun | None = None, progress: PhaseListener | None = None
) -> VerifyReport:
    """The report of every check on every cluster in `inventory_paths` (TopologError on bad input)."""
    _close_left_open()
    run = run or VerifyRun()
    paths = list(inventory_paths)
    clusters = cluster_files(paths) if run.from_kind is None else [ClusterFiles("", tuple(paths))]
    everywhere = run.flags.discover(paths)  # waivers and the baseline judge the whole report
    waivers = load_waivers(everywhere.waivers) if everywhere.waivers is not None else None
    baseline = load_baseline(everywhere.baseline) if everywhere.baseline is not None else None
    jobs = None
    located: dict[str, SourceLocation] = {}
    if run.jobs:  # --jobs: job facts make rules/placement/ judge every job (PLACE001: a job that fits nowhere)
        if len(clusters) > 1:
            raise several_clusters(clusters, "--jobs judges whether each job fits one cluster")
        from verifier.sources.jobs.read import read_jobs

        jobs = read_jobs(list(run.jobs), run.principal_from)
        located.update((job.name, job.loc) for job in jobs)
    observations = None
    if run.observed is not None:  # read once, before any evaluation: an unreadable file is exit 2 at once
        if len(clusters) > 1:
            raise several_clusters(clusters, "--observed judges one cluster's hosts")
        observations = run.observed.read()
    program = load_rules(run.rules)  # checked once, whatever the number of clusters
    if run.evaluate_only:
        program = _slice(program, run.evaluate_only)
    analyse = run.analyse_policies or (bool(run.evaluate_only) and _reads_policy_analysis(program))
    results: list[Result] = []
    omitted = 0
    checks: list[Check] = []
    notes: list[str] = []
    if jobs is not None:  # what a Kubernetes or Slurm spec says that topolog does not judge
        notes.extend(str(n) for job in jobs for n in job.notes)
        notes.extend(str(n) for n in jobs.notes)
    unproved: str | None = None
    not_applicable: set[str] | None = None
    topology: list[Inventory] = []  # each cluster's inventory, for the html report's drawing
    what_if = bool(run.scenario) and jobs is not None  # placed after the clusters: a second evaluation
    for number, cluster in enumerate(clusters, 1):  # each cluster is its own inventory; their findings make one report
        side = run.flags.discover(list(cluster.paths)) if len(clusters) > 1 else everywhere
        if progress is not None:
            progress.step("loading inventory")
        inputs = read_inventory(list(cluster.paths), side, run.from_kind, principals=run.authorize)
        notes.extend(inputs.notes)
        topology.append(inputs.inventory)
        required = " to judge the jobs' principals" if jobs is not None and run.authorize else None
        if analyse:
            required = " to analyse the policies over the inventory's principals"
        authorization = authorization_for(inputs, required=required)
        if jobs is not None and authorization is not None:
            require_job_principals(jobs, authorization.principals)
        # Without jobs a verification reads only the checks' reports once evaluated; with them,
        # PLACE001's message reads placement's why-not and deniers as well.
        evaluated = evaluate(
            program,
            inputs,
            engine=run.engine,
            authorization=authorization,
            jobs=jobs,
            progress=progress,
            reads_reports_only=jobs is None,
            extra_facts=_extra_facts(run, observations, inputs, authorization if analyse else None, progress),
        )
        with _done_at_exit(evaluated, last=number == len(clusters) and not what_if) as evaluation:
            if progress is not None:
                progress.step("collecting findings")
            here = dict(located)
            if inputs.principals is not None:  # AUTHZ findings name teams: locate them where they are written
                here.update((pid, p.loc) for pid, p in inputs.principals.principals.items() if pid not in here)
            if authorization is not None:  # AUTHZ004 names policies: locate them at their file:line
                here.update((pid, p.loc) for pid, p in authorization.bundle.policies.items() if pid not in here)
            found, left_out = collect_results(
                evaluation.engine, evaluation.checks, evaluation.inventory, run.with_proofs, here
            )
            if jobs is not None:
                found = [_why_unplaceable(r, evaluation, jobs) for r in found]
            checks = checks or list(evaluation.checks)
            # Not applicable to the run: to no cluster of it (a check one cluster judged, it judged).
            here_na = set(evaluation.not_applicable)
            not_applicable = here_na if not_applicable is None else not_applicable & here_na
            if run.with_proofs and not evaluation.engine.proves:
                unproved = f"the {run.engine} engine records no derivations; use --engine duckdb for proofs"
        results.extend(found)
        omitted += left_out
    if what_if:
        # The inventory as it is has been verified; the scenario's effect on the jobs joins it.
        from verifier.session.whatif_checks import whatif_checks, whatif_results

        results.extend(whatif_results(_what_if(paths, run, progress), located))
        checks += whatif_checks(run.scenario.changes[0].loc.file)
    results.sort(key=lambda r: r.finding.sort_key())
    settings = RunSettings()
    if waivers is not None:
        judged_on = run.today or date.today()
        source = "the clock" if run.today is None else run.today_from
        settings = RunSettings(waiver_date=judged_on, waiver_date_from=source)
        results = apply_waivers(results, waivers, judged_on, {c.id for c in checks})
        checks += waiver_checks(waivers)
    baselined = fixed = 0
    if baseline is not None:
        results, baselined, fixed = apply_baseline(results, baseline)
    return VerifyReport(
        inventories=tuple(str(p) for p in inventory_paths),
        checks=checks,
        results=results,
        fail_on=run.fail_on,
        proofs_omitted=omitted,
        baselined=baselined,
        baseline_fixed=fixed,
        authorization_checked=run.authorize,
        notes=notes,
        proofs_unavailable=unproved,
        not_applicable=sorted(not_applicable or ()),
        topology=topology,
        settings=settings,
    )


def _what_if(paths: list[Path], run: VerifyRun, progress: PhaseListener | None) -> WhatIfReport:
    """`place`'s what-if of the run's jobs and scenario (imported here: place_run imports this module)."""
    from verifier.session.place_run import PlaceSettings, what_if

    how = PlaceSettings(
        engine=run.engine, limit=1, authorize=run.authorize, principal_from=run.principal_from, observed=run.observed
    )
    return what_if(paths, list(run.jobs), run.scenario, how, progress, run.flags)


def _why_unplaceable(result: Result, evaluation: Evaluation, jobs: Jobs) -> Result:
    """PLACE001 with the reason, as `place --why-not` gives it for the domain that came closest.

    The closest domain is the one where most GPUs pass the first requirement it fails (ties:
    the first by name); its sentence quotes what the job needs, in GPUs, not what it declares.
    """
    finding = result.finding
    if finding.rule != "PLACE001" or not finding.subjects:
        return result
    job = jobs.jobs.get(finding.subjects[0])
    if job is None or "place_why_not" not in evaluation.program.relations:
        return result
    why = Columns.of(evaluation.program, "place_why_not", ("job", "domain", "what", "have", "need"))
    rows = evaluation.engine.query("place_why_not", {why.index["job"]: job.name})
    if not rows:
        return result
    best = min(rows, key=lambda r: (-int(why("have", r)), str(why("domain", r))))
    from verifier.placement.place import Deniers, why_not_message

    deniers = Deniers(evaluation.engine, evaluation.program, evaluation.authorization)
    # A MIG job's domain of several models is counted in one model's GPUs (hosts.dl's
    # place_why_kind): the sentence names that model, as `place --why-not` does, or "8 GPUs"
    # would read as the whole domain's count.
    model: str | None = None
    if "place_why_kind" in evaluation.program.relations:
        kind = Columns.of(evaluation.program, "place_why_kind", ("job", "domain", "model"))
        judged = evaluation.engine.query(
            "place_why_kind", {kind.index["job"]: job.name, kind.index["domain"]: why("domain", best)}
        )
        model = str(judged[0][kind.index["model"]]) if judged else None
    reason = why_not_message(
        job,
        str(why("domain", best)),
        str(why("what", best)),
        int(why("have", best)),
        int(why("need", best)),
        deniers,
        model,
    )
    return replace(result, finding=replace(finding, message=f"{finding.message} Closest: {reason}."))


_SLICES = "_slices"
"""The attribute a loaded program keeps its slices under, by the check ids they keep (_slice)."""
_MAX_SLICES = 512
"""Slices one program keeps at most: one per check for `topolog test` (a pack has a few hundred)."""


def _slice(program: Program, check_ids: frozenset[str]) -> Program:
    """The rules that the findings of `check_ids` depend on: their relations, what their
    `@needs` read, and for PLACE001 the why-not its message quotes.

    Made once per (program, check ids): `topolog test` (and the rule fixtures) verify each case of a
    check with the one loaded pack, and slicing walks the whole pack's rules each time. A slice is
    a function of the program's rules and metadata, which never change, so a kept one is the same.
    """
    kept: dict[frozenset[str], Program] = program.kept(_SLICES)
    found = kept.get(check_ids)
    if found is None:
        found = _make_slice(program, check_ids)
        if len(kept) < _MAX_SLICES:
            kept[check_ids] = found
    return found


def _make_slice(program: Program, check_ids: frozenset[str]) -> Program:
    checks = [c for c in program_checks(program) if c.id in check_ids]
    relations = {c.reports for c in checks}
    relations |= {rel for q in needs_queries(checks, program).values() for rel in query_relations(q)}
    if "PLACE001" in check_ids:
        relations.add("place_why_not")
    sliced = program_for(program, relations)
    # Only these checks' metadata: the others are not evaluated, so they are neither reported as
    # run nor is their `@needs` asked (which would load what they read: a fleet's objects).
    files = {c.file for c in checks}
    kept = Program(sliced.declarations, sliced.rules, tuple(m for m in sliced.metadata if m[2].file in files))
    sliced_strata(program, kept)
    return kept


def _reads_policy_analysis(program: Program) -> bool:
    from verifier.authorization.relations import POLICY_RELATIONS

    return any(a.relation in POLICY_RELATIONS for r in program.rules for a in (*r.positive_atoms(), *r.negated_atoms()))


def _extra_facts(
    run: VerifyRun,
    observations: Observations | None,
    inputs: Inputs,
    analysed: AuthzSetup | None,
    progress: PhaseListener | None,
) -> dict[str, list[Row]] | None:
    """The observations' facts, and the policy analyses' when `analysed` is the setup to analyse."""
    facts = _observed_facts(run.observed, observations, inputs)
    if analysed is None:
        return facts
    # Imported here: the analyses (an SMT solver among them) cost a verification nothing.
    from verifier.authorization.analysis.policy_facts import policy_facts

    if progress is not None:
        progress.step("analysing the policies")

    return {**(facts or {}), **policy_facts(analysed, run.schema_wide)}


def _observed_facts(
    observed: ObservedRun | None, observations: Observations | None, inputs: Inputs
) -> dict[str, list[Row]] | None:
    if observed is None or not observations:
        return None
    # Imported here: the observed-state readers and facts cost a run without --observed ~30 ms of start-up.
    from verifier.session.observed_input import observed_rows

    return observed_rows(observed, observations, inputs)
