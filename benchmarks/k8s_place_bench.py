"""`topolog place` on Kubernetes manifests against the same jobs in topolog's own format.

    python benchmarks/k8s_place_bench.py [--gpus 131072] [--jobs 100]

The fleet is benchmarks/verify_bench.py's generated DGX-H100 fleet. The jobs cycle through five
shapes, each written twice, as a Kubernetes manifest (one file per job, as `kubectl apply -f DIR`
takes them) and as the topolog job it stands for:

    Pod, 8 GPUs, nodeSelector nvidia.com/gpu.product      gpus 8, accepts H100-SXM5-80GB, scope node
    Kueue Job, 1 pod of g GPUs, required gpu.clique        gpus g, scope nvlink_domain
    JobSet, 4 replicas x 8 GPUs, required rack             gpus 32, scope rack, max_nodes 4
    LeaderWorkerSet, size 32 x 8 GPUs (one group)          gpus 256, max_nodes 32
    Kueue Workload, count 2 x 4 GPUs                        gpus 8, max_nodes 2

(nvidia.com/gpu without a product selector is `accepts: [nvidia]`, written so in both.)

Both runs place in-process, the same way (rules, inventory, facts, engine, ranking), with the
collector off as `topolog place` runs. Correctness: every job's placements must be the same in
both runs. Stdout is Markdown; the issue's target is a ratio of at most 1.
"""

from __future__ import annotations

import argparse
import gc
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.verify_bench import Layout, inventory_yaml  # noqa: E402
from verifier.placement.place import PlaceReport  # noqa: E402
from verifier.session.place_run import place  # noqa: E402
from verifier.sources.jobs.principal_rules import parse_rules  # noqa: E402
from verifier.sources.jobs.read import read_jobs  # noqa: E402

_META = "metadata:\n  name: {name}\n  namespace: research\n"
_OWN = '{{name: {name}, principal: Team::"research", gpus: {gpus}, {rest}}}'


def _pod(g: int, indent: str, extra: str = "") -> str:
    """A pod spec, indented to sit under `spec:` at `indent`."""
    body = extra + "containers:\n- name: main\n  image: example/train:1\n  resources:\n    limits:\n"
    body += f"      nvidia.com/gpu: {g}\n"
    return "".join(indent + line + "\n" for line in body.splitlines())


def manifest(i: int) -> tuple[str, str]:
    """(Kubernetes manifest, the topolog job it stands for) of job i."""
    shape = i % 5
    if shape == 0:
        name = f"node-{i}"
        k8s = f"apiVersion: v1\nkind: Pod\n{_META.format(name=name)}spec:\n" + _pod(
            8, "  ", "nodeSelector:\n  nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3\n"
        )
        own = _OWN.format(name=name, gpus=8, rest="gpu: {accepts: [H100-SXM5-80GB]}, topology: {scope: node}")
    elif shape == 1:
        name, g = f"nvl-{i}", 1 + i % 8
        k8s = (
            f"apiVersion: batch/v1\nkind: Job\n{_META.format(name=name)}spec:\n  template:\n    metadata:\n"
            "      annotations:\n        kueue.x-k8s.io/podset-required-topology: nvidia.com/gpu.clique\n"
            "    spec:\n" + _pod(g, "      ")
        )
        own = _OWN.format(name=name, gpus=g, rest="gpu: {accepts: [nvidia]}, topology: {scope: nvlink_domain}")
    elif shape == 2:
        name = f"rack-{i}"
        k8s = (
            f"apiVersion: jobset.x-k8s.io/v1alpha2\nkind: JobSet\n{_META.format(name=name)}spec:\n"
            "  replicatedJobs:\n  - name: workers\n    replicas: 4\n    template:\n      spec:\n        template:\n"
            "          metadata:\n            annotations:\n"
            "              kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack\n"
            "          spec:\n" + _pod(8, "            ")
        )
        own = _OWN.format(name=name, gpus=32, rest="gpu: {accepts: [nvidia]}, topology: {scope: rack, max_nodes: 4}")
    elif shape == 3:
        name = f"pod-{i}"
        k8s = (
            f"apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\n{_META.format(name=name)}spec:\n"
            "  replicas: 1\n  leaderWorkerTemplate:\n    size: 32\n    workerTemplate:\n      spec:\n"
            + _pod(8, "        ")
        )
        name = f"{name}-0"  # LWS names its group's leader so
        own = _OWN.format(name=name, gpus=256, rest="gpu: {accepts: [nvidia]}, topology: {max_nodes: 32}")
    else:
        name = f"wl-{i}"
        k8s = (
            f"apiVersion: kueue.x-k8s.io/v1beta1\nkind: Workload\n{_META.format(name=name)}spec:\n"
            "  queueName: research-queue\n  podSets:\n  - name: main\n    count: 2\n    template:\n      spec:\n"
            + _pod(4, "        ")
        )
        own = _OWN.format(name=name, gpus=8, rest="gpu: {accepts: [nvidia]}, topology: {max_nodes: 2}")
    return k8s, own


def _answers(report: PlaceReport) -> dict[str, list[tuple[str, tuple[str, ...], int | None]]]:
    return {jp.job.name: [(p.domain, p.gpus, p.bottleneck_mbps) for p in jp.placements] for jp in report.jobs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpus", type=int, default=131_072)
    ap.add_argument("--jobs", type=int, default=100)
    args = ap.parse_args(argv)
    gc.disable()  # as `topolog place` runs (verifier/cli/main.py)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        inv = root / "fleet.yaml"
        inv.write_text(inventory_yaml(Layout(args.gpus)))
        shutil.copy(REPO / "inventories" / "principals.yml", root / "principals.yml")
        k8s_dir = root / "manifests"
        k8s_dir.mkdir()
        own_lines = ["apiVersion: topolog.dev/v1", "kind: Jobs", "jobs:"]
        for i in range(args.jobs):
            manifest_text, own_job = manifest(i)
            (k8s_dir / f"job-{i:03d}.yaml").write_text(manifest_text)
            own_lines.append("  - " + own_job)
        own_file = root / "jobs.yaml"
        own_file.write_text("\n".join(own_lines) + "\n")
        rules = parse_rules(["namespace=Team"])
        # Untimed first run: the rules and the parsed fleet are cached (verifier/core/cache.py) as
        # they are for any second command on the same files; both timed runs then start alike.
        place([inv], [own_file], limit=3)
        timings: dict[str, tuple[float, float, float]] = {}
        reports: dict[str, PlaceReport] = {}
        for label, paths in (("topolog format", [own_file]), ("Kubernetes manifests", [k8s_dir])):
            t0 = time.perf_counter()
            read_jobs(paths, rules)
            t1, c1 = time.perf_counter(), time.process_time()
            reports[label] = place([inv], paths, limit=3, principal_from=rules)
            t2, c2 = time.perf_counter(), time.process_time()
            timings[label] = (t1 - t0, t2 - t1, c2 - c1)
    own, k8s = timings["topolog format"], timings["Kubernetes manifests"]
    print(f"# place: {args.jobs} Kubernetes manifests vs the same jobs in topolog's format, {args.gpus:,} GPUs\n")
    print("| jobs written as | reading the jobs alone, s | whole place, s | whole place, CPU s |\n|---|---|---|---|")
    print(f"| topolog format (one file) | {own[0]:.3f} | {own[1]:.2f} | {own[2]:.2f} |")
    print(f"| Kubernetes manifests ({args.jobs} files) | {k8s[0]:.3f} | {k8s[1]:.2f} | {k8s[2]:.2f} |")
    print(f"\nratio manifests / topolog format: {k8s[1] / own[1]:.2f} wall, {k8s[2] / own[2]:.2f} CPU")
    same = _answers(reports["topolog format"]) == _answers(reports["Kubernetes manifests"])
    print(f"correctness: {'ok' if same else 'FAIL'} (every job's placements the same both ways)")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
