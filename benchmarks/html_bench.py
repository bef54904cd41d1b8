"""The html report's size and time to first paint at 64, 4,096 and 131,072 GPUs (not a timed test).

    python benchmarks/html_bench.py [--sizes 64,4096,131072] [--runs 3] [--keep DIR]

64 GPUs is the shipped inventories/dgx-h100-pod.yaml; the larger sizes are the DGX H100
fleets of benchmarks/verify_bench.py (one node template, scalable units of 32 nodes with
a rail-optimised leaf/spine fabric, and the same deliberate outliers, so every size has
findings to draw). For each size `topolog verify FILE --output html=REPORT` runs in a child
process (its wall time is `write s`; `html s` is the page alone, `render(report, "html")` timed
in another child after the same verification with proofs), then headless Chromium (/usr/bin/chromium, driven
by Playwright) opens the file from disk, --runs times in fresh pages:

    first paint ms   the browser's first-contentful-paint entry (header and lists shown)
    drawn ms         navigation start to the drawing laid out and fitted (body[data-ready])

and the median of each is printed, with the drawn boxes and wires and any console error.
Stdout is a Markdown table; progress goes to stderr. The machine is shared, so the load
average is printed beside the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml, topolog_cli  # noqa: E402 - after the path set-up above

CHROMIUM = "/usr/bin/chromium"
BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SHIPPED_64 = REPO / "inventories" / "dgx-h100-pod.yaml"


@dataclass
class Row:
    gpus: int
    bytes: int
    write_s: float
    html_s: float
    paint_ms: float
    drawn_ms: float
    boxes: int
    wires: int
    findings: int
    errors: list[str]


def inventory_for(gpus: int, workdir: Path) -> Path:
    if gpus == 64:
        return SHIPPED_64
    path = workdir / f"fleet-{gpus}.yaml"
    path.write_text(inventory_yaml(Layout(gpus)), encoding="utf-8")
    return path


def write_report(inventory: Path, out: Path, timeout: float) -> float:
    start = time.perf_counter()
    done = subprocess.run(
        [topolog_cli(), "verify", str(inventory), "--output", f"html={out}"],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"topolog verify failed on {inventory}:\n{done.stderr}")
    return elapsed


# The page alone: verify as `--output html` does (proofs on), then time only the html rendering.
RENDER_ONLY = """
import sys, time
from verifier import verify
from verifier.reports import render
report = verify([sys.argv[1]], proofs=True)
start = time.perf_counter()
render(report, "html")
print(time.perf_counter() - start)
"""


def render_time(inventory: Path, timeout: float) -> float:
    done = subprocess.run(
        [sys.executable, "-c", RENDER_ONLY, str(inventory)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        cwd=REPO,
    )
    if done.returncode != 0:
        raise SystemExit(f"rendering the html of {inventory} failed:\n{done.stderr}")
    return float(done.stdout.strip().splitlines()[-1])


def counts(report: Path) -> tuple[int, int, int]:
    text = report.read_text(encoding="utf-8")
    match = re.search(r'<script type="application/json" id="topolog-data">(.*?)</script>', text, re.S)
    if match is None:
        raise SystemExit(f"{report}: no embedded data")
    data = json.loads(match.group(1))
    return len(data["nodes"]), len(data["edges"]), len(data["findings"])


def measure(report: Path, runs: int) -> tuple[float, float, list[str]]:
    from playwright.sync_api import sync_playwright

    paints: list[float] = []
    drawn: list[float] = []
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        for _ in range(runs):
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(report.as_uri())
            page.wait_for_selector("body[data-ready]", timeout=300_000)
            drawn.append(float(page.evaluate("performance.now()")))
            paint = page.evaluate(
                "(performance.getEntriesByName('first-contentful-paint')[0] || {startTime: -1}).startTime"
            )
            paints.append(float(paint))
            page.close()
        browser.close()
    return statistics.median(paints), statistics.median(drawn), errors


def run(sizes: Iterable[int], runs: int, keep: Path | None, timeout: float) -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        workdir = keep or Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        for gpus in sizes:
            print(f"{gpus:,} GPUs: writing the report", file=sys.stderr)
            inventory = inventory_for(gpus, workdir)
            report = workdir / f"report-{gpus}.html"
            write_s = write_report(inventory, report, timeout)
            print(f"{gpus:,} GPUs: timing the html page alone", file=sys.stderr)
            html_s = render_time(inventory, timeout)
            print(f"{gpus:,} GPUs: opening it in Chromium", file=sys.stderr)
            paint, drawn, errors = measure(report, runs)
            boxes, wires, findings = counts(report)
            rows.append(Row(gpus, report.stat().st_size, write_s, html_s, paint, drawn, boxes, wires, findings, errors))
    return rows


def render(rows: list[Row], load: tuple[float, float]) -> str:
    lines = [
        "| GPUs | file bytes | write s | html s | first paint ms | drawn ms | boxes | wires | findings"
        " | console errors |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r.gpus:,} | {r.bytes:,} | {r.write_s:.1f} | {r.html_s:.1f} | {r.paint_ms:.0f} | {r.drawn_ms:.0f} "
            f"| {r.boxes} | {r.wires} | {r.findings} | {'; '.join(r.errors) or 'none'} |"
        )
    lines.append("")
    lines.append(f"load average before/after: {load[0]:.2f} / {load[1]:.2f} (2 shared cores)")
    return "\n".join(lines) + "\n"


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="64,4096,131072", help="GPUs per case: 64, or multiples of 256")
    parser.add_argument("--runs", type=int, default=3, help="page loads per size (median)")
    parser.add_argument("--keep", type=Path, default=None, help="keep inventories and reports in DIR")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per topolog run")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if not Path(CHROMIUM).exists():
        print(f"{CHROMIUM} not found: apt-get install chromium", file=sys.stderr)
        return 2
    before = os.getloadavg()[0]
    rows = run([int(s) for s in args.sizes.split(",")], args.runs, args.keep, args.timeout)
    sys.stdout.write(render(rows, (before, os.getloadavg()[0])))
    return 1 if any(r.errors for r in rows) else 0


if __name__ == "__main__":
    raise SystemExit(main())
