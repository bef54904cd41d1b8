"""GitHub workflow commands as the Actions runner parses them: order, the annotation limit, escaping."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from cli_helpers import run_cli
from reports.output_helpers import MANY_RUN, ROOT, STRAY, WAIVED_RUN, report_of, waived_report

from verifier.checks.findings import Finding, Severity
from verifier.checks.verify import Result, VerifyReport
from verifier.checks.waivers import Waiver
from verifier.core.errors import SourceLocation
from verifier.reports import github_report


def _runner_unescape(value: str, prop: bool) -> str:
    # The runner (actions/runner ActionCommand) undoes the escapes in this order, '%25' last.
    pairs = [("%0D", "\r"), ("%0A", "\n"), *([("%3A", ":"), ("%2C", ",")] if prop else []), ("%25", "%")]
    for escaped, char in pairs:
        value = value.replace(escaped, char)
    return value


def _parse(line: str) -> tuple[str, dict[str, str], str] | None:
    """A log line as the runner reads it: (command, properties, message), or None for plain text."""
    stripped = line.lstrip()
    if not stripped.startswith("::"):
        return None
    end = stripped.index("::", 2)
    name, _, props = stripped[2:end].partition(" ")
    properties = {}
    for prop in filter(None, props.split(",")):
        key, _, value = prop.partition("=")
        properties[key] = _runner_unescape(value, prop=True)
    return name, properties, _runner_unescape(stripped[end + 2 :], prop=False)


def _finding(rule: str, severity: Severity, subject: str, message: str = "m", line: int = 1) -> Finding:
    return Finding(rule, severity, (subject,), message, SourceLocation("inv.yaml", line, 3))


def _report(results: list[Result]) -> VerifyReport:
    return VerifyReport(inventories=("inv.yaml",), checks=[], results=results, fail_on="error")


WAIVER = Waiver("R3", "c", "accepted for now", date(2030, 1, 1), SourceLocation("waivers.yaml", 2, 5))


def test_annotations_come_most_severe_first_in_report_order_within_a_type() -> None:
    results = [
        Result(_finding("R1", "note", "a"), "1"),
        Result(_finding("R2", "error", "b"), "2"),
        Result(_finding("R3", "error", "c"), "3", WAIVER),
        Result(_finding("R4", "warning", "d"), "4"),
        Result(_finding("R5", "error", "e"), "5"),
        Result(_finding("R6", "note", "f"), "6"),
    ]
    lines = github_report.render(_report(results)).splitlines()
    parsed = [p for p in map(_parse, lines) if p is not None]
    # Errors b, e; the warning d; the notes a, f; then the waived error c, which is a notice.
    assert [(name, props["title"]) for name, props, _ in parsed] == [
        ("error", "R2"),
        ("error", "R5"),
        ("warning", "R4"),
        ("notice", "R1"),
        ("notice", "R6"),
        ("notice", "R3 (waived)"),
    ]
    assert lines[-1].startswith("5 findings (2 error, 1 warning, 2 note, 1 waived)")


def test_golden_run_puts_the_waived_notice_after_the_errors_and_warnings() -> None:
    parsed = [p for p in map(_parse, report_of(*WAIVED_RUN, fmt="github").splitlines()) if p is not None]
    assert [(name, props["title"], props["line"]) for name, props, _ in parsed] == [
        ("error", "TOPO001", "10"),
        ("error", "TOPO001", "15"),
        ("error", "TOPO003", "10"),
        ("error", "WAIVER001", "6"),
        ("warning", "WAIVER002", "10"),
        ("notice", "TOPO003 (waived)", "6"),
    ]


def test_more_than_ten_of_a_type_is_said_in_a_notice_first() -> None:
    # many-warnings.yaml has 12 warnings (BW002, one per GPU line) and nothing else: 10 annotated, 2 not.
    lines = report_of(*MANY_RUN, fmt="github").splitlines()
    parsed = [_parse(line) for line in lines]
    assert [p[0] for p in parsed if p is not None] == ["notice"] + ["warning"] * 12
    first = parsed[0]
    assert first is not None and first[1] == {"title": "topolog"}
    assert "not annotated: 2 warnings." in first[2]
    assert "step summary" in first[2]


def test_overflow_notice_names_each_type_over_the_limit() -> None:
    results = [Result(_finding("E", "error", f"e{i}"), f"e{i}") for i in range(12)]
    results += [Result(_finding("W", "warning", f"w{i}"), f"w{i}") for i in range(11)]
    results += [Result(_finding("N", "note", f"n{i}"), f"n{i}") for i in range(10)]
    results += [Result(_finding("R3", "error", "c"), "c", WAIVER)]  # the 11th notice of a finding
    lines = github_report.render(_report(results)).splitlines()
    first = _parse(lines[0])
    assert first is not None and first[1] == {"title": "topolog"}
    # 12 errors - 10 = 2; 11 warnings - 10 = 1; the overflow notice is the first of the 10 notices
    # GitHub annotates, so 9 of the 11 finding notices are annotated and 2 are not.
    assert "not annotated: 2 errors, 1 warning, 2 notices." in first[2]
    # It is among the first 10 notices of the step: GitHub's cap cannot hide it.
    notices = [p for p in map(_parse, lines) if p is not None and p[0] == "notice"]
    assert notices.index(first) < 10


def test_ten_notices_and_an_overflow_leave_one_notice_out() -> None:
    # 11 errors make the overflow notice; with it, 10 note findings are 11 notices: the last is not annotated.
    results = [Result(_finding("E", "error", f"e{i}"), f"e{i}") for i in range(11)]
    results += [Result(_finding("N", "note", f"n{i}"), f"n{i}") for i in range(10)]
    first = _parse(github_report.render(_report(results)).splitlines()[0])
    assert first is not None and "not annotated: 1 error, 1 notice." in first[2]


@pytest.mark.parametrize("count", [0, 10])
def test_no_overflow_notice_at_or_under_the_limit(count: int) -> None:
    results = [Result(_finding("W", "warning", f"w{i}"), f"w{i}") for i in range(count)]
    text = github_report.render(_report(results))
    assert "title=topolog::" not in text
    assert github_report.overflow_line({"warning": count, "error": 10, "notice": 10}) is None


def test_annotations_escape_data_and_properties() -> None:
    f = Finding("TOPO001", "note", ("a,b",), "100% down:\nsee log", SourceLocation("x:y,z.yaml", 3, 0))
    assert github_report._annotation(Result(f, "0" * 32)) == (
        "::notice file=x%3Ay%2Cz.yaml,line=3,title=TOPO001::100%25 down:%0Asee log [a,b]"
    )


FORGING = [
    "line one\n::error file=.github/workflows/ci.yml,line=1::forged",
    "carriage\r::warning::forged",
    "already escaped %0A::error::forged and 100%",
    "ends the command early:: ::error::forged",
    "colour \x1b[8mhidden\x1b[0m and bell \x07",
]


@pytest.mark.parametrize("message", FORGING)
def test_text_from_inputs_cannot_forge_a_command(message: str) -> None:
    subject = "gpu::0,\n::error::x"
    where = SourceLocation("pods/a,b:c\n::error::.yaml", 4, 2)
    text = github_report.render(_report([Result(Finding("R1", "warning", (subject,), message, where), "1")]))
    lines = text.splitlines()
    assert len(lines) == 2  # one annotation, one summary line: no line break got through
    parsed = _parse(lines[0])
    assert parsed is not None and _parse(lines[1]) is None
    name, props, data = parsed
    assert name == "warning"
    assert props == {"file": "pods/a,b:c\n::error::.yaml", "line": "4", "col": "2", "title": "R1"}
    # What the runner shows is the message as written, control characters made visible.
    shown = message.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert data == f"{shown} [{subject}]"
    assert "\x1b" not in text and "\x07" not in text


def test_control_characters_in_an_inventory_are_refused_where_written(tmp_path: Path) -> None:
    # An id is a name: a newline or a control character in one is bad input at its line.
    inv = tmp_path / "pod.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: pod0\n    kind: pod\n    children:\n"
        '      - {name: "gpu\\n::error::forged%0A\\x01", kind: gpu}\n',
        encoding="utf-8",
    )
    code, out, err = run_cli("verify", str(inv), "--format", "github")
    assert code == 2 and "::error" not in out
    assert f"{inv}:6:" in err


def test_text_that_reaches_a_message_stays_inside_one_annotation() -> None:
    # Whatever reaches a message (a label value, a waiver reason) cannot start a workflow command.
    name = "gpu\n::error::forged%0A"
    report = _report([Result(_finding("TOPO003", "error", name, f"gpu {name} is not inside any node."), "fp")])
    lines = github_report.render(report).splitlines()
    parsed = [p for p in map(_parse, lines) if p is not None]
    assert [(kind, props["title"]) for kind, props, _ in parsed] == [("error", "TOPO003")]
    assert parsed[0][2] == f"gpu {name} is not inside any node. [{name}]"
    assert not any(line.startswith("::error::forged") for line in lines)


def test_annotation_paths_are_named_from_the_work_tree_top(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GitHub places an annotation by its path in the repository, wherever the step ran.
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    inv = tmp_path / "repo" / "infra" / "pods" / "pod.yaml"
    inv.parent.mkdir(parents=True)
    inv.write_text((ROOT / STRAY).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "repo" / "infra")
    parsed = [p for p in map(_parse, report_of("verify", "pods/pod.yaml", fmt="github").splitlines()) if p]
    assert parsed and {props["file"] for _, props, _ in parsed} == {"infra/pods/pod.yaml"}


def test_a_waiver_reason_cannot_start_a_workflow_command_in_the_text_report(tmp_path: Path) -> None:
    """GitHub Actions runs any log line that starts with `::`: the text report keeps one line per result."""
    from verifier.reports.text_report import waived_line

    forged = "approved\n::error file=inventories/x.yaml,line=1::forged"
    report = waived_report()
    [r] = [r for r in report.results if r.waiver is not None][:1]
    assert r.waiver is not None
    r = replace(r, waiver=replace(r.waiver, reason=forged))
    line = waived_line(r)
    assert "\n" not in line and "approved\\x0a::error" in line
