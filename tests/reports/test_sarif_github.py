"""The SARIF log as GitHub code scanning takes it: its line hash, its limits, its file names.

GitHub's upload action fills in `partialFingerprints.primaryLocationLineHash` with a rolling
hash of the result's line (github/codeql-action, src/fingerprints.ts:
https://github.com/github/codeql-action/blob/main/src/fingerprints.ts). `_action_hash` below
ports its `hash` function statement by statement (64-bit wrapping arithmetic, the window of
100, the end marker 65535, the flush with zeros), and is checked against the action's own
published expectations (src/fingerprints.test.ts in the same repository) and against one
value worked out by hand. verifier/reports/sarif_fingerprints.py computes the same numbers
another way (every line at once); both must agree on every input.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from reports.output_helpers import STRAY, WAIVED_RUN, waived_report

from verifier.reports import sarif_report
from verifier.reports.sarif_fingerprints import line_hashes

ROOT = Path(__file__).resolve().parents[2]
MASK = 2**64 - 1


def _action_hash(text: str) -> list[tuple[int, str]]:
    """fingerprints.ts `hash`, ported as written: (line number, value) in the order it calls back."""
    block, mod = 100, 37
    first_mod = pow(mod, block, 2**64)
    window = [0] * block
    line_numbers = [-1] * block
    hash_raw = 0
    index = 0
    line_number = 0
    line_start = True
    prev_cr = False
    counts: dict[str, int] = {}
    out: list[tuple[int, str]] = []

    def output_hash() -> None:
        value = format(hash_raw & MASK, "x")  # Long.toUnsigned().toString(16)
        counts[value] = counts.get(value, 0) + 1
        out.append((line_numbers[index], f"{value}:{counts[value]}"))
        line_numbers[index] = -1

    def update_hash(current: int) -> None:
        nonlocal hash_raw, index
        begin = window[index]
        window[index] = current
        hash_raw = (mod * hash_raw + current - first_mod * begin) & MASK
        index = (index + 1) % block

    def process(current: int) -> None:
        nonlocal prev_cr, line_start, line_number
        if current in (ord(" "), ord("\t")) or (prev_cr and current == ord("\n")):
            prev_cr = False
            return
        if current == ord("\r"):
            current = ord("\n")
            prev_cr = True
        else:
            prev_cr = False
        if line_numbers[index] != -1:
            output_hash()
        if line_start:
            line_start = False
            line_number += 1
            line_numbers[index] = line_number
        if current == ord("\n"):
            line_start = True
        update_hash(current)

    # charCodeAt: UTF-16 code units.
    units = text.encode("utf-16-le")
    for i in range(0, len(units), 2):
        process(units[i] | units[i + 1] << 8)
    process(65535)
    for _ in range(block):
        if line_numbers[index] != -1:
            output_hash()
        update_hash(0)
    return out


# src/fingerprints.test.ts of github/codeql-action: inputs and the values the action must give.
ACTION_VECTORS = [
    ("", ["c129715d7a2bc9a3:1"]),
    (" a\nb\n  \t\tc\n d", ["271789c17abda88f:1", "54703d4cd895b18:1", "180aee12dab6264:1", "a23a3dc5e078b07b:1"]),
    (
        " hello; \t\nworld!!!\r\r\r  \t\tGreetings\r End\r",
        [
            "e9496ae3ebfced30:1",
            "fb7c023a8b9ccb3f:1",
            "ce8ba1a563dcdaca:1",
            "e20e36e16fcb0cc8:1",
            "b3edc88f2938467e:1",
            "c8e28b0b4002a3a0:1",
            "c129715d7a2bc9a3:1",
        ],
    ),
    (
        "Lorem ipsum dolor sit amet.\n" * 10,
        [
            *(f"a7f2ff13bc495cf2:{n}" for n in range(1, 7)),
            *("a7f2ff1481e87703:1", "a9cf91f7bbf1862b:1", "55ec222b86bcae53:1", "cc97dc7b1d7d8f7b:1"),
            "c129715d7a2bc9a3:1",
        ],
    ),
]


@pytest.mark.parametrize(("text", "expected"), ACTION_VECTORS)
def test_port_and_module_give_the_actions_own_values(text: str, expected: list[str]) -> None:
    assert _action_hash(text) == list(enumerate(expected, start=1))
    assert line_hashes(text) == expected


def test_a_value_worked_out_by_hand() -> None:
    # "x\n": line 1's window is x (120), \n (10), the end marker 65535, then 97 zeros, so its hash
    # is 120*37^99 + 10*37^98 + 65535*37^97 (mod 2^64). Line 2 starts at the end marker: 65535*37^99.
    # The empty file is that same lone end marker, which is why the action's test expects
    # c129715d7a2bc9a3 both for "" and for the line after a final newline.
    line_1 = (120 * 37**99 + 10 * 37**98 + 65535 * 37**97) % 2**64
    line_2 = 65535 * 37**99 % 2**64
    assert format(line_2, "x") == "c129715d7a2bc9a3"
    assert line_hashes("x\n") == [f"{line_1:x}:1", f"{line_2:x}:1"]
    assert _action_hash("x\n") == [(1, f"{line_1:x}:1"), (2, f"{line_2:x}:1")]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["a", "b", " ", "\t", "\n", "\r", "é", "😀", "x" * 30]), max_size=60).map("".join))
def test_module_and_port_agree(text: str) -> None:
    assert line_hashes(text) == [value for _line, value in _action_hash(text)]


def _run(*args: str) -> tuple[int, dict[str, Any]]:
    code, out, err = run_cli(*args, "--format", "sarif")
    assert code in (0, 1), err
    return code, json.loads(out)


@pytest.mark.usefixtures("in_repo_root")
def test_findings_on_one_line_get_one_key_each() -> None:
    """stray-devices.yaml line 10 holds loose-gpu, which TOPO001 and TOPO003 both report."""
    _code, doc = _run(*WAIVED_RUN)
    results = doc["runs"][0]["results"]
    on_10 = [
        r
        for r in results
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == STRAY
        and r["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    ]
    assert sorted(r["ruleId"] for r in on_10) == ["TOPO001", "TOPO003"]
    keys = [r["partialFingerprints"]["primaryLocationLineHash"] for r in on_10]
    assert len(set(keys)) == 2
    # Each is the action's value for line 10, salted with the finding's own fingerprint.
    line_10 = _action_hash((ROOT / STRAY).read_text(encoding="utf-8"))[9]
    assert line_10[0] == 10
    for r, key in zip(on_10, keys, strict=True):
        assert key == f"{line_10[1]}:{r['partialFingerprints']['topolog/v1']}"
    # Every result located in a repository file has one.
    assert all("primaryLocationLineHash" in r["partialFingerprints"] for r in results)


def test_a_run_past_githubs_result_limit_keeps_the_most_severe(monkeypatch: pytest.MonkeyPatch) -> None:
    # The waived run's results, in report order: 0 TOPO001 loose-gpu, 1 TOPO001 n1/gpu0, 2 TOPO003
    # stray-nic (waived), 3 TOPO003 loose-gpu, 4 WAIVER001 (error), 5 WAIVER002 (warning). With room
    # for 3: unwaived errors first in report order, so 0, 1 and 3; 3 of 6 left out.
    monkeypatch.setattr(sarif_report, "MAX_RESULTS", 3)
    report = waived_report(with_proofs=True)
    doc = json.loads(sarif_report.render(report))
    run = doc["runs"][0]
    kept = [(r["ruleId"], r["properties"]["subjects"][0]) for r in run["results"]]
    assert kept == [("TOPO001", "loose-gpu"), ("TOPO001", "n1/gpu0"), ("TOPO003", "loose-gpu")]
    assert run["properties"] == {"resultsLeftOut": 3, "resultsInReport": 6}
    (notice,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notice["level"] == "warning" and "holds 3 of 6 results" in notice["message"]["text"]
    assert "3 left out" in notice["message"]["text"] and "JSON report" in notice["message"]["text"]
    assert sarif_report.left_out_line(report) == notice["message"]["text"]


def test_proof_budgets(monkeypatch: pytest.MonkeyPatch) -> None:
    # stray-nic's proof: device_outside_node("stray-nic", "nic") from object("stray-nic", "nic") (input)
    # and host_device_kind("nic") (a rule with no premises): 3 facts, 2 below the root; its thread has
    # the two rule steps (lines 15 and 25 of TOPO003's file) before the finding's own.
    monkeypatch.setattr(sarif_report, "PROOF_FACTS", 1)
    monkeypatch.setattr(sarif_report, "MAX_FLOW_STEPS", 2)
    doc = json.loads(sarif_report.render(waived_report(with_proofs=True)))
    (nic,) = [r for r in doc["runs"][0]["results"] if r["properties"]["subjects"] == ["stray-nic", "nic"]]
    assert nic["properties"]["proof"]["premises"] == [] and nic["properties"]["proofFactsLeftOut"] == 2
    steps = nic["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["region"]["startLine"] for s in steps] == [15, 6]
    assert nic["properties"]["codeFlowStepsLeftOut"] == 1
    # No budget at all: the 4 results with a proof (TOPO001 x2, TOPO003 x2) carry none, and say so.
    monkeypatch.setattr(sarif_report, "PROOF_BUDGET", 0)
    run = json.loads(sarif_report.render(waived_report(with_proofs=True)))["runs"][0]
    assert sum("proofLeftOut" in r["properties"] for r in run["results"]) == 4
    (notice,) = run["invocations"][0]["toolExecutionNotifications"]
    assert notice["message"]["text"].startswith("topolog: 4 results carry no proof tree")


def test_an_installed_rule_pack_is_named_inside_the_pack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An installed topolog's rules lie in site-packages, outside the repository under test."""
    site = tmp_path / "site-packages" / "verifier" / "rules"
    shutil.copytree(ROOT / "rules", site)
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)  # the repository CI checked out
    shutil.copy(ROOT / STRAY, work / "pod.yaml")
    monkeypatch.chdir(work)
    monkeypatch.setattr(sarif_report, "shipped_rules_dir", lambda: site)
    rules = ("--no-shipped-rules", "--rules", str(site / "schema.dl"), "--rules", str(site / "topology"))
    code, out, err = run_cli("verify", "pod.yaml", *rules, "--format", "sarif")
    assert code == 1, err
    assert str(tmp_path) not in out  # no path of this machine's disk
    run = json.loads(out)["runs"][0]
    (nic,) = [r for r in run["results"] if r["properties"]["subjects"] == ["stray-nic", "nic"]]
    assert nic["properties"]["proof"]["at"] == {
        "uri": "topology/TOPO003_device_outside_node.dl",
        "uriBaseId": "TOPOLOG_RULES",
        "line": 25,
        "column": 1,
    }
    # The thread keeps only repository files: here just the finding's own line.
    steps = nic["codeFlows"][0]["threadFlows"][0]["locations"]
    assert [s["location"]["physicalLocation"]["artifactLocation"]["uri"] for s in steps] == ["pod.yaml"]
    files = {rule["properties"]["file"] for rule in run["tool"]["driver"]["rules"]}
    assert files and all(f.startswith("TOPOLOG_RULES/topology/") for f in files)
    assert "TOPOLOG_RULES" in run["originalUriBaseIds"]


@pytest.mark.usefixtures("in_repo_root")
def test_the_cli_says_what_the_sarif_log_leaves_out(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sarif_report, "MAX_RESULTS", 2)
    sarif, report = tmp_path / "r.sarif", tmp_path / "r.json"
    code, _, err = run_cli("verify", STRAY, "--output", f"sarif={sarif}", "--output", f"json={report}")
    assert code == 1, err
    doc = json.loads(report.read_text(encoding="utf-8"))
    every = len(doc["findings"]) + len(doc["suppressed"])
    assert every > 2  # stray-devices.yaml: four errors at least (tests/cli/test_cli_verify.py lists them)
    assert f"topolog: the SARIF log holds 2 of {every} results (errors first); {every - 2} left out" in err
    assert len(json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]) == 2
