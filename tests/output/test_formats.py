"""Every report format: golden files, the SARIF schema, JUnit structure, annotations, --output pairs."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
import pytest
from cli_helpers import run_cli

from verifier.cli import REPORT_FORMATS
from verifier.output import FORMATS

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
HERE = Path(__file__).resolve().parent
STRAY = "tests/golden/stray-devices.yaml"
# Pinned rules and date: adding a check elsewhere, or the calendar, must not change these goldens.
WAIVED_RUN = (
    "verify", STRAY, "--rules", "rules/schema.dl", "--rules", "rules/topology",
    "--waivers", "tests/golden/waivers.yaml", "--today", "2025-06-01",
)
GOLDENS = {"text": "txt", "json": "json", "sarif": "sarif", "junit": "junit.xml", "github": "github.txt"}


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    monkeypatch.delenv("TOPOLOG_TODAY", raising=False)


_run = run_cli


def test_cli_offers_every_registered_format() -> None:
    assert sorted(REPORT_FORMATS) == sorted(FORMATS) == sorted(GOLDENS)


@pytest.mark.parametrize("fmt", sorted(GOLDENS))
def test_golden_report_with_waivers(fmt: str) -> None:
    code, out, _ = _run(*WAIVED_RUN, "--format", fmt)
    assert code == 1
    assert out == (GOLDEN / f"verify-waived.{GOLDENS[fmt]}").read_text(encoding="utf-8")


def _sarif_validator() -> jsonschema.Draft4Validator:
    schema = json.loads((HERE / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


@pytest.mark.parametrize("args", [WAIVED_RUN, ("verify", "inventories/dgx-h100-pod.yaml")])
def test_sarif_is_valid_sarif_2_1_0(args: tuple[str, ...]) -> None:
    _, out, _ = _run(*args, "--format", "sarif")
    doc = json.loads(out)
    errors = sorted(str(e.message) for e in _sarif_validator().iter_errors(doc))
    assert errors == []


def test_sarif_schema_rejects_what_code_scanning_would() -> None:
    # Proves the validator is live: a level outside SARIF's four and a result without a message must fail.
    _, out, _ = _run(*WAIVED_RUN, "--format", "sarif")
    doc = json.loads(out)
    doc["runs"][0]["results"][0]["level"] = "fatal"
    del doc["runs"][0]["results"][1]["message"]
    messages = [e.message for e in _sarif_validator().iter_errors(doc)]
    assert any("'fatal' is not one of" in m for m in messages)
    assert any("'message' is a required property" in m for m in messages)


def test_sarif_results_carry_rules_locations_fingerprints_and_suppressions() -> None:
    _, sarif_out, _ = _run(*WAIVED_RUN, "--format", "sarif")
    _, json_out, _ = _run(*WAIVED_RUN, "--format", "json")
    run = json.loads(sarif_out)["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["TOPO001", "TOPO002", "TOPO003", "TOPO004", "WAIVER001", "WAIVER002"]
    assert rules[0]["help"]["text"].startswith("Remediation: Connect the GPU")
    results = run["results"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    where = [
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
         r["locations"][0]["physicalLocation"]["region"]["startLine"], "suppressions" in r)
        for r in results
    ]
    # Lines read off tests/golden/stray-devices.yaml and tests/golden/waivers.yaml.
    assert where == [
        ("TOPO001", STRAY, 10, False),
        ("TOPO001", STRAY, 15, False),
        ("TOPO003", STRAY, 6, True),
        ("TOPO003", STRAY, 10, False),
        ("WAIVER001", "tests/golden/waivers.yaml", 6, False),
        ("WAIVER002", "tests/golden/waivers.yaml", 10, False),
    ]
    (waived,) = [r for r in results if "suppressions" in r]
    assert waived["suppressions"][0]["kind"] == "external"
    assert waived["suppressions"][0]["justification"].startswith("Spare NIC on the pod shelf")
    doc = json.loads(json_out)
    json_fps = [f["fingerprint"] for f in doc["findings"] + doc["suppressed"]]
    assert sorted(r["partialFingerprints"]["topolog/v1"] for r in results) == sorted(json_fps)


def test_sarif_uri_of_absolute_path_is_a_file_uri(tmp_path: Path) -> None:
    inv = tmp_path / "dir with space" / "pod.yaml"
    inv.parent.mkdir()
    inv.write_text((ROOT / STRAY).read_text())
    _, out, _ = _run("verify", str(inv), "--format", "sarif")
    loc = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert loc == {"uri": inv.as_uri()} and "%20" in loc["uri"]


def test_junit_has_one_case_per_check_and_fails_as_the_exit_code_does() -> None:
    _, out, _ = _run(*WAIVED_RUN, "--format", "junit")
    root = ET.fromstring(out)
    (suite,) = root.findall("testsuite")
    cases = {c.get("classname", ""): c for c in suite.findall("testcase")}
    assert sorted(cases) == [f"topolog.{i}" for i in ("TOPO001", "TOPO002", "TOPO003", "TOPO004",
                                                      "WAIVER001", "WAIVER002")]
    failed = sorted(k for k, c in cases.items() if c.find("failure") is not None)
    assert failed == ["topolog.TOPO001", "topolog.TOPO003", "topolog.WAIVER001"]
    assert suite.get("tests") == "6" and suite.get("failures") == "3"
    failure = cases["topolog.TOPO001"].find("failure")
    assert failure is not None and failure.text is not None
    assert failure.text.count("error TOPO001") == 2  # both GPUs without a NIC, one line each
    # The warning is below --fail-on error and the waived finding is accepted: both visible, neither failing.
    assert "WAIVER002" in (cases["topolog.WAIVER002"].findtext("system-out") or "")
    assert "waived until 2030-01-01" in (cases["topolog.TOPO003"].findtext("system-out") or "")
    _, strict, _ = _run(*WAIVED_RUN, "--format", "junit", "--fail-on", "warning")
    assert ET.fromstring(strict).find("testsuite/testcase[@classname='topolog.WAIVER002']/failure") is not None


def test_github_annotations_escape_data_and_properties() -> None:
    from verifier.errors import SourceLocation
    from verifier.findings import Finding
    from verifier.output.github_report import _annotation
    from verifier.verify import Result

    f = Finding("TOPO001", "note", ("a,b",), "100% down:\nsee log", SourceLocation("x:y,z.yaml", 3, 0))
    assert _annotation(Result(f, "0" * 32)) == (
        "::notice file=x%3Ay%2Cz.yaml,line=3,title=TOPO001::100%25 down:%0Asee log [a,b]"
    )


def test_several_outputs_and_summary_on_the_terminal(tmp_path: Path) -> None:
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    code, out, err = _run(*WAIVED_RUN, "--format", "sarif", "--output", str(sarif),
                          "--format", "junit", "--output", str(junit))
    assert code == 1
    assert out == "5 findings (4 error, 1 warning, 0 note, 1 waived) from 6 checks: FAILED (--fail-on error)\n"
    assert json.loads(sarif.read_text())["version"] == "2.1.0"
    assert ET.fromstring(junit.read_text()).tag == "testsuites"
    # A third format without --output goes to stdout; the summary then moves to stderr.
    code, out, err = _run(*WAIVED_RUN, "--format", "sarif", "--output", str(sarif), "--format", "json")
    assert code == 1 and json.loads(out)["summary"]["findings"] == 5
    assert err.strip().endswith("FAILED (--fail-on error)")


@pytest.mark.parametrize(
    "args",
    [("--output", "a.sarif"), ("--format", "json", "--format", "sarif"),
     ("--format", "json", "--output", "a", "--output", "b")],
)
def test_unpaired_format_and_output_is_a_usage_error(
    args: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # were the check missing, a stray report must not land in the repository
    code, out, err = _run("verify", str(ROOT / STRAY), *args)
    assert code == 2 and out == "" and "--format" in err


def test_unwritable_output_is_exit_2(tmp_path: Path) -> None:
    target = tmp_path / "missing-dir" / "r.sarif"
    code, _, err = _run("verify", STRAY, "--format", "sarif", "--output", str(target))
    assert code == 2 and str(target) in err and "cannot write report" in err


def test_json_report_matches_its_documented_schema() -> None:
    text = (ROOT / "docs" / "report-json.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json\n(.*?)```", text, re.S)
    schema = json.loads(blocks[0])
    validator = jsonschema.Draft7Validator(schema)
    for args in (WAIVED_RUN, ("verify", STRAY)):
        _, out, _ = _run(*args, "--format", "json")
        assert sorted(e.message for e in validator.iter_errors(json.loads(out))) == []
    broken = json.loads(out)
    broken["findings"][0]["fingerprint"] = "not-hex"
    assert list(validator.iter_errors(broken)) != []
