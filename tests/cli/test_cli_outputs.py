"""`topolog verify --output FORMAT=PATH` and `--format`: which report goes where, and the refusals."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import run_cli

STRAY = "tests/golden/stray-devices.yaml"
RUN = ("verify", STRAY)
# The counts are left open: they move whenever a check is added to the shipped rules.
SUMMARY = re.compile(
    r"\d+ findings \(\d+ error, .*\) from \d+ checks( \(\d+ not applicable: nothing to judge\))?: "
    r"FAILED \(--fail-on error\)\n"
)

pytestmark = pytest.mark.usefixtures("in_repo_root")


@pytest.fixture(autouse=True)
def _no_step_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    # A run inside GitHub Actions must not write into the job's own summary.
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


def _refused(*args: str) -> str:
    """stderr of a run that must stop with exit 2 before doing anything, and without a traceback."""
    code, out, err = run_cli(*RUN, *args)
    assert code == 2, (out, err)
    assert out == "" and "Traceback" not in err
    return err


def test_each_output_names_its_format_and_the_summary_stays_on_the_terminal(tmp_path: Path) -> None:
    sarif, junit = tmp_path / "r.sarif", tmp_path / "r.xml"
    code, out, _ = run_cli(*RUN, "--output", f"sarif={sarif}", "--output", f"junit={junit}")
    assert code == 1
    assert SUMMARY.fullmatch(out), out
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
    assert ET.fromstring(junit.read_text(encoding="utf-8")).tag == "testsuites"


def test_format_chooses_stdout_whatever_the_order_of_the_flags(tmp_path: Path) -> None:
    sarif = tmp_path / "r.sarif"
    code, out, err = run_cli(*RUN, "--format", "json", "--output", f"sarif={sarif}")
    assert code == 1
    assert json.loads(out)["summary"]["findings"] >= 4
    assert json.loads(sarif.read_text(encoding="utf-8"))["version"] == "2.1.0"
    # stdout carries JSON, so the summary moves to stderr.
    assert SUMMARY.fullmatch(err.splitlines(keepends=True)[-1]), err


def test_format_given_twice_is_refused_with_the_fix() -> None:
    err = _refused("--format", "sarif", "--format", "github")
    assert "--format" in err and "sarif, github" in err and "--output FORMAT=PATH" in err


@pytest.mark.parametrize(
    ("name", "fmt"),
    [("a.sarif", "sarif"), ("a.xml", "junit"), ("a.json", "json"), ("a.md", "markdown"), ("a.txt", "text")],
)
def test_output_without_a_format_suggests_one_from_the_suffix(
    name: str, fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # were the check missing, a stray report must not land in the repository
    code, out, err = run_cli(
        "verify", str(Path(__file__).parents[1] / "golden" / "stray-devices.yaml"), "--output", name
    )
    assert code == 2 and out == "" and "Traceback" not in err
    assert f"--output {fmt}={name}" in err
    assert list(tmp_path.iterdir()) == []


def test_output_without_a_format_or_a_known_suffix_names_the_form() -> None:
    err = _refused("--output", "report.out")
    assert "FORMAT=PATH" in err and "sarif=report.out" in err


def test_output_of_a_bare_format_name_asks_for_a_file() -> None:
    err = _refused("--output", "sarif")
    assert "sarif=topolog.sarif" in err and "--format sarif" in err


def test_unknown_format_gets_a_did_you_mean() -> None:
    err = _refused("--output", "sarf=a.sarif")
    assert "'sarf'" in err and "did you mean sarif=a.sarif" in err


def test_unknown_format_for_stdout_is_refused() -> None:
    err = _refused("--format", "yaml")
    assert "yaml" in err and "sarif" in err


def test_two_outputs_to_one_file_are_refused(tmp_path: Path) -> None:
    target = tmp_path / "r.sarif"
    err = _refused("--output", f"sarif={target}", "--output", f"junit={tmp_path}/./r.sarif")
    assert "same file" in err
    assert not target.exists()


def test_a_report_and_the_baseline_in_one_file_are_refused(tmp_path: Path) -> None:
    err = _refused("--output", f"json={tmp_path / 'x.json'}", "--write-baseline", str(tmp_path / "x.json"))
    assert "same file" in err and "--write-baseline" in err


def test_output_to_a_directory_is_refused(tmp_path: Path) -> None:
    err = _refused("--output", f"sarif={tmp_path}")
    assert "is a directory" in err and f"sarif={tmp_path / 'topolog.sarif'}" in err


def test_output_with_no_path_is_refused() -> None:
    assert "no file after sarif=" in _refused("--output", "sarif=")


def test_github_appends_the_step_summary_when_actions_asks_for_one(tmp_path: Path) -> None:
    page = tmp_path / "step-summary.md"
    page.write_text("earlier step\n", encoding="utf-8")
    code, out, _ = run_cli(*RUN, "--format", "github", env={"GITHUB_STEP_SUMMARY": str(page)})
    assert code == 1 and out.startswith("::error ")
    text = page.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n") and "topolog verify: failed" in text


def test_no_step_summary_without_the_github_format(tmp_path: Path) -> None:
    page = tmp_path / "step-summary.md"
    code, _, _ = run_cli(*RUN, "--output", f"json={tmp_path / 'r.json'}", env={"GITHUB_STEP_SUMMARY": str(page)})
    assert code == 1 and not page.exists()
