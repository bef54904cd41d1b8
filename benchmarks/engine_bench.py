"""Engine scale benchmark: DGX-style fleets as in-memory facts, three workloads, every engine.

    python benchmarks/engine_bench.py [--sizes 512,4096,32768,131072] [--engines duckdb,pydatalog]
                                      [--workloads containment,nvlink-domain,reach] [--timeout 120]

Prints a Markdown table (stdout) of fact load time, evaluation time, peak RSS and derived
tuple counts per (GPUs, engine, workload); progress goes to stderr. Exit status 1 when a
count differs from the closed form derived from the layout, or engines disagree.

Each case runs in a fresh child process so that peak memory is that case's own (read with
os.wait4, which returns the rusage of exactly one child) and so that a case can be killed
at --timeout without leaking engine state (pyDatalog keeps a per-thread singleton) into
the next one.

The layout (all sizes must be a multiple of 8 GPUs):

- node (DGX H100-like): 8 GPUs, 4 NVSwitches with every GPU cabled to every NVSwitch,
  4 PCIe switches each holding 2 GPUs and 2 NICs, 8 NICs with NIC i on rail i;
- rack: 4 nodes (the DGX SuperPOD H100 rack density);
- pod = scalable unit (SU): 32 nodes / 256 GPUs / 8 racks, with one leaf switch per rail;
- fabric: rail-optimised two-tier fat tree: NIC i of every node in an SU links to that SU's
  rail-i leaf, and every leaf links to each of SPINES spine switches. At 131,072 GPUs a real
  fabric needs a third tier; a "spine" here stands for a spine plane, which changes
  nothing the workloads measure (they are linear in the number of links).
- containment, parent(child, parent): gpu/nic -> PCIe switch -> node -> rack -> pod,
  NVSwitch -> node, leaf -> pod.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

# The script is run as a file from the repository root, not as an installed package, so
# make `verifier` importable without requiring `pip install -e .` first.
REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import timed_child  # noqa: E402
from verifier.engine.ast import Program, Row  # noqa: E402
from verifier.engine.backend import Backend  # noqa: E402
from verifier.engine.parser import parse_program  # noqa: E402

PROGRAMS = Path(__file__).resolve().parent / "programs"

GPUS_PER_NODE = 8
NVSWITCHES_PER_NODE = 4
PCIE_SWITCHES_PER_NODE = 4
NICS_PER_NODE = 8  # one per rail
RAILS = NICS_PER_NODE
NODES_PER_RACK = 4
NODES_PER_SU = 32
SPINES = 16

DEFAULT_SIZES = (512, 4096, 32768, 131072)
DEFAULT_ENGINES = ("duckdb", "pydatalog")
PYDATALOG_MAX_GPUS = 4096
"""DESIGN.md measures pyDatalog at 43 s for containment at 4,096 GPUs; the next size is 8x more."""

# Targets from the project brief, for duckdb at 131,072 GPUs, load + evaluation.
TARGETS: dict[str, float] = {"containment": 3.0, "nvlink-domain": 6.0}
TARGET_GPUS = 131072


# --------------------------------------------------------------------------- layout


@dataclass(frozen=True)
class Layout:
    """Object counts of a fleet of `gpus` GPUs; every closed-form expectation derives from these."""

    gpus: int

    def __post_init__(self) -> None:
        if self.gpus <= 0 or self.gpus % GPUS_PER_NODE:
            raise ValueError(f"size must be a positive multiple of {GPUS_PER_NODE} GPUs, got {self.gpus}")
        if self.nodes >= 100_000:
            # Node ids are zero-padded to 5 digits (sortable, and parsed back when the
            # domain names are verified).
            raise ValueError("at most 99,999 nodes")

    @property
    def nodes(self) -> int:
        return self.gpus // GPUS_PER_NODE

    @property
    def racks(self) -> int:
        return -(-self.nodes // NODES_PER_RACK)

    @property
    def pods(self) -> int:
        return -(-self.nodes // NODES_PER_SU)

    @property
    def leaves(self) -> int:
        return self.pods * RAILS

    @property
    def links(self) -> int:
        per_node = (
            GPUS_PER_NODE * NVSWITCHES_PER_NODE  # nvlink: every GPU to every NVSwitch
            + GPUS_PER_NODE
            + NICS_PER_NODE  # pcie: each GPU and NIC to its PCIe switch
            + NICS_PER_NODE  # network: NIC to its rail leaf
        )
        return self.nodes * per_node + self.leaves * SPINES

    @property
    def linked_objects(self) -> int:
        """Objects that appear in some link: one connected component holding all of them."""
        per_node = GPUS_PER_NODE + NVSWITCHES_PER_NODE + PCIE_SWITCHES_PER_NODE + NICS_PER_NODE
        return self.nodes * per_node + self.leaves + SPINES


def _node(k: int) -> str:
    return f"n{k:05d}"


def _rack(r: int) -> str:
    return f"rack{r:05d}"


def _pod(s: int) -> str:
    return f"su{s:04d}"


def _leaf(s: int, rail: int) -> str:
    return f"{_pod(s)}/leaf-r{rail}"


def _spine(i: int) -> str:
    return f"spine{i:02d}"


def first_gpu() -> str:
    return f"{_node(0)}/gpu0"


def gen_parent(lay: Layout) -> list[Row]:
    rows: list[Row] = []
    add = rows.extend
    for k in range(lay.nodes):
        n = _node(k)
        pcie = [f"{n}/pcie{j}" for j in range(PCIE_SWITCHES_PER_NODE)]
        # GPU i and NIC i share PCIe switch i // 2 (2 GPUs + 2 NICs per switch).
        add((f"{n}/gpu{i}", pcie[i // 2]) for i in range(GPUS_PER_NODE))
        add((f"{n}/nic{i}", pcie[i // 2]) for i in range(NICS_PER_NODE))
        add((p, n) for p in pcie)
        add((f"{n}/nvsw{j}", n) for j in range(NVSWITCHES_PER_NODE))
        rows.append((n, _rack(k // NODES_PER_RACK)))
    racks_per_pod = NODES_PER_SU // NODES_PER_RACK
    add((_rack(r), _pod(r // racks_per_pod)) for r in range(lay.racks))
    add((_leaf(s, i), _pod(s)) for s in range(lay.pods) for i in range(RAILS))
    return rows


def gen_gpu(lay: Layout) -> list[Row]:
    return [(f"{_node(k)}/gpu{i}", k * GPUS_PER_NODE + i) for k in range(lay.nodes) for i in range(GPUS_PER_NODE)]


def gen_nvlink(lay: Layout) -> list[Row]:
    rows: list[Row] = []
    for k in range(lay.nodes):
        n = _node(k)
        sw = [f"{n}/nvsw{j}" for j in range(NVSWITCHES_PER_NODE)]
        rows.extend((f"{n}/gpu{i}", s) for i in range(GPUS_PER_NODE) for s in sw)
    return rows


def gen_link(lay: Layout) -> list[Row]:
    rows = gen_nvlink(lay)
    add = rows.extend
    for k in range(lay.nodes):
        n = _node(k)
        s = k // NODES_PER_SU
        add((f"{n}/pcie{i // 2}", f"{n}/gpu{i}") for i in range(GPUS_PER_NODE))
        add((f"{n}/pcie{i // 2}", f"{n}/nic{i}") for i in range(NICS_PER_NODE))
        add((f"{n}/nic{i}", _leaf(s, i)) for i in range(NICS_PER_NODE))
    spines = [_spine(i) for i in range(SPINES)]
    add((_leaf(s, i), sp) for s in range(lay.pods) for i in range(RAILS) for sp in spines)
    return rows


GENERATORS: dict[str, Callable[[Layout], list[Row]]] = {
    "parent": gen_parent,
    "gpu": gen_gpu,
    "nvlink": gen_nvlink,
    "link": gen_link,
    "start": lambda lay: [(first_gpu(),)],
}


# --------------------------------------------------------------------------- workloads


@dataclass(frozen=True)
class Workload:
    name: str
    program_file: str
    expected: Callable[[Layout], dict[str, int]]
    """Closed-form tuple count per derived relation (and any extra named measure)."""
    extra: Callable[[Backend, Layout], dict[str, int]] = field(default=lambda engine, lay: {})
    """Further measures read from the evaluated engine, checked against `expected` too."""


def _expect_containment(lay: Layout) -> dict[str, int]:
    # Ancestors per object: gpu/nic 4 (pcie, node, rack, pod); pcie and NVSwitch 3;
    # node 2; rack and leaf 1.
    per_node = (GPUS_PER_NODE + NICS_PER_NODE) * 4 + (PCIE_SWITCHES_PER_NODE + NVSWITCHES_PER_NODE) * 3 + 2
    return {"within": lay.nodes * per_node + lay.racks + lay.leaves}


def _expect_domain(lay: Layout) -> dict[str, int]:
    nvlinks = GPUS_PER_NODE * NVSWITCHES_PER_NODE
    return {
        "nvedge": 2 * nvlinks * lay.nodes,
        # each GPU reaches its node's NVSwitches and GPUs (itself included, via a switch)
        "nvreach": lay.gpus * (NVSWITCHES_PER_NODE + GPUS_PER_NODE),
        "domain": lay.gpus,
        "distinct domains": lay.nodes,
        "domains not named by their node's gpu0": 0,
    }


def _domain_extra(engine: Backend, lay: Layout) -> dict[str, int]:
    rows = engine.query("domain")
    names = {d for _, d in rows}
    # The smallest number in a node's NVLink domain is that node's gpu0: 8 * node index.
    wrong = sum(1 for g, d in rows if d != int(str(g)[1:6]) * GPUS_PER_NODE)
    return {"distinct domains": len(names), "domains not named by their node's gpu0": wrong}


def _expect_reach(lay: Layout) -> dict[str, int]:
    # The fabric connects everything, so the start GPU reaches every linked object,
    # itself included (there and back over any link).
    return {"edge": 2 * lay.links, "reach": lay.linked_objects}


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in (
        Workload("containment", "containment.dl", _expect_containment),
        Workload("nvlink-domain", "nvlink_domain.dl", _expect_domain, _domain_extra),
        Workload("reach", "single_source_reach.dl", _expect_reach),
    )
}


def load_program(workload: Workload) -> tuple[Program, bool]:
    """Parse the workload's program and, where the checker exists, validate it (safety, strata)."""
    path = PROGRAMS / workload.program_file
    program = parse_program(path.read_text(encoding="utf-8"), str(path.relative_to(REPO)))
    try:
        from verifier.engine.checks import check_program
    except ImportError:
        return program, False
    check_program(program)  # raises ProgramError (unsafe rule, bad strata, types)
    return program, True


# --------------------------------------------------------------------------- child: one case


def _emit(record: dict[str, object]) -> None:
    # One JSON line per phase, flushed, so the parent knows how far a killed case got.
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


def run_case(gpus: int, engine_name: str, workload_name: str) -> None:
    from verifier.engine.engines import make_backend

    lay = Layout(gpus)
    workload = WORKLOADS[workload_name]
    program, checked = load_program(workload)
    inputs = [d.name for d in program.declarations if d.is_input]
    derived = [d.name for d in program.declarations if not d.is_input]

    t0 = time.perf_counter()
    facts = {rel: GENERATORS[rel](lay) for rel in inputs}
    gen_s = time.perf_counter() - t0
    n_facts = sum(len(rows) for rows in facts.values())
    _emit({"phase": "generated", "gen_s": gen_s, "facts": n_facts, "checked": checked, "at": time.time()})

    engine = make_backend(engine_name)
    t0, c0 = time.perf_counter(), time.process_time()
    engine.load(program)
    for rel, rows in facts.items():
        engine.add_facts(rel, rows)
    load_s, load_cpu = time.perf_counter() - t0, time.process_time() - c0
    # Wall-clock stamps ("at"), so the parent can tell how long the phase it cut short ran.
    _emit({"phase": "loaded", "load_s": load_s, "load_cpu": load_cpu, "at": time.time()})
    del facts  # the engine holds its own copy; drop ours so peak RSS is not inflated later

    t0, c0 = time.perf_counter(), time.process_time()
    engine.evaluate()
    # Counting is part of evaluation time on purpose: a lazy engine (pyDatalog answers on
    # query) may only do its work when asked.
    counts = {rel: engine.count(rel) for rel in derived}
    eval_s, eval_cpu = time.perf_counter() - t0, time.process_time() - c0
    counts.update(workload.extra(engine, lay))
    engine.close()
    _emit({"phase": "done", "eval_s": eval_s, "eval_cpu": eval_cpu, "counts": counts})


# --------------------------------------------------------------------------- parent: harness


@dataclass
class Result:
    gpus: int
    engine: str
    workload: str
    status: str  # "ok", "capped", "error", "not run"
    facts: int | None = None
    gen_s: float | None = None
    load_s: float | None = None
    eval_s: float | None = None
    peak_mib: float | None = None
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    note: str = ""
    cpu_s: float = 0.0
    """CPU seconds (all threads) of load + eval: less sensitive than wall time to a busy machine."""
    capped_after: float = 0.0  # seconds the capped phase had run when the case was killed


def spawn_case(gpus: int, engine: str, workload: str, timeout: float) -> Result:
    res = Result(gpus, engine, workload, "ok")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", f"{gpus},{engine},{workload}"]
    # Files, not pipes: a chatty engine can never block on a full pipe buffer.
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.time()
        returncode, wall, usage, killed = timed_child(cmd, timeout, out, err)
        killed_at = started + wall
        phase_started = 0.0
        res.peak_mib = usage.ru_maxrss / 1024  # KiB on Linux
        out.seek(0)
        err.seek(0)
        records = [json.loads(line) for line in out.read().splitlines() if line.startswith("{")]
        stderr_tail = err.read().strip().splitlines()[-5:]

    for rec in records:
        if rec["phase"] == "generated":
            res.facts, res.gen_s, phase_started = rec["facts"], rec["gen_s"], rec["at"]
            if not rec["checked"]:
                res.note = "program not checked (verifier.engine.checks missing)"
        elif rec["phase"] == "loaded":
            res.load_s, phase_started = rec["load_s"], rec["at"]
            res.cpu_s += rec["load_cpu"]
        elif rec["phase"] == "done":
            res.eval_s, res.counts = rec["eval_s"], rec["counts"]
            res.cpu_s += rec["eval_cpu"]
    if killed:
        res.status = "capped"
        # Interpreter start-up and fact generation also ran inside the timeout, so report
        # how long the phase that was cut short actually ran, not the whole budget.
        res.capped_after = killed_at - phase_started if phase_started else timeout
    elif returncode != 0 or res.eval_s is None:
        res.status = "error"
        res.failures.append(f"exit {returncode}: " + " | ".join(stderr_tail))
    else:
        expected = WORKLOADS[workload].expected(Layout(gpus))
        for key, want in expected.items():
            got = res.counts.get(key)
            if got != want:
                res.failures.append(f"{key}: got {got}, expected {want}")
    return res


def cross_check(results: list[Result]) -> None:
    """Engines that both finished a case must agree on every count."""
    by_case: dict[tuple[int, str], list[Result]] = {}
    for r in results:
        if r.status == "ok":
            by_case.setdefault((r.gpus, r.workload), []).append(r)
    for rs in by_case.values():
        ref = rs[0]
        for other in rs[1:]:
            if other.counts != ref.counts:
                msg = f"disagrees with {ref.engine}: {other.counts} vs {ref.counts}"
                other.failures.append(msg)


def _floor_s(v: float) -> str:
    # Rounded down: "> N s" must never claim more time than the case really had.
    return f"{int(v)}" if v >= 10 else f"{int(v * 10) / 10:.1f}"


def _secs(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def _derived(r: Result) -> str:
    program, _ = load_program(WORKLOADS[r.workload])
    derived = {d.name for d in program.declarations if not d.is_input}
    total = sum(v for k, v in r.counts.items() if k in derived)
    return f"{total:,}" if r.counts else "-"


def render(results: list[Result], timeout: float, loadavg: tuple[float, float]) -> str:
    engine_order = {e: i for i, e in enumerate(DEFAULT_ENGINES)}
    workload_order = {w: i for i, w in enumerate(WORKLOADS)}
    rows = sorted(
        results,
        key=lambda r: (r.gpus, engine_order.get(r.engine, 99), r.engine, workload_order[r.workload]),
    )
    cols = ["GPUs", "engine", "workload", "facts", "gen s", "load s", "eval s", "peak MiB", "derived tuples"]
    head = "| " + " | ".join([*cols, "check"]) + " |"
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    notes: list[str] = []
    for r in rows:
        if r.status == "not run":
            cells = [f"{r.gpus:,}", r.engine, r.workload, "", "", "", "", "", "", r.note]
        else:
            load, evl = _secs(r.load_s), _secs(r.eval_s)
            if r.status == "capped":
                cap = f"> {_floor_s(r.capped_after)} s (capped)"
                if r.load_s is None:
                    load, evl = cap, "-"
                else:
                    evl = cap
                notes.append(
                    f"- {r.gpus:,} GPUs, {r.engine}, {r.workload}: killed after {timeout:.0f} s "
                    f"(--timeout); peak MiB is the peak up to the kill."
                )
            check = "FAIL" if r.failures else ("capped" if r.status == "capped" else "ok")
            if r.failures:
                notes.extend(f"- FAIL {r.gpus:,} GPUs, {r.engine}, {r.workload}: {f}" for f in r.failures)
            if r.note:
                notes.append(f"- {r.gpus:,} GPUs, {r.engine}, {r.workload}: {r.note}")
            cells = [
                f"{r.gpus:,}",
                r.engine,
                r.workload,
                "-" if r.facts is None else f"{r.facts:,}",
                _secs(r.gen_s),
                load,
                evl,
                "-" if r.peak_mib is None else f"{r.peak_mib:,.0f}",
                _derived(r),
                check,
            ]
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    targets = _targets(results)
    if targets:
        out += "\n\nTargets (duckdb, 131,072 GPUs, load + eval):\n" + "\n".join(targets)
    # Wall-clock times are only comparable on an idle machine; say how busy this one was.
    notes.append(
        f"- machine: {os.cpu_count()} CPUs, 1-minute load average {loadavg[0]:.1f} before "
        f"and {loadavg[1]:.1f} after the run."
    )
    out += "\n\nNotes:\n" + "\n".join(notes)
    return out + "\n"


def _targets(results: list[Result]) -> list[str]:
    lines = []
    for r in results:
        if r.engine != "duckdb" or r.gpus != TARGET_GPUS or r.workload not in TARGETS:
            continue
        goal = TARGETS[r.workload]
        if r.status != "ok":
            lines.append(f"- {r.workload}: target < {goal:.0f} s: MISSED ({r.status})")
            continue
        total = (r.load_s or 0.0) + (r.eval_s or 0.0)
        verdict = "met" if total < goal else "MISSED"
        lines.append(
            f"- {r.workload}: {total:.2f} s (load {r.load_s:.2f} + eval {r.eval_s:.2f}; "
            f"{r.cpu_s:.2f} CPU-s), target < {goal:.0f} s: {verdict}"
        )
    return lines


def _csv(text: str) -> list[str]:
    return [p.strip() for p in text.split(",") if p.strip()]


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    ap.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="GPU counts, comma-separated")
    ap.add_argument("--engines", default=",".join(DEFAULT_ENGINES), help="backends, comma-separated")
    ap.add_argument("--workloads", default=",".join(WORKLOADS), help="workloads, comma-separated")
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per case before it is killed")
    ap.add_argument(
        "--pydatalog-max",
        type=int,
        default=PYDATALOG_MAX_GPUS,
        help="largest size pyDatalog runs at (it is the reference engine, not a fast one)",
    )
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(None if argv is None else list(argv))

    if args.child:
        gpus, engine, workload = args.child.split(",")
        run_case(int(gpus), engine, workload)
        return 0

    sizes = sorted(int(s) for s in _csv(args.sizes))
    engines = _csv(args.engines)
    workloads = _csv(args.workloads)
    for s in sizes:
        Layout(s)  # validate every size before spending minutes on the first
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        ap.error(f"unknown workload(s) {unknown}; expected {', '.join(WORKLOADS)}")

    load_before = os.getloadavg()[0]
    results: list[Result] = []
    for gpus in sizes:
        for engine in engines:
            for workload in workloads:
                if engine == "pydatalog" and gpus > args.pydatalog_max:
                    note = f"not run (pyDatalog capped at {args.pydatalog_max:,} GPUs)"
                    results.append(Result(gpus, engine, workload, "not run", note=note))
                    continue
                print(f"running {gpus:,} GPUs, {engine}, {workload} ...", file=sys.stderr, flush=True)
                r = spawn_case(gpus, engine, workload, args.timeout)
                print(
                    f"  {r.status}: load {_secs(r.load_s)} s, eval {_secs(r.eval_s)} s, "
                    f"peak {r.peak_mib or 0:.0f} MiB {'; '.join(r.failures)}",
                    file=sys.stderr,
                    flush=True,
                )
                results.append(r)
    cross_check(results)
    sys.stdout.write(render(results, args.timeout, (load_before, os.getloadavg()[0])))
    return 1 if any(r.failures for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
