"""Plain text for terminals and CI logs: one line per finding, then a summary."""

from __future__ import annotations

from verifier.verify import VerifyReport


def render(report: VerifyReport) -> str:
    lines: list[str] = []
    for f in report.findings:
        where = str(f.location) if f.location is not None else "-"
        subjects = ", ".join(f.subjects)
        lines.append(f"{where}: {f.severity} {f.rule}: {f.message} [{subjects}]")
        if f.proof is not None:
            lines.extend("    " + line for line in f.proof.render().splitlines())
    counts = report.counts
    total = len(report.findings)
    noun = "finding" if total == 1 else "findings"
    verdict = "FAILED" if report.failed else "passed"
    lines.append(
        f"{total} {noun} ({counts.get('error', 0)} error, {counts.get('warning', 0)} warning, "
        f"{counts.get('note', 0)} note) from {len(report.checks)} checks: {verdict} "
        f"(--fail-on {report.fail_on})"
    )
    if report.proofs_omitted:
        lines.append(f"proofs omitted for {report.proofs_omitted} findings past the first 500")
    return "\n".join(lines) + "\n"
