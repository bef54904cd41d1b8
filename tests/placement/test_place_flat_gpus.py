"""GPUs placed in their node by `parent:` keep their own ids, and place names them so (fixtures/flat_gpus.yaml).

A GPU written flat (`{name: fa, parent: f0}`) has the id `fa`, not `f0/fa`; node classes name it
by its whole id (verifier/facts/graph.py's local naming). Ranking once cut "f0/" off every id
blindly: the placements named GPUs that do not exist ("f0/", twice) and found no bottleneck.

By hand, from the fixture: f0 (fa-fd, flat) and n0 (n0/gpu0-gpu3, nested) are built alike, two
NVLink pairs of 6 NVLink 4 links (150 GB/s per direction) and every GPU on PCIe 5 x16 to its CPU
(16 x 3,938 = 63,008 MB/s).
- two-node: each node's first two GPUs by id, a NVLink pair: f0 fa+fb, n0 gpu0+gpu1, 150 GB/s
  each (a pair's worst: its 150 GB/s, which is also each GPU's scale-up links together); tied, so
  by name: f0 first.
- four-node: all four; fa and fc meet only over PCIe through the CPU: 63,008 MB/s, the worst pair.
- two-nvl: four NVLink domains of 2, each named by its smallest GPU id: fa (fa, fb), fc (fc, fd),
  n0/gpu0 and n0/gpu2, all at 150 GB/s, by name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "flat_gpus.yaml", HERE / "flat_gpus_jobs.yaml"

EXPECTED = {
    "two-node": [("f0", ("fa", "fb"), 150_000), ("n0", ("n0/gpu0", "n0/gpu1"), 150_000)],
    "four-node": [
        ("f0", ("fa", "fb", "fc", "fd"), 63_008),
        ("n0", ("n0/gpu0", "n0/gpu1", "n0/gpu2", "n0/gpu3"), 63_008),
    ],
    "two-nvl": [
        ("fa", ("fa", "fb"), 150_000),
        ("fc", ("fc", "fd"), 150_000),
        ("n0/gpu0", ("n0/gpu0", "n0/gpu1"), 150_000),
        ("n0/gpu2", ("n0/gpu2", "n0/gpu3"), 150_000),
    ],
}


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_flat_gpus_are_placed_under_their_own_ids(engine: str) -> None:
    report = place([INVENTORY], [JOBS], authorize=False, engine=engine)
    placed = {j.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in j.placements] for j in report.jobs}
    assert placed == EXPECTED
