"""A Slurm job of N nodes with GPUs per node runs on N nodes, as sbatch allocates it (min_nodes).

`-N 2 --gpus-per-node=4` is 4 GPUs on each of 2 nodes: an 8-GPU node must not take both shares,
which max_nodes alone (the fullest nodes first) allowed. The inventory, by hand: rack r0 holds
n0 and n1 (8 H100-SXM5-80GB each) and n2 (2 of them); rack r1 holds n3 (8). No links, so no
bandwidth figures. Judged on each engine (the rules in rules/placement/lib/hosts.dl).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.placement.place import PlaceReport
from verifier.session.place_run import place
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

INVENTORY = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: spread}
objects:
  - name: r0
    kind: rack
    children:
      - {name: n0, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}]}
      - {name: n1, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}]}
      - {name: n2, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}]}
  - name: r1
    kind: rack
    children:
      - {name: n3, kind: node, children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}]}
"""

RULES = parse_rules(["account=Team"])


def _script(name: str, options: str) -> str:
    return f"#!/bin/bash\n#SBATCH -A research -J {name} {options}\nsrun python train.py\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "spread.yaml").write_text(INVENTORY)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "two.sh").write_text(_script("two", "-N 2 --gpus-per-node=4"))
    (jobs / "three.sh").write_text(_script("three", "-N 3 --gpus-per-node=2"))
    (jobs / "five.sh").write_text(_script("five", "-N 5 --gpus-per-node=1"))
    (jobs / "wide.sh").write_text(_script("wide", "-N 3 --gpus-per-node=4"))
    return tmp_path


def _placements(report: PlaceReport, name: str) -> list[tuple[str, tuple[str, ...], int]]:
    (job,) = [j for j in report.jobs if j.job.name == name]
    return [(p.domain, p.gpus, p.nodes) for p in job.placements]


def _why(report: PlaceReport, name: str) -> list[tuple[str, str, int, int]]:
    (job,) = [j for j in report.jobs if j.job.name == name]
    return [(w.domain, w.requirement, w.have, w.need) for w in job.why_not]


def test_the_slurm_reader_sets_the_node_count_both_ways() -> None:
    # -N 2 --gpus-per-node=4: 2 x 4 = 8 GPUs, on at most and at least 2 nodes.
    (job,) = read_jobs_text(_script("two", "-N 2 --gpus-per-node=4"), "two.sh", RULES)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (8, 2, 2)
    # -N 2 --ntasks-per-node=4 --gpus-per-task=1: 4 tasks x 1 GPU = 4 on each of 2 nodes, 8 GPUs.
    (job,) = read_jobs_text(_script("t", "-N 2 --ntasks-per-node=4 --gpus-per-task=1"), "t.sh", RULES)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (8, 2, 2)
    # -N 2 --ntasks=8 --gpus-per-task=1: the 8 tasks may sit unevenly on the 2 nodes: no least count.
    (job,) = read_jobs_text(_script("u", "-N 2 --ntasks=8 --gpus-per-task=1"), "u.sh", RULES)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (8, 2, None)
    # --gpus=8 alone: no node count at all; -N 1: one node (scope node), no bound needed.
    (job,) = read_jobs_text(_script("g", "--gpus=8"), "g.sh", RULES)
    assert (job.max_nodes, job.min_nodes) == (None, None)
    (job,) = read_jobs_text(_script("one", "-N 1 --gres=gpu:8"), "one.sh", RULES)
    assert (job.scope, job.max_nodes, job.min_nodes) == ("node", None, None)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_n_nodes_of_gpus_per_node_are_n_nodes(folder: Path, engine: str) -> None:
    report = place(
        [folder / "spread.yaml"], [folder / "jobs"], why_not=True, engine=engine, authorize=False, principal_from=RULES
    )
    # Scope any: one candidate domain, "inventory" (every GPU). Its nodes: n0 8, n1 8, n2 2, n3 8 GPUs.
    # two: 4 from each of 2 nodes holding 4: n0, n1 and n3 hold 8 (fullest first, ties by name):
    # n0 and n1, gpu0-gpu3 of each (never all 8 of n0, which max_nodes 2 alone took).
    ((domain, gpus, nodes),) = _placements(report, "two")
    assert domain == "inventory"
    assert gpus == tuple(f"n{n}/gpu{g}" for n in (0, 1) for g in range(4)) and nodes == 2
    # three: 2 from each of 3 nodes: n0, n1, n3 (8 each) before n2 (2).
    ((_d, gpus, nodes),) = _placements(report, "three")
    assert gpus == tuple(f"n{n}/gpu{g}" for n in (0, 1, 3) for g in range(2)) and nodes == 3
    # five: 5 nodes of 1 GPU; the inventory has 4 nodes: refused, 4 nodes hold 1 each < 5.
    assert _placements(report, "five") == []
    assert _why(report, "five") == [(domain, "min_nodes", 4, 5)]
    # wide: 3 nodes of 4: n0, n1, n3 hold 4 or more (n2's 2 do not): 3 nodes, 12 GPUs.
    ((_d, gpus, nodes),) = _placements(report, "wide")
    assert gpus == tuple(f"n{n}/gpu{g}" for n in (0, 1, 3) for g in range(4)) and nodes == 3
