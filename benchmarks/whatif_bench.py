"""What-if benchmark: one node drained, 100 jobs, a generated DGX-H100 fleet (default 131,072 GPUs).

    python benchmarks/whatif_bench.py [--gpus 131072] [--jobs 100]

The fleet and the jobs are place_bench.py's (benchmarks/verify_bench.py's generator, every
scope of job). Timed in-process, one after the other in one process: a plain `place` (as the CLI
runs it: every placement ranked), then `place --drain su0000-r0-n0` (the inventory read once,
each side evaluated and ranked, the scenario's side a miss in the authorization cache). A first,
untimed `place` warms the caches both timed runs read, as a user's earlier runs would.
Target (issue 38): the what-if in <= 2x the plain place. Stdout is Markdown.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.place_bench import jobs_yaml  # noqa: E402
from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402
from verifier.session.place_run import PlaceSettings, place, what_if  # noqa: E402
from verifier.sources.scenario import scenario_from  # noqa: E402

TARGET_RATIO = 2.0
DRAINED = "su0000-r0-n0"
"""The first node of the fleet: where the 8-GPU node jobs are placed first."""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131_072)
    ap.add_argument("--jobs", type=int, default=100)
    args = ap.parse_args(argv)
    gc.disable()  # as `topolog place` runs (verifier/cli/main.py)
    with tempfile.TemporaryDirectory() as tmp:
        inv = Path(tmp) / "fleet.yaml"
        inv.write_text(inventory_yaml(Layout(args.gpus)))
        jobs = Path(tmp) / "jobs.yaml"
        jobs.write_text(jobs_yaml(args.jobs))
        shutil.copy(REPO / "inventories" / "principals.yml", Path(tmp) / "principals.yml")
        place([inv], [jobs])  # warm-up
        t0 = time.perf_counter()
        plain = place([inv], [jobs])
        t1 = time.perf_counter()
        report = what_if([inv], [jobs], scenario_from(drain=[DRAINED]), PlaceSettings(limit=1))
        t2 = time.perf_counter()
    plain_s, whatif_s = t1 - t0, t2 - t1
    ratio = whatif_s / plain_s
    print(f"# what-if benchmark: drain {DRAINED}, {args.jobs} jobs, {args.gpus:,} GPUs\n")
    print("| run | s |\n|---|---|")
    print(f"| place | {plain_s:.2f} |")
    print(f"| place --drain {DRAINED} | {whatif_s:.2f} |")
    print(f"| ratio | {ratio:.2f} |\n")
    counts = ", ".join(f"{len(report.named(o))} {o}" for o in ("loses", "slower", "moved", "unchanged", "unplaceable"))
    print(f"jobs: {counts}")
    # Node jobs ranked su0000-r0-n0 first (every node alike, first by name): they all move.
    moved = [c for c in report.jobs if c.job.startswith("node-")]
    ok = bool(moved) and all(c.outcome == "moved" and c.before and c.before.domain == DRAINED for c in moved)
    ok = ok and set(plain.unplaceable) == {c.job for c in report.jobs if c.outcome == "unplaceable"}
    print(f"correctness: {'ok' if ok else 'FAIL'} (every node job moves off {DRAINED})")
    print(f"target <= {TARGET_RATIO:g}x a plain place: {'met' if ratio <= TARGET_RATIO else 'MISSED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
