"""`topolog import slurm` on generated Slurm trees: a real 100,000-node tree is large but legal.

    python benchmarks/import_bench.py [--sizes 1000,10000,100000] [--leaf 32] [--fanout 16]

For each size it writes a topology.conf as NVIDIA topograph writes one (a core switch over
spines over leaves, each leaf `SwitchName=leaf.<k> Nodes=n[<a>-<b>]`), plus a slurm.conf with
one NodeName= line per leaf, and times in this process:

    parse     import_files("slurm", [topology.conf, slurm.conf]) (read, expand hostlists, build, validate)
    yaml      to_yaml of the inventory (what `topolog import -o` writes)

and checks the counts against the closed form: N nodes, ceil(N/leaf) leaves, ceil(leaves/fanout)
spines, one core; N node links plus leaves + spines switch links. A wrong count prints FAIL
and the script exits 1. Near-linear means the µs per node column stays flat as N grows.
Stdout is a Markdown table; the machine is shared, so the load average is printed with it.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from pathlib import Path


def write_tree(d: Path, nodes: int, leaf: int, fanout: int) -> tuple[Path, Path, int, int]:
    leaves = math.ceil(nodes / leaf)
    spines = math.ceil(leaves / fanout)
    width = len(str(nodes))
    topo: list[str] = [f"SwitchName=core Switches=spine.[1-{spines}]"]
    conf: list[str] = ["ClusterName=bench", "SelectType=select/cons_tres"]
    for s in range(spines):
        first, last = s * fanout + 1, min((s + 1) * fanout, leaves)
        topo.append(f"SwitchName=spine.{s + 1} Switches=leaf.[{first}-{last}]")
    for k in range(leaves):
        a, b = k * leaf + 1, min((k + 1) * leaf, nodes)
        hosts = f"n[{a:0{width}d}-{b:0{width}d}]"
        topo.append(f"SwitchName=leaf.{k + 1} Nodes={hosts}")
        conf.append(f"NodeName={hosts} CPUs=224 Gres=gpu:8 State=UNKNOWN")
    conf.append("PartitionName=all Nodes=ALL Default=YES")
    t, c = d / "topology.conf", d / "slurm.conf"
    t.write_text("\n".join(topo) + "\n")
    c.write_text("\n".join(conf) + "\n")
    return t, c, leaves, spines


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--leaf", type=int, default=32, help="nodes per leaf switch")
    ap.add_argument("--fanout", type=int, default=16, help="leaves per spine")
    ap.add_argument(
        "--yaml-max", type=int, default=10000, help="time to_yaml only up to this size (pure-Python PyYAML emitter)"
    )
    args = ap.parse_args()
    from verifier.sources.importers import import_files
    from verifier.sources.importers.yaml_out import to_yaml

    print(f"load average before: {os.getloadavg()[0]:.2f}\n")
    print("| nodes | switches | links | parse s | µs/node | yaml s | check |")
    print("|---:|---:|---:|---:|---:|---:|---|")
    failed = False
    for n in (int(s) for s in args.sizes.split(",")):
        with tempfile.TemporaryDirectory() as tmp:
            t, c, leaves, spines = write_tree(Path(tmp), n, args.leaf, args.fanout)
            t0 = time.perf_counter()
            inv = import_files("slurm", [t, c]).inventory
            t1 = time.perf_counter()
            if n <= args.yaml_max:
                to_yaml(inv, "bench", "bench")
            t2 = time.perf_counter()
        nodes = sum(1 for o in inv.objects.values() if o.kind == "node")
        switches = sum(1 for o in inv.objects.values() if o.kind == "switch")
        ok = nodes == n and switches == leaves + spines + 1 and len(inv.links) == n + leaves + spines
        failed |= not ok
        print(
            f"| {n:,} | {switches:,} | {len(inv.links):,} | {t1 - t0:.2f} | {(t1 - t0) / n * 1e6:.1f} "
            f"| {f'{t2 - t1:.2f}' if n <= args.yaml_max else '-'} | {'ok' if ok else 'FAIL'} |"
        )
    print(f"\nload average after: {os.getloadavg()[0]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
