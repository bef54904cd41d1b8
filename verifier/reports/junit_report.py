"""JUnit XML for GitLab, Jenkins and other test-report viewers.

One test case per check. A check fails when it has findings at or above --fail-on (the
same verdict as the exit code); its single `<failure>` lists every such finding, one per
line with its inventory file:line:col, because GitLab reads only one failure element per
test case. Findings below the threshold and waived findings go to the test case's
`<system-out>`, so nothing is hidden.

The document validates against Jenkins' junit-10.xsd (xunit plugin), the strictest common
reader: a test case has no `file` attribute there, so the rule file each check is defined
in is a suite property (`check.<ID>.file`) and is named in the failure text, and
`<testsuites>` has no `skipped` count. Text from the inputs is made safe for XML 1.0,
whose documents cannot hold most C0 control characters even as character references.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verifier.checks.findings import severity_rank
from verifier.checks.verify import Result, VerifyReport
from verifier.reports.safe_text import xml_safe
from verifier.reports.text_report import finding_line, waived_line


def _element(parent: ET.Element, tag: str, text: str | None = None, **attrs: str) -> ET.Element:
    """A child element whose attributes and text have passed through xml_safe."""
    element = ET.SubElement(parent, tag, {k: xml_safe(v) for k, v in attrs.items()})
    if text is not None:
        element.text = xml_safe(text)
    return element


def render(report: VerifyReport) -> str:
    limit = severity_rank(report.fail_on)
    by_rule: dict[str, list[Result]] = {}
    for r in report.results:
        by_rule.setdefault(r.finding.rule, []).append(r)
    suite = ET.Element("testsuite", name="topolog verify")
    props = _element(suite, "properties")
    for inv in report.inventories:
        _element(props, "property", name="inventory", value=inv)
    _element(props, "property", name="failOn", value=report.fail_on)
    # What shaped the run besides its inputs (verifier.checks.settings): the configuration file and
    # what it set, the checks it left out, the date waivers expired against.
    settings = report.settings
    for name, line in (
        ("configuration", settings.config_line()),
        ("configuration.checksKept", settings.checks_line()),
        ("waivers.judgedOn", settings.date_line()),
    ):
        if line is not None:
            _element(props, "property", name=name, value=line)
    for check in report.checks:
        _element(props, "property", name=f"check.{check.id}.file", value=check.file)
    failures = 0
    skipped = 0
    not_applicable = set(report.not_applicable)
    for check in report.checks:
        case = _element(
            suite,
            "testcase",
            classname=f"topolog.{check.id}",
            name=f"{check.id}: {check.summary}",
            time="0",
        )
        results = by_rule.get(check.id, [])
        counted = [r.waiver is None and severity_rank(r.finding.severity) <= limit for r in results]
        failing = [r.finding for r, c in zip(results, counted, strict=True) if c]
        if failing:
            failures += 1
            first = failing[0]
            more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
            where = f"{first.location}: " if first.location is not None else ""
            text = "\n".join(
                [
                    *(finding_line(f) for f in failing),
                    f"Remediation: {check.remediation}",
                    f"Check {check.id} is defined in {check.file}.",
                ]
            )
            _element(case, "failure", text, message=f"{where}{first.message}{more}", type=first.severity)
        others = [
            waived_line(r) if r.waiver is not None else finding_line(r.finding)
            for r, c in zip(results, counted, strict=True)
            if not c
        ]
        if others:
            _element(case, "system-out", "\n".join(others))
        if check.id in not_applicable and not results:
            # Nothing to judge is not a pass: CI shows the check as skipped, with why.
            skipped += 1
            _element(case, "skipped", message="not applicable: the inventory holds nothing this check judges")
    counts = {"tests": str(len(report.checks)), "failures": str(failures), "errors": "0"}
    suite.attrib.update({**counts, "skipped": str(skipped), "time": "0"})
    root = ET.Element("testsuites", {"name": "topolog", **counts, "time": "0"})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
