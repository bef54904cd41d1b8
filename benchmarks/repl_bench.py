"""`topolog repl` latency: one loaded fleet, then queries answered at the prompt.

    python benchmarks/repl_bench.py [--sizes 1024,4096] [--runs 7]

For each size (GPUs, a multiple of 256) the fleet of benchmarks/verify_bench.py is written
to a temp dir and loaded once, as `topolog repl FILE` loads it (every rule evaluated, every
input relation kept). Each query below is then answered `--runs` times through the REPL's
own `Session.execute` (parse, evaluate, render as a table), with the collector set as the
REPL sets it, and the median and the slowest answer are printed with the number of rows.
Issue 15's aim: every query <= 10 ms at 4,096
GPUs. The answers' row counts follow from the layout (see `expected_rows`); a different count
prints FAIL and the exit status is 1. Stdout is Markdown.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402
from verifier.cli.repl import Session, collect_what_queries_leave  # noqa: E402
from verifier.engine.ast import Query  # noqa: E402
from verifier.engine.queries import prepare_query  # noqa: E402
from verifier.session.api import load  # noqa: E402
from verifier.session.session import Evaluation  # noqa: E402

QUERIES = [
    'object(G, "gpu")',
    'within("su0000-r0-n0/gpu0", R)',
    'within(G, "su0000-r0")',
    'parent(X, "su0000-r0-n0")',
    'object(X, K), parent(X, "su0000-r0-n0")',
    'link(L, A, B, "nvlink", M), M < 400000',
    'label(X, "rail", V)',
    'nvlink_domain(G, D), D = "su0000-r0-n0/gpu0"',
]


def expected_rows(gpus: int) -> dict[str, int]:
    """Answer sizes worked out from the template of verify_bench.py (a DGX H100 node: 2 CPUs with
    one DRAM each, 8 GPUs, 4 NVSwitches, 4 PCIe switches, 8 NICs, all children of the node) and
    its layout (4 nodes per rack, rack su0000-r0 has no override)."""
    per_node = 2 + 2 + 8 + 4 + 4 + 8  # descendants of a node
    return {
        'object(G, "gpu")': gpus,
        'within("su0000-r0-n0/gpu0", R)': 3,  # its node, rack and pod
        'within(G, "su0000-r0")': 4 * (1 + per_node),  # 4 nodes and everything in them: 116
        'parent(X, "su0000-r0-n0")': 2 + 8 + 4 + 4 + 8,  # the node's direct children (DRAM is a CPU's): 26
        'nvlink_domain(G, D), D = "su0000-r0-n0/gpu0"': 8,  # the node's 8 GPUs, named by gpu0
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="1024,4096", help="GPUs, multiples of 256")
    ap.add_argument("--runs", type=int, default=7, help="answers per query (median and max)")
    args = ap.parse_args(argv)
    failed = False
    print("| GPUs | engine | load s | query | rows | median ms | max ms | check |")
    print("|---:|---|---:|---|---:|---:|---:|---|")
    for gpus in [int(s) for s in args.sizes.split(",") if s.strip()]:
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"fleet-{gpus}.yaml"
            path.write_text(inventory_yaml(Layout(gpus)), encoding="utf-8")
            started = time.perf_counter()
            model = load([path])
            load_s = time.perf_counter() - started
            session = Session(model)
            collect_what_queries_leave()  # as `topolog repl` sets the collector before its prompt
            want = expected_rows(gpus)
            for text in QUERIES:
                times = []
                rows = 0
                for _ in range(args.runs):
                    t = time.perf_counter()
                    session.execute(text)
                    times.append((time.perf_counter() - t) * 1000)
                rows = len(model.engine.answer(_parsed(model, text)))
                check = "ok"
                if text in want and want[text] != rows:
                    check, failed = f"FAIL: expected {want[text]:,}", True
                print(
                    f"| {gpus:,} | {model.engine.name} | {load_s:.1f} | `{text}` | {rows:,} | "
                    f"{statistics.median(times):.1f} | {max(times):.1f} | {check} |"
                )
            model.close()
    return 1 if failed else 0


def _parsed(model: Evaluation, text: str) -> Query:
    return prepare_query(text, model.program)


if __name__ == "__main__":
    sys.exit(main())
