"""A GPU's share of the fabric (verifier/facts/nic_share.py): every figure derived by hand."""

from __future__ import annotations

from pathlib import Path

from verifier.facts.graph import graph_facts
from verifier.facts.nic_share import fabric_shares, nics_used
from verifier.sources.inventory.loader import load_inventory

ROOT = Path(__file__).resolve().parents[2]


def test_eight_gpus_on_two_nics_share_them() -> None:
    # The case: 8 GPUs, 4 per socket, each socket's one 100 Gb/s (12500 MB/s) NIC PHB away
    # over Gen4 x16 (31504), the other socket's NIC SYS away at the same width (the socket link is
    # wider), so the nearer class decides. Each NIC carries 12500 for 4 GPUs: 3125 each (2 x 12500 / 8).
    paths = [(f"gpu{g}", f"nic{n}", "PHB" if g // 4 == n else "SYS", 31504) for g in range(8) for n in range(2)]
    shares = fabric_shares(paths, {"nic0": 12500, "nic1": 12500})
    assert shares == {f"gpu{g}": 3125 for g in range(8)}


def test_ties_share_every_nic_they_tie_on() -> None:
    # An HGX H100 switch: gpu0, gpu1, nic0, nic1 under one PCIe switch (PIX, 63008 each way). Both
    # GPUs tie on both NICs: each NIC carries 50000 for 2 GPUs, each GPU gets 25000 + 25000 = 50000.
    paths = [(g, n, "PIX", 63008) for g in ("gpu0", "gpu1") for n in ("nic0", "nic1")]
    assert nics_used(paths, {"nic0": 50000, "nic1": 50000}) == {
        "gpu0": [("nic0", 63008), ("nic1", 63008)],
        "gpu1": [("nic0", 63008), ("nic1", 63008)],
    }
    assert fabric_shares(paths, {"nic0": 50000, "nic1": 50000}) == {"gpu0": 50000, "gpu1": 50000}
    # With nic1 uncabled both GPUs send through nic0 alone: 50000 / 2 = 25000 each.
    assert fabric_shares(paths, {"nic0": 50000, "nic1": None}) == {"gpu0": 25000, "gpu1": 25000}


def test_a_nic_behind_a_narrow_slot_carries_no_more_than_its_slot() -> None:
    # The RTX workstation: 2 GPUs on the CPU, the one NIC in a Gen4 x4 slot (7876 MB/s) cabled at
    # 100 GbE (12500). The GPU-NIC path is 7876 wide; the NIC carries min(12500, 7876) = 7876 for 2
    # GPUs: 3938 each.
    paths = [(g, "nic0", "PHB", 7876) for g in ("gpu0", "gpu1")]
    assert fabric_shares(paths, {"nic0": 12500}) == {"gpu0": 3938, "gpu1": 3938}


def test_the_widest_path_wins_then_the_nearest_class() -> None:
    # As NCCL picks a GPU's local NICs (ncclTopoGetLocal: widest path first, then path type): nic0 SYS
    # at 31504 beats nic1 PHB at 15752; gpu0 gets min(its 31504 path, nic0's 50000).
    paths = [("gpu0", "nic0", "SYS", 31504), ("gpu0", "nic1", "PHB", 15752)]
    assert fabric_shares(paths, {"nic0": 50000, "nic1": 12500}) == {"gpu0": 31504}
    # At equal width the nearer class wins: nic1 PHB at 31504 beats nic0 SYS at 31504.
    tied = [("gpu0", "nic0", "SYS", 31504), ("gpu0", "nic1", "PHB", 31504)]
    assert fabric_shares(tied, {"nic0": 50000, "nic1": 12500}) == {"gpu0": 12500}
    # An uncabled NIC is never used, however near: gpu0 then sends through nic0.
    assert fabric_shares(tied, {"nic0": 50000, "nic1": 0}) == {"gpu0": 31504}


def test_shipped_mixed_fleet_shares() -> None:
    facts = graph_facts(load_inventory([ROOT / "inventories" / "mixed-fleet.yaml"]), {"gpu_fabric_bottleneck"})
    per_node: dict[str, set[int]] = {}
    for gpu, mbps in facts["gpu_fabric_bottleneck"]:
        per_node.setdefault(str(gpu).split("/")[0], set()).add(int(mbps))
    assert per_node == {
        # 2 ConnectX-6 Dx on the two EPYC sockets, one 100 GbE cable each: 12500 / 4 GPUs per socket.
        **{f"a100-n{i}": {3125} for i in range(2)},
        # GPU 2k, 2k+1 and NIC 2k, 2k+1 under PCIe switch k, 400 GbE (50000) each: 2 x 50000 / 2.
        **{f"h100-n{i}": {50000} for i in range(2)},
        # GPUs 0-3 and NICs 0-3 on cpu0's root ports (all PHB, Gen5 x16 63008), 4 x 50000 / 4.
        **{f"mi300x-n{i}": {50000} for i in range(2)},
        # The Gen4 x4 slot's 7876 shared by the 2 GPUs; on rtx-n2 gpu1 is written down (fans failed) and
        # carries nothing (a down device has no path), so gpu0 has the slot to itself and gpu1 no share.
        **{f"rtx-n{i}": {3938} for i in (0, 1, 3)},
        "rtx-n2": {7876},
    }
