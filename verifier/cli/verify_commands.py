"""`topolog verify`.

`topolog diff` lives in verifier.cli.diff_command, so that a verify run imports no git or diff code.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING

import click

from verifier.checks.baseline import baseline_text
from verifier.checks.findings import SEVERITIES, Severity
from verifier.checks.settings import ChecksKept
from verifier.checks.verify import VerifyReport, baseline_entries, select_report
from verifier.checks.waivers import EXPIRED_ID, UNUSED_ID
from verifier.cli.argument_order import check_verify
from verifier.cli.errors import guard
from verifier.cli.job_options import PRINCIPAL_FROM_OPTION
from verifier.cli.observed_options import observed_options, observed_run_of
from verifier.cli.options import (
    CHECK_OPTIONS,
    ENGINE_OPTION,
    FILE_TYPE,
    FROM_OPTION,
    NO_AUTHORIZATION_OPTION,
    RULES_OPTION,
    STDOUT_FORMAT_OPTION,
    TODAY_OPTION,
    ReportTarget,
    _missing_files,
    _selection,
    side_file_flags,
    side_file_options,
)
from verifier.cli.output import emit, refuse_inputs, write_file
from verifier.cli.provenance import date_source, run_settings, where_set
from verifier.cli.scenario_options import scenario_of, scenario_options
from verifier.core import kept_report
from verifier.core.progress import Progress
from verifier.reports import render
from verifier.reports.safe_text import one_line
from verifier.reports.text_report import summary
from verifier.session.verify_run import VerifyRun, verify

if TYPE_CHECKING:
    from verifier.sources.jobs.principal_rules import PrincipalRule


def _say_what_sarif_leaves_out(report: VerifyReport) -> None:
    """A SARIF log over GitHub's result limit leaves results out: said on stderr, not only inside the file."""
    from verifier.reports.sarif_report import left_out_line  # only runs that write SARIF need it

    line = left_out_line(report)
    if line is not None:
        click.echo(line, err=True)


@click.command("verify")
@click.argument("inventory", nargs=-1, required=True, type=click.Path(path_type=Path))
@RULES_OPTION
@STDOUT_FORMAT_OPTION
@click.option(
    "--output",
    "outputs",
    type=ReportTarget(),
    multiple=True,
    help="Write a report to a file, as FORMAT=PATH (repeatable), e.g. --output sarif=topolog.sarif; "
    "the summary still goes to the terminal. FORMAT is any --format, or html (the topology drawn "
    "with the findings on it, one self-contained page; docs/html.md).",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITIES),
    default="error",
    show_default=True,
    help="Exit 1 when a finding is at least this severe.",
)
@click.option(
    "--proofs/--no-proofs", default=None, help="Attach a derivation to each finding (default: json and sarif only)."
)
@click.option(
    "--waivers",
    "waivers_path",
    type=FILE_TYPE,
    default=None,
    help="Waivers file (rule, subject glob, reason, expiry). Default: topolog.waivers.yaml next to the first "
    "inventory or in the working directory.",
)
@TODAY_OPTION
@click.option(
    "--baseline",
    "baseline_path",
    type=FILE_TYPE,
    default=None,
    help="Report only findings whose fingerprint is not in this baseline file.",
)
@click.option(
    "--write-baseline",
    type=FILE_TYPE,
    default=None,
    help="Write the findings of this run (waived ones excepted) to FILE as a baseline.",
)
@FROM_OPTION
@click.option(
    "--thresholds",
    "thresholds_path",
    type=FILE_TYPE,
    default=None,
    help="Thresholds overriding rules/thresholds.yaml. Default: topolog.thresholds.yaml next to the first "
    "inventory or in the working directory.",
)
@click.option(
    "--jobs",
    "jobs_paths",
    type=click.Path(path_type=Path),
    multiple=True,
    help="Job file or directory (repeatable): every job must have a valid placement (check PLACE001). "
    "topolog's job files, Kubernetes workloads and Slurm batch scripts (with --principal-from).",
)
@side_file_options()
@NO_AUTHORIZATION_OPTION
@PRINCIPAL_FROM_OPTION
@scenario_options
@observed_options
@CHECK_OPTIONS
@ENGINE_OPTION
def verify_cmd(
    inventory: tuple[Path, ...],
    rules: tuple[Path, ...],
    stdout_fmt: str | None,
    outputs: tuple[tuple[str, Path], ...],
    fail_on: Severity,
    proofs: bool | None,
    waivers_path: Path | None,
    today: date | None,
    baseline_path: Path | None,
    write_baseline: Path | None,
    from_kind: str | None,
    thresholds_path: Path | None,
    jobs_paths: tuple[Path, ...],
    principals_path: Path | None,
    policies_path: Path | None,
    no_authorization: bool,
    principal_from: tuple[PrincipalRule, ...],
    drain: tuple[str, ...],
    fail: tuple[str, ...],
    fail_links: tuple[str, ...],
    scenario_paths: tuple[Path, ...],
    observed: tuple[Path, ...],
    observed_format: str | None,
    observed_match: str,
    observed_now: str | None,
    check_ids: tuple[str, ...],
    skip_ids: tuple[str, ...],
    engine: str,
) -> None:
    """Run every check on an inventory and report the findings.

    Exit status: 0 no finding at or above --fail-on, 1 findings, 2 bad input.
    Each --output FORMAT=PATH writes one report to a file; --format chooses the one
    printed on stdout (text when neither is given). With GITHUB_STEP_SUMMARY set, the
    github format also appends a Markdown summary of the run there.
    With --jobs, a what-if (--drain, --fail, --fail-link, --scenario) places the jobs with the
    scenario too: a job it costs its placement is a WHATIF001 error, one it slows a WHATIF002
    warning, a changed Cedar decision on a job's principal a WHATIF003 warning.

    \b
    Example:
      topolog verify inventories/dgx-h100-pod.yaml --format json --fail-on warning
      topolog verify inv.yaml --output sarif=topolog.sarif --output junit=topolog.xml \\
          --format github --baseline .topolog-baseline.json
      topolog verify --from nccl-xml /var/log/nccl-topo.xml
      topolog verify inventories/mixed-fleet.yaml --jobs inventories/jobs/
      topolog verify inventories/mixed-fleet.yaml --jobs inventories/jobs/ --drain h100-n0
      topolog verify inventories/dgx-h100-pod.yaml --observed inventories/observed/dgx-h100-pod \\
          --observed-now 2026-12-06T09:00:00Z
    """
    # Without any --output the report is the terminal's; with some, only an asked-for one is.
    on_stdout = stdout_fmt or (None if outputs else "text")
    _refuse_shared_files(outputs, write_baseline)
    formats = {fmt for fmt, _ in outputs} | ({on_stdout} if on_stdout else set())

    def body() -> int:
        side = (waivers_path, baseline_path, thresholds_path, principals_path, policies_path)
        read = [*inventory, *rules, *jobs_paths, *scenario_paths, *(p for p in side if p is not None)]
        _missing_files(read)
        if from_kind is None:  # tool outputs (--from) are no inventories: their readers judge them
            check_verify(inventory)
        observations = observed_run_of(observed, observed_format, observed_match, observed_now)
        if observations is not None and observed_now is None:
            kept_report.refuse("the observations' age is judged against the clock")  # not the same tomorrow
        scenario = scenario_of(drain, fail, fail_links, scenario_paths)
        if scenario and (not jobs_paths or from_kind is not None):
            raise click.UsageError(
                "a what-if (--drain, --fail, --fail-link, --scenario) needs --jobs and a YAML inventory"
            )
        refuse_inputs([*(path for _, path in outputs), *([write_baseline] if write_baseline else [])], read)
        ctx = click.get_current_context()
        written = {"--check": where_set(ctx, "check_ids"), "--skip": where_set(ctx, "skip_ids")}
        by_file = {option: where for option, where in written.items() if where is not None}
        from verifier.session.whatif_checks import CHECK_IDS as WHATIF_IDS  # the engine's modules: only here

        also = (EXPIRED_ID, UNUSED_ID, *WHATIF_IDS)
        selection = _selection(rules, check_ids, skip_ids, also=also, sources=by_file)
        run = VerifyRun(
            rules=list(rules) or None,
            engine=engine,
            fail_on=fail_on,
            with_proofs=proofs if proofs is not None else bool(formats & {"json", "sarif", "html"}),
            flags=side_file_flags(principals_path, policies_path, thresholds_path, waivers_path, baseline_path),
            today=today,
            today_from=date_source(ctx),
            from_kind=from_kind,
            jobs=list(jobs_paths),
            principal_from=principal_from,
            authorize=not no_authorization,
            scenario=scenario,
            observed=observations,
        )
        with Progress() as progress:
            report = verify(list(inventory), run, progress)
            for note in report.notes:
                click.echo(f"note: {one_line(note)}", err=True)
            report = _with_settings(select_report(report, selection), report, ctx, narrowed=bool(by_file))
            for fmt, path in outputs:
                # A fleet's html page takes seconds of its own to draw: progress runs until it is written.
                progress.step(f"writing the {fmt} report to {path}")
                write_file(path, render(report, fmt))
        if "sarif" in formats:
            _say_what_sarif_leaves_out(report)
        if "github" in formats and os.environ.get("GITHUB_STEP_SUMMARY"):
            # Annotations mark lines; the job summary page is where a reviewer sees the whole run.
            from verifier.reports.markdown_report import append_step_summary  # only CI runs need it

            append_step_summary(report, os.environ)
        if write_baseline is not None:
            entries = baseline_entries(report)
            write_file(write_baseline, baseline_text(entries))
            click.echo(one_line(f"topolog: wrote {len(entries)} findings to baseline {write_baseline}"), err=True)
        if on_stdout is not None:
            emit(report, on_stdout)
            if outputs and on_stdout not in ("text", "github"):  # those end with the summary already
                click.echo("\n".join(summary(report)), err=True)
        else:
            click.echo("\n".join(summary(report)))
        return report.exit_code

    sys.exit(guard(body))


def _with_settings(report: VerifyReport, whole: VerifyReport, ctx: click.Context, narrowed: bool) -> VerifyReport:
    """`report` naming what shaped it: the configuration file, what it set, the checks it kept
    (`whole` is the report before the selection) and where the waivers' date came from.
    """
    settings = run_settings(ctx)
    if narrowed:
        kept_ids = {c.id for c in report.checks}
        left_out = tuple(sorted(c.id for c in whole.checks if c.id not in kept_ids))
        kept = ChecksKept(tuple(sorted(kept_ids)), len(whole.checks), left_out)
        settings = replace(settings, checks_kept=kept)
    judged = report.settings  # the waivers' date and its source, which the run recorded
    settings = replace(settings, waiver_date=judged.waiver_date, waiver_date_from=judged.waiver_date_from)
    return replace(report, settings=settings)


def _refuse_shared_files(outputs: Sequence[tuple[str, Path]], write_baseline: Path | None) -> None:
    """Two writes to one file would leave only the last: refuse before any work is done."""
    writes = [(f"--output {fmt}={path}", path) for fmt, path in outputs]
    if write_baseline is not None:
        writes.append((f"--write-baseline {write_baseline}", write_baseline))
    seen: dict[Path, str] = {}
    for flag, path in writes:
        key = path.resolve()
        if key in seen:
            raise click.UsageError(
                f"{seen[key]} and {flag} write to the same file {path}; give each report its own file"
            )
        seen[key] = flag
