"""One NUMA node is one CPU domain in an nvidia-smi import, whatever class the matrix prints.

The real 8x RTX 4090 matrix (fixtures/rtx4090-8gpu-sys-same-numa.txt, NVIDIA/go-gpuallocator issue 17)
puts every GPU pair at SYS although GPU0-3 state NUMA Affinity 0 and GPU4-7 NUMA Affinity 1. Before, each
SYS-separated group got a socket of its own (cpu0, cpu0.1, cpu0.2, cpu0.3, cpu1, cpu1.1, cpu1.2, cpu1.3:
8 sockets and 28 assumed interconnect links) where the OS and hwloc see two NUMA nodes.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files


def test_groups_of_one_numa_node_share_one_socket(fx: Path) -> None:
    inv = import_files("nvidia-smi", [fx / "rtx4090-8gpu-sys-same-numa.txt"], node="n").inventory
    # Two NUMA values in the column (0 and 1): two sockets, one assumed link between them (2*1/2 = 1).
    assert sorted(o.id for o in inv.of_kind("socket")) == ["n/cpu0", "n/cpu1"]
    assert len([lk for lk in inv.links.values() if lk.kind == "upi"]) == 1

    def socket_of(oid: str) -> str:
        cur: str | None = oid
        while cur is not None and inv.objects[cur].kind != "socket":
            cur = inv.objects[cur].parent
        assert cur is not None
        return cur

    assert {socket_of(f"n/gpu{k}") for k in range(4)} == {"n/cpu0"}
    assert {socket_of(d) for d in ("n/gpu4", "n/gpu5", "n/gpu6", "n/gpu7", "n/nic0", "n/nic1")} == {"n/cpu1"}
    # The SYS cells still keep the groups apart below the socket: GPU0-3 each under a host bridge of its
    # own (no PHB or closer cell between them), GPU6 with NIC0/NIC1 (PHB), GPU4, GPU5, GPU7 alone: 4 + 4 bridges.
    assert len(list(inv.of_kind("cpu"))) == 8
    assert inv.objects["n/cpu0"].labels["members"] == "GPU0,GPU1,GPU2,GPU3"
    assert inv.objects["n/cpu1"].labels["numa"] == "1"


def test_numa_nodes_across_sys_stay_apart(fx: Path) -> None:
    # The DGX A100 matrix: GPU pairs across NUMA nodes 1, 3, 5, 7 are SYS and differ in NUMA Affinity:
    # four sockets, as before.
    inv = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="d").inventory
    assert sorted(o.id for o in inv.of_kind("socket")) == ["d/cpu1", "d/cpu3", "d/cpu5", "d/cpu7"]
