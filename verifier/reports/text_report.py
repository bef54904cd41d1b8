"""Plain text for terminals and CI logs: one line per finding, then a summary."""

from __future__ import annotations

from verifier.checks.findings import Finding
from verifier.checks.verify import Result, VerifyReport
from verifier.reports.safe_text import one_line


def finding_line(f: Finding) -> str:
    where = str(f.location) if f.location is not None else "-"
    return one_line(f"{where}: {f.severity} {f.rule}: {f.message} [{', '.join(f.subjects)}]")


def waived_line(r: Result) -> str:
    w = r.waiver
    assert w is not None
    return f"{finding_line(r.finding)} {one_line(f'waived until {w.expires.isoformat()} by {w.location}: {w.reason}')}"


NOT_AUTHORIZED = (
    "authorization not checked (--no-authorization): jobs were judged as if every principal may use every GPU"
)


def _not_applicable(report: VerifyReport) -> str:
    n = len(report.not_applicable)
    return f" ({n} not applicable: nothing to judge)" if n else ""


def summary(report: VerifyReport, with_settings: bool = True) -> list[str]:
    """The closing lines; the CLI prints them on the terminal when the report itself goes to files.

    `with_settings`: end with settings_lines (a format that escapes them its own way leaves them out).
    """
    counts = report.counts
    total = len(report.findings)
    noun = "finding" if total == 1 else "findings"
    verdict = "FAILED" if report.failed else "passed"
    extra = ""
    if report.suppressed:
        extra += f", {len(report.suppressed)} waived"
    if report.baselined:
        extra += f", {report.baselined} in the baseline"
    lines = [
        f"{total} {noun} ({counts.get('error', 0)} error, {counts.get('warning', 0)} warning, "
        f"{counts.get('note', 0)} note{extra}) from {len(report.checks)} checks{_not_applicable(report)}: "
        f"{verdict} (--fail-on {report.fail_on})"
    ]
    if report.baseline_fixed:
        lines.append(
            f"{report.baseline_fixed} baseline entries no longer occur; "
            "rewrite the baseline with --write-baseline to drop them"
        )
    if report.proofs_omitted:
        lines.append(f"proofs omitted for {report.proofs_omitted} findings past the first 500")
    if report.proofs_unavailable:
        lines.append(f"no proofs: {report.proofs_unavailable}")
    if not report.authorization_checked:
        lines.append(NOT_AUTHORIZED)
    if with_settings:
        lines.extend(settings_lines(report))
    return lines


def settings_lines(report: VerifyReport) -> list[str]:
    """What shaped the run besides its inputs (verifier.checks.settings), one line each; the
    checks a configuration left out as a warning, since they change what can fail.
    """
    s = report.settings
    lines = [s.config_line(), f"warning: {kept}" if (kept := s.checks_line()) else None, s.date_line()]
    return [one_line(line) for line in lines if line is not None]


def render(report: VerifyReport) -> str:
    lines: list[str] = []
    for r in report.results:
        lines.append(finding_line(r.finding) if r.waiver is None else waived_line(r))
        if r.finding.proof is not None:
            lines.extend("    " + line for line in r.finding.proof.render().splitlines())
    lines.extend(summary(report))
    return "\n".join(lines) + "\n"
