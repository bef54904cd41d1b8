"""Deep recursion: the transitive closure of a chain, on each engine (and clingo, when installed).

    python benchmarks/chain_bench.py [--sizes 1000,2000,4000] [--engines duckdb,memory,clingo]
                                     [--timeout 300]

A chain of N nodes has N - 1 links `edge(i, i + 1)`; `path` is its closure

    path(X, Y) :- edge(X, Y).
    path(X, Z) :- path(X, Y), edge(Y, Z).

which holds N (N - 1) / 2 tuples and takes N - 1 rounds of semi-naive evaluation: the
workload where a round costs most (issue 15 compares it with compiled Souffle 2.5, measured
outside this repository; Souffle is in no package registry). clingo (`pip install clingo`, not a
dependency of topolog) is timed grounding the same program, as a second outside anchor.

Each case runs in a fresh child process, so its peak RSS is its own (os.wait4). Load is the
facts given to the engine, eval the evaluation plus counting `path`. Any count other than
N (N - 1) / 2 prints FAIL and the exit status is 1. Stdout is a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import timed_child  # noqa: E402

PROGRAM = """\
.input edge(a: number, b: number)
.decl path(a: number, b: number)
path(X, Y) :- edge(X, Y).
path(X, Z) :- path(X, Y), edge(Y, Z).
"""


def _child(n: int, engine: str) -> None:
    edges = [(i, i + 1) for i in range(n - 1)]
    if engine == "clingo":
        import clingo

        started, cpu = time.perf_counter(), time.process_time()
        text = "".join(f"edge({a},{b}).\n" for a, b in edges)
        text += "path(X,Y) :- edge(X,Y).\npath(X,Z) :- path(X,Y), edge(Y,Z).\n"
        control = clingo.Control(["--warn=none"])
        control.add("base", [], text)
        load_s = time.perf_counter() - started
        control.ground([("base", [])])
        count = sum(1 for _ in control.symbolic_atoms.by_signature("path", 2))
    else:
        from verifier.engine.engines import make_backend
        from verifier.engine.parser import parse_program

        backend = make_backend(engine)
        started, cpu = time.perf_counter(), time.process_time()
        backend.load(parse_program(PROGRAM, "chain.dl"))
        backend.add_facts("edge", edges)
        load_s = time.perf_counter() - started
        backend.evaluate()
        count = backend.count("path")
    total = time.perf_counter() - started
    record = {"load_s": load_s, "eval_s": total - load_s, "cpu_s": time.process_time() - cpu, "count": count}
    sys.stdout.write(json.dumps(record) + "\n")


def _spawn(n: int, engine: str, timeout: float) -> dict[str, object]:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", f"{n},{engine}"]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        rc, _wall, usage, killed = timed_child(cmd, timeout, out, err)
        if killed:
            return {"status": f"> {timeout:.0f} s (killed)", "peak_mib": usage.ru_maxrss / 1024}
        out.seek(0)
        err.seek(0)
        lines = [line for line in out.read().splitlines() if line.startswith("{")]
        if rc != 0 or not lines:
            tail = " | ".join(err.read().strip().splitlines()[-2:])
            return {"status": f"error: {tail}", "peak_mib": usage.ru_maxrss / 1024}
        record: dict[str, object] = json.loads(lines[-1])
        record["status"] = "ok"
        record["peak_mib"] = usage.ru_maxrss / 1024
        return record


def _available(engine: str) -> bool:
    if engine != "clingo":
        return True
    try:
        import clingo  # noqa: F401
    except ImportError:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="1000,2000,4000", help="chain lengths (nodes), comma-separated")
    ap.add_argument("--engines", default="duckdb,memory,clingo", help="duckdb, memory, pydatalog, clingo")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds per case")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        n, engine = args.child.split(",")
        _child(int(n), engine)
        return 0
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    load_before = os.getloadavg()[0]
    print("| nodes | path tuples | engine | load s | eval s | CPU s | peak MiB | check |")
    print("|---:|---:|---|---:|---:|---:|---:|---|")
    failed = False
    for n in sizes:
        expected = n * (n - 1) // 2
        for engine in engines:
            if not _available(engine):
                print(f"| {n:,} | {expected:,} | {engine} | - | - | - | - | not installed |")
                continue
            print(f"chain of {n:,}, {engine} ...", file=sys.stderr, flush=True)
            r = _spawn(n, engine, args.timeout)
            if r["status"] != "ok":
                print(f"| {n:,} | {expected:,} | {engine} | - | - | - | {r['peak_mib']:,.0f} | {r['status']} |")
                continue
            ok = r["count"] == expected
            failed |= not ok
            check = "ok" if ok else f"FAIL: {r['count']:,} tuples"
            print(
                f"| {n:,} | {expected:,} | {engine} | {r['load_s']:.2f} | {r['eval_s']:.2f} | "
                f"{r['cpu_s']:.2f} | {r['peak_mib']:,.0f} | {check} |"
            )
    print(f"\nmachine: {os.cpu_count()} CPUs, load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
