"""Review of e0ba77d (a check whose `@needs` has no answer but whose rule reports rows is judged).

What held, written down so it keeps holding: a report's row count is asked only for a check whose
`@needs` has no answer (at 131,072 GPUs a check's `@needs` almost always has one, and a count per
check would be a query each); every engine and every report format says the same; a waived finding
still makes its check judged; `--check` and several inventories keep the rule.

The two test checks (hand derivation, as in test_needs_with_findings.py): dgx-h100-pod has 8 nodes
with 4 NVSwitch chips each (its template's `nvsw{i}` line, count 4) and no object of kind "tpu".
RE991 needs a TPU (no answer) and reports every NVSwitch: 32 rows, one line, so one finding: judged.
RE992 needs a TPU and reports TPUs: no row, so not applicable. edge-soc has neither NVSwitch nor
TPU: both checks are not applicable there.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli_helpers import run_cli
from session.test_needs_with_findings import POD, ROOT, _check

from verifier.engine.ast import Query
from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.engine.memory_backend import MemoryBackend
from verifier.session.session import load_rules, open_evaluation

EDGE = ROOT / "inventories" / "edge-soc.yaml"


@pytest.fixture
def rules(tmp_path: Path) -> list[str]:
    tpu = 'object(_, "tpu")'
    paths = [_check(tmp_path, "RE991", tpu, "nvswitch"), _check(tmp_path, "RE992", tpu, "tpu")]
    return [a for p in paths for a in ("--rules", str(p))]


BOTH = ["--check", "RE991", "--check", "RE992"]


@pytest.mark.parametrize("backend", [MemoryBackend, DuckDBBackend], ids=["memory", "duckdb"])
def test_a_report_is_counted_only_for_a_check_whose_needs_has_no_answer(
    monkeypatch: pytest.MonkeyPatch, backend: type[MemoryBackend] | type[DuckDBBackend]
) -> None:
    # The shipped pack on the pod. Every @needs body is asked once; a report is counted only when its
    # check's @needs had no answer, once. Reordering `_unjudged`'s test (count first) fails this.
    answered: dict[str, bool] = {}
    counted: list[str] = []
    real_holds, real_count = backend.holds, backend.count

    def holds(self: MemoryBackend | DuckDBBackend, query: Query) -> bool:
        answered[query.text] = real_holds(self, query)  # type: ignore[arg-type]
        return answered[query.text]

    def count(self: MemoryBackend | DuckDBBackend, relation: str) -> int:
        counted.append(relation)
        return real_count(self, relation)  # type: ignore[arg-type]

    monkeypatch.setattr(backend, "holds", holds)
    monkeypatch.setattr(backend, "count", count)
    with open_evaluation([POD], load_rules(), engine=backend.name) as ev:
        needs = {c.reports: c.needs for c in ev.checks if c.needs is not None}
        unanswered = {rel for rel, text in needs.items() if not answered[text]}
        assert unanswered and len(unanswered) < len(needs)  # both kinds occur on the pod
        assert sorted(counted) == sorted(unanswered)
        not_applicable = {c.id for c in ev.checks if c.reports in unanswered and not ev.engine.count(c.reports)}
        assert ev.not_applicable == not_applicable


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_every_engine_calls_the_check_with_findings_judged(rules: list[str], engine: str) -> None:
    code, out, err = run_cli("verify", str(POD), *rules, *BOTH, "--engine", engine, "--format", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert (summary["notApplicable"], summary["findings"]) == (["RE992"], 1)


def test_every_format_says_the_same(rules: list[str]) -> None:
    # JUnit: RE992 skipped as not applicable, RE991 not skipped (a warning under --fail-on error:
    # no failure either, its finding in system-out). Text and Markdown: 1 of 2 checks not applicable.
    # SARIF names no check not applicable: it lists RE991's one result and both rules.
    code, out, err = run_cli("verify", str(POD), *rules, *BOTH, "--format", "junit")
    assert code == 0, err
    cases = {c.get("classname"): c for c in ET.fromstring(out).iter("testcase")}
    assert cases["topolog.RE992"].find("skipped") is not None
    assert cases["topolog.RE991"].find("skipped") is None
    assert "RE991" in (cases["topolog.RE991"].findtext("system-out") or "")
    for fmt in ("text", "markdown"):
        code, out, err = run_cli("verify", str(POD), *rules, *BOTH, "--format", fmt)
        assert code == 0, err
        assert "from 2 checks (1 not applicable: nothing to judge)" in out + err
    code, out, err = run_cli("verify", str(POD), *rules, *BOTH, "--format", "sarif")
    assert code == 0, err
    (run,) = json.loads(out)["runs"]
    assert [r["ruleId"] for r in run["results"]] == ["RE991"]


def test_a_waived_finding_still_makes_its_check_judged(rules: list[str], tmp_path: Path) -> None:
    # RE991's one finding waived (until 2030-01-01, judged on 2026-12-07): 0 findings, 1 suppressed,
    # and RE991 is still not called not applicable: it found something, which a waiver accepted.
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text('waivers:\n  - {rule: RE991, subject: "*", reason: accepted, expires: 2030-01-01}\n')
    more = ["--waivers", str(waivers), "--today", "2026-12-07"]
    code, out, err = run_cli("verify", str(POD), *rules, *BOTH, *more, "--format", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert (summary["notApplicable"], summary["findings"], summary["suppressed"]) == (["RE992"], 0, 1)
    code, out, err = run_cli("verify", str(POD), *rules, *BOTH, *more, "--format", "junit")
    assert code == 0, err
    cases = {c.get("classname"): c for c in ET.fromstring(out).iter("testcase")}
    assert cases["topolog.RE991"].find("skipped") is None


@pytest.mark.parametrize(("chosen", "expected"), [("RE991", []), ("RE992", ["RE992"])])
def test_a_selected_check_alone_keeps_the_rule(rules: list[str], chosen: str, expected: list[str]) -> None:
    # --check evaluates the chosen check's slice alone (its report and what its @needs reads).
    code, out, err = run_cli("verify", str(POD), *rules, "--check", chosen, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["summary"]["notApplicable"] == expected


def test_over_two_inventories_a_check_one_of_them_judged_is_judged(rules: list[str]) -> None:
    # edge-soc alone: both not applicable. With the pod: RE991 found the pod's NVSwitches, so it was
    # judged; RE992 judged nothing on either.
    code, out, err = run_cli("verify", str(EDGE), *rules, *BOTH, "--format", "json")
    assert code == 0, err
    assert json.loads(out)["summary"]["notApplicable"] == ["RE991", "RE992"]
    code, out, err = run_cli("verify", str(EDGE), str(POD), *rules, *BOTH, "--format", "json")
    assert code == 0, err
    summary = json.loads(out)["summary"]
    assert (summary["notApplicable"], summary["findings"]) == (["RE992"], 1)
