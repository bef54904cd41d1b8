"""`place`: jobs and inventory read, authorization built, the placement rules evaluated once, ranked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from verifier.engine.queries import program_for
from verifier.placement.place import (
    PlaceReport,
    for_every_job,
    gpus_and_ancestors,
    job_classes,
    placement_relations,
    rank_placements,
)
from verifier.session.inputs import authorization_for, read_inventory
from verifier.session.session import (
    PhaseListener,
    evaluate,
    load_rules,
    require_job_principals,
)
from verifier.session.verify_run import SideFileFlags
from verifier.sources.jobs.loader import load_jobs


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
) -> PlaceReport:
    """Valid placements of every job, ranked (TopologError on bad input).

    Fails closed: without a principals file, or with a job whose principal is not in it,
    nothing is placed (exit 2) unless `authorize` is False (`--no-authorization`), and then
    the report says that authorization was not checked. Only the facts of GPUs and their
    ancestors are loaded unless `whole_inventory` (a test holds both ways equal) or some
    job asks for rail alignment.
    """
    paths = list(inventory_paths)
    side = (flags or SideFileFlags()).discover(paths)
    jobs = load_jobs(list(jobs_paths))
    classes, of = job_classes(jobs)
    # Stages no job asks for (rail alignment, pair bandwidth) read nothing: the engine's
    # pruning sees that their job_need atoms match no row and loads none of their inputs.
    # Without --why-not, the rules that only explain rejected domains are not evaluated.
    program = program_for(load_rules(), placement_relations(why_not))
    if progress is not None:
        progress.step("loading inventory")
    inputs = read_inventory(paths, side, principals=authorize)
    authorization = authorization_for(inputs, required=" to place jobs" if authorize else None)
    if authorization is not None:
        require_job_principals(jobs, authorization.principals)
    # Rail alignment reads NICs, leaves and cables; every other stage reads only GPUs and their ancestors.
    keep = None if whole_inventory or any(job.rail_aligned for job in classes) else gpus_and_ancestors(inputs.inventory)
    with evaluate(
        program,
        inputs,
        engine=engine,
        authorization=authorization,
        jobs=classes,
        keep_objects=keep,
        progress=progress,
        rank_pairs=True,
        judge_checks=False,
    ) as evaluation:
        if progress is not None:
            progress.step("ranking placements")
        report = rank_placements(
            evaluation.engine,
            program,
            classes,
            rank,
            evaluation.pairs,
            why_not=why_not,
            limit=limit,
            authorization=authorization,
        )
    result = for_every_job(report, jobs, of)
    result.authorization_checked = authorize
    return result
