"""`topolog policy check`: the Cedar policies' own findings (POLICY001-POLICY005) in verify's reports.

The run is a verification that evaluates only the rules of rules/policy/, with the facts of the
two policy analyses (the schema-wide one and the one over the inventory's classes): the same
session, report pipeline and formats, exit codes and --fail-on as `topolog verify`.
"""

from __future__ import annotations

import sys
from datetime import date
from pathlib import Path

import click

from verifier.checks.check import CheckSelection
from verifier.checks.findings import SEVERITIES, Severity
from verifier.checks.verify import VerifyReport, select_report
from verifier.cli.errors import guard
from verifier.cli.options import (
    ENGINE_OPTION,
    FILE_TYPE,
    STDOUT_FORMAT_OPTION,
    TODAY_OPTION,
    ReportTarget,
    _missing_files,
    side_file_flags,
    side_file_options,
)
from verifier.cli.output import emit, refuse_inputs, write_file
from verifier.core.progress import Progress
from verifier.reports import render
from verifier.reports.text_report import summary
from verifier.session.verify_run import VerifyRun, verify
from verifier.sources.inventory.clusters import one_cluster

POLICY_CHECKS = frozenset({"POLICY001", "POLICY002", "POLICY003", "POLICY004", "POLICY005"})
"""The checks of rules/policy/: the only ones this command evaluates and reports."""
SCHEMA_ONLY = frozenset({"POLICY001", "POLICY005"})
"""Checks only the schema-wide analysis judges: left out with --inventory-only."""


@click.command("check")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@side_file_options()
@STDOUT_FORMAT_OPTION
@click.option(
    "--output",
    "outputs",
    type=ReportTarget(),
    multiple=True,
    help="Write a report to a file, as FORMAT=PATH (repeatable), e.g. --output sarif=policies.sarif.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="warning",
    show_default=True,
    help="Exit 1 when a finding is at least this severe (dead, shadowed and may-error are warnings; "
    "applies to nothing here and redundant are notes).",
)
@click.option(
    "--waivers",
    "waivers_path",
    type=FILE_TYPE,
    default=None,
    help="Waivers file (a forbid kept as defence in depth, say). Default: topolog.waivers.yaml next to the "
    "first inventory or in the working directory.",
)
@TODAY_OPTION
@click.option(
    "--inventory-only",
    is_flag=True,
    help="Skip the schema-wide analysis (for a policy set it does not cover: it refuses those, exit 2); "
    "POLICY001 and POLICY005 are then not run.",
)
@ENGINE_OPTION
def check_cmd(
    inventory: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    stdout_fmt: str | None,
    outputs: tuple[tuple[str, Path], ...],
    fail_on: Severity,
    waivers_path: Path | None,
    today: date | None,
    inventory_only: bool,
    engine: str,
) -> None:
    """Find dead, shadowed, redundant and error-prone Cedar policies, for CI to gate a policy change.

    Two analyses run: one proves what holds for every principal, resource and context the schema
    allows (an SMT solver); the other asks Cedar about every class of principal and hardware of the
    inventory, every action and every context the policies tell apart. Findings are POLICY001 (can
    never apply), POLICY002 (applies to nothing in this inventory), POLICY003 (a permit a forbid
    shadows), POLICY004 (redundant) and POLICY005 (a condition that can raise), each located at
    the policy's file:line, in the same reports as `topolog verify`.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 bad input.

    \b
    Example:
      topolog policy check inventories/dgx-h100-pod.yaml
      topolog policy check inventories/mixed-fleet.yaml --inventory-only --format json
      topolog policy check inventories/mixed-fleet.yaml --policies ../policies-next \\
          --format sarif --output junit=policies.xml --fail-on note
    """
    on_stdout = stdout_fmt or (None if outputs else "text")

    def body() -> int:
        side = (principals_path, policies_path, waivers_path)
        read = [*inventory, *(p for p in side if p is not None)]
        _missing_files(read)
        refuse_inputs([path for _, path in outputs], read)
        # Findings are per policy: a policy dead in one cluster and alive in another has no one answer.
        one_cluster(
            list(inventory), "the policy analysis judges the policies over one cluster's principals and hardware"
        )
        checks = POLICY_CHECKS - SCHEMA_ONLY if inventory_only else POLICY_CHECKS
        run = VerifyRun(
            engine=engine,
            fail_on=fail_on,
            with_proofs=False,
            flags=side_file_flags(principals_path, policies_path, waivers_path=waivers_path),
            today=today,
            evaluate_only=checks,
            analyse_policies=True,
            schema_wide=not inventory_only,
        )
        with Progress() as progress:
            report = policy_report(verify(list(inventory), run, progress), checks)
            for fmt, path in outputs:
                write_file(path, render(report, fmt))
        if on_stdout is not None:
            emit(report, on_stdout)
        else:
            click.echo("\n".join(summary(report)))
        return report.exit_code

    sys.exit(guard(body, "no policy is judged"))


def policy_report(report: VerifyReport, checks: frozenset[str]) -> VerifyReport:
    """The findings and checks of `checks` only: the rest of the pack was not evaluated."""
    return select_report(report, CheckSelection(only=checks))
