"""A profile's GPUs read on demand, and a node's only profile judged by its class (fixtures/one_class_one_down.yaml).

`place` reads the placement profiles with their GPU counts (place_node_profile) and a profile's
GPUs only when ranking asks (verifier/placement/profile_gpus.py). The only profile of a node holds
every GPU of the node, which its node class names; a node with more profiles has its GPUs read.

By hand, from the fixture: n0 and n1 are built alike (one class: n1's gpu1 is drained, not down, so
its links still count). n0's four GPUs share one profile; n1's gpu1 is out of service, so n1 has two
profiles: gpu0, gpu2, gpu3 (in service) and gpu1 (not).
- two-node (2 GPUs, scope node): n0 takes gpu0, gpu1; n1 takes its first two in service, gpu0 and
  gpu2 (not gpu1, as n0's class would say). Each pair has its own 6 NVLink 4 links: 6 x 25 GB/s =
  150 GB/s per direction.
- four-node (4 GPUs): only n0 (n1 has three in service); each member reaches the three others at
  150 GB/s each, 450 GB/s together, as much as its scale-up links together (3 x 150): 450 GB/s.
- two-nvl (2 GPUs, scope nvlink_domain): each node's four GPUs are one NVLink domain, named by its
  smallest GPU id: n0/gpu0 with gpu0, gpu1 and n1/gpu0 with gpu0, gpu2, at 150 GB/s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verifier.engine.ast import Program
from verifier.engine.backend import Backend
from verifier.facts.graph import NodePairs
from verifier.placement import profile_gpus
from verifier.placement.place import PlaceReport, Profiles
from verifier.placement.profile_gpus import GpusByProfile
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "one_class_one_down.yaml", HERE / "one_class_one_down_jobs.yaml"

EXPECTED = {
    "two-node": [("n0", ("n0/gpu0", "n0/gpu1"), 150_000), ("n1", ("n1/gpu0", "n1/gpu2"), 150_000)],
    "four-node": [("n0", ("n0/gpu0", "n0/gpu1", "n0/gpu2", "n0/gpu3"), 450_000)],
    "two-nvl": [("n0/gpu0", ("n0/gpu0", "n0/gpu1"), 150_000), ("n1/gpu0", ("n1/gpu0", "n1/gpu2"), 150_000)],
}


def _placed(report: PlaceReport) -> dict[str, list[tuple[str, tuple[str, ...], int | None]]]:
    return {j.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in j.placements] for j in report.jobs}


@pytest.mark.parametrize("engine", ["memory", "duckdb", "pydatalog"])
def test_a_node_of_the_same_class_with_a_gpu_drained_places_on_its_own_gpus(engine: str) -> None:
    assert _placed(place([INVENTORY], [JOBS], authorize=False, engine=engine)) == EXPECTED


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What each Profiles built while placing holds, compared with every GPU's profile read at once."""
    seen: list[dict[str, Any]] = []
    init = Profiles.__init__

    def spied(self: Profiles, engine: Backend, program: Program, pairs: NodePairs, on_demand: bool = False) -> None:
        init(self, engine, program, pairs, on_demand)
        every = GpusByProfile(engine, program, self.key_columns)
        seen.append(
            {
                "on_demand": on_demand,
                "same_class": pairs.class_of["n0"] == pairs.class_of["n1"],
                "counts": dict(self.count_of) == {k: len(v) for k, v in every.items()},
                "lists": {k: self.by_profile[k] for k in self.by_profile} == dict(every.items()),
                "info": list(self.info.values()),
            }
        )

    monkeypatch.setattr(Profiles, "__init__", spied)
    return seen


def test_read_on_demand_or_all_at_once_the_lists_are_every_gpus(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy(monkeypatch)
    assert _placed(place([INVENTORY], [JOBS], authorize=False, engine="duckdb")) == EXPECTED
    (one,) = seen
    assert one["on_demand"] and one["same_class"] and one["counts"] and one["lists"]
    # n0's only profile is named by its class, n1's by their GPUs: every profile has a local id,
    # and n0's is none of n1's (n1's in-service profile holds gpu0, gpu2, gpu3, not n0's four).
    ids = {node: {lid for n, lid, _c, _k in one["info"] if n == node} for node in ("n0", "n1")}
    assert len(ids["n0"]) == 1 and len(ids["n1"]) == 2 and None not in ids["n0"] | ids["n1"]
    assert not ids["n0"] & ids["n1"]


def test_past_the_limit_every_gpu_is_read_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # No node read alone: the first profile asked for reads every GPU's, and the answers hold.
    monkeypatch.setattr(profile_gpus, "READ_ALONE", 0)
    seen = _spy(monkeypatch)
    assert _placed(place([INVENTORY], [JOBS], authorize=False, engine="duckdb")) == EXPECTED
    assert seen[0]["lists"] and seen[0]["counts"]
