"""Review of the merge of min_nodes (JS) and one model per job (PL), round 13 (RM).

A Slurm job's scope is `any`: the whole inventory is its one candidate domain, so in a fleet of
two models the domain is mixed and judged on one model (place_kind). That model was the one with
the most eligible GPUs; min_nodes (`-N K` with GPUs per node) was then judged on it alone, and a
model whose GPUs sit on fewer, fuller nodes refused a job the other model's nodes hold exactly as
sbatch would allocate it. Now a min_nodes job is judged on a model whose nodes take its K shares,
where one does (the most GPUs, then the smallest name, among those).

The inventory, by hand: rack r0 holds a0 (8 A100-SXM4-80GB), a1 (2 A100-SXM4-80GB), h0 and h1
(4 H100-SXM5-80GB each): 10 A100 on 2 nodes, 8 H100 on 2 nodes. Both models offer 3g.40gb at
2 instances per GPU (catalogue, NVIDIA's MIG user guide).
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
    (jobs / "four.sh").write_text(_script("four", "-N 2 --gpus-per-node=4"))
    (jobs / "pair.sh").write_text(_script("pair", "-N 2 --gpus-per-node=2"))
    (jobs / "mig.sh").write_text(_script("mig", "-N 2 --gres=gpu:3g.40gb:6"))
    (jobs / "wide.sh").write_text(_script("wide", "-N 3 --gpus-per-node=4"))
    (jobs / "plain.sh").write_text(_script("plain", "--gpus=8"))
    (jobs / "three.sh").write_text(_script("three", "-N 3 --gpus-per-node=3"))
    return tmp_path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_min_nodes_is_judged_on_a_model_whose_nodes_hold_the_shares(folder: Path, engine: str) -> None:
    report = place(
        [folder / "two.yaml"], [folder / "jobs"], why_not=True, engine=engine, authorize=False, principal_from=RULES
    )
    placed = {j.job.name: [(p.gpus, p.nodes) for p in j.placements] for j in report.jobs}
    why = {j.job.name: [(w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}
    said = {j.job.name: [w.message for w in j.why_not] for j in report.jobs}
    # four: 4 GPUs on each of 2 nodes. A100 has the most GPUs (10) but only a0 holds 4 (a1 has 2):
    # 1 node; H100's h0 and h1 hold 4 each: 2 nodes. Judged on H100: all of h0 and h1.
    # (Judged on A100, as the merge did: refused, "1 node hold 4 eligible GPUs each, job needs 2".)
    assert placed["four"] == [(_h("h0", 4) + _h("h1", 4), 2)]
    # pair: 2 GPUs on each of 2 nodes: both models' two nodes hold 2, so the most GPUs (A100, 10)
    # is the model, as before: the first 2 of a0 and of a1.
    assert placed["pair"] == [(_h("a0", 2) + _h("a1", 2), 2)]
    # mig: 6 x 3g.40gb on each of 2 nodes, 2 per GPU: ceil(6 / 2) = 3 GPUs per node. A100: a0 only
    # (a1 has 2); H100: h0 and h1 (4 each). Judged on H100: 3 GPUs of h0 and of h1.
    assert placed["mig"] == [(_h("h0", 3) + _h("h1", 3), 2)]
    # wide: 3 nodes of 4 GPUs: A100 has 1 such node, H100 2; neither model takes 3 shares, so the
    # domain is judged on the model with the most GPUs (A100, 10). 3 x 4 = 12 GPUs are needed:
    # 18 are eligible in all, 10 of A100, so it misses one_model (13) before min_nodes (19).
    assert placed["wide"] == []
    assert why["wide"] == [("one_model", 10, 12)]
    # plain: 8 GPUs, no node count: judged on the most GPUs (A100, 10): a0's 8 (fullest node first
    # is not asked; the member pick takes GPUs by name: a0/gpu0..7).
    assert placed["plain"] == [(_h("a0", 8), 1)]
    # three: 3 nodes of 3 GPUs (9): A100 has 1 such node (a0), H100 2 (h0, h1): neither model takes
    # 3 shares, so A100 (10 GPUs, >= 9) is judged and misses min_nodes with its 1 node.
    assert placed["three"] == []
    assert why["three"] == [("min_nodes", 1, 3)]
    assert said["three"] == ["inventory: 1 node holds 3 eligible GPUs each, job needs 3"]


# Two pods of 8 GPUs (a Kubeflow PyTorchJob: Master 1 + Worker 1, nvidia.com/gpu 8 each) are
# 16 GPUs on at most 2 nodes (max_nodes). The inventory, by hand: rack r0 holds h0 and h1 (8
# H100-SXM5-80GB each, 16) and w0..w9 (2 RTX-4090 each, 20): RTX-4090 has the most GPUs, but its 2
# fullest nodes hold 4; H100's 2 nodes hold 16.
WORKSTATIONS = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: trainandinfer}
objects:
  - name: r0
    kind: rack
    children:
      - {name: "h{i}", kind: node, count: 2, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}]}
      - {name: "w{i}", kind: node, count: 10, children: [{name: "gpu{i}", kind: gpu, model: RTX-4090, count: 2}]}
"""


def _pytorchjob(name: str, gpus: int, workers: int) -> str:
    pod = (
        "      template:\n        spec:\n          containers:\n            - name: pytorch\n              image: x\n"
        f"              resources: {{limits: {{nvidia.com/gpu: {gpus}}}}}\n"
    )
    return (
        "apiVersion: kubeflow.org/v1\nkind: PyTorchJob\n"
        f"metadata: {{name: {name}, namespace: research}}\nspec:\n  pytorchReplicaSpecs:\n"
        f"    Master:\n      replicas: 1\n{pod}    Worker:\n      replicas: {workers}\n{pod}"
    )


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_max_nodes_is_judged_on_a_model_whose_fullest_nodes_hold_the_pods(tmp_path: Path, engine: str) -> None:
    (tmp_path / "fleet.yaml").write_text(WORKSTATIONS)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "pair.yaml").write_text(_pytorchjob("pair", 8, 1))
    (jobs / "trio.yaml").write_text(_pytorchjob("trio", 8, 2))
    report = place(
        [tmp_path / "fleet.yaml"],
        [jobs],
        why_not=True,
        engine=engine,
        authorize=False,
        principal_from=parse_rules(["namespace=Team"]),
    )
    placed = {j.job.name: [p.gpus for p in j.placements] for j in report.jobs}
    why = {j.job.name: [(w.requirement, w.have, w.need) for w in j.why_not] for j in report.jobs}
    # pair: 16 GPUs on at most 2 nodes: RTX-4090's 2 fullest nodes hold 2 + 2 = 4 < 16; H100's
    # h0 + h1 hold 16: judged on H100, all of h0 and h1. (Judged on RTX-4090, the most GPUs, as the
    # merge did: refused, max_nodes 4 of 16.)
    assert placed["pair"] == [_h("h0", 8) + _h("h1", 8)]
    # trio: 24 GPUs on at most 3 nodes: H100 has 16 < 24, RTX-4090 6 on 3 nodes: neither holds it,
    # so the most GPUs (RTX-4090, 20) is judged: 20 < 24 of one model, 36 in all: one_model.
    assert placed["trio"] == []
    assert why["trio"] == [("one_model", 20, 24)]


# min_nodes is keyed (job, domain, model) like every other need (MG's merge): the same rack with
# h2 (1 H100-SXM5-80GB) added: 10 A100 on 2 nodes, 9 H100 on 3 nodes.
INVENTORY_H2 = (
    INVENTORY
    + '      - {name: h2, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 1}]}\n'
)


@pytest.fixture
def folder_h2(tmp_path: Path) -> Path:
    (tmp_path / "two.yaml").write_text(INVENTORY_H2)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "three.sh").write_text(_script("three", "-N 3 --gpus-per-node=2"))
    (jobs / "ones.sh").write_text(_script("ones", "-N 3 --gpus-per-node=1"))
    (jobs / "four.sh").write_text(_script("four", "-N 2 --gpus-per-node=4"))
    return tmp_path


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_min_nodes_is_keyed_by_model(folder_h2: Path, engine: str) -> None:
    report = place(
        [folder_h2 / "two.yaml"],
        [folder_h2 / "jobs"],
        why_not=True,
        engine=engine,
        authorize=False,
        principal_from=RULES,
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
