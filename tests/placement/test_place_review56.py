"""Review (round 56) of place_host reading place_topology_short (438c830): jobs that ask for max_nodes,
min_fabric_mbps and min_pair_mbps together, each need missed alone and all at once, judged alike with
and without --why-not (a placement evaluates no *_ok relation, a why-not does), on both engines.

uneven.yaml (tests/placement/test_place_topology.py's docstring): rack r0's eligible GPUs per node
are n0 4, n1 2, n2 2 (8 in all); inside a node every pair meets at 450 GB/s on the NVSwitch;
each GPU's share of the fabric is 12.5 GB/s (12,500 MB/s: its node's one 50 GB/s NIC over 4 GPUs).
By hand, scope rack (one candidate, r0):
- all-met, 6 GPUs: max_nodes 2 -> the two fullest nodes hold 4 + 2 = 6 >= 6; 100 Gb/s = 12,500 MB/s,
  which all 8 GPUs reach (8 >= 6); 6 > 4 (the fullest node) spans nodes, so the worst pair is
  min(450,000, 12,500) = 12,500 >= 10,000. Hosts: n0's four GPUs and n1's gpu0, gpu1 (fullest first,
  then by name), 2 nodes, bottleneck 12,500.
- nodes-short, 7 GPUs: 6 < 7 for max_nodes 2 (the fabric 8 >= 7, the pair 12,500 >= 10,000 hold).
- fabric-short: 800 Gb/s = 100,000 MB/s, which no GPU reaches: 0 < 6 (max_nodes 3 holds 8).
- pair-short: 100 GB/s asked, the worst pair is 12,500 (max_nodes 2 holds 6 >= 6).
- all-short: all three missed; the why-not names the first judged, max_nodes (6 of 7).

alike.yaml (its header): n3's gpu1 lost its NVSwitch link and is an NVLink domain of its own, one
GPU with no pair; n1's gpu3 is down (a domain of its own with none in service); every other
domain's eligible GPUs pair at 450 GB/s. A 1-GPU job asking 1000 GB/s between its GPUs is hosted
only by n3/gpu1 (no pair figure: nothing to miss); the others miss min_pair_mbps (450,000 <
1,000,000) and n1/gpu3 the healthy stage (0 of 1).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"

RACK_JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: all-met, principal: anyone, gpus: 6,
     topology: {scope: rack, max_nodes: 2, min_network_bandwidth: 100 Gb/s, min_gpu_bandwidth: 10 GB/s}}
  - {name: nodes-short, principal: anyone, gpus: 7,
     topology: {scope: rack, max_nodes: 2, min_network_bandwidth: 100 Gb/s, min_gpu_bandwidth: 10 GB/s}}
  - {name: fabric-short, principal: anyone, gpus: 6,
     topology: {scope: rack, max_nodes: 3, min_network_bandwidth: 800 Gb/s}}
  - {name: pair-short, principal: anyone, gpus: 6, topology: {scope: rack, max_nodes: 2, min_gpu_bandwidth: 100 GB/s}}
  - {name: all-short, principal: anyone, gpus: 7,
     topology: {scope: rack, max_nodes: 2, min_network_bandwidth: 800 Gb/s, min_gpu_bandwidth: 100 GB/s}}
"""

ALONE_JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: lone-pairless, principal: anyone, gpus: 1, topology: {scope: nvlink_domain, min_gpu_bandwidth: 1000 GB/s}}
"""


def _placed(report: PlaceReport) -> dict[str, list[tuple[str, tuple[str, ...], int, int | None]]]:
    return {jp.job.name: [(p.domain, p.gpus, p.nodes, p.bottleneck_mbps) for p in jp.placements] for jp in report.jobs}


def _both(inventory: Path, jobs: Path, engine: str) -> PlaceReport:
    """--why-not's report, after checking that a plain place hosts and ranks exactly as it does."""
    plain = place([inventory], [jobs], authorize=False, engine=engine)
    why = place([inventory], [jobs], why_not=True, authorize=False, engine=engine)
    assert _placed(plain) == _placed(why)
    assert [jp.hosting for jp in plain.jobs] == [jp.hosting for jp in why.jobs]
    return why


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_topology_needs_together_and_alone(tmp_path: Path, engine: str) -> None:
    jobs = tmp_path / "rack_jobs.yaml"
    jobs.write_text(RACK_JOBS)
    report = _both(HERE / "uneven.yaml", jobs, engine)
    n0 = ("n0/gpu0", "n0/gpu1", "n0/gpu2", "n0/gpu3")
    assert _placed(report) == {
        "all-met": [("r0", (*n0, "n1/gpu0", "n1/gpu1"), 2, 12_500)],
        "nodes-short": [],
        "fabric-short": [],
        "pair-short": [],
        "all-short": [],
    }
    why = {jp.job.name: [(w.domain, w.requirement, w.have, w.need) for w in jp.why_not] for jp in report.jobs}
    assert why == {
        "all-met": [],
        "nodes-short": [("r0", "max_nodes", 6, 7)],
        "fabric-short": [("r0", "min_fabric_mbps", 0, 6)],
        "pair-short": [("r0", "min_pair_mbps", 12_500, 100_000)],
        "all-short": [("r0", "max_nodes", 6, 7)],
    }
    # Every candidate is either a host or explained.
    assert all(jp.candidates == jp.hosting + len(jp.why_not) == 1 for jp in report.jobs)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_domain_with_no_pair_meets_min_pair(tmp_path: Path, engine: str) -> None:
    jobs = tmp_path / "alone_jobs.yaml"
    jobs.write_text(ALONE_JOBS)
    (jp,) = _both(HERE / "alike.yaml", jobs, engine).jobs
    assert [(p.domain, p.gpus, p.bottleneck_mbps) for p in jp.placements] == [("n3/gpu1", ("n3/gpu1",), None)]
    assert [(w.domain, w.requirement, w.have, w.need) for w in jp.why_not] == [
        ("n0/gpu0", "min_pair_mbps", 450_000, 1_000_000),
        ("n1/gpu0", "min_pair_mbps", 450_000, 1_000_000),
        ("n1/gpu3", "healthy", 0, 1),
        ("n2/gpu0", "min_pair_mbps", 450_000, 1_000_000),
        ("n3/gpu0", "min_pair_mbps", 450_000, 1_000_000),
        ("n4/gpu0", "min_pair_mbps", 450_000, 1_000_000),
    ]
    assert jp.candidates == 7 and jp.hosting == 1
