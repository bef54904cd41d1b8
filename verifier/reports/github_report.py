"""GitHub Actions workflow commands: each finding becomes an annotation on the inventory line.

`::error file=F,line=L,col=C,title=T::message`; waived findings become notices so a
reviewer still sees what was accepted and why. The summary closes the log as plain text.

GitHub turns only the first 10 commands of each type (error, warning, notice) in a step
into annotations; the rest show in the log only. So annotations come most severe first,
in report order within a type, and when a type has more than 10 a notice says how many
were not annotated and where to read them all. That notice comes first: written last it
would itself be past the cap whenever the notices are. It takes one of the 10 notice
annotations, so 9 notices of findings are annotated beside it.

Text from the inputs is escaped as the runner unescapes it (actions/toolkit command.ts),
so a line break, `%` or `::` in a message, subject or path cannot end the command early
or start another one. Files are named from the top of their git work tree, as GitHub
resolves annotation paths.
"""

from __future__ import annotations

from verifier.checks.findings import Severity
from verifier.checks.verify import Result, VerifyReport
from verifier.reports.safe_text import github_data, github_property
from verifier.reports.sarif_report import RepoPaths
from verifier.reports.text_report import summary

COMMANDS: dict[Severity, str] = {"error": "error", "warning": "warning", "note": "notice"}
ORDER = ("error", "warning", "notice")
ANNOTATIONS_PER_TYPE = 10
"""How many commands of one type in one step GitHub turns into annotations."""
_PLURAL = {"error": "errors", "warning": "warnings", "notice": "notices"}


def _command(r: Result) -> str:
    return "notice" if r.waiver is not None else COMMANDS[r.finding.severity]


def _annotation(r: Result, paths: RepoPaths | None = None) -> str:
    f = r.finding
    props: list[str] = []
    if f.location is not None:
        name = paths.relative(f.location.file) if paths is not None else None
        props.append(f"file={github_property(name or f.location.file)}")
        if f.location.line:
            props.append(f"line={f.location.line}")
        if f.location.col:
            props.append(f"col={f.location.col}")
    message = f"{f.message} [{', '.join(f.subjects)}]"
    if r.waiver is None:
        props.append(f"title={github_property(f.rule)}")
        return f"::{_command(r)} {','.join(props)}::{github_data(message)}"
    w = r.waiver
    props.append(f"title={github_property(f'{f.rule} (waived)')}")
    note = f"{message}; waived until {w.expires.isoformat()} by {w.location}: {w.reason}"
    return f"::notice {','.join(props)}::{github_data(note)}"


def _order(item: tuple[int, Result]) -> tuple[int, bool, int]:
    index, r = item
    return ORDER.index(_command(r)), r.waiver is not None, index


def ordered(report: VerifyReport) -> list[Result]:
    """Results in annotation order: errors, warnings, then notices (notes before waived findings),
    each type in report order.
    """
    return [r for _i, r in sorted(enumerate(report.results), key=_order)]


def overflow_line(counts: dict[str, int]) -> str | None:
    """The notice that opens the log when some type has more commands than GitHub annotates, else None.

    `counts` are the commands of findings (and the configuration warning) by type; the notice
    itself is one more notice, annotated first.
    """
    if not any(counts.get(t, 0) > ANNOTATIONS_PER_TYPE for t in ORDER):
        return None
    room = {t: ANNOTATIONS_PER_TYPE - (1 if t == "notice" else 0) for t in ORDER}
    over = [(t, counts.get(t, 0) - room[t]) for t in ORDER if counts.get(t, 0) > room[t]]
    parts = ", ".join(f"{n} {_PLURAL[t] if n != 1 else t}" for t, n in over)
    return (
        f"::notice title=topolog::GitHub annotates only the first {ANNOTATIONS_PER_TYPE} of each type in a step; "
        f"not annotated: {parts}. Every finding is in this log above and in the full report "
        "(step summary, SARIF, JUnit)."
    )


def render(report: VerifyReport) -> str:
    paths = RepoPaths()
    results = ordered(report)
    lines = [_annotation(r, paths) for r in results]
    counts: dict[str, int] = {}
    for r in results:
        counts[_command(r)] = counts.get(_command(r), 0) + 1
    kept = report.settings.checks_line()
    if kept is not None:
        # Checks a configuration left out change what can fail: said first, so it is annotated.
        lines.insert(0, f"::warning title=topolog configuration::{github_data(kept)}")
        counts["warning"] = counts.get("warning", 0) + 1
    lines.extend(summary(report))
    first = overflow_line(counts)
    if first is not None:
        lines.insert(0, first)
    return "\n".join(lines) + "\n"
