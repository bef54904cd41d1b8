"""Ranking of alike nodes next to a node whose NVLink domains split its one profile, by hand
(tests/placement/fixtures/alike.yaml). place._Picker.ranked judges a domain that holds its one
profile whole by the profile's shape alone, and a split one by which of the profile's GPUs it holds
(read per domain): shapes shared between such domains must not mix their members."""

from __future__ import annotations

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
# gpu2 and gpu3 (not its profile's four: its own GPUs read), members gpu0 and gpu2 over the NVSwitch;
# n3/gpu1 holds one GPU only and hosts nothing. Five hosting domains, all 450 GB/s, by name.
# one-nvl (1 GPU, scope nvlink_domain): the six NVLink domains all host; one GPU has no pair, so no
# bottleneck: all tie, by name, n3/gpu1 among them.
# two-nodes (8 GPUs on at most 2 nodes, scope rack): r0 is the one rack and hosts. Fullest nodes
# first: n0, n2, n3, n4 have 4 GPUs in service, n1 3; ties by name: n0 and n2, all their GPUs. The
# fixture has no NIC: a GPU's way into the fabric is 0, and two nodes meet over it: bottleneck 0.
PAIR_NODE: list[Shown] = [(n, _gpus(n, 0, 1), 1, NVSWITCH) for n in ("n0", "n1", "n2", "n4")]
PAIR_NODE.append(("n3", _gpus("n3", 0, 1), 1, -1))  # -1: over PCIe, some figure below NVSWITCH
PAIR_NVL: list[Shown] = [
    (f"{n}/gpu0", _gpus(n, *((0, 2) if n == "n3" else (0, 1))), 1, NVSWITCH) for n in ("n0", "n1", "n2", "n3", "n4")
]
ONE_NVL: list[Shown] = [(d, (d,), 1, None) for d in ("n0/gpu0", "n1/gpu0", "n2/gpu0", "n3/gpu0", "n3/gpu1", "n4/gpu0")]
TWO_NODES: list[Shown] = [("r0", (*_gpus("n0", 0, 1, 2, 3), *_gpus("n2", 0, 1, 2, 3)), 2, 0)]
EXPECTED: dict[str, tuple[int, list[Shown]]] = {
    "pair-node": (5, PAIR_NODE),
    "pair-nvl": (5, PAIR_NVL),
    "one-nvl": (6, ONE_NVL),
    "two-nodes": (1, TWO_NODES),
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


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_alike_and_split_domains_by_hand(engine: str) -> None:
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, engine=engine)))


@pytest.mark.parametrize("limit", [1, 2, 3])
def test_limit_is_the_head(limit: int) -> None:
    every = _answers(place([INVENTORY], [JOBS], authorize=False))
    head = _answers(place([INVENTORY], [JOBS], authorize=False, limit=limit))
    assert head == {name: (hosting, shown[:limit]) for name, (hosting, shown) in every.items()}


def test_ranked_by_cost_the_same() -> None:
    # No price in the fixture: every cost is unknown and ranks alike; the bandwidth keys then order them.
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, rank="cost")))


def test_alike_nodes_gpus_read_once(nodes_read: list[str]) -> None:
    # n0, n2 and n4 are alike (one class, one profile each with the same figures): ranking reads the
    # GPUs of one of them from the engine and names the others' from it (GpusByProfile.twins). n1 has
    # two profiles (gpu3 down) and n3 is wired otherwise (its own class): each is read. The rack's
    # shape (two-nodes) asks for all five nodes' GPUs: n2's and n4's come without a query.
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, engine="duckdb")))
    assert sorted(nodes_read) == ["n0", "n1", "n3"]


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_a_nodes_only_profile_found_by_its_name(monkeypatch: pytest.MonkeyPatch, engine: str) -> None:
    # Profiles.single: the nodes with one placement profile, found by name. n1 has two (gpu0-2 in
    # service, ok 1; gpu3 down, ok 0): it is not among them, and its domains' eligible rows are looked up
    # by their profile (its hosting profile, gpu0-2, is the pair-node members n1/gpu0, n1/gpu1 in _check).
    # n0, n2, n4 have one each; so has n3 (a down NVSwitch link splits its NVLink domain, not its profile).
    built: list[placement.Profiles] = []
    init = placement.Profiles.__init__

    def spied(self: placement.Profiles, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        built.append(self)

    monkeypatch.setattr(placement.Profiles, "__init__", spied)
    _check(_answers(place([INVENTORY], [JOBS], authorize=False, engine=engine)))
    assert len(built) == 1
    assert sorted(built[0].single) == ["n0", "n2", "n3", "n4"]
    # Each is the node's own profile, with its four GPUs.
    assert all(info[0] == node and built[0].count_of[info[3]] == 4 for node, info in built[0].single.items())
