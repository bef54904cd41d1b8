"""max_nodes and min_gpu_bandwidth judged exactly on uneven nodes (tests/placement/fixtures/uneven.yaml).

Rack r0: n0 has 4 eligible GPUs, n1 and n2 have 2 each (two GPUs down, different ones).
Inside a node every pair meets at 450 GB/s on the NVSwitch; across nodes a pair crosses the
fabric, where each GPU has 12.5 GB/s: its node's one 400 Gb/s (50 GB/s) NIC is shared by the node's
4 GPUs, all under its PCIe switch (verifier/facts/nic_share.py; the Gen5 x16 path, 63 GB/s, is wider).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def report() -> PlaceReport:
    return place([HERE / "uneven.yaml"], [HERE / "uneven_jobs.yaml"], why_not=True, authorize=False)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    return next(j for j in report.jobs if j.job.name == name)


def test_max_nodes_counts_the_fullest_nodes(report: PlaceReport) -> None:
    six = _job(report, "two-nodes-6")  # 4 + 2 from the two fullest nodes
    (p,) = six.placements
    assert p.nodes == 2 and p.gpus == ("n0/gpu0", "n0/gpu1", "n0/gpu2", "n0/gpu3", "n1/gpu0", "n1/gpu1")
    seven = _job(report, "two-nodes-7")  # 4 + 2 = 6 < 7 (a fullest-node-times-2 bound would say 8)
    assert seven.placements == []
    assert [(w.requirement, w.have, w.need) for w in seven.why_not] == [("max_nodes", 6, 7)]
    assert seven.why_not[0].message == "r0: 2 nodes hold at most 6 GPUs, job needs 7"


def test_min_pair_bandwidth_inside_and_across_nodes(report: PlaceReport) -> None:
    inside = _job(report, "pairs-in-node")  # 4 GPUs fit n0: every pair on the NVSwitch
    (p,) = inside.placements
    assert p.nodes == 1 and p.bottleneck_mbps == 450_000
    across = _job(report, "pairs-across")  # 6 GPUs span nodes: pairs cross the fabric at 50000 / 4 GPUs
    assert across.placements == []
    assert [(w.requirement, w.have, w.need) for w in across.why_not] == [("min_pair_mbps", 12_500, 100_000)]
    slow = _job(report, "pairs-across-slow")  # 10 GB/s asked: each GPU's 12.5 GB/s share will do
    (q,) = slow.placements
    assert q.nodes == 2 and q.bottleneck_mbps == 12_500


def test_identical_nodes_with_different_gpus_down(report: PlaceReport) -> None:
    per_node = _job(report, "per-node")
    assert [(p.domain, p.gpus) for p in per_node.placements] == [
        ("n0", ("n0/gpu0", "n0/gpu1")),
        ("n1", ("n1/gpu0", "n1/gpu1")),
        ("n2", ("n2/gpu2", "n2/gpu3")),
    ]
    assert {p.bottleneck_mbps for p in per_node.placements} == {450_000}


def test_reference_engine_agrees(report: PlaceReport) -> None:
    from verifier.reports.place_report import render_json

    reference = place(
        [HERE / "uneven.yaml"], [HERE / "uneven_jobs.yaml"], why_not=True, engine="pydatalog", authorize=False
    )
    assert render_json(reference) == render_json(report)


def test_every_requirement_has_its_own_sentence() -> None:
    """Each stage of rules/placement/ and each topology need is worded; none falls to the generic line."""
    import re

    from verifier.placement.place import why_not_message
    from verifier.sources.jobs.loader import load_jobs

    text = (HERE.parents[2] / "rules" / "placement" / "lib" / "candidates.dl").read_text()
    stages = re.findall(r'^place_stage\(\d+, "(\w+)"\)\.', text, re.M)
    assert len(stages) == 12
    job = next(iter(load_jobs([HERE / "uneven_jobs.yaml"])))
    for what in [*stages, "max_nodes", "min_fabric_mbps", "min_pair_mbps", "layout_mixed"]:
        message = why_not_message(job, "r0", what, 3, 7)
        assert message.startswith("r0: ") and f"{what} 3" not in message, what
