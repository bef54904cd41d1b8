"""`topolog serve` under a real HTTP load generator on loopback: wrk (Debian package wrk).

    python benchmarks/serve_bench.py [--gpus 131072] [--users 1000] [--duration 10] [--connections 4]
        [--admits 100] [--rules-admits 5] [--reloads 10]

For the shipped mixed fleet (inventories/mixed-fleet.yaml, its principals.yml, policies/) and a
generated fleet of `--gpus` GPUs (benchmarks/verify_bench.py's DGX H100 fleet, every node of
tenant research, with the shipped principals plus `--users` users: benchmarks/authz_bench.py),
each in a folder of its own:

- start: wall time from launching `topolog serve FLEET --port 0` to its first 200 on /healthz,
  and the server's resident memory then (VmRSS) and at its peak by the end (VmHWM, /proc);
- placement evaluated: wall time from the launch until /v1/revision says the revision's placement
  rules are evaluated for admits (verifier/service/placing.py; done after start, on the admit
  thread), or that it keeps none (a small inventory); every later measurement waits for it;
- authorize: `wrk -t1 -d DURATION --latency` POSTing to /v1/authorize, cycling over 256 requests
  of varied principals and GPUs (so per-GPU work is not all served warm): latency p50 and p99 with
  one connection (a scheduler asking one question at a time; with more connections than the two
  cores can serve at once, the latency wrk reports is mostly queueing), and decisions per second
  with `--connections`; any non-2xx answer or socket error is a failure;
- admit: `--admits` POSTs of an 8-GPU job (scope node, principal dan; on the mixed fleet
  inventories/jobs/hpc.yaml) to /v1/admit, one at a time, timed by the client, each with another
  `?limit=` (1, 2, ...: another question, so none is answered from the kept answers; the answer
  lists the best `limit` hosting nodes of 16,384 at 131,072 GPUs, and counts them all). Both are
  plain jobs (verifier/placement/plain.py), judged without the rules. Then `--rules-admits` POSTs
  of a job the rules judge (the same with `max_nodes: 1`; on the mixed fleet portable.yaml, which
  asks software), each with another limit; then `--admits` POSTs of the first job under other
  names and the default limit (10), as each Pod of one Kubernetes Job asks: answered from the
  revision's kept answers. The job must be admitted each time;
- reload: a policy edit (a forbid naming one user) written to the policy folder, timed until
  /v1/revision shows the new revision (the file watcher's debounce included); then `--reloads`
  edits, each applied with POST /v1/reload, while wrk loads the server and a checking client
  asks a question whose answer the edit flips: every answer it gets must be the decision of the
  revision it names (0 mixed), and wrk must see no failed request.

Machine load is recorded (this machine is shared); stdout is Markdown, progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:  # run as a file from the repository root, not installed
    sys.path.insert(0, str(REPO))

from benchmarks.authz_bench import users_file  # noqa: E402
from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402

LISTENING = re.compile(r"listening on http://(\S+):(\d+)")
SUSPEND = '@id("bench-suspend")\nforbid (principal == User::"{who}", action, resource);\n'
JOB = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: train-8
    principal: User::"dan"
    gpus: 8
    topology:
      scope: node
"""
JOB_RULES = JOB.replace("train-8", "train-8-rules").replace(
    "      scope: node\n", "      scope: node\n      max_nodes: 1\n"
)
"""The same job with max_nodes, which only the rules judge (verifier/placement/plain.py)."""
WRK_SCRIPT = """
local bodies = {BODIES}
local i = 0
request = function()
  i = i + 1
  return wrk.format("POST", "/v1/authorize", {{["Content-Type"] = "application/json"}}, bodies[(i % #bodies) + 1])
end
"""


@dataclass
class Fleet:
    name: str
    inventory: Path
    bodies: list[dict[str, str]]
    probe: dict[str, str]
    """A request the reload edit flips (ALLOW before, DENY after)."""
    admit: bytes | None
    """A plain job (judged without the rules)."""
    admit_rules: bytes | None
    """A job the rules judge."""


@dataclass
class Result:
    name: str
    start_s: float = 0.0
    rss_mib: float = 0.0
    peak_mib: float = 0.0
    p50_ms: float = 0.0
    p99_ms: float = 0.0
    rps: float = 0.0
    failed: int = 0
    admit_ms: list[float] = field(default_factory=list)
    """Admits of a plain job each asking another question (none kept)."""
    rules_ms: list[float] = field(default_factory=list)
    """Admits of a job the rules judge, each asking another question."""
    again_ms: list[float] = field(default_factory=list)
    """Admits of a job asked before under another name (answered from the kept answers)."""
    admit_bytes: int = 0
    """The last admit answer's JSON (limit 10)."""
    prepared_s: float = 0.0
    prepared: str = ""
    edit_live_s: float = 0.0
    reload_ms: list[float] = field(default_factory=list)
    reload_failed: int = 0
    mixed: int = 0
    checked: int = 0
    problems: list[str] = field(default_factory=list)


def log(text: str) -> None:
    print(f"serve_bench: {text}", file=sys.stderr, flush=True)


def _copy_policies(folder: Path) -> None:
    (folder / "policies").mkdir()
    for f in [*(REPO / "policies").glob("*.cedar"), REPO / "policies" / "schema.cedarschema"]:
        shutil.copy(f, folder / "policies" / f.name)


def mixed_fleet(folder: Path) -> Fleet:
    shutil.copy(REPO / "inventories" / "mixed-fleet.yaml", folder / "mixed-fleet.yaml")
    shutil.copy(REPO / "inventories" / "principals.yml", folder / "principals.yml")
    _copy_policies(folder)
    people = ["alice", "bob", "carol", "hana", "ivan", "olga", "rita", "sam"]
    gpus = [f"{n}/gpu{g}" for n in ("a100-n0", "a100-n1", "h100-n0", "mi300x-n0", "rtx-n0", "rtx-n3") for g in (0, 1)]
    bodies = [
        {"principal": people[i % len(people)], "action": "schedule", "resource": gpus[(i * 7) % len(gpus)]}
        for i in range(256)
    ]
    # alice (team-nlp) on a100-n0 (tenant team-nlp): ALLOW by tenant-own-hardware; the edit forbids her.
    probe = {"principal": "alice", "action": "schedule", "resource": "a100-n0/gpu0"}
    jobs = REPO / "inventories" / "jobs"
    admit, rules = (jobs / "hpc.yaml").read_bytes(), (jobs / "portable.yaml").read_bytes()
    return Fleet("mixed fleet (shipped)", folder / "mixed-fleet.yaml", bodies, probe, admit, rules)


def generated_fleet(folder: Path, gpus: int, users: int) -> Fleet:
    lay = Layout(gpus)
    (folder / "fleet.yaml").write_text(inventory_yaml(lay))
    (folder / "principals.yml").write_text(users_file(users))
    _copy_policies(folder)
    nodes = gpus // 8
    bodies = [
        {
            "principal": f"u{(i * 37) % users:04d}",
            "action": "schedule",
            "resource": _gpu_id(lay, (i * 997) % nodes, i % 8),
        }
        for i in range(256)
    ]
    # dan (team research) on any GPU of this fleet (every node tenant research): ALLOW; the edit forbids him.
    probe = {"principal": "dan", "action": "schedule", "resource": _gpu_id(lay, 0, 0)}
    name = f"{gpus:,} GPUs, {users:,} more users"
    return Fleet(name, folder / "fleet.yaml", bodies, probe, JOB.encode(), JOB_RULES.encode())


def _gpu_id(lay: Layout, node: int, gpu: int) -> str:
    # verify_bench names nodes su{SU:04d}-r{rack}-n{node}: rack and SU from the node's index.
    per_rack = lay.nodes // lay.racks
    racks_per_su = lay.racks // lay.sus
    rack = node // per_rack
    return f"su{rack // racks_per_su:04d}-r{rack % racks_per_su}-n{node % per_rack}/gpu{gpu}"


def _http(method: str, url: str, body: bytes | None = None) -> tuple[int, dict[str, object]]:
    req = urllib.request.Request(url, data=body, method=method, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=120) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read() or b"{}")


def _mib(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def _wrk(url: str, bodies: list[dict[str, str]], connections: int, duration: int, work: Path) -> dict[str, float]:
    script = work / "authorize.lua"
    lua_bodies = "{" + ",".join(json.dumps(json.dumps(b)) for b in bodies) + "}"
    script.write_text(WRK_SCRIPT.format(BODIES=lua_bodies))
    out = subprocess.run(
        ["wrk", "-t1", f"-c{connections}", f"-d{duration}s", "--latency", "--timeout", "10s", "-s", str(script), url],
        capture_output=True,
        text=True,
        check=True,
        timeout=duration + 60,
    ).stdout
    return _parse_wrk(out)


def _parse_wrk(out: str) -> dict[str, float]:
    def ms(text: str) -> float:
        m = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
        if m is None:
            raise SystemExit(f"wrk printed a latency it cannot read: {text}")
        return float(m[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0}[m[2]]

    lat = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", out, re.M))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    return {
        "p50": ms(lat["50"]),
        "p99": ms(lat["99"]),
        "rps": float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1]),  # type: ignore[index]
        "failed": float((int(non2xx[1]) if non2xx else 0) + (sum(int(x) for x in errors.groups()) if errors else 0)),
    }


def run_fleet(fleet: Fleet, work: Path, args: argparse.Namespace) -> Result:
    result = Result(fleet.name)
    log(f"{fleet.name}: starting")
    started = time.perf_counter()
    out = (work / "serve.log").open("w")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "verifier.cli.main", "serve", str(fleet.inventory), "--port", "0"]
    proc = subprocess.Popen(cmd, cwd=fleet.inventory.parent, stdout=out, stderr=subprocess.STDOUT, env=env)
    try:
        url = _wait_listening(proc, work / "serve.log", args.timeout)
        while True:
            try:
                if _http("GET", url + "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.01)
        result.start_s = time.perf_counter() - started
        result.rss_mib = _mib(proc.pid, "VmRSS")
        log(f"{fleet.name}: up in {result.start_s:.2f} s, {result.rss_mib:.0f} MiB")
        result.prepared = _placement_ready(url, args.timeout)
        result.prepared_s = time.perf_counter() - started
        log(f"{fleet.name}: placement {result.prepared} at {result.prepared_s:.2f} s; wrk 2 x {args.duration} s")
        one = _wrk(url + "/v1/authorize", fleet.bodies, 1, args.duration, work)
        many = _wrk(url + "/v1/authorize", fleet.bodies, args.connections, args.duration, work)
        result.p50_ms, result.p99_ms, result.rps = one["p50"], one["p99"], many["rps"]
        result.failed = int(one["failed"] + many["failed"])
        if fleet.admit is not None:
            # Each first admit asks another limit (1, 2, ...): another question, evaluated. Then
            # the job again under other names and the default limit 10 (asked among the first
            # when --admits >= 10), as each Pod of one Job asks: kept answers.
            asked = [(f"?limit={i + 1}", fleet.admit, result.admit_ms) for i in range(args.admits)]
            if fleet.admit_rules is not None:
                asked += [(f"?limit={i + 1}", fleet.admit_rules, result.rules_ms) for i in range(args.rules_admits)]
            asked += [
                ("", fleet.admit.replace(b"name: ", f"name: again-{i}-".encode(), 1), result.again_ms)
                for i in range(args.admits)
            ]
            for query, body, times in asked:
                t = time.perf_counter()
                status, doc = _http("POST", url + "/v1/admit" + query, body)
                times.append((time.perf_counter() - t) * 1000)
                result.admit_bytes = len(json.dumps(doc))
                if status != 200 or doc.get("admitted") is not True:
                    result.problems.append(f"admit answered {status}: {str(doc)[:200]}")
        _reloads(fleet, url, work, args, result)
        result.peak_mib = _mib(proc.pid, "VmHWM")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
        out.close()
    return result


def _placement_ready(url: str, timeout: float) -> str:
    """Once the live revision's placement evaluation is built (or known not to be kept): what it is."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        placement = _http("GET", url + "/v1/revision")[1].get("placement")
        if isinstance(placement, dict):
            if placement.get("prepared"):
                return f"evaluated in {placement.get('seconds')} s"
            if placement.get("error"):
                return f"none ({placement['error']})"
        time.sleep(0.05)
    raise SystemExit(f"the placement evaluation was not ready within {timeout} s")


def _wait_listening(proc: subprocess.Popen[bytes], log_file: Path, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"topolog serve exited {proc.returncode}:\n{log_file.read_text()}")
        m = LISTENING.search(log_file.read_text())
        if m:
            return f"http://{m[1]}:{m[2]}"
        time.sleep(0.01)
    raise SystemExit(f"topolog serve did not listen within {timeout} s")


def _reloads(fleet: Fleet, url: str, work: Path, args: argparse.Namespace, result: Result) -> None:
    suspend = fleet.inventory.parent / "policies" / "bench-suspend.cedar"
    probe = json.dumps(fleet.probe).encode()
    base = _http("GET", url + "/v1/revision")[1]["revision"]
    t = time.perf_counter()
    suspend.write_text(SUSPEND.format(who=fleet.probe["principal"]))
    while _http("GET", url + "/v1/revision")[1]["revision"] == base:  # the file watcher's reload
        if time.perf_counter() - t > 60:
            result.problems.append("the policy edit was not live within 60 s")
            break
        time.sleep(0.005)
    result.edit_live_s = time.perf_counter() - t
    suspended = _http("GET", url + "/v1/revision")[1]["revision"]
    expected = {base: "ALLOW", suspended: "DENY"}
    stop = threading.Event()

    def check() -> None:
        while not stop.is_set():
            status, doc = _http("POST", url + "/v1/authorize", probe)
            result.checked += 1
            if status != 200 or expected.get(str(doc.get("revision"))) != doc.get("decision"):
                result.mixed += 1

    checker = threading.Thread(target=check)
    checker.start()
    load: dict[str, float] = {}
    loader = threading.Thread(
        target=lambda: load.update(_wrk(url + "/v1/authorize", fleet.bodies, args.connections, args.duration, work))
    )
    loader.start()
    try:
        for i in range(args.reloads):
            if i % 2 == 0:
                suspend.unlink()
            else:
                suspend.write_text(SUSPEND.format(who=fleet.probe["principal"]))
            t = time.perf_counter()
            status, doc = _http("POST", url + "/v1/reload", b"")
            result.reload_ms.append((time.perf_counter() - t) * 1000)
            if status != 200 or doc.get("revision") not in expected:
                result.reload_failed += 1
            time.sleep(args.duration / (args.reloads + 1))  # spread over the load, not timing anything
    finally:
        loader.join()
        stop.set()
        checker.join()
    result.failed += int(load.get("failed", 0))


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if s else 0.0


def _p99(xs: list[float]) -> float:
    """The 99th percentile, nearest rank (the largest of fewer than 100)."""
    ordered = sorted(xs)
    return ordered[max(0, -(-99 * len(ordered) // 100) - 1)]


def render(results: list[Result], args: argparse.Namespace) -> str:
    load = os.getloadavg()
    lines = [
        f"serve_bench: wrk -t1 -d{args.duration}s on loopback (latency: 1 connection; decisions/s: "
        f"{args.connections}), {os.cpu_count()} CPUs, "
        f"load average {load[0]:.2f} / {load[1]:.2f} at the end",
        "",
        "| fleet | start | placement evaluated | RSS (start / peak) | authorize p50 | p99 | decisions/s | failed "
        "| admit, new plain job (median / p99 / max) | admit by the rules (median / max) "
        "| admit asked again (median / max) | answer "
        "| policy edit live | reload (median / max) | under reloads: checked, mixed |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        admit = f"{_median(r.admit_ms):.1f} / {_p99(r.admit_ms):.1f} / {max(r.admit_ms):.1f} ms" if r.admit_ms else "-"
        rules = f"{_median(r.rules_ms):.0f} / {max(r.rules_ms):.0f} ms" if r.rules_ms else "-"
        again = f"{_median(r.again_ms):.1f} / {max(r.again_ms):.1f} ms" if r.again_ms else "-"
        lines.append(
            f"| {r.name} | {r.start_s:.2f} s | {r.prepared_s:.2f} s | {r.rss_mib:.0f} / {r.peak_mib:.0f} MiB "
            f"| {r.p50_ms:.2f} ms "
            f"| {r.p99_ms:.2f} ms | {r.rps:,.0f} | {r.failed} | {admit} | {rules} | {again} | {r.admit_bytes:,} B "
            f"| {r.edit_live_s:.2f} s "
            f"| {_median(r.reload_ms):.0f} / {max(r.reload_ms, default=0):.0f} ms "
            f"({r.reload_failed} refused) | {r.checked}, {r.mixed} |"
        )
    for r in results:
        lines += [f"- {r.name}: placement {r.prepared}"]
        lines += [f"- {r.name}: {p}" for p in r.problems]
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=131072, help="GPUs of the generated fleet (multiple of 256; 0: none)")
    ap.add_argument("--users", type=int, default=1000)
    ap.add_argument("--duration", type=int, default=10, help="seconds of each wrk run")
    ap.add_argument("--connections", type=int, default=4)
    ap.add_argument("--admits", type=int, default=100, help="admits of a plain job (and of it asked again)")
    ap.add_argument("--rules-admits", type=int, default=5, help="admits of a job the rules judge")
    ap.add_argument("--reloads", type=int, default=10)
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a server may take to start")
    args = ap.parse_args()
    if shutil.which("wrk") is None:
        raise SystemExit("serve_bench needs wrk: apt-get install wrk")
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="serve-bench-") as tmp:
        root = Path(tmp)
        (root / "mixed").mkdir()
        results.append(run_fleet(mixed_fleet(root / "mixed"), root / "mixed", args))
        if args.gpus:
            (root / "fleet").mkdir()
            results.append(run_fleet(generated_fleet(root / "fleet", args.gpus, args.users), root / "fleet", args))
    print(render(results, args))
    return 1 if any(r.problems or r.failed or r.mixed or r.reload_failed for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
