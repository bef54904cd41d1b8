"""Where the memory engine stops beating DuckDB: `topolog verify` with each engine, by input size.

    python benchmarks/engine_choice_bench.py --sizes 256,1024,4096 --runs 3

Each shipped example and each generated DGX-class fleet (the inventory of verify_bench.py)
is verified through the CLI as a user runs it, once with `--engine memory` and once with
`--engine duckdb`, alternating, `--runs` times; the table gives the median wall time, peak
RSS and the number of fact rows (what `--engine auto` decides by, see
verifier/engine/engines.py MEMORY_ENGINE_ROWS). Both engines must print the same JSON
report, or the row says so.

The runs share a cache folder of their own (checked program, node classes, policies: what both
engines read alike), from which the memory engine's kept evaluations (verifier/engine/eval_cache.py)
are deleted before each run: every run evaluates, as on an inventory seen for the first time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402
from verifier.core.cache import ENV_DIR  # noqa: E402
from verifier.engine.engines import MEMORY_ENGINE_ROWS  # noqa: E402
from verifier.engine.eval_cache import KIND as EVALUATIONS  # noqa: E402
from verifier.facts.inventory import inventory_facts  # noqa: E402
from verifier.sources.inventory.loader import load_inventory  # noqa: E402

ENGINES = ("memory", "duckdb")


@dataclass
class Row:
    name: str
    fact_rows: int
    seconds: dict[str, list[float]]
    peak_mib: dict[str, list[float]]
    same: bool


def _topolog() -> str:
    exe = Path(sys.executable).parent / "topolog"
    return str(exe) if exe.exists() else "topolog"


def _run(path: Path, engine: str, timeout: float, cache: Path) -> tuple[float, float, bytes]:
    for kept in cache.glob(f"{EVALUATIONS}-*"):
        kept.unlink()
    cmd = ["/usr/bin/time", "-f", "%M", _topolog(), "verify", str(path), "--engine", engine, "--format", "json"]
    env = {**os.environ, ENV_DIR: str(cache)}
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, timeout=timeout, check=False, env=env)
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"{path} --engine {engine}: exit {done.returncode}\n{done.stderr.decode()[-2000:]}")
    peak_kib = float(done.stderr.decode().strip().splitlines()[-1])
    return elapsed, peak_kib / 1024, done.stdout


def measure(name: str, path: Path, runs: int, timeout: float, cache: Path) -> Row:
    facts = inventory_facts(load_inventory([path]))
    row = Row(name, sum(len(r) for r in facts.values()), {e: [] for e in ENGINES}, {e: [] for e in ENGINES}, True)
    outputs: dict[str, bytes] = {}
    for _ in range(runs):
        for engine in ENGINES:
            seconds, mib, out = _run(path, engine, timeout, cache)
            row.seconds[engine].append(seconds)
            row.peak_mib[engine].append(mib)
            outputs[engine] = out
    row.same = outputs["memory"] == outputs["duckdb"]
    return row


def render(rows: Iterable[Row], load: tuple[float, float]) -> str:
    lines = [
        f"auto picks memory up to {MEMORY_ENGINE_ROWS:,} fact rows; load average {load[0]:.1f} before, "
        f"{load[1]:.1f} after",
        "",
        "| input | fact rows | memory s | duckdb s | memory / duckdb | memory MiB | duckdb MiB | same report |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        mem, duck = statistics.median(r.seconds["memory"]), statistics.median(r.seconds["duckdb"])
        lines.append(
            f"| {r.name} | {r.fact_rows:,} | {mem:.2f} | {duck:.2f} | {mem / duck:.2f} | "
            f"{statistics.median(r.peak_mib['memory']):.0f} | {statistics.median(r.peak_mib['duckdb']):.0f} | "
            f"{'yes' if r.same else 'NO'} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="256,1024", help="GPUs of the generated fleets, multiples of 256")
    ap.add_argument("--runs", type=int, default=3, help="runs per engine and input")
    ap.add_argument("--no-examples", action="store_true", help="skip the shipped examples")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per run")
    args = ap.parse_args(list(argv) if argv is not None else None)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    before = os.getloadavg()[0]
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="engine-choice-") as tmp:
        cache = Path(tmp) / "cache"
        cache.mkdir(mode=0o700)
        if not args.no_examples:
            for path in sorted((REPO / "inventories").glob("*.yaml")):
                rows.append(measure(path.name, path, args.runs, args.timeout, cache))
        for gpus in sizes:
            path = Path(tmp) / f"fleet-{gpus}.yaml"
            path.write_text(inventory_yaml(Layout(gpus)), encoding="utf-8")
            rows.append(measure(f"fleet of {gpus:,} GPUs", path, args.runs, args.timeout, cache))
    sys.stdout.write(render(rows, (before, os.getloadavg()[0])))
    return 0 if all(r.same for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
