"""`topolog diff`: what a change to an inventory does to its findings and derived facts."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from verifier.checks.diff import DiffReport, files_at_revision
from verifier.checks.findings import SEVERITIES, Severity
from verifier.cli.errors import guard
from verifier.cli.job_options import PRINCIPAL_FROM_OPTION
from verifier.cli.options import ENGINE_OPTION, RULES_OPTION, _missing_files, format_option
from verifier.cli.output import emit
from verifier.core.progress import Progress
from verifier.reports import formats_for
from verifier.session.diff_run import diff, diff_jobs
from verifier.sources.jobs.principal_rules import PrincipalRule


@click.command("diff")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--rev", default=None, help="Compare INVENTORY as committed at this git revision (old) with the working tree (new)."
)
@RULES_OPTION
@click.option(
    "--relation",
    "relations",
    multiple=True,
    help="Also compare this relation (repeatable). Always compared, where declared: "
    "nvlink_domain, node_domain_count, permitted.",
)
@click.option(
    "--jobs",
    "jobs_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Job file or directory (repeatable): also place every job on both sides and say, per job, whether the "
    "change costs it its placement, lowers its bottleneck or moves it, and whose authorization decisions change.",
)
@format_option(formats_for(DiffReport))
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Exit 1 when the change adds a finding at least this severe.",
)
@PRINCIPAL_FROM_OPTION
@ENGINE_OPTION
def diff_cmd(
    inventory: tuple[Path, ...],
    rev: str | None,
    rules: tuple[Path, ...],
    relations: tuple[str, ...],
    fmt: str,
    fail_on: Severity,
    engine: str,
    jobs_paths: tuple[Path, ...],
    principal_from: tuple[PrincipalRule, ...],
) -> None:
    """Show what a change does: findings added and resolved, derived facts that changed.

    Give OLD NEW (two inventory files), or inventory files and --rev to compare them
    with themselves at a git revision. Exit status: 0 the change adds no finding at or
    above --fail-on, 1 it does, 2 bad input. With --jobs, every job is placed on both
    sides (each needs its principals file) and compared as `place --drain` compares; a
    job that loses its placement is exit status 1 too.

    \b
    Example:
      topolog diff old.yaml new.yaml --format json
      topolog diff inventories/dgx-h100-pod.yaml --rev main --relation node_of
      topolog diff inventories/mixed-fleet.yaml --rev HEAD~1 --jobs inventories/jobs/
    """
    if rev is None and len(inventory) != 2:
        raise click.UsageError("give two inventories (OLD NEW), or inventory files and --rev REV")

    def body() -> int:
        _missing_files([*inventory, *rules, *jobs_paths])

        def compare(old: list[Path], new: list[Path], labels: dict[str, str]) -> int:
            if jobs_paths:
                with Progress() as progress:
                    both = diff_jobs(
                        old,
                        new,
                        list(jobs_paths),
                        list(rules) or None,
                        engine,
                        relations,
                        fail_on,
                        labels,
                        progress,
                        principal_from=principal_from,
                    )
                emit(both, fmt)
                return both.exit_code
            with Progress() as progress:
                report = diff(old, new, list(rules) or None, engine, relations, fail_on, labels, progress)
            emit(report, fmt)
            return report.exit_code

        if rev is None:
            return compare([inventory[0]], [inventory[1]], {})
        with files_at_revision(list(inventory), rev) as (copies, labels):
            return compare(copies, list(inventory), labels)

    sys.exit(guard(body))
