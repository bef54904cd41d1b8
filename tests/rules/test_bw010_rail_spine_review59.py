"""Review 59 of FH's BW010: a one-tier rail fabric whose rail switches are labelled spines.

BW010 warns when a NIC labelled with a rail is cabled to a spine: the cable skips its rail's leaf.
A small fabric may have one tier only, one switch per rail, and an operator may label those
switches `role: spine` with their rail. Then the NIC lands on its own rail's switch and there is no
leaf of that rail to skip: no finding. Where leaves of the rail exist, a NIC on a spine labelled
with its rail still skips them: the warning stays.

Expected, by hand:
- one_tier: nodes n0, n1, NIC k (rail k) on switch swk (role spine, rail k), no leaf -> nothing.
- with_leaves: the same, plus leaf0 (role leaf, rail 0) cabled to sw0: rail 0 has a leaf, so
  n0/nic0 and n1/nic0 on sw0 skip it -> one BW010 (the template's two NICs of rail 0 on sw0);
  rail 1 has no leaf -> nothing for nic1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

ONE_TIER = """\
apiVersion: topolog.dev/v1
objects:
  - name: "n{i}"
    kind: node
    count: 2
    children:
      - {name: cpu0, kind: cpu}
      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2, labels: {rail: "{i}"}}
    links:
      - {a: "nic{i}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {i: [0, 1]}}
  - {name: "sw{i}", kind: switch, model: QM9700, count: 2, labels: {role: spine, rail: "{i}"}}
links:
  - {a: "n{n}/nic{r}", b: "sw{r}", kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: [0, 1], r: [0, 1]}}
"""

WITH_LEAF = """\
  - {name: leaf0, kind: switch, model: QM9700, labels: {role: leaf, rail: "0"}}
links:
  - {a: leaf0, b: sw0, kind: infiniband, bandwidth: 400 Gb/s}
"""


def _bw010(text: str, engine: str, tmp_path: Path) -> set[tuple[str, ...]]:
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {r.finding.subjects for r in report.results if r.finding.rule == "BW010"}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_one_tier_rail_switches_named_spines(engine: str, tmp_path: Path) -> None:
    assert _bw010(ONE_TIER, engine, tmp_path) == set()


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_a_leaf_of_the_rail_makes_the_spine_cable_a_skip(engine: str, tmp_path: Path) -> None:
    text = ONE_TIER.replace('links:\n  - {a: "n{n}', WITH_LEAF + '  - {a: "n{n}', 1)
    assert text.count("leaf0") == 2
    got = _bw010(text, engine, tmp_path)
    assert len(got) == 1
    (subjects,) = got
    assert {"n0/nic0", "n1/nic0", "sw0"} <= set(subjects)
    assert not {"n0/nic1", "n1/nic1", "sw1"} & set(subjects)
