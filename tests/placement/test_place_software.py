"""Placement reads the software compatibility table: a node's cuda label is not enough, its
driver must be new enough for the CUDA release the job asks for (verifier/sources/inventory/software.yaml)."""

from __future__ import annotations

from pathlib import Path

from verifier.session.place_run import place

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: good
    kind: node
    software: {driver: "550.54.14", cuda: "12.4"}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
  # Claims CUDA 12.4, but CUDA 12.4 needs driver >= 550.54.14.
  - name: stale
    kind: node
    software: {driver: "535.129.03", cuda: "12.4"}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
  # ROCm on NVIDIA GPUs (SW002): its rocm label does not make it a ROCm node.
  - name: foreign
    kind: node
    software: {rocm: "6.1.2"}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
  # MI300X needs ROCm >= 6.0 (SW003).
  - name: old-rocm
    kind: node
    software: {rocm: "5.7.1"}
    children:
      - {name: gpu0, kind: gpu, model: MI300X}
  - name: amd
    kind: node
    software: {rocm: "6.1.2"}
    children:
      - {name: gpu0, kind: gpu, model: MI300X}
"""

JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: cuda-job
    principal: User::"hana"
    gpus: 1
    topology: {scope: node}
    software: {cuda: ">=12.4"}
  - name: rocm-job
    principal: User::"hana"
    gpus: 1
    topology: {scope: node}
    software: {rocm: ">=5.7"}
"""


def test_driver_and_stack_decide_with_the_labels(tmp_path: Path) -> None:
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    (tmp_path / "jobs.yaml").write_text(JOBS)
    for engine in ("duckdb", "pydatalog"):
        report = place([tmp_path / "inv.yaml"], [tmp_path / "jobs.yaml"], why_not=True, engine=engine, authorize=False)
        cuda, rocm = report.jobs
        assert [p.domain for p in cuda.placements] == ["good"]
        assert {w.domain: (w.requirement, w.have, w.need) for w in cuda.why_not} == {
            "stale": ("software", 0, 1),
            "foreign": ("software", 0, 1),
            "old-rocm": ("software", 0, 1),
            "amd": ("software", 0, 1),
        }
        assert next(w.message for w in cuda.why_not if w.domain == "stale") == (
            "stale: 0 GPUs on nodes with the software (cuda>=12.4), job needs 1"
        )
        assert [p.domain for p in rocm.placements] == ["amd"]
        assert {w.domain for w in rocm.why_not} == {"good", "stale", "foreign", "old-rocm"}


VOLTA = """apiVersion: topolog.dev/v1
objects:
  # Claims CUDA 13.0 on a Volta V100: SW006 (13.0 removed sm_70), so nothing built with 13.x runs here.
  - name: volta13
    kind: node
    software: {driver: "580.65.06", cuda: "13.0"}
    children:
      - {name: gpu0, kind: gpu, model: V100-SXM3-32GB}
  - name: volta12
    kind: node
    software: {driver: "580.65.06", cuda: "12.9"}
    children:
      - {name: gpu0, kind: gpu, model: V100-SXM3-32GB}
  - name: hopper13
    kind: node
    software: {driver: "580.65.06", cuda: "13.0"}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
"""

VOLTA_JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {name: j13, principal: User::"hana", gpus: 1, topology: {scope: node}, software: {cuda: ">=13"}}
  - {name: j12, principal: User::"hana", gpus: 1, topology: {scope: node}, software: {cuda: ">=12.4"}}
"""


def test_cuda_13_job_not_placed_on_a_volta(tmp_path: Path) -> None:
    # j13: hopper13 only. volta12 has CUDA 12.9 < 13; volta13's 13.0 is a toolkit with no sm_70
    # code (SW006's table: 13.0 dropped Volta), so a job needing >= 13 cannot run there.
    # j12 (>= 12.4): every node's label meets it (12.9 and 13.0, drivers 580 >= 12.4's 550.54.14);
    # a 12.x build still has Volta code, so volta13 stays a host for it.
    (tmp_path / "inv.yaml").write_text(VOLTA)
    (tmp_path / "jobs.yaml").write_text(VOLTA_JOBS)
    for engine in ("duckdb", "pydatalog", "memory"):
        report = place([tmp_path / "inv.yaml"], [tmp_path / "jobs.yaml"], why_not=True, engine=engine, authorize=False)
        j13, j12 = report.jobs
        assert [p.domain for p in j13.placements] == ["hopper13"], engine
        assert {w.domain: w.requirement for w in j13.why_not} == {"volta12": "software", "volta13": "software"}
        assert sorted(p.domain for p in j12.placements) == ["hopper13", "volta12", "volta13"], engine
