"""JUnit XML as Jenkins (junit-10.xsd, xunit plugin) and GitLab read it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest
import xmlschema
from reports.output_helpers import CLEAN_RUN, FLEET_RUN, HERE, STRAY, WAIVED_RUN, report_of

from verifier.reports.safe_text import xml_safe

XSD = HERE / "jenkins-junit-10.xsd"


@pytest.fixture(scope="module")
def jenkins() -> xmlschema.XMLSchema10:
    return xmlschema.XMLSchema10(str(XSD))


def _errors(schema: xmlschema.XMLSchema10, xml_text: str) -> list[str]:
    return [f"{e.path}: {e.reason}" for e in schema.iter_errors(xml_text)]


@pytest.mark.parametrize(
    "args",
    [WAIVED_RUN, FLEET_RUN, CLEAN_RUN, (*WAIVED_RUN, "--fail-on", "warning")],
    ids=["failing-with-waivers", "warnings-only", "no-findings", "fail-on-warning"],
)
def test_junit_of_real_runs_validates_against_jenkins_schema(
    jenkins: xmlschema.XMLSchema10, args: tuple[str, ...]
) -> None:
    assert _errors(jenkins, report_of(*args, fmt="junit")) == []


def test_the_schema_rejects_what_topolog_used_to_write(jenkins: xmlschema.XMLSchema10) -> None:
    # The validator is live: the attributes the earlier report carried are each an error.
    root = ET.fromstring(report_of(*WAIVED_RUN, fmt="junit"))
    root.set("skipped", "0")
    case = root.find("testsuite/testcase")
    assert case is not None
    case.set("file", "rules/topology/TOPO001_gpu_without_nic.dl")
    errors = _errors(jenkins, ET.tostring(root, encoding="unicode"))
    assert len(errors) == 2
    assert "'skipped' attribute not allowed" in errors[0]
    assert "'file' attribute not allowed" in errors[1]


def test_junit_has_one_case_per_check_and_fails_as_the_exit_code_does() -> None:
    root = ET.fromstring(report_of(*WAIVED_RUN, fmt="junit"))
    (suite,) = root.findall("testsuite")
    cases = {c.get("classname", ""): c for c in suite.findall("testcase")}
    assert sorted(cases) == [
        f"topolog.{i}"
        for i in ("TOPO001", "TOPO002", "TOPO003", "TOPO004", "TOPO005", "TOPO006", "WAIVER001", "WAIVER002")
    ]
    failed = sorted(k for k, c in cases.items() if c.find("failure") is not None)
    assert failed == ["topolog.TOPO001", "topolog.TOPO003", "topolog.WAIVER001"]
    assert suite.get("tests") == "8" and suite.get("failures") == "3"
    assert root.get("tests") == "8" and root.get("failures") == "3"
    failure = cases["topolog.TOPO001"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.count("error TOPO001") == 2  # both GPUs without a NIC, one line each
    # The warning is below --fail-on error and the waived finding is accepted: both visible, neither failing.
    assert "WAIVER002" in (cases["topolog.WAIVER002"].findtext("system-out") or "")
    assert "waived until 2030-01-01" in (cases["topolog.TOPO003"].findtext("system-out") or "")
    strict = ET.fromstring(report_of(*WAIVED_RUN, "--fail-on", "warning", fmt="junit"))
    assert strict.find("testsuite/testcase[@classname='topolog.WAIVER002']/failure") is not None


def test_places_are_in_what_gitlab_shows_and_in_properties() -> None:
    # GitLab shows a case's name, classname, failure message and text, and system-out; not a `file`.
    root = ET.fromstring(report_of(*WAIVED_RUN, fmt="junit"))
    failure = root.find("testsuite/testcase[@classname='topolog.TOPO001']/failure")
    assert failure is not None and failure.text is not None
    # loose-gpu is written on line 10, column 13 of the inventory; n1/gpu0 on line 15, column 17.
    assert failure.get("message", "").startswith(f"{STRAY}:10:13: GPU loose-gpu reaches no NIC")
    assert failure.get("message", "").endswith("(and 1 more)")
    lines = failure.text.splitlines()
    assert lines[0].startswith(f"{STRAY}:10:13: error TOPO001")
    assert lines[1].startswith(f"{STRAY}:15:17: error TOPO001")
    assert lines[-1] == "Check TOPO001 is defined in rules/topology/TOPO001_gpu_without_nic.dl."
    props = {p.get("name"): p.get("value") for p in root.iterfind("testsuite/properties/property")}
    assert props["check.TOPO001.file"] == "rules/topology/TOPO001_gpu_without_nic.dl"
    assert props["check.TOPO004.file"] == "rules/topology/TOPO004_split_nvlink_node.dl"
    assert props["check.WAIVER001.file"] == "tests/golden/waivers.yaml"
    assert props["inventory"] == STRAY and props["failOn"] == "error"
    assert all(c.get("file") is None for c in root.iter("testcase"))


def test_xml_safe_writes_forbidden_characters_visibly() -> None:
    assert xml_safe("a\x00b\x01c\x1bd\x7fe") == "a\\x00b\\x01c\\x1bd\x7fe"  # DEL is allowed in XML 1.0
    assert xml_safe("tab\tlf\ncr\r") == "tab\tlf\ncr\r"
    assert xml_safe("\ufffe\uffff\ud800") == "\\ufffe\\uffff\\ud800"
    assert xml_safe("GPU \u00e9\U0001f600") == "GPU \u00e9\U0001f600"


def test_control_characters_in_a_message_keep_the_xml_well_formed(jenkins: xmlschema.XMLSchema10) -> None:
    # Ids with control characters are refused at load time; anything else that reaches a
    # message (here, by hand) is escaped, so the file stays XML that Jenkins reads.
    from verifier.checks.check import Check
    from verifier.checks.findings import Finding
    from verifier.checks.verify import Result, VerifyReport
    from verifier.core.errors import SourceLocation
    from verifier.reports import junit_report

    name = "gpu\x01\x1b[8m<b>&"
    check = Check("TOPO003", "error", "s", "r", "device_outside_node", "m", (0,), ("device", "kind"), "rules/x.dl")
    finding = Finding("TOPO003", "error", (name,), f"gpu {name} is not inside any node.", SourceLocation("inv.yaml", 6))
    report = VerifyReport(("inv.yaml",), [check], [Result(finding, "fp")], "error")
    out = junit_report.render(report)
    assert "\x01" not in out and "\x1b" not in out
    assert _errors(jenkins, out) == []
    failure = ET.fromstring(out).find("testsuite/testcase[@classname='topolog.TOPO003']/failure")
    assert failure is not None and failure.text is not None
    assert "gpu gpu\\x01\\x1b[8m<b>& is not inside any node." in failure.text


def test_schema_copy_is_the_jenkins_one() -> None:
    # The README beside it names its source; the licence header travels with the file.
    text = XSD.read_text(encoding="utf-8")
    assert "The MIT License (MIT)" in text and "Gregory Boissinot" in text
    assert "junit-10.xsd" in (HERE / "README.md").read_text(encoding="utf-8")
