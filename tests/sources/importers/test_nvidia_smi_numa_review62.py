"""Review of the NUMA merge in the nvidia-smi import (round 16): groups the matrix puts SYS apart share a
CPU domain when they state the same NUMA node. NUMA Affinity "0" and "0-1" are two different statements
(one node; two nodes), though both begin with 0: they were merged as if both said node 0.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files


def _matrix(tmp_path: Path, numa: list[str]) -> Path:
    """4 GPUs: GPU0-GPU1 and GPU2-GPU3 are PIX pairs, SYS across the pairs; NUMA Affinity per GPU."""
    names = ["GPU0", "GPU1", "GPU2", "GPU3"]
    lines = ["\t" + "\t".join(names) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for i, a in enumerate(names):
        cells = [" X " if i == j else ("PIX" if i // 2 == j // 2 else "SYS") for j in range(4)]
        lines.append("\t".join([a, *cells, "0-63", numa[i], "N/A"]))
    path = tmp_path / "topo.txt"
    path.write_text("\n".join(lines) + "\n")
    return path


def _sockets(path: Path) -> dict[str, str]:
    inv = import_files("nvidia-smi", [path], node="n").inventory

    def socket_of(oid: str) -> str:
        cur: str | None = oid
        while cur is not None and inv.objects[cur].kind != "socket":
            cur = inv.objects[cur].parent
        assert cur is not None
        return cur

    return {f"GPU{k}": socket_of(f"n/gpu{k}") for k in range(4)}


def test_different_numa_lists_with_one_first_node_stay_apart(tmp_path: Path) -> None:
    # GPU0-1 state "0", GPU2-3 "0-1", and SYS lies between the pairs: nothing says they share a NUMA
    # node, so two CPU domains (cpu0 for the first pair, cpu0.1 for the second: the base's naming).
    got = _sockets(_matrix(tmp_path, ["0", "0", "0-1", "0-1"]))
    assert got == {"GPU0": "n/cpu0", "GPU1": "n/cpu0", "GPU2": "n/cpu0.1", "GPU3": "n/cpu0.1"}


def test_one_numa_value_across_sys_is_one_domain(tmp_path: Path) -> None:
    # Control: all four state "0": one NUMA node, so one CPU domain (the merge under review).
    got = _sockets(_matrix(tmp_path, ["0", "0", "0", "0"]))
    assert set(got.values()) == {"n/cpu0"}
