"""A GPU's placement figures are its model's, but for the quantities it has of its own
(rules/placement/lib/candidates.dl: place_model_figures once per model, place_gpu_figures per GPU).

tests/placement/fixtures/own_memory.yaml: node n0, four H100-SXM5-80GB (catalogue: 80 GB at
3.35 TB/s, full-rate FP64); gpu1 has its own memory bandwidth, 1 TB/s (its size the model's,
80 GB), gpu2 its own size, 40 GB (its bandwidth the model's, 3.35 TB/s).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_own_quantities_win_over_the_model(engine: str) -> None:
    report = place(
        [HERE / "own_memory.yaml"], [HERE / "own_memory_jobs.yaml"], engine=engine, why_not=True, authorize=False
    )
    got = {
        jp.job.name: (
            [(p.domain, p.gpus) for p in jp.placements],
            [(w.requirement, w.have, w.need) for w in jp.why_not],
        )
        for jp in report.jobs
    }
    n0 = [f"n0/gpu{i}" for i in range(4)]
    # fast-3, 3 GPUs at 3 TB/s or more: gpu1 (1 TB/s, its own) fails; gpu0, gpu2 (the model's 3.35
    # TB/s beside its own 40 GB) and gpu3 are the members.
    assert got["fast-3"] == ([("n0", (n0[0], n0[2], n0[3]))], [])
    # big-fast-3 adds 80 GB: gpu2 (40 GB) fails the memory stage, then gpu1 the bandwidth stage,
    # where 2 GPUs are left of the 3 it needs.
    assert got["big-fast-3"] == ([], [("hbm_bandwidth", 2, 3)])
    # fp64-4, 4 GPUs with full-rate FP64, 40 GB and 1 TB/s: every GPU, gpu1 and gpu2 included (a GPU
    # with a quantity of its own still has its model's FP64).
    assert got["fp64-4"] == ([("n0", tuple(n0))], [])
    # big-2, 2 GPUs of 80 GB: gpu1 has its model's 80 GB beside its own bandwidth; first by name.
    assert got["big-2"] == ([("n0", (n0[0], n0[1]))], [])
