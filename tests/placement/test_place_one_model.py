"""A job runs on one accelerator model: `place` never mixes models (or vendors) in one placement.

docs/placement.md ("One model per job") and rules/placement/lib/never.dl say a job runs on one
kind of accelerator: its ranks run one build (CUDA or ROCm) and a step waits for the slowest rank.
A domain holding eligible GPUs of several models is judged on one of them (place_kind: the model
with the most eligible GPUs, the smallest name among equals); a domain that has enough eligible
GPUs only by mixing models is short at `one_model`, so the job is PLACE001 with that reason.

Hand derivation on fixtures/one_model.yaml (one rack r0): h100-0, h100-1 hold 4 H100-SXM5-80GB
each (8), mi-0, mi-1 4 MI300X each with mi-1/gpu3 down (7 in service), a100-0 4 A100-SXM4-80GB
(4): 19 GPUs in service, 8 at most of one model. Jobs of scope rack, no authorization asked:

- eight: 8 GPUs; H100 has 8 (the most): the two H100 nodes. The start commit placed it on
  a100-0 and h100-0 (A100 with H100 in one job).
- twelve: 12; 19 in service, but the most of one model is 8: one_model, have 8, need 12.
- twenty: 20; only 19 are in service: the stage `healthy` (19 of 20) comes first.
- nvidia-ten: accepts the vendor nvidia: H100 8 and A100 4, 12 of one vendor, 8 of one
  model: one_model, have 8, need 10. One vendor is not enough: one model.
- amd-seven: accepts amd: the 7 MI300X in service, mi-0's 4 and mi-1's gpu0-gpu2.
- two-nodes: 8 on at most 2 nodes: H100's two nodes hold 4 + 4 = 8: the two H100 nodes.
- nine-on-three: 9 on at most 3 nodes: any three nodes of all models hold 12, but H100 has 8
  GPUs: one_model (8 of 9), judged before max_nodes.

--fail h100-0/gpu0 leaves H100 7 and MI300X 7 (a tie: H100-SXM5-80GB < MI300X by name), so
eight loses its placement (before: the two H100 nodes) and amd-seven keeps its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.reports.place_report import render_json
from verifier.service import placing
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision
from verifier.session.place_run import jobs_to_place
from verifier.sources.jobs.principal_rules import parse_rules

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
FLEET = HERE / "fixtures" / "one_model.yaml"
MIXED = REPO / "inventories" / "mixed-fleet.yaml"

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: eight, principal: anyone, gpus: 8, topology: {scope: rack}}
  - {name: twelve, principal: anyone, gpus: 12, topology: {scope: rack}}
  - {name: twenty, principal: anyone, gpus: 20, topology: {scope: rack}}
  - {name: nvidia-ten, principal: anyone, gpus: 10, gpu: {accepts: [nvidia]}, topology: {scope: rack}}
  - {name: amd-seven, principal: anyone, gpus: 7, gpu: {accepts: [amd]}, topology: {scope: rack}}
  - {name: two-nodes, principal: anyone, gpus: 8, topology: {scope: rack, max_nodes: 2}}
  - {name: nine-on-three, principal: anyone, gpus: 9, topology: {scope: rack, max_nodes: 3}}
"""

H100 = [f"h100-{n}/gpu{g}" for n in (0, 1) for g in range(4)]
MI300X = [*(f"mi-0/gpu{g}" for g in range(4)), *(f"mi-1/gpu{g}" for g in range(3))]


def _place(inventory: Path, jobs: Path, *extra: str) -> dict[str, Any]:
    code, out, err = run_cli("place", str(inventory), str(jobs), "--why-not", "--format", "json", *extra)
    assert code in (0, 1), err
    return {j["job"]: j for j in json.loads(out)["jobs"]}


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    path = tmp_path / "jobs.yaml"
    path.write_text(JOBS)
    return path


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_a_placement_holds_one_model_and_mixing_is_why_not(jobs: Path, engine: str) -> None:
    by_job = _place(FLEET, jobs, "--no-authorization", "--engine", engine)
    assert by_job["eight"]["placements"][0]["gpus"] == H100
    assert by_job["amd-seven"]["placements"][0]["gpus"] == MI300X
    assert by_job["two-nodes"]["placements"][0]["gpus"] == H100
    why = {
        name: [(w["domain"], w["requirement"], w["have"], w["need"]) for w in j["why_not"]]
        for name, j in by_job.items()
        if not j["placeable"]
    }
    assert why == {
        "twelve": [("r0", "one_model", 8, 12)],
        "twenty": [("r0", "healthy", 19, 20)],
        "nvidia-ten": [("r0", "one_model", 8, 10)],
        "nine-on-three": [("r0", "one_model", 8, 9)],
    }
    message = by_job["twelve"]["why_not"][0]["message"]
    assert message == "r0: 8 GPUs of its most eligible model (a job runs on one accelerator model), job needs 12"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_verify_reports_place001_for_a_job_that_fits_only_by_mixing(jobs: Path, engine: str) -> None:
    code, out, err = run_cli(
        "verify", str(FLEET), "--jobs", str(jobs), "--no-authorization", "--engine", engine, "--format", "json"
    )
    assert code == 1, err
    found = json.loads(out)["findings"]
    assert sorted(f["subjects"][0] for f in found if f["rule"] == "PLACE001") == [
        "nine-on-three",
        "nvidia-ten",
        "twelve",
        "twenty",
    ]


def test_a_failed_gpu_leaves_no_model_enough_and_the_job_loses_its_placement(jobs: Path) -> None:
    code, out, err = run_cli(
        "place", str(FLEET), str(jobs), "--no-authorization", "--fail", "h100-0/gpu0", "--format", "json"
    )
    assert code == 1, err
    outcome = {j["job"]: j["outcome"] for j in json.loads(out)["jobs"]}
    assert outcome["eight"] == "loses"
    assert outcome["amd-seven"] == "unchanged"


# The shipped mixed fleet (inventories/mixed-fleet.yaml, principals.yml): hana may schedule on
# h100-n0, h100-n1 (8 H100-SXM5-80GB each) and mi300x-n0, mi300x-n1 (8 MI300X each), one pod
# eu-west: 32 GPUs, 16 of each model. The start commit placed 24 on 16 H100 and 8 MI300X.
MIXED_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: hana-24, principal: User::"hana", gpus: 24, topology: {scope: any}}
  - {name: hana-16, principal: User::"hana", gpus: 16, topology: {scope: any}}
"""


def test_the_mixed_fleet_places_no_job_on_two_vendors(tmp_path: Path) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_text(MIXED_JOBS)
    by_job = _place(MIXED, path)
    (why,) = by_job["hana-24"]["why_not"]
    assert (why["domain"], why["requirement"], why["have"], why["need"]) == ("eu-west", "one_model", 16, 24)
    # 16 of each model: a tie, H100-SXM5-80GB before MI300X by name; both H100 nodes whole.
    (best,) = by_job["hana-16"]["placements"][:1]
    assert best["gpus"] == [f"h100-n{n}/gpu{g}" for n in (0, 1) for g in range(8)]


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_the_service_plain_path_answers_one_model_as_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    # verifier/placement/plain.py judges these jobs without the rules: the same answer as place.
    monkeypatch.setattr(placing, "ENGINE", engine)
    monkeypatch.setattr(placing, "ANSWERS", 0)
    revision = build_revision(ServeConfig((copy_inputs(tmp_path / "inputs", "mixed-fleet.yaml"),)))
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    path = tmp_path / "jobs.yaml"
    path.write_text(MIXED_JOBS)
    before = prepared.plain
    report = prepared.place(jobs_to_place([path], True, parse_rules(())).jobs, 10)
    assert report is not None
    assert prepared.plain == before + 1  # judged as plain jobs, without the rules
    answer = json.loads(render_json(report))
    assert answer == json.loads(
        run_cli("place", str(revision.inputs.paths[0]), str(path), "--why-not", "--format", "json", "--limit", "10")[1]
    )
    why = {j["job"]: [(w["requirement"], w["have"], w["need"]) for w in j["why_not"]] for j in answer["jobs"]}
    assert why == {"hana-24": [("one_model", 16, 24)], "hana-16": []}
