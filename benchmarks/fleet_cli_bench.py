"""Issue 15's fleet rows through the real CLI: `topolog verify FLEET`, without and with principals.yml beside it.

    python benchmarks/fleet_cli_bench.py [--sizes 8192,32768,131072] [--runs 3] [--timeout 600]

For each size (GPUs, a multiple of 256) the fleet of benchmarks/verify_bench.py is written
twice, to two folders: alone, and with the shipped inventories/principals.yml beside it (so
that `verify` builds Cedar entities and judges the authorization rules too). Each is then
verified `--runs` times, alternating, each run a fresh `topolog verify FLEET` process as a CI
gate runs it (text report, whole rule pack, the user's cache as repeated runs on one machine
leave it); the table gives the median wall time and the largest peak RSS.

Checks, worked out by hand (verify_bench.expected_findings): the deliberate overrides give
the same findings with and without principals (every node is labelled tenant research, and
the shipped policies let team research schedule there, so no authorization check fires),
each printed as `FILE:LINE:COL: SEVERITY RULE: ...`, and the exit status is 1 (there are
errors). Any difference prints FAIL and the script exits 1.

Sizes above 131,072 GPUs run with the input limits raised in proportion (verify_bench.limit_flags,
docs/limits.md), as the defaults refuse them.

Targets (issue 15, at 131,072 GPUs): without principals <= 8 s and <= 1.5 GiB; with
principals.yml <= 10 s and <= 2 GiB. Stdout is Markdown; progress goes to stderr; the load
average is printed because the machine is shared.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import (  # noqa: E402
    Layout,
    Process,
    expected_findings,
    inventory_yaml,
    limit_flags,
    spawn,
    topolog_cli,
)

PRINCIPALS = REPO / "inventories" / "principals.yml"
TARGETS = {False: (8.0, 1536.0), True: (10.0, 2048.0)}  # principals beside it -> (seconds, MiB) at 131,072
TARGET_SIZE = 131_072
_FINDING = re.compile(r"^(?P<file>[^:\n]+):(?P<line>\d+):\d+: (?P<severity>error|warning|note) (?P<rule>[A-Z]+\d+): ")


@dataclass
class Case:
    gpus: int
    principals: bool
    runs: list[Process] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def median_s(self) -> float:
        return statistics.median(r.wall_s for r in self.runs) if self.runs else float("nan")

    @property
    def peak_mib(self) -> float:
        return max((r.peak_mib for r in self.runs), default=float("nan"))


def reported(stdout: str) -> list[tuple[str, str, int]]:
    """(rule, severity, line) of every finding the text report prints, sorted."""
    found = [(m["rule"], m["severity"], int(m["line"])) for m in map(_FINDING.match, stdout.splitlines()) if m]
    return sorted(found)


def check(case: Case, run: Process, want: list[tuple[str, str, int]]) -> None:
    if run.killed:
        case.failures.append("killed at the timeout")
        return
    if run.rc != 1:
        case.failures.append(f"exit {run.rc}, expected 1: {run.stderr.strip()[-300:]}")
    got = reported(run.stdout)
    if got != want:
        case.failures.append(f"findings {got}, expected {want}")


def run_size(gpus: int, workdir: Path, runs: int, timeout: float) -> list[Case]:
    text = inventory_yaml(Layout(gpus))
    want = sorted((rule, severity, line) for rule, severity, _subjects, _message, line in expected_findings(text))
    cases: list[Case] = []
    paths: list[Path] = []
    for principals in (False, True):
        folder = workdir / f"fleet-{gpus}-{'principals' if principals else 'alone'}"
        folder.mkdir(parents=True, exist_ok=True)
        fleet = folder / f"fleet-{gpus}.yaml"
        fleet.write_text(text)
        if principals:
            shutil.copy(PRINCIPALS, folder / "principals.yml")
        cases.append(Case(gpus, principals))
        paths.append(fleet)
    for i in range(runs):
        for case, fleet in zip(cases, paths, strict=True):
            beside = "principals.yml beside it" if case.principals else "alone"
            sys.stderr.write(f"fleet_cli_bench: {gpus:,} GPUs, {beside}, run {i + 1}/{runs}\n")
            run = spawn([topolog_cli(), *limit_flags(gpus), "verify", str(fleet)], timeout)
            case.runs.append(run)
            check(case, run, want)
    return cases


def render(cases: list[Case], runs: int, load: tuple[float, float]) -> str:
    lines = [
        "# `topolog verify` on generated fleets, through the CLI",
        "",
        f"Wall seconds of the whole process, median of {runs}; peak RSS the largest of those runs; "
        f"load average {load[0]:.2f} before, {load[1]:.2f} after.",
        "",
        "| GPUs | principals.yml | median s | peak MiB | check |",
        "|---:|---|---:|---:|---|",
    ]
    for c in cases:
        ok = "ok" if not c.failures else "FAIL"
        lines.append(
            f"| {c.gpus:,} | {'beside it' if c.principals else 'none'} | {c.median_s:.2f} | {c.peak_mib:,.0f} | {ok} |"
        )
    lines += ["", f"Targets (issue 15, at {TARGET_SIZE:,} GPUs):"]
    measured = [c for c in cases if c.gpus == TARGET_SIZE]
    if not measured:
        lines.append("- not measured at these sizes")
    for c in measured:
        seconds, mib = TARGETS[c.principals]
        met = c.median_s <= seconds and c.peak_mib <= mib
        what = "principals.yml beside it" if c.principals else "no principals"
        lines.append(
            f"- {what}: {c.median_s:.2f} s (target <= {seconds:g} s), {c.peak_mib:,.0f} MiB "
            f"(target <= {mib:,.0f} MiB): {'met' if met else 'MISSED'}"
        )
    return "\n".join(lines) + "\n"


def _csv_ints(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", type=_csv_ints, default=[8192, 32768, 131072], help="GPUs, multiples of 256")
    ap.add_argument("--runs", type=int, default=3, help="runs per case (the median is reported)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per process")
    args = ap.parse_args(list(argv) if argv is not None else None)
    for g in args.sizes:
        Layout(g)  # reject bad sizes before any work
    before = os.getloadavg()[0]
    cases: list[Case] = []
    with tempfile.TemporaryDirectory(prefix="fleet-cli-bench-") as tmp:
        for g in args.sizes:
            cases += run_size(g, Path(tmp), args.runs, args.timeout)
    sys.stdout.write(render(cases, args.runs, (before, os.getloadavg()[0])))
    failed = [f"{c.gpus:,} GPUs ({'principals' if c.principals else 'alone'}): {f}" for c in cases for f in c.failures]
    for f in dict.fromkeys(failed):
        sys.stdout.write(f"FAIL {f}\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
