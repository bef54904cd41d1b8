"""Review of min_nodes (R-JS, round 13): a Slurm MIG job of `-N K` with instances per node.

`#SBATCH -N 2 --gres=gpu:3g.40gb:1` asks for one 3g.40gb instance on each of 2 nodes (sbatch(1):
--gres is per node). The job counts instances (2), and the rules' need in GPUs was
ceil(2 / 2 instances per GPU) = 1 GPU: a share of 1 / 2 = 0 GPUs per node, so every node "held"
it and the member pick fell back to one GPU on one node, a placement Slurm never makes.
The inventory, by hand: one rack holding n0 and n1, 8 A100-SXM4-80GB each (7 x 1g.10gb,
2 x 3g.40gb per GPU, as the catalogue lists them). Judged on each engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place
from verifier.sources.jobs.principal_rules import parse_rules

INVENTORY = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: migspread}
objects:
  - name: r0
    kind: rack
    children:
      - {name: n0, kind: node, children: [{name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 8}]}
      - {name: n1, kind: node, children: [{name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 8}]}
"""

RULES = parse_rules(["account=Team"])


def _script(name: str, options: str) -> str:
    return f"#!/bin/bash\n#SBATCH -A research -J {name} {options}\nsrun python train.py\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "mig.yaml").write_text(INVENTORY)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "one.sh").write_text(_script("one", "-N 2 --gres=gpu:3g.40gb:1"))
    (jobs / "three.sh").write_text(_script("three", "-N 2 --gres=gpu:3g.40gb:3"))
    (jobs / "small.sh").write_text(_script("small", "-N 2 --gres=gpu:1g.10gb:3"))
    (jobs / "wide.sh").write_text(_script("wide", "-N 3 --gres=gpu:3g.40gb:3"))
    return tmp_path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_mig_instances_per_node_take_n_nodes(folder: Path, engine: str) -> None:
    report = place(
        [folder / "mig.yaml"], [folder / "jobs"], why_not=True, engine=engine, authorize=False, principal_from=RULES
    )
    placed = {j.job.name: [(p.gpus, p.nodes) for p in j.placements] for j in report.jobs}
    why = {j.job.name: [(w.requirement, w.have, w.need, w.message) for w in j.why_not] for j in report.jobs}
    # one: 1 instance on each of 2 nodes: one GPU of n0 and one of n1 (first by name), 2 nodes.
    assert placed["one"] == [(("n0/gpu0", "n1/gpu0"), 2)]
    # three: 3 instances per node, 2 per GPU: ceil(3 / 2) = 2 GPUs on each node, 4 GPUs.
    assert placed["three"] == [(("n0/gpu0", "n0/gpu1", "n1/gpu0", "n1/gpu1"), 2)]
    # small: 3 x 1g.10gb per node, 7 per GPU: 1 GPU on each node.
    assert placed["small"] == [(("n0/gpu0", "n1/gpu0"), 2)]
    # wide: 3 nodes asked, the inventory has 2 (each holds the 2 GPUs of 3 instances): refused,
    # the share named in instances (9 instances / 3 nodes), not as GPUs.
    assert placed["wide"] == []
    assert why["wide"] == [("min_nodes", 2, 3, "inventory: 2 nodes hold 3 MIG 3g.40gb instances each, job needs 3")]
