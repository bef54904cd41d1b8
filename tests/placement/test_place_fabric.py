"""Scope any never places a job across fabric islands, nor on a node off the fabric with others
(tests/placement/fixtures/islands.yaml, derived by hand in its comments and below).

Pod p0: n0 reaches island leaf0 (leaf0 + spine0), n1 island leaf1 (leaf1 + spine1): one node
each, so the main island is the smaller id, leaf0, and n1 forms a domain of its own named leaf1;
n2 has NICs and no cable, a domain named n2. Pod p1 is a rail-only fabric: m0 and m1 both reach
islands leaf2 and leaf3, the main island (leaf2, the smaller of two reached by 2 nodes each) among
them, so p1 stays one domain of 8 GPUs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module", params=[False, True], ids=["gpus-only", "whole-inventory"])
def report(request: pytest.FixtureRequest) -> PlaceReport:
    # Both ways of loading the inventory: placement reads only GPUs and their ancestors unless a job
    # asks for rail alignment; the islands come from graph facts, which see every cable either way.
    whole: bool = request.param
    jobs = [HERE / "islands_jobs.yaml"]
    return place([HERE / "islands.yaml"], jobs, why_not=True, authorize=False, whole_inventory=whole)


def test_eight_gpus_span_two_nodes_of_one_island_only(report: PlaceReport) -> None:
    (eight,) = [j for j in report.jobs if j.job.name == "eight"]
    # p0 would have 12 GPUs, but n0, n1 and n2 reach no common island: 4 GPUs per domain there.
    assert [(p.domain, p.nodes) for p in eight.placements] == [("p1", 2)]
    assert sorted(w.message for w in eight.why_not) == [
        "leaf1: 4 GPUs, job needs 8",
        "n2: 4 GPUs, job needs 8",
        "p0: 4 GPUs, job needs 8",
    ]


def test_a_node_on_its_own_still_takes_a_job_that_fits_it(report: PlaceReport) -> None:
    (four,) = [j for j in report.jobs if j.job.name == "four"]
    assert sorted(p.domain for p in four.placements) == ["leaf1", "n2", "p0", "p1"]
    assert {p.nodes for p in four.placements} == {1}
