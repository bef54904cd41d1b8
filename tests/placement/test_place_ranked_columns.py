"""A job without TP groups is ranked column by column (verifier/placement/place.py:
_Picker._ranked_alike): its domains that lie inside one node with one eligible profile are judged
once per shape and keyed in bulk, the others one by one. The answers are the per-domain loop's.

tests/placement/fixtures/ranked_columns.yaml has every kind of domain side by side: alike nodes
(n0), a node with two eligible profiles (n1, a labelled GPU), a node with one eligible profile of
two (n2, a GPU down), a cheaper node (n3), and a node of two NVLink islands (m0) whose NVLink
domains each hold half of its one profile.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verifier.placement import place as placement
from verifier.placement.place import PlaceReport
from verifier.session.place_run import place

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY, JOBS = HERE / "ranked_columns.yaml", HERE / "ranked_columns_jobs.yaml"

Shown = tuple[str, int | None, int | None, tuple[str, ...]]
"""A placement: domain, bottleneck (MB/s), cost (millicents per hour), members."""


def _shown(report: PlaceReport) -> dict[str, tuple[int, int, list[Shown]]]:
    return {
        jp.job.name: (
            jp.candidates,
            jp.hosting,
            [(p.domain, p.bottleneck_mbps, p.cost_millicents_per_hour, p.gpus) for p in jp.placements],
        )
        for jp in report.jobs
    }


def _pair(node: str, first: int = 0) -> tuple[str, ...]:
    return (f"{node}/gpu{first}", f"{node}/gpu{first + 1}")


def _four(node: str) -> tuple[str, ...]:
    return tuple(f"{node}/gpu{i}" for i in range(4))


# By hand, from the fixture. A pair of GPUs on one NVSwitch: 450 GB/s = 450,000 MB/s. m0's gpu0 and
# gpu2 sit on different NVSwitches: their only path is PCIe Gen5 x16 through pcie0, 3,938 MB/s a lane
# x 16 = 63,008 MB/s. Cost: $2.00 (200,000 millicents) per GPU-hour, n3's $1.00 (100,000).
# Members: the first eligible GPUs by name (n1's labelled gpu1 is eligible: no job excludes it).
NVSWITCH, PCIE5_X16 = 450_000, 63_008
PAIR, PAIR_N3 = 2 * 200_000, 2 * 100_000
FOUR, FOUR_N3 = 4 * 200_000, 4 * 100_000


def test_bandwidth_rank_by_hand() -> None:
    """Ties on bandwidth and node count go by name; m0's four GPUs cross PCIe and rank last. Candidates:
    pair-node and four-node, the 5 nodes (n2, 3 GPUs in service, hosts no four); pair-nvlink, n0-n3's
    NVLink domains, m0's two, and n2's gpu3 alone (down, its links carry nothing): 7, 6 host (not gpu3).
    """
    got = _shown(place([INVENTORY], [JOBS], authorize=False))
    assert got["pair-node"] == (
        5,
        5,
        [(n, NVSWITCH, PAIR_N3 if n == "n3" else PAIR, _pair(n)) for n in ("m0", "n0", "n1", "n2", "n3")],
    )
    assert got["four-node"] == (
        5,
        4,
        [
            ("n0", NVSWITCH, FOUR, _four("n0")),
            ("n1", NVSWITCH, FOUR, _four("n1")),
            ("n3", NVSWITCH, FOUR_N3, _four("n3")),
            ("m0", PCIE5_X16, FOUR, _four("m0")),
        ],
    )
    assert got["pair-nvlink"] == (
        7,
        6,
        [
            ("m0/gpu0", NVSWITCH, PAIR, _pair("m0")),
            ("m0/gpu2", NVSWITCH, PAIR, _pair("m0", 2)),
            ("n0/gpu0", NVSWITCH, PAIR, _pair("n0")),
            ("n1/gpu0", NVSWITCH, PAIR, _pair("n1")),
            ("n2/gpu0", NVSWITCH, PAIR, _pair("n2")),
            ("n3/gpu0", NVSWITCH, PAIR_N3, _pair("n3")),
        ],
    )
    # rack-15, 15 GPUs of one rack: r0's eligible GPUs, n0's 4, n1's 4, n2's 3 and n3's 4, all of them
    # (r1, m0's 4, holds too few). The nodes have no NIC: each GPU's way into the fabric is 0 MB/s,
    # which members on several nodes cross. Cost (a shape's, costed when shown): 11 GPUs at $2.00
    # and n3's 4 at $1.00 an hour.
    n2 = ("n2/gpu0", "n2/gpu1", "n2/gpu2")
    members = (*_four("n0"), *_four("n1"), *n2, *_four("n3"))
    assert got["rack-15"] == (2, 1, [("r0", 0, 11 * 200_000 + 4 * 100_000, members)])


def test_cost_rank_by_hand() -> None:
    """Cheapest first, then bandwidth, node count and name: n3 leads every job; with --limit 2 the
    second is the first by name of those at $2.00 a GPU-hour, whichever way it was judged."""
    got = _shown(place([INVENTORY], [JOBS], rank="cost", limit=2, authorize=False))
    assert got["pair-node"] == (5, 5, [("n3", NVSWITCH, PAIR_N3, _pair("n3")), ("m0", NVSWITCH, PAIR, _pair("m0"))])
    assert got["four-node"] == (
        5,
        4,
        [("n3", NVSWITCH, FOUR_N3, _four("n3")), ("n0", NVSWITCH, FOUR, _four("n0"))],
    )
    assert got["pair-nvlink"] == (
        7,
        6,
        [("n3/gpu0", NVSWITCH, PAIR_N3, _pair("n3")), ("m0/gpu0", NVSWITCH, PAIR, _pair("m0"))],
    )


def _loop_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every job ranked by the per-domain loop of _Picker.ranked: each domain's eligible profiles
    handed over as a list (`eligible`), none as a domain's one profile (`only`, what goes in bulk)."""
    read = placement._Picker._eligible

    def listed(self: placement._Picker, *args: Any) -> Any:
        only, eligible, sizes = read(self, *args)
        return {}, {**{d: [p] for d, p in only.items()}, **eligible}, sizes

    monkeypatch.setattr(placement._Picker, "_eligible", listed)
    by_node = placement._Picker._node_eligible

    def node_listed(self: placement._Picker, *args: Any) -> Any:
        only, eligible = by_node(self, *args)
        return {}, {**{d: [p] for d, p in only.items()}, **eligible}

    monkeypatch.setattr(placement._Picker, "_node_eligible", node_listed)


CASES = [
    (INVENTORY, JOBS),
    (HERE / "uneven.yaml", HERE / "uneven_jobs.yaml"),
    (HERE / "islands.yaml", HERE / "islands_jobs.yaml"),
    (HERE / "two_islands.yaml", HERE / "two_islands_jobs.yaml"),
    (HERE / "whole_and_split.yaml", HERE / "whole_and_split_jobs.yaml"),
    (HERE / "alike_adversarial55.yaml", HERE / "alike_adversarial55_jobs.yaml"),
    (REPO / "inventories" / "mixed-fleet.yaml", REPO / "inventories" / "jobs"),
    (REPO / "inventories" / "gb200-nvl72.yaml", REPO / "inventories" / "jobs"),
    (REPO / "inventories" / "dgx-h100-pod.yaml", REPO / "inventories" / "jobs"),
]


@pytest.mark.parametrize(("inventory", "jobs"), CASES, ids=[c[0].stem for c in CASES])
def test_columns_rank_as_the_loop(inventory: Path, jobs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def answers() -> list[dict[str, tuple[int, int, list[Shown]]]]:
        return [
            _shown(place([inventory], [jobs], rank=rank, limit=limit, authorize=False))
            for rank in placement.RANKS
            for limit in (0, 1)
        ]

    columns = answers()
    _loop_only(monkeypatch)
    assert answers() == columns
    assert any(hosting for by_job in columns for _c, hosting, _p in by_job.values())


@pytest.mark.parametrize(("inventory", "jobs"), CASES, ids=[c[0].stem for c in CASES])
def test_eligible_read_few_or_whole_alike(inventory: Path, jobs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A job's rows of nodes with several eligible profiles are read again node by node while they
    are few (`_FEW_NODES`), else all its rows whole; a job of scope node is read from its hosts'
    names (`_node_eligible`) unless it is asked to read every row (`_eligible`): the same answers."""

    def answers() -> list[dict[str, tuple[int, int, list[Shown]]]]:
        return [_shown(place([inventory], [jobs], rank=rank, limit=0, authorize=False)) for rank in placement.RANKS]

    few = answers()
    monkeypatch.setattr(placement, "_FEW_NODES", 0)
    assert answers() == few
    monkeypatch.setattr(placement._Picker, "_node_eligible", lambda self, job, _hosts: self._eligible(job, False)[:2])
    assert answers() == few


def test_node_eligible_as_every_row_says() -> None:
    """By hand, from ranked_columns.yaml: pair-node's hosts are the 5 nodes. n0, n3 and m0 have one
    profile each; n1 has two (a labelled GPU), both eligible; n2 has two (gpu3 down), one eligible.
    `_node_eligible` gives n1 its two as a list and every other node its one profile."""
    seen: dict[str, tuple[dict[Any, Any], dict[Any, Any], dict[Any, Any], dict[Any, Any]]] = {}
    by_node, read = placement._Picker._node_eligible, placement._Picker._eligible

    def both(self: placement._Picker, job: str, hosts: Any) -> Any:
        only, eligible = by_node(self, job, hosts)
        every_only, every, _sizes = read(self, job, False)
        seen[job] = (only, eligible, every_only, every)
        return only, eligible

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(placement._Picker, "_node_eligible", both)
        place([INVENTORY], [JOBS], authorize=False)
    only, eligible, every_only, every = seen["pair-node"]
    assert sorted(only) == ["m0", "n0", "n2", "n3"]
    assert sorted(eligible) == ["n1"] and len(eligible["n1"]) == 2
    assert {p[3] for p in eligible["n1"]} == {p[3] for p in every["n1"]}
    assert only == {d: every_only[d] for d in only}
    assert only["n2"][0] == "n2" and only["n0"][0] == "n0"
