"""End-to-end `topolog verify` benchmark on generated DGX-H100 fleets written with templates.

    python benchmarks/verify_bench.py [--sizes 1024,8192,131072] [--example-runs 3]
                                      [--timeout 600] [--keep DIR] [--profile DIR] [--proofs]

For each size (GPUs, a multiple of 256) it writes one short inventory YAML to a temp dir:
one DGX H100 node template (as in inventories/dgx-h100-pod.yaml), scalable units (pods) of
8 racks x 4 nodes instantiated with `count`, a rail-optimised leaf/spine InfiniBand fabric
written with `foreach`, and a few deliberate per-instance overrides. A fresh child process
per size then runs the whole verification with the duckdb engine and the shipped rules,
timing each phase of `verifier.session.verify_run.verify` (through the phase listener it takes):

    rules      load_program(rules/) + checks_from_program
    inventory  verifier.sources.inventory.load_inventory (YAML parse, template expansion, validation)
    facts      verifier.facts.inventory.inventory_facts
    engine     make_backend("duckdb") + load(program) + add_facts for the relations the rules
               read (the duckdb import itself, ~0.5 s, is counted with the other imports)
    eval       evaluate()
    findings   verifier.checks.verify.collect_results (no proofs: the CLI's text format default;
               with --proofs, a derivation per finding, as --format json and sarif attach them)

`process s` is the child's whole wall time as seen by the parent (interpreter start-up and
imports included), which is what a `topolog verify` run on that file costs. Peak MiB is the
child's own peak RSS (os.wait4 returns the rusage of exactly that child; the running
maximum of RUSAGE_CHILDREN would carry a bigger earlier case into later rows).

The shipped examples (inventories/*.yaml) are timed through the real CLI, `topolog verify
FILE` in a subprocess, wall time of the whole process (median of --example-runs runs).

Correctness: the overrides are chosen so that the findings can be predicted by hand (see
`expected_findings`); the object and link counts follow a closed form of the layout. Any
difference prints FAIL and the script exits 1. At the smallest size the real CLI is run
on the generated file as well (`--format json`) and must report the same findings.

Stdout is Markdown (tables, targets, notes); progress goes to stderr. The machine's load
average is recorded before and after every case, because this machine is shared.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

GPUS_PER_NODE = 8
NODES_PER_RACK = 4
RACKS_PER_SU = 8
NODES_PER_SU = NODES_PER_RACK * RACKS_PER_SU  # 32 nodes, 256 GPUs: one scalable unit
GPUS_PER_SU = GPUS_PER_NODE * NODES_PER_SU
RAILS = 8  # one leaf per rail per SU
SPINES = 16  # every leaf has 2 NDR cables to each spine (32 down, 32 up: non-blocking)
OBJECTS_PER_NODE = 1 + 2 + 2 + 8 + 4 + 4 + 8  # node, cpus, drams, gpus, nvswitches, pcie switches, nics
LINKS_PER_NODE = 32 + 16 + 4 + 1  # gpu-nvswitch, gpu/nic-pcie, pcie-cpu, upi

TARGET_S = 20.0
"""The first rule set (rules/schema.dl + rules/topology: run with those --rules)."""
FULL_PACK_TARGET_S = 30.0
"""The whole shipped rule pack, bandwidth, memory and authorization rules included."""
TARGET_MIB = 4096.0
TARGET_SIZE = 131_072
EXAMPLE_TARGET_S = 2.0

# The deliberate overrides: node names are "<su>-r<rack>-n<node>", all in the first SU so
# that every size has them.
DEGRADED_NODE = "su0000-r0-n3"  # 1 of the 4 NVLinks gpu2-nvsw1 failed: bond runs on 3
SPLIT_NODE = "su0000-r1-n2"  # gpu5 lost all 4 NVSwitch bonds: its own NVLink domain
QUARANTINED_NODE = "su0000-r2-n0"  # quarantined, newer driver, gpu6 down
DOWN_CABLE = ("su0000-r3-n1/nic3", "su0000-leaf3")  # one failed NDR cable to a leaf


@dataclass(frozen=True)
class Layout:
    gpus: int

    def __post_init__(self) -> None:
        if self.gpus <= 0 or self.gpus % GPUS_PER_SU:
            raise ValueError(f"{self.gpus} GPUs: sizes must be a positive multiple of {GPUS_PER_SU}")

    @property
    def nodes(self) -> int:
        return self.gpus // GPUS_PER_NODE

    @property
    def racks(self) -> int:
        return self.nodes // NODES_PER_RACK

    @property
    def sus(self) -> int:
        return self.nodes // NODES_PER_SU

    @property
    def objects(self) -> int:
        return self.nodes * OBJECTS_PER_NODE + self.racks + self.sus * (1 + RAILS) + SPINES

    @property
    def links(self) -> int:
        return self.nodes * (LINKS_PER_NODE + RAILS) + self.sus * RAILS * SPINES


def inventory_yaml(lay: Layout) -> str:
    """The inventory: short at any size, everything repeated is a template, count or foreach."""
    gpu5_down = ", ".join(f"{{a: gpu5, b: nvsw{s}, state: down}}" for s in range(4))
    return f"""\
# {lay.gpus:,} H100 GPUs: {lay.nodes:,} DGX H100 nodes in {lay.racks:,} racks of {NODES_PER_RACK}, {lay.sus} scalable
# units (pods) of {RACKS_PER_SU} racks with one leaf per rail, {SPINES} spines. Generated by benchmarks/verify_bench.py.
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {{name: verify-bench-{lay.gpus}, owner: benchmarks}}

templates:
  dgx-h100:                         # as inventories/dgx-h100-pod.yaml
    kind: node
    model: DGX-H100
    promises: [nvlink_domain, rail_optimized, gpu_nic_affinity]
    labels: {{zone: us-east-1a, tenant: research}}
    software: {{driver: "535.129.03", cuda: "12.2", nccl: "2.18.5", os: "DGX OS 6.1"}}
    price: $4.10/h
    power: 10.2 kW
    children:
      - name: cpu{{i}}
        kind: cpu
        model: Xeon-8480C
        count: 2
        children: [{{name: "dram{{i}}", kind: memory, type: DDR5, size: 1 TB, bandwidth: 307.2 GB/s}}]
      - {{name: "gpu{{i}}", kind: gpu, model: H100-SXM5-80GB, count: 8}}
      - {{name: "nvsw{{i}}", kind: nvswitch, model: NVSwitch-Gen3, count: 4}}
      - {{name: "pcie{{i}}", kind: pcie_switch, model: PEX89104, count: 4}}
      - {{name: "nic{{i}}", kind: nic, model: ConnectX-7, count: 8, labels: {{rail: "{{i}}"}}}}
    links:                          # 18 NVLink 4 per GPU, 5/4/4/5 over the NVSwitches
      - {{a: "gpu{{g}}", b: "nvsw{{s}}", kind: nvswitch, generation: 4, count: 5, foreach: {{g: 0..7, s: [0, 3]}}}}
      - {{a: "gpu{{g}}", b: "nvsw{{s}}", kind: nvswitch, generation: 4, count: 4, foreach: {{g: 0..7, s: [1, 2]}}}}
      - {{a: "{{d}}{{g}}", b: pcie0, kind: pcie, generation: 5, lanes: 16, foreach: {{d: [gpu, nic], g: [0, 1]}}}}
      - {{a: "{{d}}{{g}}", b: pcie1, kind: pcie, generation: 5, lanes: 16, foreach: {{d: [gpu, nic], g: [2, 3]}}}}
      - {{a: "{{d}}{{g}}", b: pcie2, kind: pcie, generation: 5, lanes: 16, foreach: {{d: [gpu, nic], g: [4, 5]}}}}
      - {{a: "{{d}}{{g}}", b: pcie3, kind: pcie, generation: 5, lanes: 16, foreach: {{d: [gpu, nic], g: [6, 7]}}}}
      - {{a: "pcie{{s}}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {{s: [0, 1]}}}}
      - {{a: "pcie{{s}}", b: cpu1, kind: pcie, generation: 5, lanes: 16, foreach: {{s: [2, 3]}}}}
      - {{a: cpu0, b: cpu1, kind: upi, generation: 2, count: 4, bandwidth: 128 GB/s}}

objects:
  - name: su{{i:04d}}                 # scalable unit: 8 racks, 32 nodes, 256 GPUs
    kind: pod
    count: {lay.sus}
    children:
      - name: "{{pod}}-r{{i}}"
        kind: rack
        count: {RACKS_PER_SU}
        children:
          - template: dgx-h100
            name: "{{rack}}-n{{i}}"
            count: {NODES_PER_RACK}
            overrides:
              {DEGRADED_NODE}:         # one NVLink of four failed training: 3 left, still one domain
                links: [{{a: gpu2, b: nvsw1, count: 3, state: degraded}}]
              {SPLIT_NODE}:         # gpu5 lost every NVSwitch bond: the node's NVLink domain splits
                links: [{gpu5_down}]
              {QUARANTINED_NODE}:
                labels: {{quarantine: "true"}}
                software: {{driver: "550.90.07"}}
                devices: {{gpu6: {{state: down}}}}
      - {{name: "{{pod}}-leaf{{i}}", kind: switch, model: QM9700, count: {RAILS},
         labels: {{role: leaf, rail: "{{i}}"}}}}
    links:                          # rail-optimised: NIC l of every node to the SU's leaf l
      - a: "{{pod}}-r{{r}}-n{{n}}/nic{{l}}"
        b: "{{pod}}-leaf{{l}}"
        kind: infiniband
        bandwidth: 400 Gb/s
        foreach: {{r: 0..{RACKS_PER_SU - 1}, n: 0..{NODES_PER_RACK - 1}, l: 0..{RAILS - 1}}}
    overrides:
      su0000:                       # one failed NDR cable
        links: [{{a: {DOWN_CABLE[0]}, b: {DOWN_CABLE[1]}, state: down}}]
  # A spine here stands for a spine plane: past 4 scalable units a real fabric needs a third tier, and
  # 16 QM9700s (64 ports each) could not take every SU's leaves (LINK014). No model: the planes are
  # not judged by any one switch's ports; nothing else read of them changes.
  - {{name: "spine{{i:02d}}", kind: switch, count: {SPINES}, labels: {{role: spine}}}}

links:
  - a: "su{{p:04d}}-leaf{{l}}"
    b: "spine{{s:02d}}"
    kind: infiniband
    count: 2
    bandwidth: 800 Gb/s
    foreach: {{p: 0..{lay.sus - 1}, l: 0..{RAILS - 1}, s: 0..{SPINES - 1}}}
"""


DEFAULT_SCALE = 131_072
"""The largest fleet the default input limits accept (docs/limits.md): larger ones need them raised."""


def limit_flags(gpus: int) -> list[str]:
    """The `--input-limit` flags a fleet of `gpus` needs: none up to DEFAULT_SCALE; above it, the
    bounds that grow with a fleet (objects, derived tuples, engine memory) raised in proportion.
    Such a run needs the memory to match: 524,288 GPUs peaked at 3.8 GiB.
    """
    if gpus <= DEFAULT_SCALE:
        return []
    from verifier.core.limits import Limits

    scale = -(-gpus // DEFAULT_SCALE)
    d = Limits()
    raised = {
        "expanded_objects": d.expanded_objects * scale,
        "derived_tuples": d.derived_tuples * scale,
        "engine_memory": d.engine_memory * scale,
    }
    return [arg for name, value in raised.items() for arg in ("--input-limit", f"{name}={value}")]


Expected = tuple[str, str, tuple[str, ...], str, int]  # rule, severity, subjects, message, line


def expected_findings(text: str) -> list[Expected]:
    """Predicted by hand from the rules in rules/topology/ and the overrides above.

    - SPLIT_NODE: gpu5's four NVSwitch bonds are `state: down`, so no working scale-up link
      joins it to anything (`scaleup_domain`) and it is its own NVLink domain; the other 7 GPUs share the
      NVSwitches. The node promises nvlink_domain and has 2 domains, split by down links:
      one TOPO005 for gpu5 naming its four down bonds (one root cause), not TOPO004 (which
      steps aside for a split a down link explains), located at the override that changed
      the node (its body, the line after the node's key). gpu5 still reaches nic4/nic5 over pcie2, so no TOPO001.
    - DEGRADED_NODE: the gpu2-nvsw1 bond is degraded (3 links, 75 GB/s), not down; the node
      declares no fabric manager mode, so the default (ACCESS_LINK_FAILURE_MODE=0) takes gpu2 out
      of NVLink peer-to-peer (rules/topology/lib/platform.dl): one TOPO005 error naming the bond and
      gpu2, at the same kind of line. Overrides replace a link rather than adding one, so no
      TOPO002 conflict.
    - QUARANTINED_NODE: its newer driver differs from the node type's (NODE006); labels and
      a device `state: down` are facts no shipped check reports.
    - DOWN_CABLE: the NIC's only fabric link is down, so it is off the fabric (LINK006).
    - Every device is nested in its node (no TOPO003).
    """
    lines = text.splitlines()

    def body(key: str) -> int:  # the line after an override's key: where what it changed is written
        return next(n for n, s in enumerate(lines, 1) if s.strip().startswith(f"{key}:")) + 1

    found: list[Expected] = []
    gpu = f"{SPLIT_NODE}/gpu5"
    links = [f"{gpu}<->{SPLIT_NODE}/nvsw{k}" for k in range(4)]
    # An NVSwitch board: the fabric manager's default takes a GPU with a failed NVSwitch link out.
    cause = (
        "its fabric manager takes a GPU with a failed NVSwitch link out of NVLink peer-to-peer"
        " (ACCESS_LINK_FAILURE_MODE=0, the default), so it has no NVLink peer"
    )
    msg = (
        f"GPU {gpu} has fallen out of the one NVLink domain that {SPLIT_NODE} promises: {cause}; "
        f"failed scale-up link(s): {', '.join(links)}."
    )
    found.append(("TOPO005", "error", (*links, gpu), msg, body(SPLIT_NODE)))
    # NODE006: the quarantined node's override sets driver 550.90.07 where the node type says
    # 535.129.03. Its reference is the smallest node stamped whole from the type: su0000 has an
    # override of its own (the failed cable), so none of its nodes is, and the reference is
    # su0001-r0-n0; with one scalable unit there is none, and the reference is the smallest of
    # the nodes most are like, su0000-r0-n0.
    counted = re.search(r"kind: pod\n\s+count: (\d+)", text)
    assert counted is not None, "the generated fleet states its count of pods"
    units = int(counted.group(1))
    reference = (
        "su0001-r0-n0, built exactly from its node type"
        if units > 1
        else "su0000-r0-n0, like most nodes of its node type"
    )
    found.append(
        (
            "NODE006",
            "warning",
            (QUARANTINED_NODE,),
            f"Node {QUARANTINED_NODE} runs driver 550.90.07, where its node type dgx-h100 declares 535.129.03 "
            f"(as {reference}, has it).",
            body(QUARANTINED_NODE),
        )
    )
    # LINK006: the failed cable is the NIC's only fabric link, so the NIC is off the fabric.
    nic, leaf = DOWN_CABLE
    found.append(
        (
            "LINK006",
            "error",
            (f"{nic}<->{leaf}", nic),
            f"NIC {nic} is off the fabric: its infiniband link(s) {nic}<->{leaf} are down.",
            body("su0000"),
        )
    )
    dkey = next(n for n, s in enumerate(text.splitlines(), 1) if s.strip().startswith(f"{DEGRADED_NODE}:"))
    a, b = f"{DEGRADED_NODE}/gpu2", f"{DEGRADED_NODE}/nvsw1"
    found.append(
        (
            "TOPO005",
            "error",
            (f"{a}<->{b}", a),
            f"GPU {a} has fallen out of the one NVLink domain that {DEGRADED_NODE} promises: {cause}; "
            f"failed scale-up link(s): {a}<->{b}.",
            dkey + 1,
        )
    )
    # BW001 (rules/bandwidth/BW001_nvlink_over_pcie.dl) steps aside for gpu5: a GPU that a down
    # link cut out of its promised domain is TOPO005's finding, once, not one per pair.
    return found


# --- child: one verification, phase by phase -------------------------------------------------


RULES: list[Path] = []
PROOFS: list[bool] = []  # [True] under --proofs (set once in main, read by the child)
"""Rule paths from --rules, shared by the parent (passed on) and the child (loaded)."""


def run_child(path: Path, profile_dir: Path | None) -> None:
    if profile_dir is None:
        _child(path)
        return
    import cProfile
    import io
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    _child(path)
    prof.disable()
    stem = profile_dir / f"verify-{path.stem}"
    prof.dump_stats(f"{stem}.prof")
    buf = io.StringIO()
    stats = pstats.Stats(prof, stream=buf)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    Path(f"{stem}.txt").write_text(buf.getvalue())


def _child(path: Path) -> None:
    import resource

    t = time.perf_counter()
    c = time.process_time()
    import verifier.engine.duckdb_backend  # noqa: F401  (imported lazily by make_backend: count it as import)
    from verifier.facts.inventory import inventory_facts
    from verifier.session.verify_run import VerifyRun, verify
    from verifier.sources.inventory.loader import load_inventory

    phases: dict[str, float] = {}
    cpu: dict[str, float] = {}
    peak: dict[str, float] = {}  # peak RSS MiB so far, at the end of each phase

    def lap(name: str) -> None:
        nonlocal t, c
        now, cnow = time.perf_counter(), time.process_time()
        phases[name], cpu[name] = now - t, cnow - c
        peak[name] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        t, c = now, cnow

    lap("imports")

    class Stopwatch:
        """Laps at each phase verify announces, so the phases are exactly the CLI's."""

        names: ClassVar[dict[str, str]] = {
            "loading inventory": "rules",
            "generating facts": "inventory",
            "loading facts into duckdb": "facts",
            "loading facts into memory": "facts",
            "evaluating rules": "engine",
            "collecting findings": "eval",
        }

        def step(self, phase: str) -> None:
            if phase in self.names:
                lap(self.names[phase])

    report = verify([path], VerifyRun(rules=RULES or None, with_proofs=bool(PROOFS)), Stopwatch())
    lap("findings")
    findings = report.findings
    inventory = load_inventory([path])  # for the counts only, after the clock stopped
    facts = inventory_facts(inventory)
    record = {
        "phases": phases,
        "cpu": cpu,
        "peak": peak,
        "objects": len(inventory.objects),
        "links": len(inventory.links),
        "fact_rows": sum(len(rows) for rows in facts.values()),
        "checks": [c.id for c in report.checks],
        "findings": [
            [f.rule, f.severity, list(f.subjects), f.message, f.location.line if f.location else None] for f in findings
        ],
    }
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


# --- parent ----------------------------------------------------------------------------------


@dataclass
class Process:
    rc: int
    wall_s: float
    peak_mib: float
    cpu_s: float
    stdout: str
    stderr: str
    killed: bool = False


def timed_child(
    cmd: Sequence[str], timeout: float, out: IO[Any], err: IO[Any], env: Mapping[str, str] | None = None
) -> tuple[int, float, Any, bool]:
    """Run one child with its output in `out` and `err` (files, so pipes never block): its exit
    status, wall seconds, its own rusage (os.wait4: the peak RSS of exactly this child) and whether
    it was killed at `timeout`. `env`: variables set for the child on top of this environment.
    The other benchmarks that time processes call this too.
    """
    start = time.perf_counter()
    child_env = {**os.environ, **env} if env else None
    proc = subprocess.Popen(list(cmd), stdout=out, stderr=err, cwd=REPO, env=child_env)
    killed = False
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() - start > timeout:
            os.kill(proc.pid, signal.SIGKILL)
            pid, status, usage = os.wait4(proc.pid, 0)
            killed = True
            break
        time.sleep(0.005)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return proc.returncode, wall, usage, killed


def spawn(cmd: Sequence[str], timeout: float) -> Process:
    """Run one child; its own rusage via wait4."""
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        rc, wall, usage, killed = timed_child(cmd, timeout, out, err)
        out.seek(0)
        err.seek(0)
        return Process(
            rc,
            wall,
            usage.ru_maxrss / 1024,  # KiB on Linux
            usage.ru_utime + usage.ru_stime,
            out.read(),
            err.read(),
            killed,
        )


@dataclass
class SizeResult:
    gpus: int
    lines: int
    size_bytes: int
    load: tuple[float, float]
    proc: Process | None = None
    phases: dict[str, float] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    peak: dict[str, float] = field(default_factory=dict)
    objects: int = 0
    links: int = 0
    fact_rows: int = 0
    findings: list[Expected] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    @property
    def verify_s(self) -> float:
        return sum(v for k, v in self.phases.items() if k != "imports")


@dataclass
class ExampleResult:
    path: str
    lines: int
    walls: list[float]
    peak_mib: float
    rcs: list[int]
    summary: str


def topolog_cli() -> str:
    exe = Path(sys.executable).parent / "topolog"
    return str(exe) if exe.exists() else shutil.which("topolog") or "topolog"


def run_size(gpus: int, workdir: Path, timeout: float, profile: Path | None, cli_check: bool) -> SizeResult:
    lay = Layout(gpus)
    text = inventory_yaml(lay)
    path = workdir / f"fleet-{gpus}.yaml"
    path.write_text(text)
    before = os.getloadavg()[0]
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(path), *limit_flags(gpus)]
    if PROOFS:
        cmd.append("--proofs")
    for rules in RULES:
        cmd += ["--rules", str(rules)]
    if profile is not None:
        cmd += ["--profile", str(profile)]
    print(f"verify_bench: {gpus:,} GPUs ({len(text.splitlines())} lines) ...", file=sys.stderr, flush=True)
    proc = spawn(cmd, timeout)
    res = SizeResult(gpus, len(text.splitlines()), len(text.encode()), (before, os.getloadavg()[0]), proc)
    records = [json.loads(s) for s in proc.stdout.splitlines() if s.startswith("{")]
    if proc.killed:
        res.failures.append(f"killed after {timeout:.0f} s")
        return res
    if proc.rc != 0 or not records:
        tail = " | ".join(proc.stderr.strip().splitlines()[-5:])
        res.failures.append(f"child exit {proc.rc}: {tail}")
        return res
    rec = records[-1]
    res.phases, res.cpu, res.peak = rec["phases"], rec["cpu"], rec["peak"]
    res.objects, res.links, res.fact_rows = rec["objects"], rec["links"], rec["fact_rows"]
    res.findings = [(r, s, tuple(subj), m, line) for r, s, subj, m, line in rec["findings"]]
    # Only the checks this run loaded can report (see --rules); order is the report's, not ours.
    want = sorted(w for w in expected_findings(text) if w[0] in set(rec["checks"]))
    res.findings = sorted(res.findings)
    if res.findings != want:
        res.failures.append(f"findings {res.findings!r}, expected {want!r}")
    if res.objects != lay.objects:
        res.failures.append(f"objects {res.objects:,}, expected {lay.objects:,}")
    if res.links != lay.links:
        res.failures.append(f"links {res.links:,}, expected {lay.links:,}")
    if cli_check:
        res.failures.extend(_cli_agrees(path, res.findings, timeout))
    return res


def _cli_agrees(path: Path, findings: list[Expected], timeout: float) -> list[str]:
    """The real `topolog verify --format json` must report the same findings (exit 1)."""
    # --rules adds to the shipped pack; the benchmark's own rule set replaces it.
    rules = ["--no-shipped-rules", *(arg for r in RULES for arg in ("--rules", str(r)))] if RULES else []
    gpus = int(path.stem.rsplit("-", 1)[-1])  # fleet-GPUS.yaml
    p = spawn([topolog_cli(), *limit_flags(gpus), "verify", str(path), "--format", "json", *rules], timeout)
    try:
        got = [
            (f["rule"], f["severity"], tuple(f["subjects"]), f["message"], (f["location"] or {}).get("line"))
            for f in json.loads(p.stdout)["findings"]
        ]
    except (ValueError, KeyError, TypeError) as err:
        return [f"CLI json output unreadable ({err}); exit {p.rc}: {p.stderr.strip()[-300:]}"]
    got.sort()
    problems = [] if got == findings else [f"CLI reported {got!r}, benchmark child {findings!r}"]
    if p.rc != (1 if findings else 0):
        problems.append(f"CLI exit {p.rc}, expected {1 if findings else 0}")
    return problems


def run_examples(runs: int, timeout: float) -> list[ExampleResult]:
    out: list[ExampleResult] = []
    for path in sorted((REPO / "inventories").glob("*.yaml")):
        rel = str(path.relative_to(REPO))
        walls: list[float] = []
        rcs: list[int] = []
        peak = 0.0
        summary = ""
        for _ in range(runs):
            p = spawn([topolog_cli(), "verify", rel, *(["--proofs"] if PROOFS else [])], timeout)
            walls.append(p.wall_s)
            rcs.append(p.rc)
            peak = max(peak, p.peak_mib)
            summary = (p.stdout.strip().splitlines() or [p.stderr.strip()[-200:]])[-1]
        print(f"verify_bench: {rel} {statistics.median(walls):.2f} s", file=sys.stderr, flush=True)
        out.append(ExampleResult(rel, len(path.read_text().splitlines()), walls, peak, rcs, summary))
    return out


# --- report ----------------------------------------------------------------------------------

PHASES = ("rules", "inventory", "facts", "engine", "eval", "findings")


def render(sizes: list[SizeResult], examples: list[ExampleResult], load: tuple[float, float]) -> str:
    lines = [
        "| GPUs | YAML lines / bytes | objects | links | fact rows | rules s | inventory s | facts s "
        "| engine load s | eval s | findings s | verify s | process s | CPU s | peak MiB | findings "
        "| load avg | check |",
        "|" + "---|" * 18,
    ]
    for r in sizes:
        if r.proc is None or not r.phases:
            lines.append(f"| {r.gpus:,} | {r.lines} / {r.size_bytes:,} |" + " |" * 15 + f" FAIL: {r.failures} |")
            continue
        ph = " | ".join(f"{r.phases[p]:.2f}" for p in PHASES)
        found = ", ".join(f"{f[0]} {'/'.join(f[2])}" for f in r.findings) or "none"
        check = "ok" if not r.failures else "FAIL: " + "; ".join(r.failures)
        lines.append(
            f"| {r.gpus:,} | {r.lines} / {r.size_bytes:,} | {r.objects:,} | {r.links:,} | {r.fact_rows:,} | {ph} "
            f"| {r.verify_s:.2f} | {r.proc.wall_s:.2f} | {r.proc.cpu_s:.2f} | {r.proc.peak_mib:,.0f} "
            f"| {len(r.findings)} ({found}) | {r.load[0]:.1f} -> {r.load[1]:.1f} | {check} |"
        )
    if examples:
        lines += [
            "",
            "| example (`topolog verify FILE`) | lines | median s | max s | peak MiB | exit | output |",
            "|---|---|---|---|---|---|---|",
        ]
        for e in examples:
            rcs = ",".join(sorted({str(rc) for rc in e.rcs}))
            lines.append(
                f"| {e.path} | {e.lines} | {statistics.median(e.walls):.2f} | {max(e.walls):.2f} "
                f"| {e.peak_mib:,.0f} | {rcs} | {e.summary} |"
            )
    lines += ["", "Targets:", *targets(sizes, examples), "", "Notes:"]
    lines.append(
        f"- machine: {os.cpu_count()} CPUs; 1-minute load average {load[0]:.1f} before and {load[1]:.1f} "
        "after the run (per-case values in the table)."
    )
    lines.append(
        "- verify s = rules + inventory + facts + engine load + eval + findings (what `verify()` spends); "
        "process s adds interpreter start-up and imports (about "
        f"{max((r.phases.get('imports', 0.0) for r in sizes), default=0.0):.2f} s of imports)."
    )
    for r in sizes:
        if r.phases:
            cpu = ", ".join(f"{p} {r.cpu[p]:.2f}" for p in PHASES)
            peak = ", ".join(f"{p} {r.peak[p]:,.0f}" for p in ("imports", *PHASES))
            lines.append(f"- {r.gpus:,} GPUs: CPU-s per phase (all threads): {cpu}; peak RSS MiB after: {peak}.")
    return "\n".join(lines) + "\n"


def targets(sizes: list[SizeResult], examples: list[ExampleResult]) -> list[str]:
    out: list[str] = []
    target_s = TARGET_S if RULES else FULL_PACK_TARGET_S
    big = next((r for r in sizes if r.gpus == TARGET_SIZE and r.proc is not None and r.phases), None)
    if big is None or big.proc is None:
        out.append(f"- {TARGET_SIZE:,} GPUs end to end < {target_s:.0f} s and < {TARGET_MIB / 1024:.0f} GiB: not run")
    else:
        t_ok = big.proc.wall_s < target_s
        m_ok = big.proc.peak_mib < TARGET_MIB
        out.append(
            f"- {TARGET_SIZE:,} GPUs end to end (child process, duckdb): {big.proc.wall_s:.2f} s "
            f"(verify {big.verify_s:.2f} s, {big.proc.cpu_s:.2f} CPU-s), target < {target_s:.0f} s: "
            f"{'met' if t_ok else 'MISSED'}; peak {big.proc.peak_mib:,.0f} MiB, target < "
            f"{TARGET_MIB:,.0f} MiB: {'met' if m_ok else 'MISSED'}"
        )
    if examples:
        worst = max(examples, key=lambda e: statistics.median(e.walls))
        ok = statistics.median(worst.walls) < EXAMPLE_TARGET_S
        out.append(
            f"- each shipped example < {EXAMPLE_TARGET_S:.0f} s (median): slowest {worst.path} "
            f"{statistics.median(worst.walls):.2f} s: {'met' if ok else 'MISSED'}"
        )
    return out


def _csv_ints(text: str) -> list[int]:
    return [int(s.replace("_", "")) for s in text.split(",") if s.strip()]


def main(argv: Iterable[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", type=_csv_ints, default=[1024, 8192, 131072], help="GPUs, multiples of 256")
    ap.add_argument("--example-runs", type=int, default=3, help="CLI runs per shipped example (0: skip)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds per child process")
    ap.add_argument("--keep", type=Path, help="write the generated inventories here instead of a temp dir")
    ap.add_argument("--profile", type=Path, help="cProfile each child; .prof and .txt files go here")
    ap.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    # The child's limits, as limit_flags gives them for fleets past the defaults.
    ap.add_argument("--input-limit", action="append", default=[], help=argparse.SUPPRESS)
    ap.add_argument("--proofs", action="store_true", help="attach a proof to each finding, as json and sarif do")
    ap.add_argument(
        "--rules",
        type=Path,
        action="append",
        default=[],
        help="rule file or directory (repeatable; default: all shipped rules), e.g. "
        "--rules rules/schema.dl --rules rules/topology for the first rule set alone",
    )
    args = ap.parse_args(list(argv) if argv is not None else None)
    RULES.extend(args.rules)
    if args.proofs:
        PROOFS.append(True)
    if args.child is not None:
        from verifier.core.limits import current_limits, use_limits

        with use_limits(current_limits().with_override_text(args.input_limit)):
            run_child(args.child, args.profile)
        return 0
    for g in args.sizes:
        Layout(g)  # reject bad sizes before any work
    if args.profile is not None:
        args.profile.mkdir(parents=True, exist_ok=True)
        args.profile = args.profile.resolve()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="verify-bench-") as tmp:
        workdir = args.keep.resolve() if args.keep else Path(tmp)
        workdir.mkdir(parents=True, exist_ok=True)
        smallest = min(args.sizes, default=0)
        sizes = [run_size(g, workdir, args.timeout, args.profile, g == smallest) for g in args.sizes]
    examples = run_examples(args.example_runs, args.timeout) if args.example_runs > 0 else []
    sys.stdout.write(render(sizes, examples, (load_before, os.getloadavg()[0])))
    failed = [r for r in sizes if r.failures]
    bad_examples = [e for e in examples if any(rc not in (0, 1) for rc in e.rcs)]
    for r in failed:
        sys.stdout.write(f"FAIL {r.gpus:,} GPUs: {'; '.join(r.failures)}\n")
    for e in bad_examples:
        sys.stdout.write(f"FAIL {e.path}: exit {e.rcs}: {e.summary}\n")
    return 1 if failed or bad_examples else 0


if __name__ == "__main__":
    sys.exit(main())
