"""Waivers: refused without reason or expiry, matched by glob, expired and unused ones surface."""

from __future__ import annotations

from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.checks.findings import Finding
from verifier.checks.verify import apply_waivers
from verifier.checks.waivers import Waiver, WaiverFile, load_waivers
from verifier.cli.main import main
from verifier.core.errors import SourceLocation, TopologError

ROOT = Path(__file__).resolve().parents[2]
STRAY = str(ROOT / "tests" / "golden" / "stray-devices.yaml")
TOPOLOGY = ("--rules", str(ROOT / "rules" / "schema.dl"), "--rules", str(ROOT / "rules" / "topology"))


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # A topolog.waivers.yaml in the working directory is picked up by default: start from an empty one.
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOPOLOG_TODAY", raising=False)


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["verify", STRAY, *TOPOLOGY, *args], env=env)
    return result.exit_code, result.stdout, result.stderr


def _write(path: Path, *items: str) -> Path:
    path.write_text("waivers:\n" + "".join(items))
    return path


def _item(
    rule: str = "TOPO003",
    subject: str = "stray-*",
    reason: str | None = "spare NIC",
    expires: str | None = "2030-01-01",
) -> str:
    lines = [f"  - rule: {rule}\n", f'    subject: "{subject}"\n']
    if reason is not None:
        lines.append(f"    reason: {reason}\n")
    if expires is not None:
        lines.append(f"    expires: {expires}\n")
    return "".join(lines)


def test_waiver_matches_glob_over_any_subject_case_sensitively() -> None:
    w = Waiver("TOPO003", "rack?/n*", "r", date(2030, 1, 1), SourceLocation("w.yaml", 2, 5))
    f = Finding("TOPO003", "error", ("rack1/n7/gpu0", "gpu"), "m", None)
    assert w.matches(f)
    assert not w.matches(Finding("TOPO001", "error", ("rack1/n7/gpu0",), "m", None))
    assert not w.matches(Finding("TOPO003", "error", ("RACK1/n7/gpu0", "gpu"), "m", None))
    assert not w.matches(Finding("TOPO003", "error", ("rack10/n7", "gpu"), "m", None))


def test_waiver_holds_through_its_expiry_day() -> None:
    w = Waiver("TOPO003", "*", "r", date(2025, 5, 31), SourceLocation("w.yaml"))
    assert not w.expired(date(2025, 5, 31))
    assert w.expired(date(2025, 6, 1))


@pytest.mark.parametrize(
    ("item", "line", "expected"),
    [
        (_item(reason=None), 2, "waiver 1 has no 'reason'; it is required"),
        (_item(expires=None), 2, "waiver 1 has no 'expires'; it is required"),
        (_item(reason='"  "'), 4, "'reason' in waiver 1 is empty"),
        (_item(expires="2025-13-01"), 5, "'expires' in waiver 1"),
        (_item(expires="next-week"), 5, "is not a date written as YYYY-MM-DD"),
        (_item() + "    expiry: 2030-01-01\n", 6, "unknown key 'expiry' in waiver 1; did you mean 'expires'?"),
    ],
)
def test_bad_waiver_is_exit_2_with_file_and_line(tmp_path: Path, item: str, line: int, expected: str) -> None:
    waivers = _write(tmp_path / "w.yaml", item)
    code, out, err = _run("--waivers", str(waivers))
    assert code == 2 and out == ""
    assert f"error: {waivers}:{line}:" in err and expected in err


def test_misspelt_required_key_is_one_error(tmp_path: Path) -> None:
    # `expiry:` for `expires:`: the unknown key with its did-you-mean, not also "has no 'expires'".
    waivers = _write(tmp_path / "w.yaml", _item(expires=None) + "    expiry: 2030-01-01\n")
    code, _, err = _run("--waivers", str(waivers))
    assert code == 2
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {waivers}:5:5: unknown key 'expiry' in waiver 1; did you mean 'expires'?")


def test_every_problem_in_the_file_is_listed(tmp_path: Path) -> None:
    waivers = _write(tmp_path / "w.yaml", _item(reason=None), _item(expires=None))
    with pytest.raises(TopologError) as err:
        load_waivers(waivers)
    assert [d.location.line for d in err.value.diagnostics] == [2, 5]


def test_waived_finding_is_reported_as_waived_and_does_not_fail(tmp_path: Path) -> None:
    waivers = _write(
        tmp_path / "w.yaml", _item(), _item(rule="TOPO003", subject="loose-gpu"), _item(rule="TOPO001", subject="*")
    )
    code, out, _ = _run("--waivers", str(waivers), "--today", "2025-06-01")
    assert code == 0, out
    lines = out.splitlines()
    assert len(lines) == 6 and all("waived until 2030-01-01 by" in line for line in lines[:4])
    # How many checks ran depends on which rules are loaded; the counts of findings do not.
    assert lines[-2].startswith("0 findings (0 error, 0 warning, 0 note, 4 waived) from ")
    assert lines[-2].endswith(": passed (--fail-on error)")
    # The date the waivers expired against, and that it came from the flag.
    assert lines[-1] == "waivers judged on 2025-06-01 (from --today)"


def test_expired_waiver_is_an_error_and_stops_waiving(tmp_path: Path) -> None:
    waivers = _write(tmp_path / "w.yaml", _item(expires="2025-05-31"))
    code, out, _ = _run("--waivers", str(waivers), "--today", "2025-06-01")
    assert code == 1
    assert f"{waivers}:2:5: error WAIVER001: waiver for TOPO003 on 'stray-*' expired on 2025-05-31" in out
    assert "error TOPO003: nic stray-nic is not inside any node. [stray-nic, nic]\n" in out
    assert "waived" not in out.splitlines()[-1]
    # The day before, the same file waives the finding and adds nothing.
    code, out, _ = _run("--waivers", str(waivers), "--today", "2025-05-31")
    assert "WAIVER001" not in out and "1 waived" in out


def test_unused_waiver_is_a_warning(tmp_path: Path) -> None:
    waivers = _write(tmp_path / "w.yaml", _item(subject="n9/*"))
    code, out, _ = _run("--waivers", str(waivers), "--today", "2025-06-01")
    assert code == 1  # the TOPO findings still fail; the waiver is a warning
    assert f"{waivers}:2:5: warning WAIVER002: waiver for TOPO003 on 'n9/*' matches no finding" in out
    assert "(4 error, 1 warning, 0 note)" in out


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (
            "TOPO03",
            "waiver names rule 'TOPO03', which no check has; expected the id of a check "
            "('topolog rules' lists them); did you mean 'TOPO003'?",
        ),
        ("topo003", "did you mean 'TOPO003'?"),  # the case differs: still one id
        ("BW02", "did you mean 'BW002'?"),
        (
            "TOPO999",
            "waiver names rule 'TOPO999', which no check has; expected the id of a check ('topolog rules' lists them)",
        ),
        ("WAIVER002", "waiver names WAIVER002, a finding about waivers, which cannot itself be waived"),
    ],
)
def test_waiver_naming_an_unknown_rule_is_exit_2_at_its_line(tmp_path: Path, rule: str, expected: str) -> None:
    # Line 1 is `waivers:`; the first waiver is lines 2-5, the second (the bad one) 6-9,
    # and its `rule:` key is at column 5 of line 6.
    waivers = _write(tmp_path / "w.yaml", _item(), _item(rule=rule, subject="*"))
    code, out, err = _run("--waivers", str(waivers), "--today", "2025-06-01")
    assert code == 2 and out == ""
    (line,) = [line for line in err.splitlines() if line.startswith("error:")]
    assert line.startswith(f"error: {waivers}:6:5: ") and expected in line
    if rule == "TOPO999":
        assert "did you mean" not in line


def test_unknown_rule_is_an_error_even_when_its_waiver_has_expired(tmp_path: Path) -> None:
    waivers = _write(tmp_path / "w.yaml", _item(rule="TOPO03", expires="2025-01-01"))
    code, _, err = _run("--waivers", str(waivers), "--today", "2025-06-01")
    assert code == 2 and f"{waivers}:2:5: waiver names rule 'TOPO03'" in err


def test_rule_of_the_shipped_pack_not_run_is_only_unused() -> None:
    # A run with a rule set of its own: a waiver for a shipped check it did not load is
    # known, so it stays the WAIVER002 warning, saying the check was not run.
    w = Waiver("BW002", "*", "r", date(2030, 1, 1), SourceLocation("w.yaml", 2, 5))
    out = apply_waivers([], WaiverFile("w.yaml", (w,)), date(2025, 6, 1), {"MINE001"})
    (result,) = out
    assert result.finding.rule == "WAIVER002"
    assert result.finding.message == "waiver for BW002 on '*' matches nothing: no check BW002 was run"
    with pytest.raises(TopologError) as err:
        apply_waivers([], WaiverFile("w.yaml", (replace(w, rule="MINE01"),)), date(2025, 6, 1), {"MINE001"})
    assert "did you mean 'MINE001'?" in str(err.value)


def test_today_comes_from_the_environment(tmp_path: Path) -> None:
    waivers = _write(tmp_path / "w.yaml", _item(expires="2025-05-31"))
    code, out, _ = _run("--waivers", str(waivers), env={"TOPOLOG_TODAY": "2025-06-01"})
    assert "WAIVER001" in out
    code, out, _ = _run("--waivers", str(waivers), env={"TOPOLOG_TODAY": "2025-05-01"})
    assert "WAIVER001" not in out and "1 waived" in out
    code, out, err = _run("--waivers", str(waivers), env={"TOPOLOG_TODAY": "June 1st"})
    assert code == 2 and "'June 1st' is not a date written as YYYY-MM-DD" in err


def test_default_waivers_file_in_working_directory(tmp_path: Path) -> None:
    _write(tmp_path / "topolog.waivers.yaml", _item())
    code, out, _ = _run("--today", "2025-06-01")
    assert "1 waived" in out
    code, _, err = _run("--waivers", str(tmp_path / "nope.yaml"))
    assert code == 2 and "nope.yaml" in err


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("", "file is empty"),
        ("# nothing waived yet\n", "file has no YAML content (only comments)"),
        ("- TOPO001\n", "top level is not a mapping"),
    ],
)
def test_a_waivers_file_with_no_mapping_says_what_it_should_hold(tmp_path: Path, text: str, problem: str) -> None:
    # The message named an inventory ('apiVersion: topolog.dev/v1') for a waivers file.
    waivers = tmp_path / "w.yaml"
    waivers.write_text(text)
    code, out, err = _run("--waivers", str(waivers))
    assert code == 2 and out == ""
    assert f"{waivers}:1:1: {problem}; expected a waivers file with a 'waivers' list" in err, err
    assert "inventory" not in err
