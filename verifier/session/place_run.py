"""`place`: jobs and inventory read, authorization built, the placement rules evaluated once, ranked."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from verifier.engine.ast import Program
from verifier.engine.queries import program_for
from verifier.placement.place import (
    PlaceReport,
    for_every_job,
    gpus_and_ancestors,
    job_classes,
    placement_relations,
    rank_placements,
)
from verifier.placement.whatif import PERMITTED_READS, WhatIfReport, compare, permitted_gpus
from verifier.session.inputs import Inputs, authorization_for, read_inventory
from verifier.session.session import (
    PhaseListener,
    evaluate,
    load_rules,
    require_job_principals,
)
from verifier.session.side_files import discover
from verifier.sources.jobs.principal_rules import PrincipalRule
from verifier.sources.jobs.read import read_jobs
from verifier.sources.jobs.spec import Jobs
from verifier.sources.scenario import Scenario, apply_scenario

if TYPE_CHECKING:  # a type only: verify_run places a what-if's jobs through this module
    from verifier.session.observed_input import ObservedRun
    from verifier.session.verify_run import SideFileFlags


def place(
    inventory_paths: Sequence[Path],
    jobs_paths: Sequence[Path],
    rank: str = "bandwidth",
    why_not: bool = False,
    engine: str = "auto",
    progress: PhaseListener | None = None,
    limit: int = 0,
    whole_inventory: bool = False,
    flags: SideFileFlags | None = None,
    authorize: bool = True,
    principal_from: tuple[PrincipalRule, ...] = (),
    observed: ObservedRun | None = None,
) -> PlaceReport:
    """Valid placements of every job, ranked (TopologError on bad input).

    Fails closed: without a principals file, or with a job whose principal is not in it,
    nothing is placed (exit 2) unless `authorize` is False (`--no-authorization`), and then
    the report says that authorization was not checked. Only the facts of GPUs and their
    ancestors are loaded unless `whole_inventory` (a test holds both ways equal) or some
    job asks for rail alignment. `principal_from`: whom a Kubernetes or Slurm job acts as
    (verifier/sources/jobs/principal_rules.py).
    """
    paths = list(inventory_paths)
    side = flags.discover(paths) if flags is not None else discover(paths)
    how = PlaceSettings(rank, why_not, engine, limit, whole_inventory, authorize, principal_from, observed)
    todo = jobs_to_place(jobs_paths, why_not, principal_from)
    if progress is not None:
        progress.step("loading inventory")
    # The GPUs each principal may use are for comparisons (what-if, diff): one report reads none.
    inputs = read_inventory(paths, side, principals=authorize)
    return placements(inputs, todo, how, progress, permitted=False)[0]


def what_if(
    inventory_paths: Sequence[Path],
    jobs_paths: Sequence[Path],
    scenario: Scenario,
    how: PlaceSettings | None = None,
    progress: PhaseListener | None = None,
    flags: SideFileFlags | None = None,
) -> WhatIfReport:
    """Every job placed on the inventory and on the inventory with `scenario` applied, compared.

    The inventory is read once; the scenario is applied as the states an inventory edit would
    write (verifier.sources.scenario), and an unknown name in it is bad input before any evaluation.
    """
    how = how or PlaceSettings()
    paths = list(inventory_paths)
    side = flags.discover(paths) if flags is not None else discover(paths)
    todo = jobs_to_place(jobs_paths, how.why_not, how.principal_from)
    if progress is not None:
        progress.step("loading inventory")
    inputs = read_inventory(paths, side, principals=how.authorize)
    changed = apply_scenario(inputs.inventory, scenario)
    parts = inputs.digest_parts
    # The authorization facts' cache is named by the inventory's bytes: the scenario joins them.
    after_inputs = replace(
        inputs, inventory=changed, digest_parts=[*parts, scenario.digest_part()] if parts is not None else None
    )
    before, allowed_before = placements(inputs, todo, how, progress)
    after, allowed_after = placements(after_inputs, todo, how, progress)
    return compare(scenario.describe(), before, after, allowed_before, allowed_after)


@dataclass(frozen=True)
class PlaceSettings:
    """How `place` ranks and what it loads (see `place`)."""

    rank: str = "bandwidth"
    why_not: bool = False
    engine: str = "auto"
    limit: int = 0
    whole_inventory: bool = False
    authorize: bool = True
    principal_from: tuple[PrincipalRule, ...] = ()
    """Whom a Kubernetes or Slurm job acts as (`--principal-from`)."""
    observed: ObservedRun | None = None
    """Observations (`--observed`): a GPU they say is out of service (OBS004, OBS006) is never placed on."""
    nearest_principal: bool = True
    """An unknown job principal is also compared with every principal for a did-you-mean (False: the
    look-alike hint only, for serve: session.require_job_principals)."""


@dataclass(frozen=True)
class JobsToPlace:
    """Jobs read once, for one or more inventories: every job, one per class, and the program."""

    jobs: Jobs
    classes: Jobs
    of: dict[str, str]
    program: Program


def jobs_to_place(
    jobs_paths: Sequence[Path], why_not: bool = False, principal_from: tuple[PrincipalRule, ...] = ()
) -> JobsToPlace:
    jobs = read_jobs(list(jobs_paths), principal_from)  # topolog's format, Kubernetes and Slurm alike
    classes, of = job_classes(jobs)
    # Stages no job asks for (rail alignment, pair bandwidth) read nothing: the engine's
    # pruning sees that their job_need atoms match no row and loads none of their inputs.
    # Without --why-not, the rules that only explain rejected domains are not evaluated.
    return JobsToPlace(jobs, classes, of, program_for(load_rules(), placement_relations(why_not)))


def placements(
    inputs: Inputs,
    todo: JobsToPlace,
    how: PlaceSettings,
    progress: PhaseListener | None = None,
    *,
    permitted: bool = True,
) -> tuple[PlaceReport, dict[str, frozenset[str]] | None]:
    """The jobs placed on one inventory, and per job principal the GPUs Cedar lets it schedule on
    (None without authorization, or when not `permitted`: reading them back from the engine
    goes over every GPU's class, which only a comparison of two runs uses).
    """
    jobs, classes, of, program = todo.jobs, todo.classes, todo.of, todo.program
    authorization = authorization_for(inputs, required=" to place jobs" if how.authorize else None)
    if authorization is not None:
        require_job_principals(jobs, authorization.principals, nearest=how.nearest_principal)
        # The rules read only the jobs' principals' decisions (job_class_ok; what-if and diff compare
        # theirs): Cedar is asked about their classes, not every principal of the file's.
        authorization = replace(authorization, deciding_for=frozenset(job.principal for job in jobs))
    observations = how.observed.read() if how.observed is not None else None
    # Rail alignment reads NICs, leaves and cables; so do observed NIC ports (a GPU whose NIC is observed
    # down has no fabric share); every other stage reads only GPUs and their ancestors.
    whole = how.whole_inventory or any(job.rail_aligned for job in classes)
    whole = whole or (observations is not None and bool(observations.nic_ports))
    keep = None if whole else gpus_and_ancestors(inputs.inventory)
    allowed: dict[str, frozenset[str]] | None = None
    observed = None
    if how.observed is not None and observations is not None:
        # Only with --observed: see verify_run.
        from verifier.session.observed_input import observed_outages, observed_rows
        from verifier.sources.scenario import scenario_from

        # A GPU observed out of its NVLink domain (OBS002) has its access links failed, as `serve` does:
        # the platform rules then judge it out of the domain for its bandwidth as well as its membership
        # (a node-scoped job on its node runs over PCIe to it), as a declared failed link would be.
        observed = observed_rows(how.observed, observations, inputs)
        left = observed_outages(how.observed, observations, inputs, observed).links
        if left:
            changed = apply_scenario(inputs.inventory, scenario_from(fail_links=left))
            inputs = replace(inputs, inventory=changed, digest_parts=None)
            observed = observed_rows(how.observed, observations, inputs)  # judged on the links as failed now
    # Only the rules that can fire and that a relation placement reads depends on are evaluated (as a
    # verification evaluates only what its reports read): a table of facts nothing live reads (the XIDs
    # that need a reset, without observations), a layout's or MIG job's rules without such a job.
    reads = placement_relations(how.why_not)
    if authorization is not None and permitted:
        reads = (*reads, *PERMITTED_READS)
    with evaluate(
        program,
        inputs,
        engine=how.engine,
        authorization=authorization,
        jobs=classes,
        keep_objects=keep,
        progress=progress,
        rank_pairs=True,
        judge_checks=False,
        extra_facts=observed,
        also_read=reads,
        reads_reports_only=True,
    ) as evaluation:
        if progress is not None:
            progress.step("ranking placements")
        report = rank_placements(
            evaluation.engine,
            program,
            classes,
            how.rank,
            evaluation.pairs,
            why_not=how.why_not,
            limit=how.limit,
            authorization=authorization,
        )
        if authorization is not None and permitted:
            allowed = permitted_gpus(evaluation.engine, program, {job.principal for job in jobs})
    result = for_every_job(report, jobs, of)
    result.authorization_checked = how.authorize
    return result, allowed
