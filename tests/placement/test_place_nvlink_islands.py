"""Members of NVLink domains that share a node and a placement profile (fixtures/two_islands.yaml).

A placement profile is a node's (model, memory, health, fabric, class, tag): n0's eight GPUs share
one. Scope nvlink_domain has two domains in n0, named by their smallest GPU id (scaleup_domain):
n0/gpu0 (gpu0-gpu3) and n0/gpu4 (gpu4-gpu7). By hand, a domain's members are the first eligible
GPUs by id among its own GPUs: two-nvl gets gpu0, gpu1 on n0/gpu0 and gpu4, gpu5 on n0/gpu4 (the
members once came from the whole node's profile: gpu0, gpu1 for both); three-nvl the first three
of each island; five-nvl fits neither island (4 GPUs each); five-node takes the node's first five,
gpu0-gpu4, across both islands. Bottleneck of a pair inside one island: its own 6 NVLink 4 links,
6 x 25 GB/s = 150 GB/s per direction (members route only through members: a pair has its direct
links alone). Every engine gives the same answers, and the CLI's JSON names the same members.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.placement.place import JobPlacements, PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "two_islands.yaml", HERE / "two_islands_jobs.yaml"


@pytest.fixture(scope="module", params=["memory", "duckdb", "pydatalog"])
def report(request: pytest.FixtureRequest) -> PlaceReport:
    return place([INVENTORY], [JOBS], authorize=False, engine=request.param)


def _job(report: PlaceReport, name: str) -> JobPlacements:
    (found,) = [j for j in report.jobs if j.job.name == name]
    return found


def test_each_island_places_on_its_own_gpus(report: PlaceReport) -> None:
    two = _job(report, "two-nvl")
    assert (two.candidates, two.hosting) == (2, 2)
    assert [(p.domain, p.gpus) for p in two.placements] == [
        ("n0/gpu0", ("n0/gpu0", "n0/gpu1")),
        ("n0/gpu4", ("n0/gpu4", "n0/gpu5")),
    ]
    assert [p.bottleneck_mbps for p in two.placements] == [150_000, 150_000]
    three = _job(report, "three-nvl")
    assert [(p.domain, p.gpus) for p in three.placements] == [
        ("n0/gpu0", ("n0/gpu0", "n0/gpu1", "n0/gpu2")),
        ("n0/gpu4", ("n0/gpu4", "n0/gpu5", "n0/gpu6")),
    ]


def test_an_island_too_small_and_the_node_scope(report: PlaceReport) -> None:
    five = _job(report, "five-nvl")
    assert (five.candidates, five.hosting, five.placements) == (2, 0, [])
    node = _job(report, "five-node")
    assert [(p.domain, p.gpus) for p in node.placements] == [("n0", tuple(f"n0/gpu{i}" for i in range(5)))]


def test_cli_json_names_each_islands_members() -> None:
    code, out, _err = run_cli("place", str(INVENTORY), str(JOBS), "--no-authorization", "--format", "json")
    assert code == 1  # five-nvl fits nowhere (PLACE001)
    doc = json.loads(out)
    (two,) = [j for j in doc["jobs"] if j["job"] == "two-nvl"]
    assert [p["gpus"] for p in two["placements"]] == [["n0/gpu0", "n0/gpu1"], ["n0/gpu4", "n0/gpu5"]]
