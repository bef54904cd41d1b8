"""A MIG job's why-not in a domain of several models, and the layouts a model job lists, are those
of the model judged there, not of the model with the most eligible GPUs (round 61).

Why-not, by hand (catalogue `mig`: 1g.10gb gives 7 instances on an A100-SXM4-80GB, 4 on an
A100-SXM4-40GB). Rack r0: node a0 holds 4 A100-SXM4-80GB labelled tenant team-nlp (alice's, in
inventories/principals.yml), nodes b0 and b1 12 A100-SXM4-40GB labelled tenant team-vision.
policies/tenants.cedar lets a principal schedule on its own tenant's GPUs only. 40 instances need
ceil(40 / 7) = 6 80GB GPUs (4 there: short at the first stage, `gpus`) or ceil(40 / 4) = 10 40GB
GPUs (12 there, all pass until `authorization`, which leaves alice 0). The 40GB cards get further:
the why-not is the policy, counted in 40GB GPUs against their own need, 10 (not the 80GB's 6).
With the 40GB cards taken out by the job's `exclude: {tenant: team-vision}` instead, they stop at `excluded` (stage 7),
still after the 80GB's `gpus` (stage 1): the why-not is `excluded`, 0 of 10. A job that accepts
the 80GB model alone is judged on it: `gpus`, 4 of 6 (the 40GB cards are its own choice, not the
domain's shortfall).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


def _node(name: str, model: str, tenant: str, count: int) -> str:
    return f"""\
  {name}:
    kind: node
    labels: {{tenant: {tenant}}}
    children:
      - {{name: cpu0, kind: cpu}}
      - {{name: pcie0, kind: pcie_switch}}
      - {{name: "gpu{{i}}", kind: gpu, model: {model}, count: {count}}}
    links:
      - {{a: "gpu{{g}}", b: pcie0, kind: pcie, generation: 4, lanes: 16, foreach: {{g: 0..{count - 1}}}}}
      - {{a: pcie0, b: cpu0, kind: pcie, generation: 4, lanes: 16}}
"""


RACK = (
    "apiVersion: topolog.dev/v1\nkind: Inventory\ntemplates:\n"
    + _node("a80", "A100-SXM4-80GB", "team-nlp", 4)
    + _node("a40", "A100-SXM4-40GB", "team-vision", 6)
    + """\
objects:
  - name: r0
    kind: rack
    children:
      - {template: a80, name: a0}
      - {template: a40, name: "b{i}", count: 2}
"""
)

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: m40, principal: User::"alice", gpus: 40, gpu: {mig: 1g.10gb}, topology: {scope: rack}}
  - name: m40x
    principal: User::"alice"
    gpus: 40
    gpu: {mig: 1g.10gb}
    topology: {scope: rack}
    exclude: {tenant: team-vision}
  - name: m40a
    principal: User::"alice"
    gpus: 40
    gpu: {mig: 1g.10gb, accepts: [A100-SXM4-80GB]}
    topology: {scope: rack}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_mig_why_not_is_the_stage_the_furthest_model_stops_at(tmp_path: Path, engine: str) -> None:
    rack, jobs = tmp_path / "rack.yaml", tmp_path / "jobs.yaml"
    rack.write_text(RACK)
    jobs.write_text(JOBS)
    code, out, err = run_cli(
        "place", str(rack), str(jobs), "--why-not", "--format", "json", "--engine", engine,
        "--principals", str(ROOT / "inventories" / "principals.yml"), "--policies", str(ROOT / "policies"),
    )  # fmt: skip
    assert code == 1, err
    why = {j["job"]: j["why_not"] for j in json.loads(out)["jobs"]}
    assert [(w["requirement"], w["have"], w["need"]) for w in why["m40"]] == [("authorization", 0, 10)]
    assert "A100-SXM4-40GB" in why["m40"][0]["message"]
    assert "no policy permits alice" in why["m40"][0]["message"]
    assert [(w["requirement"], w["have"], w["need"]) for w in why["m40x"]] == [("excluded", 0, 10)]
    # A job accepting the 80GB cards alone is not judged on the 40GB ones it refused: 4 of 6, `gpus`.
    assert [(w["requirement"], w["have"], w["need"]) for w in why["m40a"]] == [("gpus", 4, 6)]


LLM = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: llm70
    principal: anyone
    gpus: 1
    topology: {scope: any}
    model: {parameters: 70B, weight_precision: fp16, kv_precision: fp16, layers: 80, attention_heads: 64,
            kv_heads: 8, head_dim: 128, context: 8192, batch: 4}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_model_job_lists_the_layout_of_the_model_it_runs_on(tmp_path: Path, engine: str) -> None:
    # mixed-fleet's one candidate domain at scope any hosts llm70 on a lone MI300X (192,000 MB:
    # 164,738 MB / 0.9 = 183,042 MB fits at TP=1, docs/placement.md; test_place_best_model_pl60).
    # Its A100 (80,000 MB, TP=4) are not where it runs: their layout is not the job's to show.
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(LLM)
    code, out, err = run_cli(
        "place", str(ROOT / "inventories" / "mixed-fleet.yaml"), str(jobs), "--no-authorization",
        "--format", "json", "--engine", engine, "--limit", "0",
    )  # fmt: skip
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    layouts = [line for line in job["model"]["derivation"] if line.startswith("layout on")]
    assert len(layouts) == 1
    assert layouts[0].startswith("layout on 192,000 MB GPUs: TP=1 x PP=1")
