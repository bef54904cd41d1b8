"""`topolog test DIR`: a user's checks against their pass/fail fixtures.

tests/rule_tests/site/ is what a user writes: site_hbm.dl (SITE001, a GPU whose model has
under 96 GB of HBM, read from the input relations object/model/spec of the shipped
schema) and fixtures/SITE001/. In fail.yaml the H100 and the A100 (80 GB each) are below
the minimum; the MI300X (192 GB) is not and the RTX 4090 has no HBM figure. In pass.yaml
the B200 has 180 GB and Gaudi2 exactly 96 GB. The broken cases below are copies of that
folder with one thing changed.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.checks.check import CheckSelection
from verifier.core.errors import TopologError
from verifier.session.rule_tests import Case, discover, read_expected, run_case, untested_warnings

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "tests" / "rule_tests" / "site"
H100 = "n1/gpu0 | GPU n1/gpu0 (H100-SXM5-80GB) has 80000 MB of HBM, below the site minimum of 96000 MB."
A100 = "n1/gpu1 | GPU n1/gpu1 (A100-SXM4-80GB) has 80000 MB of HBM, below the site minimum of 96000 MB."


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A copy of the user's folder, to break."""
    return Path(shutil.copytree(SITE, tmp_path / "site"))


def _errors(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("error:")]


@pytest.mark.parametrize("engine", ["duckdb", "pydatalog"])
def test_the_users_fixtures_pass(engine: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, err = run_cli("test", "tests/rule_tests/site", "--engine", engine)
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "PASS  SITE001    tests/rule_tests/site/fixtures/SITE001/fail.yaml",
        "PASS  SITE001    tests/rule_tests/site/fixtures/SITE001/pass.yaml",
        f"2 cases: 2 passed, 0 failed (engine {engine})",
    ]


def test_a_wrong_expectation_fails_with_the_missing_and_unexpected_lines(site: Path) -> None:
    expected = site / "fixtures" / "SITE001" / "expected.txt"
    # The A100 line names gpu9 instead of gpu1, and the H100 line is left out.
    expected.write_text(A100.replace("GPU n1/gpu1", "GPU n1/gpu9") + "\n")
    code, out, _ = run_cli("test", str(site))
    assert code == 1
    fail = site / "fixtures" / "SITE001" / "fail.yaml"
    assert out.splitlines() == [
        f"FAIL  SITE001    {fail}",
        f"      expected (in {expected}) but not found:",
        f"      - {A100.replace('GPU n1/gpu1', 'GPU n1/gpu9')}",
        "      found but not expected:",
        f"      + {H100}",
        f"      + {A100}",
        f"PASS  SITE001    {site / 'fixtures' / 'SITE001' / 'pass.yaml'}",
        "2 cases: 1 passed, 1 failed (engine auto)",
    ]


def test_a_passing_inventory_with_a_finding_fails(site: Path) -> None:
    folder = site / "fixtures" / "SITE001"
    text = (folder / "pass.yaml").read_text().replace("B200-HGX-180GB", "H100-SXM5-80GB")
    (folder / "pass-h100.yaml").write_text(text)
    code, out, _ = run_cli("test", str(site))
    assert code == 1
    assert [
        f"FAIL  SITE001    {folder / 'pass-h100.yaml'}",
        "      found, on an inventory that must pass:",
        f"      + {H100}",
    ] == out.splitlines()[1:4]
    assert out.splitlines()[-1] == "3 cases: 2 passed, 1 failed (engine auto)"


def test_a_named_failing_case_pairs_with_its_own_expected_file(site: Path) -> None:
    folder = site / "fixtures" / "SITE001"
    (folder / "fail-h100.yaml").write_text((folder / "fail.yaml").read_text().replace("A100-SXM4-80GB", "MI300X"))
    (folder / "expected-h100.txt").write_text(H100 + "\n\n")  # blank lines are ignored
    code, out, _ = run_cli("test", str(site))
    assert code == 0, out
    assert out.splitlines()[-1] == "3 cases: 3 passed, 0 failed (engine auto)"


def test_a_fixture_that_does_not_load_is_exit_2_with_its_location(site: Path) -> None:
    bad = site / "fixtures" / "SITE001" / "pass-bad.yaml"
    bad.write_text("apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: nodee\n")
    code, out, err = run_cli("test", str(site))
    assert code == 2
    assert f"ERROR SITE001    {bad}" in out.splitlines()
    assert out.splitlines()[-1] == "3 cases: 2 passed, 0 failed, 1 could not run (engine auto)"
    (line,) = _errors(err)
    assert line.startswith(f"error: {bad}:4:") and "nodee" in line and "Traceback" not in err


def test_fixtures_for_an_unknown_check_are_exit_2_before_anything_runs(site: Path) -> None:
    shutil.move(site / "fixtures" / "SITE001", site / "fixtures" / "SITE01")
    code, out, err = run_cli("test", str(site))
    assert code == 2 and out == ""
    errors = _errors(err)
    assert errors[0] == (
        f"error: {site / 'fixtures' / 'SITE01'}: fixtures for check SITE01, which no loaded rule file defines "
        "(did you mean SITE001?); a fixture folder is named by the `# @id:` of its check"
    )


def test_a_failing_case_without_expected_findings_is_exit_2(site: Path) -> None:
    (site / "fixtures" / "SITE001" / "expected.txt").unlink()
    code, out, err = run_cli("test", str(site))
    assert code == 2 and out == ""
    fail = site / "fixtures" / "SITE001" / "fail.yaml"
    assert _errors(err)[0].startswith(f"error: {fail}: no expected.txt beside it")


def test_a_malformed_expected_line_is_exit_2_with_its_line(site: Path) -> None:
    expected = site / "fixtures" / "SITE001" / "expected.txt"
    expected.write_text(H100 + "\nn1/gpu1 has too little HBM\n")
    code, _, err = run_cli("test", str(site))
    assert code == 2
    assert _errors(err)[0].startswith(f"error: {expected}:2: expected a finding written as `subject, subject |")


def test_without_the_shipped_rules_the_schema_is_missing_and_the_error_says_where(site: Path) -> None:
    code, out, err = run_cli("test", str(site), "--no-shipped-rules")
    assert code == 2 and out == ""
    errors = _errors(err)
    assert len(errors) == 3  # object, model, spec
    assert all("drop --no-shipped-rules, or add that file with --rules" in e for e in errors)


def test_without_the_shipped_rules_the_schema_can_be_named(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    code, out, _ = run_cli("test", str(site), "--no-shipped-rules", "--rules", "rules/schema.dl")
    assert code == 0 and out.splitlines()[-1] == "2 cases: 2 passed, 0 failed (engine auto)"


def test_a_check_without_fixtures_is_a_warning(site: Path) -> None:
    text = (site / "site_hbm.dl").read_text().replace("SITE001", "SITE003").replace("site_small_hbm", "site_hbm3")
    (site / "untested.dl").write_text(text)
    code, _, err = run_cli("test", str(site))
    assert code == 0
    assert err.splitlines() == [
        f"warning: {site / 'untested.dl'}: check SITE003 has no fixtures "
        "(fixtures/SITE003/pass.yaml, fail.yaml and expected.txt)"
    ]


def test_check_selects_the_cases_and_an_unknown_id_is_exit_2(site: Path) -> None:
    code, _, err = run_cli("test", str(site), "--check", "SITE01")
    assert code == 2 and "did you mean SITE001?" in err
    code, out, _ = run_cli("test", str(site), "--skip", "SITE001")
    assert code == 2 and out == ""


def test_no_fixtures_folder_is_exit_2(tmp_path: Path) -> None:
    (tmp_path / "x.dl").write_text((SITE / "site_hbm.dl").read_text())
    code, _, err = run_cli("test", str(tmp_path))
    assert code == 2 and _errors(err)[0].startswith(f"error: {tmp_path / 'fixtures'}: no fixtures folder here")


def test_a_missing_directory_is_exit_2(tmp_path: Path) -> None:
    code, _, err = run_cli("test", str(tmp_path / "nope"))
    assert code == 2 and f"{tmp_path / 'nope'}: no such file or directory" in err


# ---------------------------------------------------------------- the module's parts


def test_discover_reads_the_layout() -> None:
    cases, warnings = discover(SITE / "fixtures", {"SITE001"})
    assert warnings == []
    assert [(c.check_id, c.inventory.name, c.expected_lines) for c in cases] == [
        ("SITE001", "fail.yaml", (H100, A100)),
        ("SITE001", "pass.yaml", ()),
    ]


def test_discover_warns_about_files_it_ignores(site: Path) -> None:
    stray = site / "fixtures" / "SITE001" / "pas.yaml"
    stray.write_text("")
    _, warnings = discover(site / "fixtures", {"SITE001"})
    assert warnings == [f"{stray}: not a test case (cases are pass*.yaml, and fail*.yaml with expected*.txt), ignored"]


def test_read_expected_refuses_an_empty_file(tmp_path: Path) -> None:
    empty = tmp_path / "expected.txt"
    empty.write_text("\n")
    with pytest.raises(TopologError) as err:
        read_expected(empty)
    assert "lists no finding" in str(err.value)


def test_run_case_compares_as_a_multiset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    fail = SITE / "fixtures" / "SITE001" / "fail.yaml"
    # The H100 finding expected twice: the run gives it once, so one copy is missing.
    case = Case("SITE001", fail, tmp_path / "expected.txt", (H100, H100, A100))
    outcome = run_case(case, [Path("rules"), SITE / "site_hbm.dl"], "duckdb")
    assert (outcome.status, outcome.missing, outcome.unexpected) == ("FAIL", (H100,), ())


def test_only_user_checks_are_warned_about() -> None:
    from verifier.checks.check import checks_from_program
    from verifier.engine.rule_pack import shipped_first
    from verifier.session.session import load_rules

    checks = checks_from_program(load_rules(shipped_first([SITE])))
    assert untested_warnings(checks, [], CheckSelection(skip=frozenset({"SITE001"}))) == []
    (only,) = untested_warnings(checks, [], CheckSelection())
    assert "check SITE001 has no fixtures" in only
