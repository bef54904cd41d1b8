"""`topolog verify FLEET --observed DIR` against `topolog verify FLEET` at fleet scale (issue 41's speed row).

    python benchmarks/observed_bench.py [--sizes 8192,32768,131072] [--timeout 900] [--keep DIR]

For each size (GPUs, a multiple of 256) the fleet of benchmarks/verify_bench.py is written (DGX H100
nodes, 8 GPUs each) and, beside it, one observation folder per node holding one `nvidia-smi -q -x`
file (`DIR/<node>/nvidia-smi.xml`): 16,384 files for 131,072 GPUs. Each file is generated from the
structure of the real sample tests/sources/observed/samples/nvidia-smi-q-xml/a100-sxm4-v12.xml (its
header and its `<gpu>` element, every element kept, in order), made into an H100 node's: 8 GPUs
whose product name, serial, UUID, minor number, PCI bus id and PCIe link (Gen5 x16) are the node's,
MIG off (the fleet's H100 run without MIG: `<mig_devices>` is `None`, as nvidia-smi prints it then).

Two deliberate faults make the answer checkable by hand: on FAULT_WIDTH_NODE GPU 3's link trained
to x8 of its x16 maximum (OBS001), and FAULT_MISSING_NODE's file lists GPUs 0-6 only (gpu7 declared,
not listed: OBS006). The observed run must report exactly the base run's findings plus those two;
anything else prints FAIL and the script exits 1.

Each case is a fresh `topolog verify FLEET --format json` process (the observed one with
`--observed DIR --observed-now` an hour after the files' timestamp), run once, alternating base and
observed, after a warm-up of both at 256 GPUs (the first run after the rule pack changed builds the
checked-program cache: seen at 8,192 GPUs as 43 s and 1.2 GiB once, 7 s and 240 MiB after); wall
time, CPU time and peak RSS are the child's own (os.wait4; CPU and peak memory include the worker
processes that read the files, verifier/sources/observed/load.py). CPU time is printed beside wall time
because on a shared, loaded host the wall time measures the other tenants too. Target (issue 41): at 131,072 GPUs
the observed run takes no more than 2x the base run's time and 1.5x its peak memory. Stdout is
Markdown; progress goes to stderr; the load average is printed because the machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import (  # noqa: E402
    GPUS_PER_NODE,
    NODES_PER_RACK,
    RACKS_PER_SU,
    Layout,
    Process,
    inventory_yaml,
    limit_flags,
    spawn,
    topolog_cli,
)

SAMPLE = REPO / "tests" / "sources" / "observed" / "samples" / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
FAULT_WIDTH_NODE = "su0000-r0-n1"
FAULT_MISSING_NODE = "su0000-r1-n3"
STAMP = "Sun Dec  6 08:00:00 2026"  # what nvidia-smi prints: the host's local time (read as UTC)
NOW = "2026-12-06T09:00:00Z"  # judged an hour later: trusted (observed_max_age_s is a day)
TARGET_SIZE = 131_072
TARGET_TIME, TARGET_MEMORY = 2.0, 1.5
BUSES = ("18", "2a", "3a", "5d", "9a", "ab", "ba", "db")  # a DGX H100's GPU bus numbers


def _between(text: str, start: str, end: str) -> tuple[int, int]:
    a = text.index(start)
    return a, text.index(end, a) + len(end)


def templates() -> tuple[str, str]:
    """The sample's header (up to its first `<gpu>`) and its `<gpu>` element, made an H100's, with placeholders."""
    text = SAMPLE.read_text(encoding="utf-8")
    g0, g1 = _between(text, '    <gpu id="', "    </gpu>\n")
    head, gpu = text[:g0], text[g0:g1]
    m0, m1 = _between(gpu, "        <mig_devices>", "</mig_devices>\n")
    gpu = gpu[:m0] + "        <mig_devices>None</mig_devices>\n" + gpu[m1:]
    subs = [
        (r'<gpu id="[^"]*">', '<gpu id="{bus_id}">'),
        (r"<current_mig>\w+</current_mig>", "<current_mig>Disabled</current_mig>"),
        (r"<pending_mig>\w+</pending_mig>", "<pending_mig>Disabled</pending_mig>"),
        (r"<product_name>[^<]*</product_name>", "<product_name>NVIDIA H100 80GB HBM3</product_name>"),
        (r"<product_architecture>[^<]*</product_architecture>", "<product_architecture>Hopper</product_architecture>"),
        (r"<serial>[^<]*</serial>", "<serial>{serial}</serial>"),
        (r"<uuid>[^<]*</uuid>", "<uuid>{uuid}</uuid>"),
        (r"<minor_number>[^<]*</minor_number>", "<minor_number>{index}</minor_number>"),
        (r"<pci_bus>[^<]*</pci_bus>", "<pci_bus>{bus}</pci_bus>"),
        (r"<pci_bus_id>[^<]*</pci_bus_id>", "<pci_bus_id>{bus_id}</pci_bus_id>"),
        (r"<max_link_gen>\d+</max_link_gen>", "<max_link_gen>5</max_link_gen>"),
        (r"<current_link_gen>\d+</current_link_gen>", "<current_link_gen>5</current_link_gen>"),
        (
            r"<device_current_link_gen>\d+</device_current_link_gen>",
            "<device_current_link_gen>5</device_current_link_gen>",
        ),
        (r"<max_device_link_gen>\d+</max_device_link_gen>", "<max_device_link_gen>5</max_device_link_gen>"),
        (r"<max_host_link_gen>\d+</max_host_link_gen>", "<max_host_link_gen>5</max_host_link_gen>"),
        (r"<current_link_width>\d+x</current_link_width>", "<current_link_width>{width}x</current_link_width>"),
    ]
    gpu = gpu.replace("{", "{{").replace("}", "}}")
    for pattern, repl in subs:
        gpu, n = re.subn(pattern, repl, gpu, count=1)
        if n != 1:
            raise SystemExit(f"the sample has no {pattern}: its layout changed")
    head = re.sub(r"<timestamp>[^<]*</timestamp>", f"<timestamp>{STAMP}</timestamp>", head)
    head = re.sub(r"<attached_gpus>\d+</attached_gpus>", "<attached_gpus>{count}</attached_gpus>", head)
    return head, gpu


def node_names(lay: Layout) -> list[str]:
    """Every node of verify_bench's fleet: su{p:04d}-r{r}-n{n}."""
    return [f"su{p:04d}-r{r}-n{n}" for p in range(lay.sus) for r in range(RACKS_PER_SU) for n in range(NODES_PER_RACK)]


def write_observations(folder: Path, lay: Layout) -> int:
    """One nvidia-smi.xml per node; the bytes written."""
    head, gpu = templates()
    written = 0
    for k, node in enumerate(node_names(lay)):
        gpus = GPUS_PER_NODE - 1 if node == FAULT_MISSING_NODE else GPUS_PER_NODE
        parts = [head.format(count=gpus)]
        for i in range(gpus):
            width = 8 if node == FAULT_WIDTH_NODE and i == 3 else 16
            parts.append(
                gpu.format(
                    bus_id=f"00000000:{BUSES[i].upper()}:00.0",
                    bus=BUSES[i].upper(),
                    serial=f"{1650522000000 + k * 8 + i}",
                    uuid=f"GPU-{k:08x}-{i:04x}-4000-8000-{k * 8 + i:012x}",
                    index=i,
                    width=width,
                )
            )
        parts.append("</nvidia_smi_log>\n")
        (folder / node).mkdir()
        data = "".join(parts).encode("utf-8")
        (folder / node / "nvidia-smi.xml").write_bytes(data)
        written += len(data)
    return written


Finding = tuple[str, str, tuple[str, ...]]


def findings(proc: Process) -> list[Finding]:
    found = json.loads(proc.stdout)["findings"]
    return sorted((f["rule"], f["severity"], tuple(f["subjects"])) for f in found)


def expected_extra() -> list[Finding]:
    """What the observations add, by hand: the two seeded faults."""
    return sorted(
        [
            ("OBS001", "warning", (f"{FAULT_WIDTH_NODE}/gpu3",)),
            ("OBS006", "error", (f"{FAULT_MISSING_NODE}/gpu7",)),
        ]
    )


@dataclass
class Case:
    gpus: int
    files: int
    mib: float
    base: Process
    observed: Process
    failures: list[str]


def run_size(gpus: int, work: Path, timeout: float) -> Case:
    lay = Layout(gpus)
    fleet = work / f"fleet-{gpus}.yaml"
    fleet.write_text(inventory_yaml(lay), encoding="utf-8")
    folder = work / f"observed-{gpus}"
    folder.mkdir()
    started = time.perf_counter()
    size = write_observations(folder, lay)
    print(
        f"[{gpus}] {lay.nodes:,} files, {size / 2**20:,.0f} MiB written in {time.perf_counter() - started:.1f} s",
        file=sys.stderr,
    )
    cli = [topolog_cli(), "verify", str(fleet), "--format", "json", *limit_flags(gpus)]
    base = spawn(cli, timeout)
    print(f"[{gpus}] base {base.wall_s:.2f} s, {base.peak_mib:,.0f} MiB, exit {base.rc}", file=sys.stderr)
    observed = spawn([*cli, "--observed", str(folder), "--observed-now", NOW], timeout)
    print(
        f"[{gpus}] observed {observed.wall_s:.2f} s, {observed.peak_mib:,.0f} MiB, exit {observed.rc}", file=sys.stderr
    )
    failures: list[str] = []
    for name, proc in (("base", base), ("observed", observed)):
        if proc.killed or proc.rc not in (0, 1):
            failures.append(f"{name}: exit {proc.rc}{' (timed out)' if proc.killed else ''}: {proc.stderr[-400:]}")
    if not failures:
        extra = sorted(set(findings(observed)) - set(findings(base)))
        lost = sorted(set(findings(base)) - set(findings(observed)))
        if extra != expected_extra() or lost:
            failures.append(f"observed run added {extra} and lost {lost}; expected to add {expected_extra()} only")
    shutil.rmtree(folder)
    return Case(gpus, lay.nodes, size / 2**20, base, observed, failures)


def render(cases: list[Case], load: tuple[float, float]) -> str:
    lines = [
        f"load average {load[0]:.2f} before, {load[1]:.2f} after (2 cores, shared)",
        "",
        "| GPUs | files | MiB of XML | verify s | --observed s | time ratio | verify CPU s | --observed CPU s "
        "| CPU ratio | verify MiB | --observed MiB | memory ratio | check |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        t = c.observed.wall_s / c.base.wall_s
        u = c.observed.cpu_s / c.base.cpu_s
        m = c.observed.peak_mib / c.base.peak_mib
        check = "FAIL: " + "; ".join(c.failures) if c.failures else "OK"
        lines.append(
            f"| {c.gpus:,} | {c.files:,} | {c.mib:,.0f} | {c.base.wall_s:.2f} | {c.observed.wall_s:.2f} | {t:.2f}x | "
            f"{c.base.cpu_s:.2f} | {c.observed.cpu_s:.2f} | {u:.2f}x | "
            f"{c.base.peak_mib:,.0f} | {c.observed.peak_mib:,.0f} | {m:.2f}x | {check} |"
        )
    at = [c for c in cases if c.gpus == TARGET_SIZE and not c.failures]
    if at:
        t = at[0].observed.wall_s / at[0].base.wall_s
        m = at[0].observed.peak_mib / at[0].base.peak_mib
        time_ok = "met" if t <= TARGET_TIME else "missed"
        memory_ok = "met" if m <= TARGET_MEMORY else "missed"
        lines += [
            "",
            f"Target at {TARGET_SIZE:,} GPUs: time <= {TARGET_TIME}x: {t:.2f}x ({time_ok}); "
            f"memory <= {TARGET_MEMORY}x: {m:.2f}x ({memory_ok}).",
        ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes", default="8192,32768,131072")
    ap.add_argument("--timeout", type=float, default=900.0)
    ap.add_argument("--keep", type=Path, help="write the fleets here (kept) instead of a temp dir")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    if any(s % 256 for s in sizes):
        ap.error("sizes must be multiples of 256 GPUs (one scalable unit)")
    before = os.getloadavg()[0]
    work = args.keep or Path(tempfile.mkdtemp(prefix="observed-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    try:
        warm = work / "warm-up"
        warm.mkdir()
        run_size(256, warm, args.timeout)
        cases = [run_size(gpus, work, args.timeout) for gpus in sizes]
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    print(render(cases, (before, os.getloadavg()[0])))
    return 1 if any(c.failures for c in cases) else 0


if __name__ == "__main__":
    sys.exit(main())
