"""`topolog verify`, `query` and `authorize` as a CI gate runs them: whole processes on the shipped examples.

Each command is started `--runs` times and the median wall and CPU (user + system) times are
printed, once with the cache off (`TOPOLOG_CACHE_DIR=`, a fresh CI runner: the shipped rule pack
comes compiled with the package, verifier/engine/shipped_program.json, and every run evaluates it)
and once warm (a cache folder the first run fills: the checked program, node classes,
policies and decisions, and the memory engine's evaluation of an unchanged inventory), with the
peak memory of the warm runs.
`authorize` evaluates no rule, so its two columns differ only by noise: its row is the
fixed cost of starting topolog, reading an inventory and asking Cedar once.

    python benchmarks/cli_bench.py --runs 5
    python benchmarks/cli_bench.py --topolog /path/to/other/venv/bin/topolog   # another install, same rows

On a shared machine the CPU columns are the steadier figures: wall time counts the waits for a core.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {
    "verify edge-soc": ["verify", "inventories/edge-soc.yaml"],
    "verify mixed-fleet": ["verify", "inventories/mixed-fleet.yaml"],
    "verify dgx-h100-pod": ["verify", "inventories/dgx-h100-pod.yaml"],
    "verify gb200-nvl72": ["verify", "inventories/gb200-nvl72.yaml"],
    "query dgx-h100-pod": ["query", "inventories/dgx-h100-pod.yaml", 'link(L, A, B, "nvlink", M), M < 400000'],
    "query dgx-h100-pod within": ["query", "inventories/dgx-h100-pod.yaml", "within(G, R)"],
    "authorize dgx-h100-pod": [
        "authorize",
        "inventories/dgx-h100-pod.yaml",
        "--principal",
        "dan",
        "--action",
        "schedule",
        "--resource",
        "dgx00/gpu0",
    ],
    "authorize mixed-fleet (deny)": [
        "authorize",
        "inventories/mixed-fleet.yaml",
        "--principal",
        "ivan",
        "--action",
        "schedule",
        "--resource",
        "a100-n0/gpu0",
    ],
}
"""Row name -> arguments after `topolog`; every one exits 0 or 1 on the shipped examples (an authorize Deny is 1)."""


def _topolog(given: str | None = None) -> list[str]:
    """`given`, else the `topolog` of the interpreter running this script (not whichever is first on PATH)."""
    if given:
        return [given]
    beside = Path(sys.executable).with_name("topolog")
    return (
        [str(beside)] if beside.exists() else [sys.executable, "-P", "-c", "from verifier.cli.main import run; run()"]
    )


def _run(args: list[str], cache: str, topolog: str | None = None) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak MiB of the child) of one run."""
    env = {**os.environ, "TOPOLOG_CACHE_DIR": cache}
    started = time.perf_counter()
    pid = subprocess.Popen(
        [*_topolog(topolog), *args], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(pid.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"{' '.join(args)} failed with exit {os.waitstatus_to_exitcode(status)}")
    peak_kib = usage.ru_maxrss if sys.platform != "darwin" else usage.ru_maxrss / 1024
    return wall, usage.ru_utime + usage.ru_stime, peak_kib / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--topolog", help="the topolog command to time (default: this interpreter's)")
    options = parser.parse_args()
    runs, topolog = options.runs, options.topolog
    print("| command | cold s (no cache) | cold CPU s | warm s | warm CPU s | warm peak MiB |")
    print("|---|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for name, args in COMMANDS.items():
            cold = [_run(args, "", topolog) for _ in range(runs)]
            _run(args, folder, topolog)  # fills the cache
            warm = [_run(args, folder, topolog) for _ in range(runs)]
            print(
                f"| {name} | {statistics.median(w for w, _, _ in cold):.2f} "
                f"| {statistics.median(c for _, c, _ in cold):.2f} "
                f"| {statistics.median(w for w, _, _ in warm):.2f} | {statistics.median(c for _, c, _ in warm):.2f} "
                f"| {statistics.median(p for _, _, p in warm):.0f} |"
            )


if __name__ == "__main__":
    main()
