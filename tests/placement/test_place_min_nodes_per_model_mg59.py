"""min_nodes judged per model of a mixed domain (merge of JS's min_nodes onto R-PL's per-model
hosts.dl, round 13, MG): place_nodes_holding_m / place_nodes_spread_m are keyed (job, domain,
model) like every other need, so a model hosts a Slurm `-N K` job only where K of its own nodes
each hold the share, and why-not names the judged model's shortfall.

The inventory, by hand: rack r0 holds a0 (8 A100-SXM4-80GB), a1 (2 A100-SXM4-80GB), h0 and h1
(4 H100-SXM5-80GB each), h2 (1 H100-SXM5-80GB): 10 A100 on 2 nodes, 9 H100 on 3 nodes.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place
from verifier.sources.jobs.principal_rules import parse_rules

INVENTORY = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: twomodels}
objects:
  - name: r0
    kind: rack
    children:
      - {name: a0, kind: node, children: [{name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 8}]}
      - {name: a1, kind: node, children: [{name: "gpu{i}", kind: gpu, model: A100-SXM4-80GB, count: 2}]}
      - {name: h0, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}]}
      - {name: h1, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}]}
      - {name: h2, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 1}]}
"""

RULES = parse_rules(["account=Team"])


def _script(name: str, options: str) -> str:
    return f"#!/bin/bash\n#SBATCH -A research -J {name} {options}\nsrun python train.py\n"


def _h(node: str, count: int) -> tuple[str, ...]:
    return tuple(f"{node}/gpu{i}" for i in range(count))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(INVENTORY)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "three.sh").write_text(_script("three", "-N 3 --gpus-per-node=2"))
    (jobs / "ones.sh").write_text(_script("ones", "-N 3 --gpus-per-node=1"))
    (jobs / "four.sh").write_text(_script("four", "-N 2 --gpus-per-node=4"))
    return tmp_path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_min_nodes_is_keyed_by_model(folder: Path, engine: str) -> None:
    report = place(
        [folder / "two.yaml"], [folder / "jobs"], why_not=True, engine=engine, authorize=False, principal_from=RULES
    )
    placed = {j.job.name: [(p.gpus, p.nodes) for p in j.placements] for j in report.jobs}
    why = {j.job.name: [(w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}
    # three: 2 GPUs on each of 3 nodes (6 GPUs). A100: a0 (8) and a1 (2) hold 2: 2 nodes. H100: h0
    # and h1 hold 2, h2 has 1: 2 nodes. The A100 and H100 nodes together are 4 nodes holding 2, but
    # a job runs on one model, so no model hosts it. Both models have >= 6 eligible GPUs (no
    # one_model); the model judged is the most numerous (A100, 10 against 9), and min_nodes (19)
    # names its 2 nodes of the 3 needed.
    assert placed["three"] == []
    assert why["three"] == [("min_nodes", 2, 3)]
    # ones: 1 GPU on each of 3 nodes. A100 has only 2 nodes; H100's h0, h1 and h2 each hold 1: the
    # domain hosts on H100 although A100 has more GPUs; fullest nodes first (h0, h1: 4 each, then
    # h2): gpu0 of each.
    assert placed["ones"] == [(_h("h0", 1) + _h("h1", 1) + _h("h2", 1), 3)]
    # four: 4 on each of 2 nodes: only H100's h0 and h1 hold 4 (A100: a0 alone), so all of h0 and h1.
    assert placed["four"] == [(_h("h0", 4) + _h("h1", 4), 2)]
