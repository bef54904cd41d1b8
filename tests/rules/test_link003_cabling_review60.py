"""LINK003 (a NIC with no fabric link) on nodes of one template whose cables are written one per
line (review R-FP60 of fe71348, which dropped the node column so that the same NIC left out on every
node of a type read as one finding).

A missing cable has no line of its own, so the grouping of findings (verifier/checks/verify.py)
could only see that the NICs come from one template line and are wired by the same PCIe line: with
no node column, NICs of different nodes whose cables were left out one by one merged into one
finding (two different NICs of two machines in the worst case), and a waiver naming one of them
waived the other machine's missing cable too. Each node's missing cable stays a finding of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

# Template t: a CPU and two NICs, both NICs on the CPU by one PCIe line. Three nodes t0..t2 from one
# `count:` line, two leaves, and every cable written on a line of its own: t0 has both, t1 lacks
# nic1's and t2 lacks nic0's (MISSING_APART), or t1 and t2 both lack nic1's (MISSING_SAME).
HEAD = """apiVersion: topolog.dev/v1
templates:
  t:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "nic{i}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {i: [0, 1]}}
objects:
  - {template: t, name: "t{i}", count: 3}
  - {name: "leaf{i}", kind: switch, count: 2, labels: {role: leaf}}
links:
  - {a: t0/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}
  - {a: t0/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}
"""
MISSING_APART = HEAD + (
    "  - {a: t1/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
    "  - {a: t2/nic1, b: leaf1, kind: infiniband, bandwidth: 400 Gb/s}\n"
)
MISSING_SAME = HEAD + (
    "  - {a: t1/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
    "  - {a: t2/nic0, b: leaf0, kind: infiniband, bandwidth: 400 Gb/s}\n"
)
WAIVER = """waivers:
  - rule: LINK003
    subject: t1/nic1
    reason: cable on order for t1 only
    expires: 2099-12-31
"""


def _link003(tmp_path: Path, text: str, engine: str, *extra: str) -> list[tuple[list[str], bool]]:
    inv = tmp_path / "inv.yaml"
    inv.write_text(text, encoding="utf-8")
    code, out, err = run_cli("verify", str(inv), "--format", "json", "--engine", engine, *extra)
    assert code in (0, 1), err
    doc = json.loads(out)
    rows = [(f["subjects"], False) for f in doc["findings"] if f["rule"] == "LINK003"]
    rows += [(f["subjects"], True) for f in doc.get("suppressed", []) if f["rule"] == "LINK003"]
    return sorted(rows)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_two_nics_of_two_nodes_left_out_one_by_one_are_two_findings(tmp_path: Path, engine: str) -> None:
    # By hand: t1 and t2 each have one cabled NIC (so a fabric) and one without: t1/nic1 and
    # t2/nic0, two cables missing from two lines of their own, two findings.
    assert _link003(tmp_path, MISSING_APART, engine) == [(["t1/nic1"], False), (["t2/nic0"], False)]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_same_nic_left_out_on_two_nodes_one_by_one_is_two_findings(tmp_path: Path, engine: str) -> None:
    # By hand: t1/nic1 and t2/nic1 lack their cables, each node's written apart: two findings.
    assert _link003(tmp_path, MISSING_SAME, engine) == [(["t1/nic1"], False), (["t2/nic1"], False)]


def test_a_waiver_of_one_nodes_missing_cable_leaves_the_other_nodes_reported(tmp_path: Path) -> None:
    # By hand: the waiver names t1/nic1 only; t2/nic0 is another machine's missing cable and stays
    # an unwaived error (it was waived with it when the two merged into one finding).
    (tmp_path / "w.yaml").write_text(WAIVER, encoding="utf-8")
    rows = _link003(tmp_path, MISSING_APART, "memory", "--waivers", str(tmp_path / "w.yaml"))
    assert rows == [(["t1/nic1"], True), (["t2/nic0"], False)]
