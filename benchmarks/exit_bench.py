"""What ending a `topolog verify` process costs once the command has returned, at several sizes.

    python benchmarks/exit_bench.py [--sizes 8192,32768] [--runs 5]

Each run is a fresh process that runs `topolog verify INVENTORY` and notes the monotonic clock
the moment the command returns; this script notes it again once the process is reaped. Two
ways to end: the interpreter's normal exit (verifier.cli.main.run, what a library caller gets:
the interpreter frees everything the run built, object by object) and the console script's
(verifier.cli.entry.run: stdout and stderr flushed, then the process ends at once). The
inventories are the shipped GB200 rack and benchmarks/verify_bench.py's fleets. Stdout is
Markdown: the median milliseconds of each, and the exit status, which must be the same.
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

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402

# The child notes the clock when the command returns, then ends the way it is told to.
CHILD = """\
import gc, sys, time
gc.disable()
import verifier.cli.entry as entry
import verifier.cli.main as main
stamp, how = sys.argv[1], sys.argv[2]
del sys.argv[1:3]

def noted():
    try:
        main.run()
    finally:
        with open(stamp, "w") as out:
            out.write(repr(time.monotonic()))

if how == "console":
    entry.run_command = noted
    entry.run()
noted()
"""


def one_run(how: str, inventory: Path, stamp: Path) -> tuple[float, int]:
    """Milliseconds from the command's return to the reaped process, and the exit status."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(stamp), how, "verify", str(inventory)],
        cwd=REPO,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    reaped = time.monotonic()
    returned = float(stamp.read_text())
    return 1000 * (reaped - returned), done.returncode


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="8192,32768", help="GPUs of the generated fleets, comma-separated")
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        inventories = [("gb200-nvl72.yaml (shipped)", REPO / "inventories" / "gb200-nvl72.yaml")]
        for gpus in (int(s) for s in args.sizes.split(",") if s):
            path = folder / f"fleet-{gpus}.yaml"
            path.write_text(inventory_yaml(Layout(gpus)))
            inventories.append((f"{gpus:,} GPUs", path))
        stamp = folder / "returned"
        print("# Ending a `topolog verify` process once the command has returned\n")
        print(f"Median of {args.runs} runs each, milliseconds; load average {os.getloadavg()[0]:.2f}.\n")
        print("| inventory | interpreter's exit ms | console script's ms | exit status |")
        print("|---|---:|---:|---|")
        failed = False
        for label, path in inventories:
            took: dict[str, list[float]] = {"normal": [], "console": []}
            statuses: set[int] = set()
            for _ in range(args.runs):
                for how in ("normal", "console"):  # alternating: a drift of the host hits both alike
                    ms, status = one_run(how, path, stamp)
                    took[how].append(ms)
                    statuses.add(status)
            failed |= len(statuses) != 1
            shown = ", ".join(str(s) for s in sorted(statuses))
            normal, console = statistics.median(took["normal"]), statistics.median(took["console"])
            print(f"| {label} | {normal:.1f} | {console:.1f} | {shown}{' (DIFFER)' if len(statuses) != 1 else ''} |")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
