"""`read_jobs(paths, principal_from)`: every job file topolog reads, whatever wrote it (docs/jobs.md).

The one entry point for `place`, `verify --jobs` and the service. Per file:

- a Slurm batch script (`#!` first, or `#SBATCH` lines; `.sh`, `.sbatch`, `.slurm` in a folder):
  verifier/sources/jobs/slurm_batch.py;
- YAML, one document or several (`---`): each document is topolog's own `kind: Jobs`
  (verifier/sources/jobs/loader.py), a Kubernetes workload (verifier/sources/jobs/kubernetes.py),
  or a `kind: List` of them as `kubectl get -o yaml` writes it. Other Kubernetes objects (a
  Service, a LocalQueue) are not jobs: a note names each, and they are not placed; one that
  asks for GPUs (a kind not read, such as a Volcano Job) is refused, never passed unjudged.

A workload that asks for no GPU (a CPU-only Job, Deployment or batch script beside the GPU ones,
as a real namespace or script folder holds them) is not placed, with a note. Where no workload of
any file asks for a GPU there is nothing to place: NoGpuRequested (a TopologError) names each,
so a caller that gates GPUs (the admission webhook) can tell "nothing to gate" from bad input.

Jobs of every format share one namespace of names. Every problem of every file is collected and
raised together (exit 2, each with file:line); a run that finds no job at all is an error too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from verifier.core.errors import Diagnostic, SourceLocation, TopologError
from verifier.sources.inventory.raw_files import read_files
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import YList, YMap, decode_utf8, load_yaml_stream
from verifier.sources.jobs.dra import claim_templates
from verifier.sources.jobs.kubernetes import API_GROUPS, is_kubernetes, pod_group, read_pod_groups, read_workload
from verifier.sources.jobs.loader import API_VERSION, folder_job_files, hidden_note, read_topolog_document
from verifier.sources.jobs.pod_spec import GPU_RESOURCES, MIG_RESOURCE
from verifier.sources.jobs.principal_rules import PrincipalRule
from verifier.sources.jobs.slurm_batch import is_batch_script, read_batch_script
from verifier.sources.jobs.spec import Job, Jobs

YAML_SUFFIXES = (".yaml", ".yml")
SCRIPT_SUFFIXES = (".sh", ".sbatch", ".slurm")


class NoGpuRequested(TopologError):
    """Every workload read asks for no GPU: nothing to place (each named at its line)."""


def read_jobs(paths: Iterable[str | Path], principal_from: tuple[PrincipalRule, ...] = ()) -> Jobs:
    """Every job of the files and folders given (a folder: its job files, sorted); TopologError on bad input."""
    problems = Problems()
    notes: list[Diagnostic] = []
    files = _expand(paths, problems, notes)
    jobs: dict[str, Job] = {}
    names: list[str] = []
    groups: dict[str, list[YMap]] = {}  # Kueue pod groups: their pods may be spread over files
    cpu_only: list[Diagnostic] = []  # workloads that ask for no GPU
    beside_groups: list[YMap] = []  # the documents of the files that hold pods of a pod group
    for name, data in read_files(files):
        names.append(name)
        if isinstance(data, TopologError):
            problems.add_all(data)
            continue
        try:
            text = decode_utf8(data, name)
        except TopologError as err:
            problems.add_all(err)
            continue
        _read_text(text, name, principal_from, problems, jobs, notes, groups, cpu_only, beside_groups)
    with claim_templates(beside_groups):  # a group's pods are read last: their files' DRA templates
        for job in read_pod_groups(groups, principal_from, problems, cpu_only):
            _add(job, jobs, problems)
    problems.raise_if_any()
    notes.extend(_cpu_only(cpu_only, jobs))
    if not jobs:
        where = SourceLocation(names[0]) if names else SourceLocation("<jobs>")
        raise TopologError.at(where, "no jobs to place: the job files define none; expected at least one job")
    return Jobs(jobs=jobs, files=tuple(names), notes=tuple(notes))


def read_jobs_text(text: str, filename: str, principal_from: tuple[PrincipalRule, ...] = ()) -> Jobs:
    """The same for one file's text (tests, the service's request bodies)."""
    problems = Problems()
    jobs: dict[str, Job] = {}
    notes: list[Diagnostic] = []
    groups: dict[str, list[YMap]] = {}
    cpu_only: list[Diagnostic] = []
    beside_groups: list[YMap] = []
    _read_text(text, filename, principal_from, problems, jobs, notes, groups, cpu_only, beside_groups)
    with claim_templates(beside_groups):
        for job in read_pod_groups(groups, principal_from, problems, cpu_only):
            _add(job, jobs, problems)
    problems.raise_if_any()
    notes.extend(_cpu_only(cpu_only, jobs))
    return Jobs(jobs=jobs, files=(filename,), notes=tuple(notes))


def _cpu_only(cpu_only: list[Diagnostic], jobs: dict[str, Job]) -> list[Diagnostic]:
    """Notes for the workloads that ask for no GPU, beside jobs that do; NoGpuRequested when no
    workload asks for one (a GPU gate has nothing to judge, and "0 jobs placed" would read as a pass).
    """
    cpu_only = list(dict.fromkeys(cpu_only))
    if not jobs and cpu_only:
        raise NoGpuRequested([Diagnostic(d.location, f"{d.message}: nothing to place") for d in cpu_only])
    return [Diagnostic(d.location, f"{d.message}: not placed") for d in cpu_only]


def _expand(paths: Iterable[str | Path], problems: Problems, notes: list[Diagnostic]) -> list[Path]:
    out: list[Path] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            found, hidden = folder_job_files(path, (*YAML_SUFFIXES, *SCRIPT_SUFFIXES))
            if not found:
                also = f" ({hidden_note(hidden)})" if hidden else ""
                problems.add(
                    SourceLocation(str(path)),
                    "folder holds no job files; expected *.yaml or *.yml files, or Slurm batch scripts "
                    f"(*.sh, *.sbatch, *.slurm){also}",
                )
            elif hidden:
                notes.append(Diagnostic(SourceLocation(str(path)), hidden_note(hidden)))
            out.extend(found)
        else:
            out.append(path)
    return out


def _read_text(
    text: str,
    name: str,
    rules: tuple[PrincipalRule, ...],
    p: Problems,
    jobs: dict[str, Job],
    notes: list[Diagnostic],
    groups: dict[str, list[YMap]],
    cpu_only: list[Diagnostic],
    beside_groups: list[YMap],
) -> None:
    if Path(name).suffix not in YAML_SUFFIXES and is_batch_script(text):
        job = read_batch_script(text, name, rules, p, cpu_only)
        if job is not None:
            _add(job, jobs, p)
        return
    try:
        docs = load_yaml_stream(text, name)
    except TopologError as err:
        p.add_all(err)
        return
    if not docs:
        p.add(
            SourceLocation(name, 1, 1),
            "file has no job documents; expected 'kind: Jobs', Kubernetes workloads or a Slurm batch script",
        )
    grouped = sum(map(len, groups.values()))
    with claim_templates(docs):  # DRA claims of the file's pods are read against its templates
        for doc in docs:
            _read_doc(doc, rules, p, jobs, notes, groups, cpu_only)
    if sum(map(len, groups.values())) > grouped:
        # Pods of a pod group are read once every file is (read_pod_groups), after this file's
        # templates are gone: they are read against the templates of the files holding them.
        beside_groups.extend(docs)


def _read_doc(
    doc: YMap,
    rules: tuple[PrincipalRule, ...],
    p: Problems,
    jobs: dict[str, Job],
    notes: list[Diagnostic],
    groups: dict[str, list[YMap]],
    cpu_only: list[Diagnostic],
) -> None:
    kind = doc.get("kind")
    if doc.get("apiVersion") == API_VERSION or kind == "Jobs" or "apiVersion" not in doc:
        read_topolog_document(doc, p, jobs)  # its own messages for a wrong kind or missing keys
        return
    if kind == "List":
        items = doc.get("items")
        if not isinstance(items, YList):
            p.add(doc.key_loc("items") if "items" in doc else doc.loc, "a List needs 'items', a list of objects")
            return
        for i, item in enumerate(items):
            if isinstance(item, YMap):
                _read_doc(item, rules, p, jobs, notes, groups, cpu_only)
            else:
                p.add(items.item_loc(i), "each item of a List must be a Kubernetes object (a mapping)")
        return
    group = pod_group(doc)
    if group is not None:
        groups.setdefault(group, []).append(doc)  # one job of all its pods, once every file is read
        return
    if is_kubernetes(doc):
        for job in read_workload(doc, rules, p, cpu_only):
            _add(job, jobs, p)
        return
    if not isinstance(kind, str):
        p.add(doc.key_loc("kind") if "kind" in doc else doc.loc, "document has no 'kind'; expected Jobs or a workload")
        return
    meta = doc.get("metadata")
    name = meta.get("name") if isinstance(meta, YMap) else None
    what = f"{kind} {name or ''}".strip()
    asked = None if _sets_quota(doc) else _gpu_request(doc)
    if asked is not None:
        # A workload of a kind not read that asks for GPUs (a Volcano Job, a SparkApplication, a
        # Notebook): leaving it out would pass the file with its GPUs never judged.
        p.add(
            asked,
            f"{what} asks for GPUs, but a {kind} is no workload kind topolog reads; expected one of "
            f"{', '.join(sorted(API_GROUPS))}, or topolog's own kind: Jobs",
        )
        return
    notes.append(Diagnostic(doc.key_loc("kind"), f"{what} is not a workload topolog places: not placed"))


QUOTA_KINDS = {
    "ClusterQueue": "kueue.x-k8s.io/",
    "Cohort": "kueue.x-k8s.io/",
    "ResourceQuota": "v1",
    "LimitRange": "v1",
    "Queue": "scheduling.volcano.sh/",
    "NodePool": "karpenter.sh/",
}
"""Objects that name GPU resources as quotas, defaults or caps for the pods of others (a Kueue
ClusterQueue's `nvidia.com/gpu` nominalQuota, a Volcano Queue's capability), asking for none
themselves: they sit beside jobs in a setup file and are noted, not refused as unread workloads."""


def _sets_quota(doc: YMap) -> bool:
    group = QUOTA_KINDS.get(str(doc.get("kind")))
    api = doc.get("apiVersion")
    return (
        group is not None and isinstance(api, str) and (api == group or (group.endswith("/") and api.startswith(group)))
    )


_LABEL_TABLES = frozenset({"nodeSelector", "matchLabels", "labels", "annotations", "nodeLabels"})
"""Where `nvidia.com/gpu` as a key is a node label (a selector), not a resource asked for."""
_LABEL_KEYS = frozenset({"key", "topologyKey"})
"""Keys whose value `nvidia.com/gpu` names a taint, toleration or node label (a DaemonSet that
tolerates the GPU nodes' taint asks for no GPU); anywhere else such a value names the resource
asked for (a SparkApplication's `gpu: {name: nvidia.com/gpu, quantity: 1}`)."""


def _gpu_request(node: object, depth: int = 0, parent: str = "") -> SourceLocation | None:
    """Where a GPU resource (nvidia.com/gpu, amd.com/gpu, nvidia.com/mig-*) or a DRA claim is first asked for."""
    if depth > 40:  # deeper than any real object: a hostile nesting is not walked further
        return None
    if isinstance(node, YMap):
        for key, value in node.items():
            gpu_key = key in GPU_RESOURCES or MIG_RESOURCE.match(str(key))
            named = isinstance(value, str) and (value in GPU_RESOURCES or MIG_RESOURCE.match(value))
            asked = (gpu_key and parent not in _LABEL_TABLES) or (named and key not in _LABEL_KEYS)
            if asked or key == "resourceClaims":
                return node.key_loc(key)
            found = _gpu_request(value, depth + 1, str(key))
            if found is not None:
                return found
    elif isinstance(node, YList):
        for item in node:
            found = _gpu_request(item, depth + 1, parent)
            if found is not None:
                return found
    return None


def _add(job: Job, jobs: dict[str, Job], p: Problems) -> None:
    first = jobs.get(job.name)
    if first is not None:
        p.add(job.loc, f"job {job.name!r} is defined twice (first at {first.loc}); job names must be unique")
        return
    jobs[job.name] = job
