"""A GPU's share of the fabric: the NICs it uses, divided among the GPUs that use them.

Eight GPUs on two 100 Gb/s NICs do not each get 12.5 GB/s into the fabric: each NIC carries the
traffic of every GPU that sends through it, so each gets 2 x 12.5 / 8 GB/s. Which NICs a GPU
sends through is decided as NCCL decides it (NVIDIA/nccl src/graph/topo.cc, ncclTopoGetLocal: a
GPU's local NICs are those of the widest path, then of the best path type): the NICs with a
working fabric link on the GPU's widest host path and, among those, of its best class (PIX, PXB,
PHB, NODE, SYS). NICs that tie are shared: a GPU uses each of them, and each counts each of its
GPUs (an HGX H100's two GPUs and two NICs under one PCIe switch are four ties, 2 x 50
GB/s for 2 GPUs: 50 GB/s each, as one NIC per GPU would give).

What a NIC can carry for its GPUs is the smaller of its working fabric links together and the
widest host path any of its GPUs has to it (its own PCIe link bounds that path). A GPU's share is
the sum over its NICs of what each carries divided by the GPUs that use it, no more than its own
widest host path to them. Where the path is of class PHB or farther, NCCL does not use GPUDirect
RDMA (its default NCCL_NET_GDR_LEVEL is PXB) and the traffic is staged in host memory: the path
figure is then the host path through the CPU, which is what bounds it here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

CLASS_RANK = {"NV": 0, "PIX": 1, "PXB": 2, "PHB": 3, "NODE": 4, "SYS": 5}
"""nvidia-smi topo -m's classes, nearest first."""

Path = tuple[str, str, str, int]
"""A GPU-NIC path as gpu_nic_path gives it: GPU, NIC, class, widest host path in MB/s."""


def nics_used(paths: Sequence[Path], cabled: Mapping[str, int | None]) -> dict[str, list[tuple[str, int]]]:
    """Per GPU the NICs it sends through, with its widest host path to each: the cabled NICs
    (`cabled[nic]` is their working fabric MB/s, None or 0 when not cabled) on its widest path and,
    among them, of its best class; ties all count.
    """
    best: dict[str, tuple[int, int]] = {}
    for g, nic, cls, width in paths:
        if not cabled.get(nic):
            continue
        key = (-int(width), CLASS_RANK[cls])
        if g not in best or key < best[g]:
            best[g] = key
    used: dict[str, list[tuple[str, int]]] = {}
    for g, nic, cls, width in paths:
        if cabled.get(nic) and (-int(width), CLASS_RANK[cls]) == best[g]:
            used.setdefault(g, []).append((nic, int(width)))
    return used


def fabric_shares(paths: Sequence[Path], cabled: Mapping[str, int | None]) -> dict[str, int]:
    """Each GPU's MB/s into the fabric (GPUs with no cabled NIC are left out): see the module's doc."""
    used = nics_used(paths, cabled)
    users: dict[str, int] = {}
    reach: dict[str, int] = {}  # the widest path any of a NIC's GPUs has to it
    for pairs in used.values():
        for nic, width in pairs:
            users[nic] = users.get(nic, 0) + 1
            reach[nic] = max(reach.get(nic, 0), width)
    carries = {nic: min(int(cabled[nic] or 0), reach[nic]) for nic in users}
    out: dict[str, int] = {}
    for g, pairs in used.items():
        share = sum(carries[nic] // users[nic] for nic, _w in pairs)
        out[g] = min(share, max(width for _n, width in pairs))
    return out
