"""`topolog import nvidia-smi` on generated `nvidia-smi topo -m` matrices, up to 1,450 GPUs.

    python benchmarks/nvidia_smi_bench.py [--sizes 100,400,1450]

Each size is a matrix as nvidia-smi prints it (tab separated, CPU/NUMA affinity columns):
GPUs in NVLink groups of 8 (NV18), NODE to the GPUs of the same socket, SYS across the two
sockets. It times import_files("nvidia-smi", ...) in this process and checks the count of
GPUs against the size. Near-linear in cells means the µs per cell column stays flat.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def write_matrix(path: Path, n: int) -> None:
    head = "\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"
    lines = [head]
    for i in range(n):
        same = i < n // 2
        cells = [
            "X" if i == j else "NV18" if i // 8 == j // 8 else "NODE" if (j < n // 2) == same else "SYS"
            for j in range(n)
        ]
        socket = 0 if same else 1
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t{'0-63' if socket == 0 else '64-127'}\t{socket}\t\tN/A")
    path.write_text("\n".join(lines) + "\n\nLegend:\n\n  X    = Self\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="100,400,1450")
    args = ap.parse_args()
    from verifier.core.limits import Limits, use_limits
    from verifier.sources.importers import import_files

    print("| GPUs | file MB | cells | import s | µs per cell | GPUs read | check |")
    print("|---|---|---|---|---|---|---|")
    failed = False
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            path = Path(tmp) / f"topo-{n}.txt"
            write_matrix(path, n)
            started = time.perf_counter()
            # Past the default matrix_cells (a 500-device matrix) the limit is raised to fit: the
            # 1,450-GPU matrix is issue 18's legal-but-large case, refused by default since issue 45.
            limits = Limits(matrix_cells=max(Limits().matrix_cells, n * n))
            with use_limits(limits):
                inv = import_files("nvidia-smi", [path]).inventory
            took = time.perf_counter() - started
            gpus = sum(1 for o in inv.objects.values() if o.kind == "gpu")
            ok = gpus == n
            failed |= not ok
            cells = n * n
            print(
                f"| {n:,} | {path.stat().st_size / 1e6:.1f} | {cells:,} | {took:.2f} | "
                f"{took / cells * 1e6:.1f} | {gpus:,} | {'ok' if ok else 'FAIL'} |"
            )
    print(f"\nload average {os.getloadavg()[0]:.1f} (the machine is shared)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
