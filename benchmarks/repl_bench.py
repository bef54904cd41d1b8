"""`topolog repl` latency: the prompt on a fleet, then queries answered at it.

    python benchmarks/repl_bench.py [--sizes 1024,4096] [--runs 7] [--base /tmp/basevenv/bin/topolog]

For each size (GPUs, a multiple of 256) the fleet of benchmarks/verify_bench.py is written
to a temp dir. First the real CLI, `topolog repl FILE` on a pseudo-terminal, as a user starts
it: seconds until the answer of a query typed the moment the prompt shows (the figure that
says when the REPL is usable: issue 46's "load <= 2 s"), and until the prompt itself; with
`--base`, the same for another install's `topolog` (the previous release), run alternately with
it. The rules are evaluated on a thread while the user types; a query typed before they are
done is answered from the rules it depends on (verifier.session.background.Loading.answer_now).

Then the fleet is loaded once in this process, as `topolog repl FILE` loads it (every rule
evaluated, every input relation kept), and each query below is answered `--runs` times
through the REPL's own `Session.answer` (parse, evaluate, format as a table, in pieces), with
the collector set as the REPL sets it: the median and slowest answer (wall), the median CPU
time (the figure to read on a loaded host) and the median time to the first rows written
(the header, then the first 512 rows). `early ms` is the same query typed before the
evaluation ends (one run: the slice of rules it depends on evaluated, then answered; beside
the evaluation in the CLI, alone here). Issue 46's aim: the first answer <= 2 s and every
query <= 10 ms at 4,096 GPUs, rows streamed. The answers' row counts follow from the layout
(see `expected_rows`), early or not; a different count prints FAIL and the exit status is 1.
Stdout is Markdown.
"""

from __future__ import annotations

import argparse
import os
import re
import select
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import Future
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402
from verifier.cli.repl import Session, collect_what_queries_leave  # noqa: E402
from verifier.engine.answers import QueryResult  # noqa: E402
from verifier.engine.ast import Query, Row  # noqa: E402
from verifier.engine.queries import prepare_query  # noqa: E402
from verifier.reports.query_report import table_chunks  # noqa: E402
from verifier.session.api import load  # noqa: E402
from verifier.session.background import Loading  # noqa: E402
from verifier.session.inputs import read_inventory  # noqa: E402
from verifier.session.session import Evaluation, load_rules  # noqa: E402
from verifier.session.side_files import discover  # noqa: E402

QUERIES = [
    'object(G, "gpu")',
    'within("su0000-r0-n0/gpu0", R)',
    'within(G, "su0000-r0")',
    'parent(X, "su0000-r0-n0")',
    'object(X, K), parent(X, "su0000-r0-n0")',
    'link(L, A, B, "nvlink", M), M < 400000',
    'label(X, "rail", V)',
    'nvlink_domain(G, D), D = "su0000-r0-n0/gpu0"',
    'object(X, "nic")',
    'object(X, "node")',
    'object(X, "switch")',
    'label(X, "role", V)',
    "state(X, S)",
    'object(G, "gpu"), !state(G, "down")',
    'link(L, A, B, K, M), A = "su0000-r0-n0/gpu0"',
    'link(L, "su0000-r0-n0/nic0", B, K, M)',
    'link(L, A, B, "infiniband", M)',
    'within(X, "su0000")',
    'parent(X, P), object(P, "rack")',
    "nvlink_domain(G, D)",
]
FIRST_QUERY = 'within("su0000-r0-n0/gpu0", R)'
"""Typed at the CLI's prompt the moment it shows (its answer waits for the evaluation)."""


def expected_rows(gpus: int) -> dict[str, int]:
    """Answer sizes worked out from the template of verify_bench.py (a DGX H100 node: 2 CPUs with
    one DRAM each, 8 GPUs, 4 NVSwitches, 4 PCIe switches, 8 NICs, all children of the node) and
    its layout (4 nodes per rack, rack su0000-r0 has no override)."""
    per_node = 2 + 2 + 8 + 4 + 4 + 8  # descendants of a node
    return {
        'object(G, "gpu")': gpus,
        'within("su0000-r0-n0/gpu0", R)': 3,  # its node, rack and pod
        'within(G, "su0000-r0")': 4 * (1 + per_node),  # 4 nodes and everything in them: 116
        'parent(X, "su0000-r0-n0")': 2 + 8 + 4 + 4 + 8,  # the node's direct children (DRAM is a CPU's): 26
        'nvlink_domain(G, D), D = "su0000-r0-n0/gpu0"': 8,  # the node's 8 GPUs, named by gpu0
        'object(X, "nic")': gpus,  # 8 NICs per node of 8 GPUs
        'object(X, "node")': gpus // 8,
        'object(G, "gpu"), !state(G, "down")': gpus - 1,  # the quarantined node's gpu6 is down
    }


def cli_seconds(argv: list[str], query: str) -> tuple[float, float, int]:
    """`argv` (a `topolog repl FILE`) on a pseudo-terminal: seconds until its prompt shows, and until
    the answer of `query`, typed the moment the prompt shows, has been printed; its row count."""
    master, slave = os.openpty()
    env = {**os.environ, "TERM": "dumb", "INPUTRC": "/dev/null", "TOPOLOG_HISTORY": ""}
    started = time.perf_counter()
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    seen, prompt, answer, rows = b"", 0.0, 0.0, -1
    try:
        while not answer:
            ready, _, _ = select.select([master], [], [], 300)
            try:
                chunk = os.read(master, 65536) if ready else b""
            except OSError:  # EIO: the child closed the terminal
                chunk = b""
            if not chunk:
                raise RuntimeError(f"{argv[0]} ended or stalled; it printed:\n{seen.decode(errors='replace')}")
            seen += chunk
            if not prompt and b"topolog> " in seen:
                prompt = time.perf_counter() - started
                os.write(master, (query + "\r").encode())
            counted = re.search(rb"\((\d+) rows?\)", seen) if prompt else None
            if counted:
                answer = time.perf_counter() - started
                rows = int(counted.group(1))
        os.write(master, b".quit\r")
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        os.close(master)
    return prompt, answer, rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--sizes", default="1024,4096", help="GPUs, multiples of 256")
    ap.add_argument("--runs", type=int, default=7, help="answers per query (median and max)")
    ap.add_argument("--cli-runs", type=int, default=3, help="CLI starts per side, alternating (median)")
    ap.add_argument("--base", help="another install's topolog executable, timed at the prompt after this tree's")
    args = ap.parse_args(argv)
    failed = False
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    with tempfile.TemporaryDirectory() as tmp:
        paths = {gpus: Path(tmp) / f"fleet-{gpus}.yaml" for gpus in sizes}
        for gpus, path in paths.items():
            path.write_text(inventory_yaml(Layout(gpus)), encoding="utf-8")
        print(f"load average before: {os.getloadavg()[0]:.1f}\n")
        print(f"`{FIRST_QUERY}` typed the moment the prompt shows; medians of {args.cli_runs} starts per side\n")
        print("| GPUs | topolog | first answer s | prompt s | all first answers s | ratio (paired) | check |")
        print("|---:|---|---:|---:|---|---:|---|")
        for gpus, path in paths.items():
            sides = [("this tree", [sys.executable, "-m", "verifier.cli.main", "repl", str(path)])]
            if args.base:
                sides.append((args.base, [args.base, "repl", str(path)]))
            timed: dict[str, list[tuple[float, float, int]]] = {name: [] for name, _ in sides}
            crashed: dict[str, list[str]] = {name: [] for name, _ in sides}
            for _ in range(args.cli_runs):
                for name, command in sides:  # alternating, so that both sides see the same host
                    # A start that ends in an error is started again (up to 3 times) and counted: the
                    # release before issue 46's early answers could fail its first answer (its banner
                    # read the inventory's links while the thread was making them: KeyError '_unmade').
                    for _attempt in range(3):
                        try:
                            timed[name].append(cli_seconds(command, FIRST_QUERY))
                            break
                        except RuntimeError as error:
                            crashed[name].append(str(error).strip().splitlines()[-1])
            base = timed[args.base] if args.base else None
            for name, got in timed.items():
                answers = [a for _, a, _ in got]
                ratio = "-"
                # Each start against the base's start beside it (when every start of both sides answered).
                if base is not None and name != args.base and len(base) == len(answers):
                    ratio = f"{statistics.median(a / b for a, (_, b, _) in zip(answers, base, strict=True)):.2f}"
                check = "ok" if not crashed[name] else f"{len(crashed[name])} failed start(s): {crashed[name][0]}"
                if any(rows != 3 for _, _, rows in got):  # its node, rack and pod (expected_rows)
                    check, failed = "FAIL: expected 3 rows", True
                every = ", ".join(f"{a:.2f}" for a in sorted(answers))
                print(
                    f"| {gpus:,} | {name} | {statistics.median(answers):.2f} | "
                    f"{statistics.median(p for p, _, _ in got):.2f} | {every} | {ratio} | {check} |"
                )
        print()
        print(
            "| GPUs | engine | load s | query | rows | early ms | median ms | max ms | CPU ms | first rows ms | check |"
        )
        print("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---|")
        for gpus, path in paths.items():
            early = early_answers(path)
            started = time.perf_counter()
            model = load([path])
            load_s = time.perf_counter() - started
            session = Session(model)
            collect_what_queries_leave()  # as `topolog repl` sets the collector before its prompt
            want = expected_rows(gpus)
            for text in QUERIES:
                times, cpu, first = [], [], []
                for _ in range(args.runs):
                    t, c = time.perf_counter(), time.process_time()
                    for i, _piece in enumerate(session.answer(text)):  # as answer_line writes them
                        if i == 1:  # the header, then the first rows
                            first.append((time.perf_counter() - t) * 1000)
                    times.append((time.perf_counter() - t) * 1000)
                    cpu.append((time.process_time() - c) * 1000)
                rows = model.engine.answer(_parsed(model, text))
                early_ms, early_rows = early[text]
                check = "ok"
                if text in want and want[text] != len(rows):
                    check, failed = f"FAIL: expected {want[text]:,}", True
                elif early_rows is not None and early_rows != rows:
                    check, failed = "FAIL: early rows differ", True
                first_ms = f"{statistics.median(first):.1f}" if first else "-"
                print(
                    f"| {gpus:,} | {model.engine.name} | {load_s:.1f} | `{text}` | {len(rows):,} | "
                    f"{early_ms} | {statistics.median(times):.1f} | {max(times):.1f} | "
                    f"{statistics.median(cpu):.1f} | {first_ms} | {check} |"
                )
            model.close()
        print(f"\nload average after: {os.getloadavg()[0]:.1f}")
    return 1 if failed else 0


def early_answers(path: Path) -> dict[str, tuple[str, list[Row] | None]]:
    """Each query answered as if typed before the evaluation ends (a loading whose evaluation never
    does): milliseconds to its answer written as a table, and its rows (None: it waits for the model)."""
    program = load_rules()
    loading = Loading(program, read_inventory([path], discover([path]), None, principals=True), Future())
    out: dict[str, tuple[str, list[Row] | None]] = {}
    for text in QUERIES:
        started = time.perf_counter()
        query = prepare_query(text, program)
        rows = loading.answer_now(query)
        if rows is not None:
            "".join(table_chunks(QueryResult(query.variables, rows)))
        out[text] = (f"{(time.perf_counter() - started) * 1000:.0f}" if rows is not None else "waits", rows)
    return out


def _parsed(model: Evaluation, text: str) -> Query:
    return prepare_query(text, model.program)


if __name__ == "__main__":
    sys.exit(main())
