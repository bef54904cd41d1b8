"""JUnit XML for GitLab, Jenkins and other test-report viewers.

One test case per check. A check fails when it has findings at or above --fail-on (the
same verdict as the exit code); its single `<failure>` lists every such finding, one per
line, because GitLab reads only one failure element per test case. Findings below the
threshold and waived findings go to the test case's `<system-out>`, so nothing is hidden.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from verifier.findings import severity_rank
from verifier.output.text_report import finding_line, waived_line
from verifier.verify import Result, VerifyReport


def render(report: VerifyReport) -> str:
    limit = severity_rank(report.fail_on)
    by_rule: dict[str, list[Result]] = {}
    for r in report.results:
        by_rule.setdefault(r.finding.rule, []).append(r)
    suite = ET.Element("testsuite", name="topolog verify")
    props = ET.SubElement(suite, "properties")
    for inv in report.inventories:
        ET.SubElement(props, "property", name="inventory", value=inv)
    ET.SubElement(props, "property", name="failOn", value=report.fail_on)
    failures = 0
    for check in report.checks:
        case = ET.SubElement(
            suite, "testcase", classname=f"topolog.{check.id}", name=f"{check.id}: {check.summary}",
            file=check.file, time="0",
        )
        results = by_rule.get(check.id, [])
        counted = [r.waiver is None and severity_rank(r.finding.severity) <= limit for r in results]
        failing = [r.finding for r, c in zip(results, counted, strict=True) if c]
        if failing:
            failures += 1
            first = failing[0]
            more = f" (and {len(failing) - 1} more)" if len(failing) > 1 else ""
            failure = ET.SubElement(case, "failure", message=f"{first.message}{more}", type=first.severity)
            failure.text = "\n".join([*(finding_line(f) for f in failing), f"Remediation: {check.remediation}"])
        others = [
            waived_line(r) if r.waiver is not None else finding_line(r.finding)
            for r, c in zip(results, counted, strict=True) if not c
        ]
        if others:
            ET.SubElement(case, "system-out").text = "\n".join(others)
    counts = {"tests": str(len(report.checks)), "failures": str(failures), "errors": "0", "skipped": "0", "time": "0"}
    suite.attrib.update(counts)
    root = ET.Element("testsuites", {"name": "topolog", **counts})
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
