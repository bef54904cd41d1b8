"""`topolog diff` as text and as JSON."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from verifier.checks.diff import SCHEMA_VERSION, DiffReport
from verifier.checks.verify import Result
from verifier.core.version import __version__
from verifier.engine.backend import format_fact
from verifier.reports.safe_text import one_line
from verifier.reports.text_report import finding_line
from verifier.reports.whatif_report import job_docs, job_lines, summary_doc, summary_line

if TYPE_CHECKING:  # only a type: rendering a report imports no engine (tests/test_architecture.py)
    from verifier.session.diff_run import JobsDiffReport


def render_text(report: DiffReport) -> str:
    # Files from the command line (a folder's name may hold a newline): escaped, one header line.
    lines = [one_line(f"comparing {', '.join(report.old)} -> {', '.join(report.new)}")]
    lines.append(f"findings added ({len(report.added)}):")
    lines.extend(f"  + {finding_line(r.finding)}" for r in report.added)
    lines.append(f"findings resolved ({len(report.resolved)}):")
    lines.extend(f"  - {finding_line(r.finding)}" for r in report.resolved)
    for ch in report.relations:
        if not ch.added and not ch.removed:
            lines.append(f"{ch.relation}: unchanged")
            continue
        lines.append(f"{ch.relation}: {len(ch.added)} rows added, {len(ch.removed)} removed")
        marked = sorted([(row, 0, "-") for row in ch.removed] + [(row, 1, "+") for row in ch.added])
        lines.extend(f"  {sign} {format_fact(ch.relation, row)}" for row, _, sign in marked)
    changed = sum(1 for ch in report.relations if ch.added or ch.removed)
    verdict = "FAILED" if report.failed else "passed"
    lines.append(
        f"{len(report.added)} added, {len(report.resolved)} resolved; {changed} of {len(report.relations)} "
        f"watched relations changed: {verdict} (--fail-on {report.fail_on})"
    )
    return "\n".join(lines) + "\n"


def render_json(report: DiffReport) -> str:
    def finding(r: Result) -> dict[str, object]:
        return {**r.finding.to_dict(), "fingerprint": r.fingerprint}

    doc = {
        "schemaVersion": SCHEMA_VERSION,
        "tool": {"name": "topolog", "version": __version__},
        "old": list(report.old),
        "new": list(report.new),
        "failOn": report.fail_on,
        "failed": report.failed,
        "findings": {
            "added": [finding(r) for r in report.added],
            "resolved": [finding(r) for r in report.resolved],
        },
        "relations": {
            ch.relation: {
                "columns": list(ch.columns),
                "added": [list(r) for r in ch.added],
                "removed": [list(r) for r in ch.removed],
            }
            for ch in report.relations
        },
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


FORMATS = {"text": render_text, "json": render_json}


def render_jobs_text(report: JobsDiffReport) -> str:
    """`diff --jobs`: the diff, then each job's placement on the old revision and on the new."""
    jobs = report.jobs
    lines = [f"jobs (placements ranked by {jobs.rank}):", *(f"  {line}" for line in job_lines(jobs))]
    lines.append(f"  {summary_line(jobs)}")
    verdict = "FAILED" if report.exit_code else "passed"
    lost = f"; jobs that lose their placement: {', '.join(sorted(jobs.lost))}" if jobs.lost else ""
    lines.append(f"jobs {verdict}{lost}")
    return render_text(report.diff) + "\n".join(lines) + "\n"


def render_jobs_json(report: JobsDiffReport) -> str:
    doc = json.loads(render_json(report.diff))
    doc["failed"] = bool(report.exit_code)
    doc["jobs"] = {
        "rank": report.jobs.rank,
        "jobs": job_docs(report.jobs),
        "summary": summary_doc(report.jobs),
        "lost": sorted(report.jobs.lost),
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


JOBS_FORMATS = {"text": render_jobs_text, "json": render_jobs_json}
