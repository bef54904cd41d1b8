"""Review R-PJ round 61: a MIG job's why-not in a domain of several models, where the model that
gets furthest (place_why_kind) passes every stage and misses only a topology need, says that need
in that model's GPUs, not `one_model` with the numbers of the model with the most eligible GPUs
(place_kind) under the other model's name.

By hand (catalogue `mig`: 1g.10gb gives 7 instances on an A100-SXM4-80GB, 4 on an A100-SXM4-40GB).
Rack r0: nodes a0 and a1 hold 2 A100-SXM4-80GB each (4 in all), node b0 holds 6 A100-SXM4-40GB;
authorization off. Job m28: 28 instances of 1g.10gb on one node (max_nodes 1).
- 80GB: needs ceil(28 / 7) = 4 GPUs; its 4 pass every stage, but one node holds at most 2 of
  them: `max_nodes`, have 2, need 4. It gets furthest (every stage).
- 40GB: needs ceil(28 / 4) = 7 GPUs; 6 there: short of its count (a stage), and it has the most
  eligible GPUs (place_kind).
The why-not is the 80GB's: `r0: 1 node hold at most 2 A100-SXM4-80GB GPUs, job needs 4`, the same
as for a job that accepts the 80GB model alone. Before the fix the first requirement was
`one_model`, 6 of 7 (the 40GB's count and need) named A100-SXM4-80GB: a wrong sentence.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli


def _node(name: str, model: str, count: int) -> str:
    return f"""\
  {name}:
    kind: node
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
    + _node("a80", "A100-SXM4-80GB", 2)
    + _node("a40", "A100-SXM4-40GB", 6)
    + """\
objects:
  - name: r0
    kind: rack
    children:
      - {template: a80, name: "a{i}", count: 2}
      - {template: a40, name: b0}
"""
)

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: m28, principal: anyone, gpus: 28, gpu: {mig: 1g.10gb}, topology: {scope: rack, max_nodes: 1}}
  - name: m28a
    principal: anyone
    gpus: 28
    gpu: {mig: 1g.10gb, accepts: [A100-SXM4-80GB]}
    topology: {scope: rack, max_nodes: 1}
"""

SAID = "r0: 1 node hold at most 2 A100-SXM4-80GB GPUs, job needs 4"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_the_furthest_model_missing_a_topology_need_is_said_so(tmp_path: Path, engine: str) -> None:
    rack, jobs = tmp_path / "rack.yaml", tmp_path / "jobs.yaml"
    rack.write_text(RACK)
    jobs.write_text(JOBS)
    code, out, err = run_cli(
        "place", str(rack), str(jobs), "--why-not", "--no-authorization", "--format", "json", "--engine", engine
    )
    assert code == 1, err
    why = {j["job"]: j["why_not"] for j in json.loads(out)["jobs"]}
    for name in ("m28", "m28a"):
        assert [(w["requirement"], w["have"], w["need"], w["message"]) for w in why[name]] == [
            ("max_nodes", 2, 4, SAID)
        ], name


def test_verify_jobs_says_the_same(tmp_path: Path) -> None:
    rack, jobs = tmp_path / "rack.yaml", tmp_path / "jobs.yaml"
    rack.write_text(RACK)
    jobs.write_text(JOBS)
    code, out, err = run_cli("verify", str(rack), "--jobs", str(jobs), "--no-authorization", "--format", "json")
    assert code == 1, err
    place001 = [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "PLACE001"]
    assert len(place001) == 2
    assert all(f"Closest: {SAID}." in m for m in place001), place001
