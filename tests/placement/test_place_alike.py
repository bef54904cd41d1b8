"""Ranking judges the domains inside one node with one eligible profile in bulk (place._Picker._alike):
per shape, not per domain. The other domains of the same job are still judged one by one; both must
give the answers derived here by hand (tests/placement/fixtures/alike.yaml)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from verifier.placement import place as placement
from verifier.placement.place import PlaceReport
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "alike.yaml", HERE / "alike_jobs.yaml"

NVSWITCH = 450_000
"""Two GPUs on one NVSwitch, each with 450 GB/s to it: 450,000 MB/s between them."""

Shown = tuple[str, tuple[str, ...], int, int | None]


def _gpus(node: str, *ids: int) -> tuple[str, ...]:
    return tuple(f"{node}/gpu{g}" for g in ids)


# pair-node (2 GPUs, scope node): every node hosts (n1 keeps gpu0-2 in service). Members are a node's
# first two GPUs. n3's gpu0 and gpu1 meet only over PCIe (gpu1's NVSwitch link is down): its
# bottleneck is the PCIe Gen5 x16 path, below 450 GB/s, so it ranks last; the others tie on
# bandwidth and node count and go by name.
# pair-nvl (2 GPUs, scope nvlink_domain): n0, n1, n2 and n4 are one NVLink domain each, named by
# their gpu0, holding every GPU of the node's one eligible profile; n3's domain n3/gpu0 holds gpu0,
# gpu2 and gpu3 (not its profile's four: judged one by one), members gpu0 and gpu2 over the NVSwitch;
# n3/gpu1 holds one GPU only and hosts nothing. Five hosting domains, all 450 GB/s, by name.
# one-nvl (1 GPU, scope nvlink_domain): the six NVLink domains all host; one GPU has no pair, so no
# bottleneck: all tie, by name, n3/gpu1 among them.
PAIR_NODE: list[Shown] = [(n, _gpus(n, 0, 1), 1, NVSWITCH) for n in ("n0", "n1", "n2", "n4")]
PAIR_NODE.append(("n3", _gpus("n3", 0, 1), 1, -1))  # -1: over PCIe, some figure below NVSWITCH
PAIR_NVL: list[Shown] = [
    (f"{n}/gpu0", _gpus(n, *((0, 2) if n == "n3" else (0, 1))), 1, NVSWITCH) for n in ("n0", "n1", "n2", "n3", "n4")
]
ONE_NVL: list[Shown] = [(d, (d,), 1, None) for d in ("n0/gpu0", "n1/gpu0", "n2/gpu0", "n3/gpu0", "n3/gpu1", "n4/gpu0")]
EXPECTED: dict[str, tuple[int, list[Shown]]] = {
    "pair-node": (5, PAIR_NODE),
    "pair-nvl": (5, PAIR_NVL),
    "one-nvl": (6, ONE_NVL),
}


def _answers(report: PlaceReport) -> dict[str, tuple[int, list[Shown]]]:
    return {
        jp.job.name: (jp.hosting, [(p.domain, p.gpus, p.nodes, p.bottleneck_mbps) for p in jp.placements])
        for jp in report.jobs
    }


def _check(answers: dict[str, tuple[int, list[Shown]]]) -> None:
    assert answers.keys() == EXPECTED.keys()
    for name, (hosting, shown) in EXPECTED.items():
        got_hosting, got = answers[name]
        assert got_hosting == hosting, name
        assert [s[:3] for s in got] == [s[:3] for s in shown], name
        for (_d, _g, _n, want), (_gd, _gg, _gn, bottleneck) in zip(shown, got, strict=True):
            if want == -1:  # over PCIe: some figure below the NVSwitch's
                assert bottleneck is not None and 0 < bottleneck < NVSWITCH, name
            else:
                assert bottleneck == want, name


def _spy_alike(monkeypatch: pytest.MonkeyPatch, bulk: bool = True) -> list[tuple[str, int, int]]:
    """Per job ranked: (job, domains judged in bulk, domains judged one by one). Without `bulk`,
    every domain is judged one by one (what ranking did before _alike)."""
    seen: list[tuple[str, int, int]] = []
    alike = placement._Picker._alike

    def spied(self: placement._Picker, job: Any, hosts: Sequence[tuple[str, int]], *rest: Any) -> list[int]:
        left = alike(self, job, hosts, *rest) if bulk else list(range(len(hosts)))
        seen.append((job.name, len(hosts) - len(left), len(left)))
        return left

    monkeypatch.setattr(placement._Picker, "_alike", spied)
    return seen


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_alike_domains_in_bulk_by_hand(monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    seen = _spy_alike(monkeypatch)
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, engine=engine)))
    # pair-node: all five nodes in bulk (one eligible profile each). pair-nvl: n3/gpu0 one by one (it
    # does not hold its profile's four GPUs), the other four in bulk. one-nvl: n3's two domains one by one.
    assert sorted(seen) == [("one-nvl", 4, 2), ("pair-node", 5, 0), ("pair-nvl", 4, 1)]


def test_one_by_one_gives_the_same_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = _spy_alike(monkeypatch, bulk=False)
    _check(_answers(place([INVENTORY], [JOBS], authorize=False)))
    assert sorted(seen) == [("one-nvl", 0, 6), ("pair-node", 0, 5), ("pair-nvl", 0, 5)]


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_limit_is_the_head_in_bulk_too(limit: int) -> None:
    head = _answers(place([INVENTORY], [JOBS], authorize=False, limit=limit))
    assert head == {
        name: (hosting, shown[:limit])
        for name, (hosting, shown) in _answers(place([INVENTORY], [JOBS], authorize=False)).items()
    }


def test_ranked_by_cost_is_judged_one_by_one(monkeypatch: pytest.MonkeyPatch) -> None:
    # No price in the fixture: every cost is unknown and ranks alike; the bandwidth keys then order them
    # as above. Ranking by cost reads each domain's price, so no domain goes through _alike.
    seen = _spy_alike(monkeypatch)
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, rank="cost")))
    assert seen == []
