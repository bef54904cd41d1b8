"""Review (round 59) of one model per job (6dd41e0, 586ba3a): the model a domain of several models
is judged on was chosen by GPU count alone, before the job's topology needs. A job that one model
alone meets got a false PLACE001 when another model of the domain had more GPUs but missed a need
(max_nodes, min_network_bandwidth, min_gpu_bandwidth). Every model of such a domain is now judged
apart, and the domain hosts the job on the model that meets every need.

Hand derivations:

- inventories/mixed-fleet.yaml, pod eu-west, no authorization: 16 A100-SXM4-80GB (a100-n0, a100-n1:
  8 GPUs and 2 x 100 Gb/s NICs each, 25 Gb/s a GPU), 16 H100-SXM5-80GB (h100-n0, h100-n1: 8 GPUs and
  8 x 400 Gb/s NICs each, 400 Gb/s a GPU), 16 MI300X (8 GPUs and 8 x 400 Gb/s each, 400 Gb/s a GPU),
  8 RTX-4090 (rtx-n0..3: 2 GPUs and one 100 Gb/s NIC each, 50 Gb/s a GPU). A job of 16 GPUs that
  needs 200 Gb/s a GPU: A100 and RTX miss it; H100 and MI300X have 16 each that meet it, the same
  count, so the smaller name, H100-SXM5-80GB: h100-n0 and h100-n1 whole. The count-first choice
  took A100 (16, tied with H100 and MI300X, first by name) and refused the pod (min_fabric_mbps, 0).
  The same job of 8 GPUs: one H100 node, h100-n0 (fewest nodes, first by name).
- fixture below, rack r0: h100-0..2 with 4 H100-SXM5-80GB each (12), a100-0 with 8 A100-SXM4-80GB.
  A job of 8 GPUs on at most 1 node: H100 has the most GPUs (12) but at most 4 on a node; A100's
  one node holds 8: a100-0/gpu0..gpu7. The count-first choice refused r0 (max_nodes, 4 of 8).
  A job of 8 GPUs on at most 1 node that accepts only H100 stays refused: max_nodes, 4 of 8.
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
MIXED = HERE.parents[1] / "inventories" / "mixed-fleet.yaml"

RACK = """\
apiVersion: topolog.dev/v1
templates:
  h100:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: nic0, kind: nic}
    links:
      - {a: "{d}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {d: [gpu0, gpu1, gpu2, gpu3, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
  a100:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 8}
      - {name: nic0, kind: nic}
    links:
      - {a: "{d}", b: pcie0, kind: pcie, generation: 4, lanes: 16,
         foreach: {d: [gpu0, gpu1, gpu2, gpu3, gpu4, gpu5, gpu6, gpu7, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}
objects:
  - name: r0
    kind: rack
    children:
      - {name: leaf0, kind: switch, labels: {role: leaf}}
      - {template: h100, name: "h100-{i}", count: 3}
      - {template: a100, name: a100-0}
links:
  - {a: "{n}/nic0", b: leaf0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: [h100-0, h100-1, h100-2, a100-0]}}
"""

RACK_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: one-node, principal: anyone, gpus: 8, topology: {scope: rack, max_nodes: 1}}
  - {name: h100-one-node, principal: anyone, gpus: 8, gpu: {accepts: [H100]}, topology: {scope: rack, max_nodes: 1}}
"""

MIXED_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: fast-16, principal: anyone, gpus: 16, topology: {scope: any, min_network_bandwidth: 200 Gb/s}}
  - {name: fast-8, principal: anyone, gpus: 8, topology: {scope: any, min_network_bandwidth: 200 Gb/s}}
"""


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _place(inventory: Path, jobs: Path, engine: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "place", str(inventory), str(jobs), "--why-not", "--no-authorization", "--engine", engine, "--format", "json"
    )
    assert code in (0, 1), err
    return {j["job"]: j for j in json.loads(out)["jobs"]}


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_less_numerous_model_that_meets_the_fabric_hosts_the_job(tmp_path: Path, engine: str) -> None:
    by_job = _place(MIXED, _write(tmp_path, "jobs.yaml", MIXED_JOBS), engine)
    assert by_job["fast-16"]["why_not"] == []
    assert by_job["fast-16"]["placements"][0]["gpus"] == [f"h100-n{n}/gpu{g}" for n in (0, 1) for g in range(8)]
    assert by_job["fast-8"]["placements"][0]["gpus"] == [f"h100-n0/gpu{g}" for g in range(8)]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_less_numerous_model_on_one_node_hosts_a_max_nodes_job(tmp_path: Path, engine: str) -> None:
    by_job = _place(_write(tmp_path, "rack.yaml", RACK), _write(tmp_path, "jobs.yaml", RACK_JOBS), engine)
    assert by_job["one-node"]["placements"][0]["gpus"] == [f"a100-0/gpu{g}" for g in range(8)]
    (why,) = by_job["h100-one-node"]["why_not"]
    assert (why["domain"], why["requirement"], why["have"], why["need"]) == ("r0", "max_nodes", 4, 8)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_verify_raises_no_place001_for_a_job_one_model_meets(tmp_path: Path, engine: str) -> None:
    jobs = _write(tmp_path, "jobs.yaml", MIXED_JOBS)
    code, out, err = run_cli(
        "verify", str(MIXED), "--jobs", str(jobs), "--no-authorization", "--engine", engine, "--format", "json"
    )
    assert code in (0, 1), err
    assert [f for f in json.loads(out)["findings"] if f["rule"] == "PLACE001"] == []


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_the_service_places_a_topology_job_on_one_model_as_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    # A job with min_network_bandwidth is no plain job (verifier/placement/plain.py): the service
    # evaluates the rules with its facts and ranks as `place` does; the same answer as the CLI.
    monkeypatch.setattr(placing, "ENGINE", engine)
    monkeypatch.setattr(placing, "ANSWERS", 0)
    revision = build_revision(ServeConfig((copy_inputs(tmp_path / "inputs", "mixed-fleet.yaml"),)))
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    path = _write(tmp_path, "jobs.yaml", MIXED_JOBS.replace("principal: anyone", 'principal: User::"hana"'))
    report = prepared.place(jobs_to_place([path], True, parse_rules(())).jobs, 10)
    assert report is not None
    answer = json.loads(render_json(report))
    code, out, err = run_cli(
        "place", str(revision.inputs.paths[0]), str(path), "--why-not", "--format", "json", "--limit", "10"
    )
    assert code in (0, 1), err
    assert answer == json.loads(out)
    # hana may schedule on the H100 and MI300X nodes only (inventories/principals.yml): 16 of each
    # meet 200 Gb/s a GPU, H100-SXM5-80GB first by name: both H100 nodes whole.
    by_job = {j["job"]: j for j in answer["jobs"]}
    assert by_job["fast-16"]["placements"][0]["gpus"] == [f"h100-n{n}/gpu{g}" for n in (0, 1) for g in range(8)]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_model_with_the_best_members_is_placed_not_the_most_numerous(tmp_path: Path, engine: str) -> None:
    # Rack r0 above, 8 GPUs, no topology need, ranked by bandwidth: H100 (12 GPUs, 4 a node) and
    # A100 (8, one node) both host it. A100's 8 sit in a100-0 behind one PCIe Gen4 x16 switch:
    # 31,504 MB/s between any two. H100's 8 span two nodes, 4 GPUs on one 400 Gb/s NIC each:
    # 50,000 / 4 = 12,500 MB/s a GPU. The start commit (every model's GPUs judged together) placed
    # it on a100-0, one model; the count-first choice placed it on h100-0 + h100-1 (12,500); the
    # best-ranked model's members (place.py's _Picker._choose_kinds) are a100-0's again.
    jobs = _write(
        tmp_path,
        "jobs.yaml",
        RACK_JOBS.split("  - {name: one-node,")[0]
        + "  - {name: eight, principal: anyone, gpus: 8, topology: {scope: rack}}\n",
    )
    by_job = _place(_write(tmp_path, "rack.yaml", RACK), jobs, engine)
    best = by_job["eight"]["placements"][0]
    assert (best["gpus"], best["bottleneck_mbps"]) == ([f"a100-0/gpu{g}" for g in range(8)], 31504)
