"""A real `nvidia-smi topo -m` of an 8x RTX 4090 server (fixtures/rtx4090-8gpu-sys-same-numa.txt, from
NVIDIA/go-gpuallocator issue 17): every GPU pair SYS although four GPUs share each NUMA Affinity, and both
NICs PHB to GPU6 only.

Before: the notes said "GPU1 have NUMA Affinity 0 like GPU0, but the matrix puts them across ...".
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files


def test_sys_between_gpus_of_one_numa_node_is_kept_and_said(fx: Path) -> None:
    result = import_files("nvidia-smi", [fx / "rtx4090-8gpu-sys-same-numa.txt"], node="n")
    inv = result.inventory
    notes = [str(n) for n in result.notes]
    # NUMA 0: GPU0 first, then GPU1, GPU2, GPU3 each SYS to the rest; NUMA 1: GPU4 first, then GPU5 and
    # GPU7 alone, and GPU6 with the two NICs it is PHB to: five single devices and one group of three.
    singles = [
        f"GPU{k} has NUMA Affinity {0 if k < 4 else 1} like GPU{0 if k < 4 else 4}, but the matrix puts it"
        for k in (1, 2, 3, 5, 7)
    ]
    for text in singles:
        assert sum(text in n for n in notes) == 1, text
    assert sum("GPU6, NIC0, NIC1 have NUMA Affinity 1 like GPU4, but the matrix puts them" in n for n in notes) == 1
    # NIC0 and NIC1 are PIX to each other: one switch holds both; GPU6 is PHB to them: one host bridge above.
    nic0, nic1, gpu6 = (inv.objects[f"n/{d}"] for d in ("nic0", "nic1", "gpu6"))
    assert nic0.parent == nic1.parent and inv.objects[nic0.parent or ""].kind == "pcie_switch"

    def chain(oid: str) -> list[str]:
        out, parent = [], inv.objects[oid].parent
        while parent is not None:
            out.append(parent)
            parent = inv.objects[parent].parent
        return out

    # The first ancestor they share is that host bridge (a root complex, kind cpu), not a switch (PIX/PXB).
    shared = [p for p in chain(gpu6.id) if p in chain(nic0.id)]
    assert shared[0] == gpu6.parent and inv.objects[shared[0]].kind == "cpu"
