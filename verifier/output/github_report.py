"""GitHub Actions workflow commands: each finding becomes an annotation on the inventory line.

`::error file=F,line=L,col=C,title=T::message`; waived findings become notices so a
reviewer still sees what was accepted and why. The summary closes the log as plain text.
"""

from __future__ import annotations

from verifier.findings import Severity
from verifier.output.text_report import summary
from verifier.verify import Result, VerifyReport

COMMANDS: dict[Severity, str] = {"error": "error", "warning": "warning", "note": "notice"}


def _data(text: str) -> str:
    # The runner's own escaping (actions/toolkit command.ts): '%' first, then line breaks.
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _annotation(r: Result) -> str:
    f = r.finding
    props: list[str] = []
    if f.location is not None:
        props.append(f"file={_prop(f.location.file)}")
        if f.location.line:
            props.append(f"line={f.location.line}")
        if f.location.col:
            props.append(f"col={f.location.col}")
    message = f"{f.message} [{', '.join(f.subjects)}]"
    if r.waiver is None:
        props.append(f"title={_prop(f.rule)}")
        return f"::{COMMANDS[f.severity]} {','.join(props)}::{_data(message)}"
    w = r.waiver
    props.append(f"title={_prop(f'{f.rule} (waived)')}")
    note = f"{message}; waived until {w.expires.isoformat()} by {w.location}: {w.reason}"
    return f"::notice {','.join(props)}::{_data(note)}"


def render(report: VerifyReport) -> str:
    return "\n".join([*(_annotation(r) for r in report.results), *summary(report)]) + "\n"
