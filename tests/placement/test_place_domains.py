"""Candidate domains made of whole nodes and of GPUs outside nodes (tests/placement/fixtures/loose_gpus.yaml).

The rules count a rack's and a pod's GPUs per profile from their nodes' counts, and a GPU outside
nodes as a profile of its own (rules/placement/lib/candidates.dl, place_domain_profile). By hand,
from the fixture's comment: scope any has two domains, pod p0 (n0/gpu0, n0/gpu1, g9 in r0, g8: 4
GPUs) and "inventory" (the GPUs outside every pod: g7 and n5/gpu0, 2 GPUs); scope rack one, r0 (n0's
two GPUs and g9: 3); scope node two, n0 (2 GPUs) and n5 (1); scope nvlink_domain six, one per GPU
(no links). Every engine gives the same answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module", params=["memory", "duckdb"])
def report(request: pytest.FixtureRequest) -> PlaceReport:
    jobs = [HERE / "loose_gpus_jobs.yaml"]
    return place([HERE / "loose_gpus.yaml"], jobs, why_not=True, authorize=False, engine=request.param)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    (found,) = [j for j in report.jobs if j.job.name == name]
    return found


def test_scope_any_counts_the_pod_and_what_lies_outside_every_pod(report: PlaceReport) -> None:
    one, two, three = (_job(report, n) for n in ("one-any", "two-any", "three-any"))
    assert (one.candidates, one.hosting, two.candidates, two.hosting) == (2, 2, 2, 2)
    # Members are the first eligible GPUs by id: g8 and g9 sort before n0/...; g7 before n5/gpu0.
    # Each placement spans two machines (a GPU outside nodes is one of its own) joined by no link:
    # bottleneck 0, 2 nodes, a tie that the domains' names break ("inventory" < "p0").
    assert [(p.domain, p.gpus, p.nodes, p.bottleneck_mbps) for p in two.placements] == [
        ("inventory", ("g7", "n5/gpu0"), 2, 0),
        ("p0", ("g8", "g9"), 2, 0),
    ]
    # 3 GPUs: p0's 4 hold them, "inventory" has 2.
    assert (three.candidates, three.hosting) == (2, 1)
    assert [(p.domain, p.gpus) for p in three.placements] == [("p0", ("g8", "g9", "n0/gpu0"))]
    assert [w.message for w in three.why_not] == ["inventory: 2 GPUs, job needs 3"]


def test_a_rack_counts_its_nodes_and_the_gpus_straight_in_it(report: PlaceReport) -> None:
    rack = _job(report, "three-rack")
    assert (rack.candidates, rack.hosting) == (1, 1)
    assert [(p.domain, p.gpus) for p in rack.placements] == [("r0", ("g9", "n0/gpu0", "n0/gpu1"))]


def test_nodes_and_single_gpu_nvlink_domains(report: PlaceReport) -> None:
    node = _job(report, "two-node")
    assert (node.candidates, node.hosting) == (2, 1)
    assert [p.domain for p in node.placements] == ["n0"]
    assert [w.message for w in node.why_not] == ["n5: 1 GPU, job needs 2"]
    nvl = _job(report, "one-nvl")
    assert (nvl.candidates, nvl.hosting) == (6, 6)
    assert sorted(p.domain for p in nvl.placements) == ["g7", "g8", "g9", "n0/gpu0", "n0/gpu1", "n5/gpu0"]
