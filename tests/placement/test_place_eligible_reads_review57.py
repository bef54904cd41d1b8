"""Review 57: a job's eligible rows of nodes with several profiles are read node by node only
while such nodes are few (verifier/placement/place.py: _FEW_NODES). Each DuckDB query has a fixed
cost (about 3.7 M instructions, a statement and its result) that a re-read of every row of the job
pays once: at 32,768 GPUs with 30 nodes of a GPU down or labelled, reading them one by one (32 was
the limit) cost +556 M instructions a placement of 100 jobs (+7%), reading the job's rows whole +104 M.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verifier.engine.duckdb_backend import DuckDBBackend
from verifier.session.place_run import place

# 10 nodes of 4 GPUs on one NVSwitch; n1..n9 each have a GPU down: two profiles each (in service
# and down), nine nodes of several profiles, more than the few read node by node.
INVENTORY = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    price: $2.00/h
    children:
      - {name: nvsw0, kind: nvswitch}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, bandwidth: 450 GB/s, foreach: {g: 0..3}}
objects:
  - name: r0
    kind: rack
    children:
      - template: box
        name: "n{i}"
        count: 10
        overrides:
%s
"""
JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: one-node, principal: research, gpus: 2, topology: {scope: node}}
  - {name: one-rack, principal: research, gpus: 2, topology: {scope: rack}}
  - {name: one-island, principal: research, gpus: 2, topology: {scope: nvlink_domain}}
"""


def test_many_nodes_of_several_profiles_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    down = "          n{i}:\n            devices: {{gpu{g}: {{state: down}}}}"
    overrides = "\n".join(down.format(i=i, g=i % 4) for i in range(1, 10))
    inventory, jobs = tmp_path / "inv.yaml", tmp_path / "jobs.yaml"
    inventory.write_text(INVENTORY % overrides)
    jobs.write_text(JOBS)
    reads: dict[str, int] = {}
    query = DuckDBBackend.query

    def counted(self: DuckDBBackend, relation: str, bound: Any = None, *args: Any) -> Any:
        if relation == "place_eligible_profile" and bound:
            job = next(iter(v for v in bound.values()), None)
            reads[str(job)] = reads.get(str(job), 0) + 1
        return query(self, relation, bound, *args)

    monkeypatch.setattr(DuckDBBackend, "query", counted)
    report = place([inventory], [jobs], engine="duckdb", authorize=False)
    # Every job hosts: each node has 3 or 4 GPUs in service, each of 2 GPUs.
    assert all(jp.hosting for jp in report.jobs)
    # By hand: 9 nodes of several profiles are more than the few, so each job's rows are read at
    # most twice (its three columns, then whole), never once per node (10 reads and more).
    assert reads and max(reads.values()) <= 2, reads
