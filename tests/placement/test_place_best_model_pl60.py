"""A job runs on one accelerator model; in a domain where several models can host it, `place`
offers the model an expert would pick under the chosen ranking (--rank bandwidth: the best
bottleneck; --rank cost: the cheapest), not the model with the most eligible GPUs (round 60).

Hand derivations, inventories/mixed-fleet.yaml with --no-authorization, pod eu-west:
- a100-n0/n1: 8 A100-SXM4-80GB each on NVSwitch (12 NVLink3 x 25 GB/s = 300 GB/s a GPU), 2 x
  100 Gb/s NICs a node, $1.60/h a GPU; h100-n0/n1: 8 H100-SXM5-80GB each on NVSwitch (450 GB/s a
  GPU), a 400 Gb/s NIC a GPU, $3.40/h; mi300x-n0/n1: 8 MI300X each in a full mesh of 64 GB/s
  links (7 peers: 448 GB/s a GPU, one peer: 64 GB/s), a 400 Gb/s NIC a GPU, $2.20/h; rtx-n0..3:
  2 RTX-4090 each (rtx-n2/gpu1 down: 7 in service), $0.45/h.
- 8 GPUs, no need: A100, H100 and MI300X have 16 eligible each and host it on one node. The count
  choice took A100 (first by name among equals): 300,000 MB/s. Ranked by bandwidth the best is
  H100 (450,000 > 448,000 > 300,000): h100-n0, the first H100 node by name.
- 2 GPUs, --rank cost: RTX hosts it too (2 on rtx-n0): 2 x $0.45 = $0.90/h = 90,000 millicents,
  the cheapest (A100 $3.20/h, MI300X $4.40/h, H100 $6.80/h).
- 8 GPUs needing 200 Gb/s a GPU, --rank cost: only H100 and MI300X have 400 Gb/s a GPU; MI300X
  costs 8 x $2.20 = $17.60/h = 1,760,000 millicents against H100's $27.20/h: mi300x-n0.
- what-if --fail h100-n0 --fail h100-n1 on the 8-GPU job: before h100-n0 (450,000); after, the
  next best model, MI300X on mi300x-n0 (448,000): slower.
- A 70B model (fp16: 140,000 MB of weights + 10,738 MB KV + 14,000 MB activations = 164,738 MB;
  / 0.9 = 183,042 MB a GPU at TP=1), 1 GPU asked: a 192,000 MB MI300X holds it at TP=1 (1 GPU);
  an 80,000 MB GPU needs TP=4 (TP=2: 91,521 MB a GPU). One GPU has no pair, so no bottleneck,
  and ranks first: mi300x-n0/gpu0 with the MI300X's layout (TP=1), not A100's TP=4.

MIG (fixture MIG_RACK below, rack r0): node big holds 4 A100-SXM4-80GB (1g.10gb: 7 a GPU), node
small 8 A100-SXM4-40GB (1g.10gb: 4 a GPU; catalogue `mig`). 60 instances: 80GB needs ceil(60/7)
= 9 GPUs of its 4, 40GB ceil(60/4) = 15 of its 8: no model hosts it; the domain is judged on the
model with the most eligible GPUs, A100-SXM4-40GB, 8 of 15. Counting all 12 GPUs against 15
GPUs of 40GB (the base's "12 GPUs, job needs 15") mixed units.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.placement.plain import is_plain
from verifier.reports.place_report import render_json
from verifier.service import placing
from verifier.service.config import ServeConfig
from verifier.service.revision import build_revision
from verifier.session.place_run import jobs_to_place
from verifier.sources.jobs.principal_rules import parse_rules

HERE = Path(__file__).resolve().parent
MIXED = HERE.parents[1] / "inventories" / "mixed-fleet.yaml"

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: any8, principal: anyone, gpus: 8, topology: {scope: any}}
  - {name: any2, principal: anyone, gpus: 2, topology: {scope: any}}
  - {name: fab8, principal: anyone, gpus: 8, topology: {scope: any, min_network_bandwidth: 200 Gb/s}}
  - name: llm70
    principal: anyone
    gpus: 1
    topology: {scope: any}
    model: {parameters: 70B, weight_precision: fp16, kv_precision: fp16, layers: 80, attention_heads: 64,
            kv_heads: 8, head_dim: 128, context: 8192, batch: 4}
"""

MIG_RACK = """\
apiVersion: topolog.dev/v1
templates:
  a80:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 4}
      - {name: nic0, kind: nic}
    links:
      - {a: "{d}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {d: [gpu0, gpu1, gpu2, gpu3, nic0]}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}
  a40:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-40GB, count: 8}
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
      - {template: a80, name: big}
      - {template: a40, name: small}
links:
  - {a: "{n}/nic0", b: leaf0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {n: [big, small]}}
"""

MIG_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: i60, principal: anyone, gpus: 60, gpu: {mig: 1g.10gb}, topology: {scope: rack}}
"""

# A rack of one HGX H100 node (8 H100-SXM5-80GB) and one server of 4 H100-PCIE-80GB cards.
# `accepts: [H100]` takes either model (family: name prefix), never both in one job: 12 GPUs are
# 8 of one model and 4 of the other, one_model 8 of 12 (docs/placement.md, fail closed).
SXM_PCIE = """\
apiVersion: topolog.dev/v1
templates:
  sxm:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..7}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
  cards:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: H100-PCIE-80GB, count: 4}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..3}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {name: r0, kind: rack, children: [{template: sxm, name: s0}, {template: cards, name: p0}]}
"""

SXM_PCIE_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: h12, principal: anyone, gpus: 12, gpu: {accepts: [H100]}, topology: {scope: rack}}
"""

ENGINES = ["memory", "duckdb", "pydatalog"]


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _place(inventory: Path, jobs: Path, *args: str) -> dict[str, Any]:
    code, out, err = run_cli(
        "place", str(inventory), str(jobs), "--why-not", "--no-authorization", "--format", "json", *args
    )
    assert code in (0, 1), err
    return {j["job"]: j for j in json.loads(out)["jobs"]}


def _best(job: dict[str, Any]) -> tuple[list[str], int | None, int | None]:
    first = job["placements"][0]
    return first["gpus"], first["bottleneck_mbps"], first["cost_millicents_per_hour"]


def _gpus(node: str, count: int) -> list[str]:
    return [f"{node}/gpu{g}" for g in range(count)]


@pytest.mark.parametrize("engine", ENGINES)
def test_ranked_by_bandwidth_the_model_with_the_best_members_hosts(tmp_path: Path, engine: str) -> None:
    by_job = _place(MIXED, _write(tmp_path, "jobs.yaml", JOBS), "--engine", engine)
    gpus, bottleneck, _cost = _best(by_job["any8"])
    assert (gpus, bottleneck) == (_gpus("h100-n0", 8), 450_000)
    gpus, bottleneck, _cost = _best(by_job["any2"])
    assert (gpus, bottleneck) == (_gpus("h100-n0", 2), 450_000)
    # A lone MI300X holds the 70B model at TP=1: the MI300X's layout is shown, not A100's TP=4.
    llm = by_job["llm70"]["placements"][0]
    assert (llm["gpus"], llm["bottleneck_mbps"], llm["layout"]["tp"]) == (["mi300x-n0/gpu0"], None, 1)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_ranked_by_cost_the_cheapest_hosting_model_hosts(tmp_path: Path, engine: str) -> None:
    by_job = _place(MIXED, _write(tmp_path, "jobs.yaml", JOBS), "--engine", engine, "--rank", "cost")
    gpus, _bw, cost = _best(by_job["any2"])
    assert (gpus, cost) == (_gpus("rtx-n0", 2), 90_000)
    gpus, _bw, cost = _best(by_job["fab8"])
    assert (gpus, cost) == (_gpus("mi300x-n0", 8), 1_760_000)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_failure_moves_the_job_to_the_next_best_model(tmp_path: Path, engine: str) -> None:
    jobs = _write(tmp_path, "jobs.yaml", JOBS.split("  - {name: any2,")[0])
    code, out, err = run_cli(
        "place", str(MIXED), str(jobs), "--no-authorization", "--engine", engine, "--format", "json",
        "--fail", "h100-n0", "--fail", "h100-n1",
    )  # fmt: skip
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    assert job["outcome"] == "slower"
    assert (job["before"]["gpus"], job["before"]["bottleneck_mbps"]) == (_gpus("h100-n0", 8), 450_000)
    assert (job["after"]["gpus"], job["after"]["bottleneck_mbps"]) == (_gpus("mi300x-n0", 8), 448_000)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_mig_why_not_counts_the_judged_model_and_names_it(tmp_path: Path, engine: str) -> None:
    by_job = _place(
        _write(tmp_path, "rack.yaml", MIG_RACK), _write(tmp_path, "jobs.yaml", MIG_JOBS), "--engine", engine
    )
    (why,) = by_job["i60"]["why_not"]
    assert (why["requirement"], why["have"], why["need"]) == ("gpus", 8, 15)
    assert why["message"] == "r0: 8 A100-SXM4-40GB GPUs, job needs 15"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_verify_quotes_the_mig_why_not_with_its_model_as_place_does(tmp_path: Path, engine: str) -> None:
    # Review R-PL of round 60: `verify --jobs` quotes the closest domain's why-not in PLACE001
    # ("Closest: ..."); without the model, "8 GPUs" read as the count of rack r0, which holds 12.
    rack, jobs = _write(tmp_path, "rack.yaml", MIG_RACK), _write(tmp_path, "jobs.yaml", MIG_JOBS)
    code, out, err = run_cli(
        "verify", str(rack), "--jobs", str(jobs), "--no-authorization", "--engine", engine, "--format", "json"
    )
    assert code == 1, err
    (place001,) = [f for f in json.loads(out)["findings"] if f["rule"] == "PLACE001"]
    assert place001["message"].endswith(" Closest: r0: 8 A100-SXM4-40GB GPUs, job needs 15.")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_sxm_and_pcie_cards_of_one_family_never_make_one_job(tmp_path: Path, engine: str) -> None:
    by_job = _place(
        _write(tmp_path, "rack.yaml", SXM_PCIE), _write(tmp_path, "jobs.yaml", SXM_PCIE_JOBS), "--engine", engine
    )
    assert by_job["h12"]["placements"] == []
    (why,) = by_job["h12"]["why_not"]
    assert (why["domain"], why["requirement"], why["have"], why["need"]) == ("r0", "one_model", 8, 12)


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_the_service_places_a_plain_job_on_the_best_model_as_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    # The A100 nodes relabelled to hana's tenant (team-vision): hana may then schedule on the A100
    # (tenant), H100 (tenant) and MI300X nodes (hpc, FP64 hardware; inventories/principals.yml,
    # policies/), 16 of each. A plain job (a count and a scope: verifier/placement/plain.py) of 8
    # GPUs goes to h100-n0 (450,000 MB/s), as `place` puts it, not to a100-n0 (most GPUs, by name).
    monkeypatch.setattr(placing, "ENGINE", engine)
    monkeypatch.setattr(placing, "ANSWERS", 0)
    inventory = copy_inputs(tmp_path / "inputs", "mixed-fleet.yaml")
    text = inventory.read_text()
    a100 = text.index("mf-hgx-a100:")
    tenant = text.index("labels: {tenant: team-nlp}", a100)
    assert tenant < text.index("mf-hgx-h100:")
    inventory.write_text(text[:tenant] + "labels: {tenant: team-vision}" + text[tenant + 26 :])
    revision = build_revision(ServeConfig((inventory,)))
    prepared = revision.placing.get()
    assert prepared is not None, revision.placing.error
    path = _write(
        tmp_path,
        "jobs.yaml",
        JOBS.split("  - {name: fab8,")[0].replace("principal: anyone", 'principal: User::"hana"'),
    )
    jobs = jobs_to_place([path], True, parse_rules(())).jobs
    assert all(is_plain(job) for job in jobs)
    report = prepared.place(jobs, 10)
    assert report is not None
    assert prepared.plain == 1
    answer = json.loads(render_json(report))
    code, out, err = run_cli("place", str(inventory), str(path), "--why-not", "--format", "json", "--limit", "10")
    assert code == 0, err
    assert answer == json.loads(out)
    by_job = {j["job"]: j for j in answer["jobs"]}
    assert _best(by_job["any8"])[:2] == (_gpus("h100-n0", 8), 450_000)
    assert _best(by_job["any2"])[:2] == (_gpus("h100-n0", 2), 450_000)
