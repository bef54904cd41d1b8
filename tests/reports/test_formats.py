"""Every report format: the registry, golden reports, report files, the documented JSON schema.

What each consumer checks (Jenkins' JUnit schema, code scanning's SARIF, the Actions
runner's workflow commands, Markdown step summaries) has a test file of its own beside this one.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from cli_helpers import run_cli
from reports.output_helpers import GOLDEN, ROOT, STRAY, WAIVED_RUN

from verifier.checks.verify import VerifyReport
from verifier.reports import VERIFY_FORMATS, formats_for, renderers

GOLDENS = {
    "text": "txt",
    "json": "json",
    "sarif": "sarif",
    "junit": "junit.xml",
    "github": "github.txt",
    "markdown": "md",
}

_run = run_cli


def test_cli_offers_every_registered_format() -> None:
    assert (
        sorted(VERIFY_FORMATS)
        == sorted(formats_for(VerifyReport))
        == sorted(renderers(VerifyReport))
        == sorted(GOLDENS)
    )


@pytest.mark.parametrize("fmt", sorted(GOLDENS))
def test_golden_report_with_waivers(fmt: str) -> None:
    code, out, _ = _run(*WAIVED_RUN, "--format", fmt)
    assert code == 1
    assert out == (GOLDEN / f"verify-waived.{GOLDENS[fmt]}").read_text(encoding="utf-8")


def test_unwritable_output_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("a file, not a folder\n")
    target = tmp_path / "notes" / "r.sarif"
    code, _, err = _run("verify", STRAY, "--output", f"sarif={target}")
    assert code == 2 and str(target) in err and "cannot write report" in err and "is a file" in err


def test_output_into_a_folder_not_made_yet_makes_it(tmp_path: Path) -> None:
    """As pytest's --junitxml does: CI names reports/ before anything has made it."""
    target = tmp_path / "reports" / "ci" / "r.sarif"
    code, _, err = _run("verify", STRAY, "--output", f"sarif={target}")
    assert code == 1, err  # stray-devices.yaml has errors (tests/cli/test_cli_verify.py lists them)
    assert json.loads(target.read_text(encoding="utf-8"))["version"] == "2.1.0"


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
