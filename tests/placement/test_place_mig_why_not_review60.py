"""Review R-PL of round 60 (9a890dc): a MIG job's why-not in a domain of several models is
counted on one model only (place_why_kind: the model with the most eligible GPUs), so a domain
whose other model would host the job but for a policy no longer says so.

Rack r0 by hand: node a0 holds 8 A100-SXM4-80GB labelled tenant team-nlp, nodes h0 and h1 16
H100-SXM5-80GB labelled tenant team-vision. alice is in team-nlp (inventories/principals.yml);
policies/tenants.cedar lets a principal schedule on its own tenant's GPUs only. 1g.10gb gives 7
instances a GPU on both models (catalogue `mig`), so 70 instances need ceil(70 / 7) = 10 GPUs of
either. A100: 8 < 10 whatever the policies say. H100: 16 >= 10 up to the authorization stage,
where alice keeps 0 of them. What stands between alice and r0 is the policy (16 H100 would host
the job), as the same job without MIG (10 GPUs) is told: the why-not is `authorization`, as the
base (4e8c06c) said. 9a890dc says `gpus`: "r0: 8 A100-SXM4-80GB GPUs, job needs 10".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

RACK = """\
apiVersion: topolog.dev/v1
kind: Inventory
templates:
  a80:
    kind: node
    labels: {tenant: team-nlp}
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 8}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {g: 0..7}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}
  h100:
    kind: node
    labels: {tenant: team-vision}
    children:
      - {name: cpu0, kind: cpu}
      - {name: pcie0, kind: pcie_switch}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}
    links:
      - {a: "gpu{g}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..7}}
      - {a: pcie0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - name: r0
    kind: rack
    children:
      - {template: a80, name: a0}
      - {template: h100, name: "h{i}", count: 2}
"""

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: m70, principal: User::"alice", gpus: 70, gpu: {mig: 1g.10gb}, topology: {scope: rack}}
  - {name: p10, principal: User::"alice", gpus: 10, topology: {scope: rack}}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_mig_job_kept_off_a_model_by_a_policy_is_told_so(tmp_path: Path, engine: str) -> None:
    rack, jobs = tmp_path / "rack.yaml", tmp_path / "jobs.yaml"
    rack.write_text(RACK)
    jobs.write_text(JOBS)
    code, out, err = run_cli(
        "place", str(rack), str(jobs), "--why-not", "--format", "json", "--engine", engine,
        "--principals", str(ROOT / "inventories" / "principals.yml"), "--policies", str(ROOT / "policies"),
    )  # fmt: skip
    assert code == 1, err
    why = {j["job"]: j["why_not"] for j in json.loads(out)["jobs"]}
    # Without MIG the domain is judged on every stage's whole count: authorization leaves 8 of 10.
    assert [(w["requirement"], w["have"], w["need"]) for w in why["p10"]] == [("authorization", 8, 10)]
    (mig,) = why["m70"]
    assert mig["requirement"] == "authorization"
    assert "no policy permits alice" in mig["message"]
