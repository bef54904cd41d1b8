"""Kubernetes workloads as topolog jobs: the kinds Kueue admits (docs/jobs.md, "Kubernetes").

Each workload is one job whose pods must all run at once (Kueue admits a workload whole), except
a LeaderWorkerSet and a Deployment: Kueue admits each LWS group, and each Deployment pod, as its
own workload, so each is a job, named `<name>-<i>` (as LWS names a group's leader pod: `vllm-0`).
The job's GPUs are every pod's GPUs added up, with the pod counts Kueue gives its pod sets:

    Pod              1 pod
    Job              min(parallelism, completions) pods (parallelism defaults to 1, completions
                     to parallelism): the pods that run at once
    CronJob          one run: its jobTemplate read as a Job (Volcano's CronJob: as a Volcano Job)
    JobSet           per replicated job, replicas x its Job's pods
    LeaderWorkerSet  per group, 1 leader + (size - 1) workers (size workers without a leaderTemplate)
    DisaggregatedSet per slice (spec.slices, default 1), per role: the role's LeaderWorkerSet (each
                     role becomes one; its fields on the role, or under the role's `spec`)
    Workload         per pod set, count pods
    StatefulSet      replicas pods (default 1), one pod group
    Deployment       replicas jobs (default 1) of 1 pod each
    Kubeflow v1      PyTorchJob, TFJob, MPIJob, XGBoostJob, PaddleJob, JAXJob, MXJob: per replica
                     type (Master, Worker, Launcher, PS, ...), replicas pods (default 1)
    RayCluster       1 head pod + per worker group replicas (default 1) x numOfHosts (default 1)
    RayJob           its rayClusterSpec, as a RayCluster
    RayService       its rayClusterConfig, as a RayCluster (an upgrade's second cluster noted)
    TrainJob         trainer.numNodes pods of trainer.resourcesPerNode; both must be written,
                     since the runtime that supplies them otherwise is another object

A single pod runs on one node (scope node); pods of several nodes are bounded to that many
nodes (max_nodes). Kueue topology-aware scheduling (`kueue.x-k8s.io/podset-required-topology`
on a pod template, `topologyRequest.required` in a Workload) names a node label level; the
levels topolog has a scope for are in LEVEL_SCOPES. A required level without one is refused:
judging the job at another level would answer another question.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from verifier.core.errors import Diagnostic, SourceLocation
from verifier.core.limits import INT64_MAX
from verifier.sources.inventory.validate import Problems, one_of
from verifier.sources.inventory.yaml_source import YList, YMap
from verifier.sources.jobs.gpu_words import GPU_IN_USE, GPU_NO_USE, common_words
from verifier.sources.jobs.pod_spec import PodNeeds, read_gpu_types, read_node_choice, read_pod_spec, read_resources
from verifier.sources.jobs.principal_rules import PrincipalRule, resolve
from verifier.sources.jobs.spec import JOB_NAME, SCOPES, Job

VOLCANO = "batch.volcano.sh/"
"""Volcano's Job: the kind Job in its own API group, with tasks instead of a pod template."""

REPLICA_SPECS = {
    "PyTorchJob": "pytorchReplicaSpecs",
    "TFJob": "tfReplicaSpecs",
    "MPIJob": "mpiReplicaSpecs",
    "XGBoostJob": "xgbReplicaSpecs",
    "PaddleJob": "paddleReplicaSpecs",
    "JAXJob": "jaxReplicaSpecs",
    "MXJob": "mxReplicaSpecs",
}
"""The Kubeflow training operator's kinds (kubeflow.org/v1; MPIJob also v2beta1) and where each
lists its replica types."""

API_GROUPS = {
    "Pod": ("v1",),
    "Job": ("batch/v1", VOLCANO),
    "CronJob": ("batch/v1", VOLCANO),
    "JobSet": ("jobset.x-k8s.io/",),
    "LeaderWorkerSet": ("leaderworkerset.x-k8s.io/",),
    "DisaggregatedSet": ("disaggregatedset.x-k8s.io/",),
    "Workload": ("kueue.x-k8s.io/",),
    "StatefulSet": ("apps/v1",),
    "Deployment": ("apps/v1",),
    **{kind: ("kubeflow.org/",) for kind in REPLICA_SPECS},
    "RayCluster": ("ray.io/",),
    "RayJob": ("ray.io/",),
    "RayService": ("ray.io/",),
    "TrainJob": ("trainer.kubeflow.org/",),
}
"""The kinds read, and the apiVersion (exact, or a group prefix) each must have."""

QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
GROUP_LABEL = "kueue.x-k8s.io/pod-group-name"
GROUP_COUNT = "kueue.x-k8s.io/pod-group-total-count"
MIN_PARALLELISM = "kueue.x-k8s.io/job-min-parallelism"
REQUIRED = "kueue.x-k8s.io/podset-required-topology"
PREFERRED = "kueue.x-k8s.io/podset-preferred-topology"
UNCONSTRAINED = "kueue.x-k8s.io/podset-unconstrained-topology"
SLICE_REQUIRED = "kueue.x-k8s.io/podset-slice-required-topology"
SLICE_SIZE = "kueue.x-k8s.io/podset-slice-size"
SLICE_LAYERS = "kueue.x-k8s.io/podset-slice-required-topology-constraints"
"""Several slice levels at once, a JSON list of {"topology": level, "size": pods} (Kueue's
site/static/examples/tas/sample-job-multi-layer.yaml)."""
GROUP_NAME = "kueue.x-k8s.io/podset-group-name"
"""Pod sets of one group are placed in one topology domain together; any other pod set in a domain
of its own (Kueue's TAS: PodSetTopologyRequest.PodSetGroupName, each pod set its own group by default)."""
TAS_ANNOTATIONS = (
    REQUIRED,
    PREFERRED,
    UNCONSTRAINED,
    SLICE_REQUIRED,
    SLICE_SIZE,
    SLICE_LAYERS,
    GROUP_COUNT,
    GROUP_NAME,
)
"""Annotations read (the topology requests, and a pod group's size), so never listed as not judged."""

LEVEL_SCOPES = {
    "kubernetes.io/hostname": "node",  # Kueue's lowest level: one host
    "cloud.google.com/gce-topology-host": "node",
    "cloud.provider.com/topology-rack": "rack",  # the rack level of Kueue's documented sample Topology
    "network.topology.nvidia.com/accelerator": "nvlink_domain",  # topograph's NVLink domain label
    "accelerator.topograph.run/domain": "nvlink_domain",
    "nvidia.com/gpu.clique": "nvlink_domain",  # GPU Feature Discovery's NVLink clique label
}
"""Kueue topology levels (node labels) and the topolog scope each is."""

_TAS_KEYS = (
    "required",
    "preferred",
    "unconstrained",
    "podSetSliceRequiredTopology",
    "podSetSliceSize",
    "podSetGroupName",
)


@dataclass(frozen=True)
class PodSet:
    """Pods of one template that run at once."""

    name: str
    pods: int
    spec: YMap  # the pod spec
    annotations: YMap | None  # the pod template's annotations (Kueue's topology requests)
    loc: SourceLocation
    topology: YMap | None = None  # a Workload pod set's topologyRequest
    needs: PodNeeds | None = None  # read already (a TrainJob's resourcesPerNode): no pod spec to read


MAX_GROUPS = 10_000
"""Jobs one LeaderWorkerSet or Deployment may expand into (a group or pod each): each is placed on
its own, so a million replicas would be a million placements (and minutes just to read)."""


def is_kubernetes(doc: YMap) -> bool:
    return isinstance(doc.get("kind"), str) and doc.get("kind") in API_GROUPS


def read_workload(
    doc: YMap, rules: tuple[PrincipalRule, ...], p: Problems, cpu_only: list[Diagnostic] | None = None
) -> list[Job]:
    """The jobs of one Kubernetes workload object (problems added to `p` instead where it cannot be read).

    A workload that asks for no GPU is added to `cpu_only` where it is given (the caller decides
    whether that is a note or an error), else refused.
    """
    kind = str(doc["kind"])
    before = len(p.items)
    api = doc.get("apiVersion")
    wanted = API_GROUPS[kind]
    if not isinstance(api, str) or not any(api == w or (w.endswith("/") and api.startswith(w)) for w in wanted):
        expected = " or ".join(w + "*" if w.endswith("/") else w for w in wanted)
        p.add(
            doc.key_loc("apiVersion") if "apiVersion" in doc else doc.loc,
            f"a {kind} has apiVersion {api!r}; expected {expected}",
        )
        return []
    meta = p.mapping(doc, "metadata", f"the {kind}")
    name = _name(doc, meta, kind, p)
    spec = p.mapping(doc, "spec", f"{kind} {name}")
    if meta is None or spec is None or name is None:
        if spec is None and "spec" not in doc:
            p.add(doc.loc, f"{kind} {name or ''} has no 'spec'; expected the workload's spec".replace("  ", " "))
        return []
    what = f"{kind} {name}"
    notes: list[Diagnostic] = []
    if "generateName" in meta and "name" not in meta:
        notes.append(
            Diagnostic(meta.key_loc("generateName"), f"named after generateName (Kubernetes appends a suffix): {name}")
        )
    readers: dict[str, Callable[[YMap, str, Problems, list[Diagnostic]], list[list[PodSet]]]] = {
        "Pod": _pod_sets_pod,
        "Job": _pod_sets_job,
        "CronJob": functools.partial(_pod_sets_cronjob, _pod_sets_job),
        "JobSet": _pod_sets_jobset,
        "LeaderWorkerSet": _pod_sets_lws,
        "DisaggregatedSet": _pod_sets_disaggregated,
        "Workload": _pod_sets_workload,
        "StatefulSet": _pod_sets_statefulset,
        "Deployment": _pod_sets_deployment,
        **{k: functools.partial(_pod_sets_replicas, REPLICA_SPECS[k]) for k in REPLICA_SPECS},
        "RayCluster": _pod_sets_raycluster,
        "RayJob": _pod_sets_rayjob,
        "RayService": _pod_sets_rayservice,
        "TrainJob": _pod_sets_trainjob,
    }
    if kind == "Job" and api.startswith(VOLCANO):
        readers["Job"] = _pod_sets_volcano
    if kind == "CronJob" and api.startswith(VOLCANO):
        readers["CronJob"] = functools.partial(_pod_sets_cronjob, _pod_sets_volcano)
    groups = readers[kind](doc if kind == "Pod" else spec, what, p, notes)
    if len(p.items) == before and not any(ps.pods for sets in groups for ps in sets):
        # Scaled to zero (replicas, parallelism or count 0): "0 of 0 jobs placeable" would pass unjudged.
        # It asks for no GPU now, as a CPU-only workload: a note beside the jobs that do (a namespace
        # holds Deployments scaled to 0), NoGpuRequested where none does, so the webhook lets a GPU
        # Deployment be scaled down to 0 rather than denying it.
        said = f"{what} runs no pod (a replica, parallelism or count of 0)"
        if cpu_only is not None:
            cpu_only.append(Diagnostic(doc.loc, said))
        else:
            p.add(doc.loc, f"{said}: nothing to place")
        return []
    annotations = meta.get("annotations")
    if isinstance(annotations, YMap) and MIN_PARALLELISM in annotations:
        # Kueue's partial admission: it tries the whole Job first, then fewer pods down to this.
        notes.append(
            Diagnostic(
                annotations.key_loc(MIN_PARALLELISM),
                f"{what} may be admitted with as few as {annotations[MIN_PARALLELISM]} pods (partial "
                "admission): placed with all of them",
            )
        )
    if isinstance(annotations, YMap):
        # A Pod's own annotations are its pod set's too: its GPU types are read (or noted) there.
        types = (GPU_IN_USE, GPU_NO_USE) if kind == "Pod" else ()
        unread = [k for k in annotations if k not in (*TAS_ANNOTATIONS, MIN_PARALLELISM, *types)]
        if unread:
            notes.append(Diagnostic(meta.key_loc("annotations"), f"annotations {', '.join(unread)} not judged"))
    if len(groups) > MAX_GROUPS:
        p.add(
            spec.key_loc("replicas") if "replicas" in spec else doc.loc,
            f"{what} is {len(groups)} jobs placed one by one (a job per group or pod); expected at most "
            f"{MAX_GROUPS:,}: place a part of it",
        )
        return []
    facts = _facts(meta, spec, kind)
    jobs: list[Job] = []
    made: dict[int, Job | None] = {}  # by the group's pod sets (one list object per distinct group)
    for index, sets in enumerate(groups):
        job_name = f"{name}-{index}" if kind in ("LeaderWorkerSet", "Deployment", "DisaggregatedSet") else name
        if id(sets) in made:
            # The same pods: read once (a group that gave no job, CPU-only or refused, gives none again).
            # Its own first job, not the workload's first: a DisaggregatedSet's CPU-only first role,
            # repeated in a second slice, is no copy of the GPU role read after it.
            first = made[id(sets)]
            if first is not None:
                jobs.append(dataclasses.replace(first, name=job_name))
            continue
        job = _job(job_name, what, sets, facts, rules, doc, list(notes), p, before, cpu_only)
        made[id(sets)] = job
        if job is not None:
            jobs.append(job)
    if len(p.items) > before:
        return []
    return jobs


def pod_group(doc: YMap) -> str | None:
    """The Kueue pod group a plain Pod belongs to (its pod-group-name label), if any."""
    meta = doc.get("metadata")
    labels = meta.get("labels") if isinstance(meta, YMap) else None
    if doc.get("kind") != "Pod" or doc.get("apiVersion") != "v1" or not isinstance(labels, YMap):
        return None
    name = labels.get(GROUP_LABEL)
    return str(name).strip() if isinstance(name, str | int) and not isinstance(name, bool) else None


def read_pod_groups(
    groups: dict[str, list[YMap]],
    rules: tuple[PrincipalRule, ...],
    p: Problems,
    cpu_only: list[Diagnostic] | None = None,
) -> list[Job]:
    """Each Kueue pod group as one job: Kueue admits the group's pods together, once all
    `pod-group-total-count` of them exist, so the job is every pod of the group, named after it.
    """
    jobs: list[Job] = []
    for group, docs in sorted(groups.items()):
        before = len(p.items)
        what = f"pod group {group}"
        if not JOB_NAME.match(group):
            p.add(docs[0]["metadata"].key_loc("labels"), f"{what}: the group name must be a valid job name")
            continue
        totals = set()
        for doc in docs:
            ann = doc["metadata"].get("annotations")
            raw = ann.get(GROUP_COUNT) if isinstance(ann, YMap) else None
            text = str(raw).strip() if isinstance(raw, str | int) and not isinstance(raw, bool) else ""
            if not (text.isascii() and text.isdigit() and 0 < len(text) < 8):
                p.add(
                    doc["metadata"].key_loc("annotations") if isinstance(ann, YMap) else doc["metadata"].loc,
                    f"a pod of {what} has no whole {GROUP_COUNT} annotation ({raw!r}); "
                    "Kueue needs it to admit the group",
                )
                continue
            totals.add(int(text))
        if len(p.items) > before:
            continue
        if len(totals) != 1 or totals != {len(docs)}:
            p.add(
                docs[0]["metadata"].loc,
                f"{what}: the files read hold {len(docs)} of its pods, but its {GROUP_COUNT} says "
                f"{' or '.join(str(t) for t in sorted(totals))}; Kueue admits the group only with all its pods, "
                "so expected every pod of the group in the job files",
            )
            continue
        sets: list[PodSet] = []
        notes: list[Diagnostic] = []
        for doc in docs:
            spec = p.mapping(doc, "spec", what)
            if spec is None:
                p.add(doc.loc, f"a pod of {what} has no 'spec'")
                continue
            ann = doc["metadata"].get("annotations")
            pod_name = _name(doc, doc["metadata"], "Pod", p) or "pod"
            sets.append(PodSet(pod_name, 1, spec, ann if isinstance(ann, YMap) else None, spec.loc))
        if len(p.items) > before:
            continue
        facts = _facts(docs[0]["metadata"], docs[0]["spec"], "Pod")
        # Kueue makes one pod set of the group's pods with the same template (their role): the
        # pods are judged as one pod set, together, as when every pod has the same template.
        job = _job(group, f"{what} of Pods", sets, facts, rules, docs[0], notes, p, before, cpu_only, together=True)
        if job is not None:
            jobs.append(job)
    return jobs


def _count(m: YMap, key: str, default: int, what: str, p: Problems) -> int:
    raw = m.get(key, default)
    if isinstance(raw, int) and not isinstance(raw, bool) and 0 <= raw <= 1_000_000:
        return raw
    p.add(m.key_loc(key), f"'{key}' of {what} is {raw!r}; expected a whole number from 0 to 1,000,000")
    return 0


def _name(doc: YMap, meta: YMap | None, kind: str, p: Problems) -> str | None:
    if meta is None:
        p.add(doc.loc, f"a {kind} has no 'metadata'; expected metadata.name")
        return None
    for key in ("name", "generateName"):
        value = meta.get(key)
        if isinstance(value, str) and value.strip("-. "):
            name = value.strip().rstrip("-.")
            if not JOB_NAME.match(name):
                p.add(
                    meta.key_loc(key),
                    f"{kind} name {name!r} must start with a letter or digit and hold only letters, digits, "
                    "'.', '_' and '-' (as Kubernetes names do)",
                )
                return None
            return name
    p.add(meta.loc, f"a {kind} has no metadata.name (or generateName); expected the workload's name")
    return None


def _template(holder: YMap, key: str, what: str, p: Problems) -> tuple[YMap, YMap | None] | None:
    """A PodTemplateSpec under `key`: its pod spec and its annotations."""
    tmpl = p.mapping(holder, key, what)
    if tmpl is None:
        if key not in holder:
            p.add(holder.loc, f"{what} has no '{key}'; expected a pod template")
        return None
    spec = p.mapping(tmpl, "spec", f"the pod template of {what}")
    if spec is None:
        if "spec" not in tmpl:
            p.add(tmpl.loc, f"the pod template of {what} has no 'spec'")
        return None
    meta = p.mapping(tmpl, "metadata", f"the pod template of {what}")
    annotations = meta.get("annotations") if meta is not None else None
    return spec, annotations if isinstance(annotations, YMap) else None


def _pod_sets_pod(doc: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    spec = doc["spec"]
    annotations = doc["metadata"].get("annotations")
    return [[PodSet("pod", 1, spec, annotations if isinstance(annotations, YMap) else None, spec.loc)]]


def _job_pods(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> int:
    """The pods of a batch/v1 Job that run at once."""
    parallelism = _count(spec, "parallelism", 1, what, p)
    completions = _count(spec, "completions", parallelism, what, p) if "completions" in spec else parallelism
    pods = min(parallelism, completions)
    if completions > parallelism:
        notes.append(
            Diagnostic(
                spec.key_loc("completions"),
                f"{what} runs {completions} completions {parallelism} at a time: placed as {parallelism} pods at once",
            )
        )
    _note_unread(spec, ("parallelism", "completions", "template"), what, notes)
    return pods


def _note_unread(m: YMap, read: tuple[str, ...], what: str, notes: list[Diagnostic], more: Sequence[str] = ()) -> None:
    """A note naming the fields of `m` outside `read` (then `more`), which are not judged; none if there are none."""
    unread = [k for k in m if k not in read] + list(more)
    if unread:
        notes.append(Diagnostic(m.loc, f"{what} fields {', '.join(unread)} not judged"))


def _pod_sets_job(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    pods = _job_pods(spec, what, p, notes)
    tmpl = _template(spec, "template", what, p)
    if tmpl is None:
        return []
    return [[PodSet("job", pods, tmpl[0], tmpl[1], spec.key_loc("template"))]]


def _pod_sets_jobset(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    items = spec.get("replicatedJobs")
    if not isinstance(items, YList) or not items:
        p.add(
            spec.key_loc("replicatedJobs") if "replicatedJobs" in spec else spec.loc,
            f"{what} needs 'replicatedJobs', a non-empty list",
        )
        return []
    _note_unread(spec, ("replicatedJobs",), what, notes)
    sets: list[PodSet] = []
    for i, rj in enumerate(items):
        if not isinstance(rj, YMap):
            p.add(items.item_loc(i), "each replicated job must be a mapping with 'name' and 'template'")
            continue
        rname = str(rj.get("name") or f"#{i + 1}")
        rwhat = f"replicated job {rname} of {what}"
        replicas = _count(rj, "replicas", 1, rwhat, p)
        job_tmpl = p.mapping(rj, "template", rwhat)
        job_spec = p.mapping(job_tmpl, "spec", rwhat) if job_tmpl is not None else None
        if job_spec is None:
            p.add(rj.loc, f"{rwhat} has no template.spec; expected a Job template")
            continue
        pods = _job_pods(job_spec, rwhat, p, notes)
        tmpl = _template(job_spec, "template", rwhat, p)
        if tmpl is not None:
            sets.append(PodSet(rname, replicas * pods, tmpl[0], tmpl[1], rj.loc))
    return [sets]


def _pod_sets_lws(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    replicas = _count(spec, "replicas", 1, what, p)
    lwt = p.mapping(spec, "leaderWorkerTemplate", what)
    if lwt is None:
        p.add(spec.loc, f"{what} has no 'leaderWorkerTemplate'; expected one with a workerTemplate")
        return []
    size = _count(lwt, "size", 1, f"leaderWorkerTemplate of {what}", p)
    lwt_unread = [f"leaderWorkerTemplate.{k}" for k in lwt if k not in ("size", "leaderTemplate", "workerTemplate")]
    _note_unread(spec, ("replicas", "leaderWorkerTemplate"), what, notes, lwt_unread)
    if size < 1:
        p.add(lwt.key_loc("size"), f"'size' of {what} is {size}; a group has at least its leader")
        return []
    workers = _template(lwt, "workerTemplate", what, p)
    if workers is None:
        return []
    sets: list[PodSet] = []
    if "leaderTemplate" in lwt:
        leader = _template(lwt, "leaderTemplate", what, p)
        if leader is None:
            return []
        sets.append(PodSet("leader", 1, leader[0], leader[1], lwt.key_loc("leaderTemplate")))
        if size > 1:
            sets.append(PodSet("workers", size - 1, workers[0], workers[1], lwt.key_loc("workerTemplate")))
    else:  # without a leader template the leader is one more pod of the worker template
        sets.append(PodSet("workers", size, workers[0], workers[1], lwt.key_loc("workerTemplate")))
    if replicas > 1:
        notes.append(
            Diagnostic(
                spec.key_loc("replicas"),
                f"{what} has {replicas} groups: each is placed on its own, as Kueue admits each group "
                "alone; the groups are not placed together",
            )
        )
    return [sets] * replicas


def _pod_sets_disaggregated(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A DisaggregatedSet (prefill and decode roles of one serving setup): each role is a
    LeaderWorkerSet of its own, made once per slice, so its groups are jobs as an LWS's are (Kueue
    admits each group alone), role after role, slice after slice. The role's LWS fields sit on the
    role (as the project's Roles page writes them) or under its `spec` (its v1 sample).
    """
    slices = _count(spec, "slices", 1, what, p)
    roles = spec.get("roles")
    if not isinstance(roles, YList) or not roles:
        p.add(spec.key_loc("roles") if "roles" in spec else spec.loc, f"{what} needs 'roles', a non-empty list")
        return []
    _note_unread(spec, ("slices", "roles"), what, notes)
    groups: list[list[PodSet]] = []
    for i, role in enumerate(roles):
        if not isinstance(role, YMap):
            p.add(roles.item_loc(i), f"each role of {what} must be a mapping with a name and a leaderWorkerTemplate")
            continue
        rname = str(role.get("name") or f"#{i + 1}")
        inner = role.get("spec")
        lws = inner if isinstance(inner, YMap) else role
        if isinstance(role.get("scaling"), YMap) or isinstance(lws.get("scaling"), YMap):
            notes.append(
                Diagnostic(
                    role.loc,
                    f"role {rname} of {what} is scaled by an autoscaler (scaling): placed at the replicas written",
                )
            )
        read = ("name", "replicas", "leaderWorkerTemplate", "spec", "scaling", "rolloutStrategy")
        unread = [k for k in lws if k not in read]
        if unread:
            notes.append(Diagnostic(lws.loc, f"role {rname} of {what}: {', '.join(unread)} not judged"))
        groups.extend(_pod_sets_lws(_role_spec(lws), f"{what} (role {rname})", p, notes))
        if len(groups) * max(slices, 1) > MAX_GROUPS:
            # Refused before the slices multiply the list: replicas 1,000 x slices 1,000,000 built a
            # list of 10^9 groups (8 GB) before read_workload's bound looked at it (review R-JS).
            p.add(
                spec.key_loc("slices") if "slices" in spec else roles.item_loc(i),
                f"{what} is more than {MAX_GROUPS:,} jobs placed one by one (a job per group: the roles' "
                f"replicas, {max(slices, 1):,} slice(s) of them); expected at most {MAX_GROUPS:,}: place a part of it",
            )
            return []
    return groups * slices


def _role_spec(lws: YMap) -> YMap:
    """The LWS fields of a role, without the role's own keys (noted by the caller, not by the LWS)."""
    kept = YMap(lws.loc)
    for key, value in lws.items():
        if key in ("replicas", "leaderWorkerTemplate"):
            kept[key] = value
            kept.key_locs[key] = lws.key_loc(key)
    return kept


def _pod_sets_workload(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    items = spec.get("podSets")
    if not isinstance(items, YList) or not items:
        p.add(spec.key_loc("podSets") if "podSets" in spec else spec.loc, f"{what} needs 'podSets', a non-empty list")
        return []
    _note_unread(spec, ("podSets", "queueName"), what, notes)
    sets: list[PodSet] = []
    for i, ps in enumerate(items):
        if not isinstance(ps, YMap):
            p.add(items.item_loc(i), "each pod set must be a mapping with 'name', 'count' and 'template'")
            continue
        pname = str(ps.get("name") or f"#{i + 1}")
        pwhat = f"pod set {pname} of {what}"
        count = _count(ps, "count", 1, pwhat, p)
        if "minCount" in ps:
            _min_count(ps, count, pwhat, p, notes)
        tmpl = _template(ps, "template", pwhat, p)
        topo = p.mapping(ps, "topologyRequest", pwhat)
        _note_unread(ps, ("name", "count", "minCount", "template", "topologyRequest"), pwhat, notes)
        if tmpl is not None:
            sets.append(PodSet(pname, count, tmpl[0], tmpl[1], items.item_loc(i), topo))
    return [sets]


def _min_count(ps: YMap, count: int, what: str, p: Problems, notes: list[Diagnostic]) -> None:
    """A pod set's minCount (Kueue's partial admission: it may admit the pod set with fewer pods, down
    to minCount, where all of them do not fit): noted, the job placed with all `count` pods (whether
    it fits whole is the question; a fewer-pod admission is Kueue's fallback). Kueue's API allows it
    from 1 to count (PodSet.MinCount in apis/kueue/v1beta1/workload_types.go); else refused.
    """
    before = len(p.items)
    least = _count(ps, "minCount", 1, what, p)
    if len(p.items) > before:
        return  # not a count: refused once, by _count
    if not 1 <= least <= count:
        p.add(ps.key_loc("minCount"), f"minCount of {what} is {least}; expected a count from 1 to its count, {count}")
        return
    notes.append(
        Diagnostic(
            ps.key_loc("minCount"),
            f"{what} may be admitted with as few as {least} of its {count} pods (partial admission): "
            "placed with all of them",
        )
    )


def _pod_sets_volcano(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A Volcano Job: per task, `replicas` pods (default 1), every task placed at its full count."""
    tasks = spec.get("tasks")
    if not isinstance(tasks, YList) or not tasks:
        p.add(spec.key_loc("tasks") if "tasks" in spec else spec.loc, f"{what} needs 'tasks', a non-empty list")
        return []
    sets: list[PodSet] = []
    for i, task in enumerate(tasks):
        if not isinstance(task, YMap):
            p.add(tasks.item_loc(i), "each task must be a mapping with 'name', 'replicas' and 'template'")
            continue
        twhat = f"task {task.get('name') or f'#{i + 1}'} of {what}"
        replicas = _count(task, "replicas", 1, twhat, p)
        policy = task.get("partitionPolicy")
        read: tuple[str, ...] = ("name", "replicas", "template")
        if isinstance(policy, YMap) and "networkTopology" in policy:
            _volcano_topology(policy, f"the partitionPolicy of {twhat}", p, notes)
            read += ("partitionPolicy",)
        _note_unread(task, read, twhat, notes)
        tmpl = _template(task, "template", twhat, p)
        if tmpl is not None:
            sets.append(PodSet(str(task.get("name") or f"#{i + 1}"), replicas, tmpl[0], tmpl[1], tasks.item_loc(i)))
    total = sum(ps.pods for ps in sets)
    low = spec.get("minAvailable")
    if isinstance(low, int) and not isinstance(low, bool) and low < total:
        notes.append(
            Diagnostic(
                spec.key_loc("minAvailable"),
                f"{what} may start with {low} of its {total} pods (minAvailable): all {total} are placed",
            )
        )
    _volcano_topology(spec, what, p, notes)
    _note_unread(spec, ("tasks", "minAvailable", "queue", "networkTopology"), what, notes)
    return [sets]


def _volcano_topology(holder: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> None:
    """Volcano's network topology request (`networkTopology: {mode, highestTierAllowed}` on a Job or a
    task's partitionPolicy; volcano-sh/volcano docs/user-guide/how_to_use_network_topology_aware_scheduling.md).
    A `hard` one keeps the pods inside one HyperNode of at most that tier, or they stay pending. Tiers are
    the cluster's own HyperNode objects, which no topolog inventory holds, so it cannot be judged: refused,
    as a Kueue level with no topolog scope is, rather than placed as if unconstrained. `soft` is noted.
    """
    topo = holder.get("networkTopology")
    if topo is None:
        return
    mode = topo.get("mode") if isinstance(topo, YMap) else None
    if mode == "soft":
        notes.append(Diagnostic(holder.key_loc("networkTopology"), f"{what} prefers one HyperNode: not judged"))
        return
    tier = topo.get("highestTierAllowed") if isinstance(topo, YMap) else None
    within = f" of tier {tier} or lower" if tier is not None else ""
    said = f"mode {mode}" if isinstance(mode, str) else "no mode written"
    p.add(
        holder.key_loc("networkTopology"),
        f"{what} requires its pods in one Volcano HyperNode{within} (networkTopology, {said}): HyperNode "
        "tiers are the cluster's HyperNode objects, which the inventory does not hold, so this cannot be "
        "judged; expected mode soft (a preference), or a Kueue required topology on a level topolog knows",
    )


def _pod_sets_cronjob(
    read_job: Callable[[YMap, str, Problems, list[Diagnostic]], list[list[PodSet]]],
    spec: YMap,
    what: str,
    p: Problems,
    notes: list[Diagnostic],
) -> list[list[PodSet]]:
    """One scheduled run: the jobTemplate's spec read as the Job the CronJob creates (batch/v1's, or
    Volcano's CronJob, batch.volcano.sh, whose template is a Volcano Job).
    """
    tmpl = p.mapping(spec, "jobTemplate", what)
    job_spec = p.mapping(tmpl, "spec", f"the jobTemplate of {what}") if tmpl is not None else None
    if job_spec is None:
        p.add(spec.loc, f"{what} has no jobTemplate.spec; expected a Job template")
        return []
    _note_unread(spec, ("jobTemplate",), what, notes)
    notes.append(Diagnostic(spec.key_loc("jobTemplate"), f"{what}: each scheduled run is one Job; one run is placed"))
    return read_job(job_spec, what, p, notes)


def _replicas(
    spec: YMap, what: str, p: Problems, notes: list[Diagnostic]
) -> tuple[int, tuple[YMap, YMap | None]] | None:
    """`replicas` (default 1, as Kubernetes defaults it) and the pod template of a StatefulSet or Deployment."""
    replicas = _count(spec, "replicas", 1, what, p)
    _note_unread(spec, ("replicas", "template"), what, notes)
    tmpl = _template(spec, "template", what, p)
    return None if tmpl is None else (replicas, tmpl)


def _pod_sets_statefulset(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    read = _replicas(spec, what, p, notes)
    if read is None:
        return []
    (replicas, (pod, annotations)) = read
    return [[PodSet("pods", replicas, pod, annotations, spec.key_loc("template"))]]


def _pod_sets_deployment(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    read = _replicas(spec, what, p, notes)
    if read is None:
        return []
    (replicas, (pod, annotations)) = read
    if replicas > 1:
        notes.append(
            Diagnostic(
                spec.key_loc("replicas"),
                f"{what} has {replicas} replicas: each pod is placed on its own, as Kueue admits each "
                "Deployment pod alone",
            )
        )
    return [[PodSet("pod", 1, pod, annotations, spec.key_loc("template"))]] * replicas


def _pod_sets_replicas(key: str, spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A Kubeflow training job: per replica type, `replicas` pods (the operator's default: 1)."""
    specs = spec.get(key)
    if not isinstance(specs, YMap) or not specs:
        p.add(
            spec.key_loc(key) if key in spec else spec.loc,
            f"{what} needs '{key}', a mapping of replica type (Master, Worker, ...) to replicas and template",
        )
        return []
    elastic = spec.get("elasticPolicy")
    if isinstance(elastic, YMap) and ("minReplicas" in elastic or "maxReplicas" in elastic):
        notes.append(
            Diagnostic(
                spec.key_loc("elasticPolicy"),
                f"{what} is elastic ({elastic.get('minReplicas', '?')} to {elastic.get('maxReplicas', '?')} "
                "workers): placed at its replicas, the pods the operator starts and Kueue admits",
            )
        )
    _note_unread(spec, (key,), what, notes)
    sets: list[PodSet] = []
    for rtype, rs in specs.items():
        rwhat = f"replica type {rtype} of {what}"
        if not isinstance(rs, YMap):
            p.add(specs.key_loc(rtype), f"{rwhat} must be a mapping with 'replicas' and 'template'")
            continue
        replicas = _count(rs, "replicas", 1, rwhat, p)
        _note_unread(rs, ("replicas", "template"), rwhat, notes)
        tmpl = _template(rs, "template", rwhat, p)
        if tmpl is not None:
            sets.append(PodSet(str(rtype), replicas, tmpl[0], tmpl[1], specs.key_loc(rtype)))
    return [sets]


_WORKER_GROUP_KEYS = ("groupName", "replicas", "minReplicas", "maxReplicas", "numOfHosts", "template", "suspend")
_INT32_MAX = 2**31 - 1


def _worker_replicas(wg: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> int:
    """The replicas a worker group runs, as KubeRay starts them (GetWorkerGroupDesiredReplicas in
    ray-operator/controllers/ray/utils/util.go) and Kueue counts its pod set (BuildPodSets in
    pkg/controller/jobs/raycluster/common.go, which keeps to the same bounds): `replicas` held
    within [minReplicas, maxReplicas] (crossed bounds are refused, as KubeRay refuses them), 0 for
    a suspended group. The CRD's defaults fill what is not written: replicas 0, minReplicas 0, maxReplicas
    2^31-1, so a group with no replicas and no minReplicas starts no pod.
    """
    written = _count(wg, "replicas", 0, what, p)
    low = _count(wg, "minReplicas", 0, what, p)
    high = wg.get("maxReplicas", _INT32_MAX)
    if not (isinstance(high, int) and not isinstance(high, bool) and 0 <= high <= _INT32_MAX):
        # An upper bound only (the CRD's own default is 2^31-1), so it may be written past _count's cap.
        p.add(
            wg.key_loc("maxReplicas"),
            f"'maxReplicas' of {what} is {high!r}; expected a whole number from 0 to {_INT32_MAX}",
        )
        high = _INT32_MAX
    if "suspend" in wg and not isinstance(wg["suspend"], bool):
        p.add(wg.key_loc("suspend"), f"'suspend' of {what} is {wg['suspend']!r}; expected true or false")
    if wg.get("suspend") is True:
        notes.append(Diagnostic(wg.key_loc("suspend"), f"{what} is suspended: it runs no pod"))
        return 0
    if low > high:
        # KubeRay refuses crossed bounds: ValidateRayClusterSpec (ray-operator/controllers/ray/utils/
        # validation.go at 59939cb, run by its webhook and before the controller reconciles) returns
        # "worker group ... has minReplicas ... greater than maxReplicas", so no pod of the cluster
        # starts. (Releases before that check started maxReplicas and logged it, util.go at dc85903.)
        p.add(
            wg.key_loc("minReplicas"),
            f"{what} writes minReplicas {low} above maxReplicas {high}: KubeRay refuses such a cluster "
            "(ValidateRayClusterSpec) and starts none of it; expected minReplicas at most maxReplicas",
        )
        return 0
    runs = min(max(written, low), high)
    if "replicas" in wg and runs != written:
        notes.append(
            Diagnostic(
                wg.key_loc("replicas"),
                f"{what} writes replicas {written} outside minReplicas {low} to maxReplicas {high}: KubeRay "
                f"runs {runs}, and so it is placed",
            )
        )
    elif "replicas" not in wg:
        notes.append(
            Diagnostic(wg.loc, f"{what} writes no replicas: {runs} (its minReplicas, the CRD's default 0 if none)")
        )
    return runs


def _pod_sets_raycluster(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A Ray cluster: its head pod and every worker group's pods, as Kueue counts them."""
    _note_unread(spec, ("headGroupSpec", "workerGroupSpecs"), what, notes)
    head = p.mapping(spec, "headGroupSpec", what)
    if head is None:
        if "headGroupSpec" not in spec:
            p.add(spec.loc, f"{what} has no 'headGroupSpec'; a Ray cluster has a head pod")
        return []
    sets: list[PodSet] = []
    tmpl = _template(head, "template", f"the head group of {what}", p)
    if tmpl is not None:
        sets.append(PodSet("head", 1, tmpl[0], tmpl[1], spec.key_loc("headGroupSpec")))
    groups = p.seq(spec, "workerGroupSpecs", what)
    autoscaling = spec.get("enableInTreeAutoscaling") is True
    for i, wg in enumerate(groups or ()):
        if not isinstance(wg, YMap):
            p.add(groups.item_loc(i) if groups is not None else spec.loc, "each worker group must be a mapping")
            continue
        gname = str(wg.get("groupName") or f"#{i + 1}")
        gwhat = f"worker group {gname} of {what}"
        replicas = _worker_replicas(wg, gwhat, p, notes)
        hosts = _count(wg, "numOfHosts", 1, gwhat, p)
        if hosts < 1:
            p.add(wg.key_loc("numOfHosts"), f"'numOfHosts' of {gwhat} is {hosts}; expected at least 1")
            continue
        low, high = wg.get("minReplicas"), wg.get("maxReplicas")
        if autoscaling or (low is not None and low != replicas) or (high is not None and high != replicas):
            notes.append(
                Diagnostic(
                    wg.loc,
                    f"{gwhat} may scale ({low if low is not None else '?'} to {high if high is not None else '?'} "
                    f"replicas): placed at {replicas} replicas, the count KubeRay starts and Kueue admits",
                )
            )
        _note_unread(wg, _WORKER_GROUP_KEYS, gwhat, notes)
        tmpl = _template(wg, "template", gwhat, p)
        if tmpl is not None:
            sets.append(PodSet(gname, replicas * hosts, tmpl[0], tmpl[1], groups.item_loc(i) if groups else wg.loc))
    return [sets]


def _pod_sets_rayjob(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    cluster = p.mapping(spec, "rayClusterSpec", what)
    if cluster is None:
        if "rayClusterSpec" not in spec:
            selector = "clusterSelector" in spec
            why = ": it runs on an existing RayCluster (clusterSelector), and places no pods of its own"
            p.add(
                spec.key_loc("clusterSelector") if selector else spec.loc,
                f"{what} has no 'rayClusterSpec'{why if selector else ''}; expected the RayCluster spec it creates",
            )
        return []
    _note_unread(spec, ("rayClusterSpec",), what, notes)
    return _pod_sets_raycluster(cluster, what, p, notes)


def _pod_sets_rayservice(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A KubeRay RayService: the RayCluster of its rayClusterConfig, which serves the Ray Serve apps.

    An upgrade of the cluster spec under the default strategy (NewCluster) starts a new RayCluster
    beside the serving one and switches traffic once it is ready, so for a while both hold GPUs; that
    second cluster is a later event, noted, not placed.
    """
    cluster = p.mapping(spec, "rayClusterConfig", what)
    if cluster is None:
        if "rayClusterConfig" not in spec:
            p.add(spec.loc, f"{what} has no 'rayClusterConfig'; expected the RayCluster spec it serves on")
        return []
    _note_unread(spec, ("rayClusterConfig",), what, notes)
    strategy = spec.get("upgradeStrategy")
    kind = strategy.get("type") if isinstance(strategy, YMap) else None
    if kind != "None":
        notes.append(
            Diagnostic(
                spec.key_loc("rayClusterConfig"),
                f"{what}: a change to rayClusterConfig (upgradeStrategy {kind or 'NewCluster, the default'}) "
                "starts a second RayCluster beside this one until it serves; placed: the one cluster",
            )
        )
    return _pod_sets_raycluster(cluster, what, p, notes)


def _pod_sets_trainjob(spec: YMap, what: str, p: Problems, notes: list[Diagnostic]) -> list[list[PodSet]]:
    """A Kubeflow Trainer v2 TrainJob: numNodes pods of resourcesPerNode, when the file says both.

    Either left out comes from the training runtime (runtimeRef), another object: the count is
    then not in this file, and the job is refused rather than guessed.
    """
    trainer = p.mapping(spec, "trainer", what)
    missing = [k for k in ("numNodes", "resourcesPerNode") if trainer is None or k not in trainer]
    if trainer is None or missing:
        p.add(
            spec.key_loc("trainer") if trainer is not None else spec.loc,
            f"{what} does not write trainer.{' or trainer.'.join(missing)}: its runtime "
            f"({_runtime(spec)}) supplies them, and it is not in this file; expected trainer.numNodes and "
            "trainer.resourcesPerNode with limits nvidia.com/gpu: N",
        )
        return []
    nodes = _count(trainer, "numNodes", 1, f"the trainer of {what}", p)
    needs = read_resources(trainer, "resourcesPerNode", f"the trainer of {what}", p)
    _note_unread(spec, ("trainer", "runtimeRef", "podTemplateOverrides"), what, notes)
    _note_unread(trainer, ("numNodes", "resourcesPerNode"), f"the trainer of {what}", notes)
    annotations = _trainer_overrides(spec, what, needs, p, notes)
    notes.extend(needs.notes)
    needs.notes = []
    empty = YMap(trainer.loc)  # no pod template: the runtime's, not in this file
    return [[PodSet("node", nodes, empty, annotations, trainer.key_loc("numNodes"), needs=needs)]]


TRAINER_JOB = "node"
"""The replicated job of a Kubeflow training runtime whose pods are the trainer's nodes (the
runtimes' JobSet names it `node`; `launcher`, `dataset-initializer` and `model-initializer` are others)."""


def _trainer_overrides(spec: YMap, what: str, needs: PodNeeds, p: Problems, notes: list[Diagnostic]) -> YMap | None:
    """What `podTemplateOverrides` aimed at the trainer's pods (targetJobs `node`) say of where they
    run: the node selector and required node affinity (the GPU model), the service account, and the
    pod annotations (Kueue's topology requests). Returns those annotations. Read as a pod template's
    are: left as notes, a selector for A100s would let the job be placed on any GPU.
    """
    overrides = spec.get("podTemplateOverrides")
    if overrides is None:
        return None
    if not isinstance(overrides, YList):
        p.add(spec.key_loc("podTemplateOverrides"), f"'podTemplateOverrides' of {what} must be a list")
        return None
    annotations: YMap | None = None
    # Kubeflow Trainer: a later override of the same job replaces nodeSelector, affinity and the
    # service account of an earlier one (docs/operator-guides/podtemplate-overrides.md).
    last: dict[str, YMap] = {}
    for i, override in enumerate(overrides):
        if not isinstance(override, YMap):
            p.add(overrides.item_loc(i), f"each podTemplateOverride of {what} must be a mapping")
            continue
        targets = override.get("targetJobs")
        names = [t.get("name") for t in targets if isinstance(t, YMap)] if isinstance(targets, YList) else []
        if TRAINER_JOB not in names:
            notes.append(
                Diagnostic(
                    override.loc,
                    f"a podTemplateOverride of {what} for {', '.join(map(str, names)) or 'no targetJobs'}: "
                    "not the trainer's nodes, not judged",
                )
            )
            continue
        o_spec = override.get("spec")
        if isinstance(o_spec, YMap):
            for key in ("nodeSelector", "affinity", "serviceAccountName", "resourceClaims"):
                if key in o_spec:
                    last[key] = o_spec
            _note_unread(o_spec, ("nodeSelector", "affinity", "serviceAccountName", "resourceClaims"), what, notes)
        meta = override.get("metadata")
        if isinstance(meta, YMap) and isinstance(meta.get("annotations"), YMap):
            # Annotations merge key by key, a later override's value winning (the guide's "Field-Level
            # Merging"): a later override that writes other keys keeps an earlier required topology.
            written: YMap = meta["annotations"]
            if annotations is None:
                annotations = YMap(written.loc)
            for key, value in written.items():
                annotations[key] = value
                annotations.key_locs[key] = written.key_loc(key)
    read_node_choice(
        last.get("nodeSelector"),
        last.get("affinity"),
        last.get("serviceAccountName"),
        last.get("resourceClaims"),
        needs,
        p,
    )
    return annotations


def _runtime(spec: YMap) -> str:
    ref = spec.get("runtimeRef")
    name = ref.get("name") if isinstance(ref, YMap) else None
    return f"runtimeRef {name}" if isinstance(name, str) else "no runtimeRef written"


def _facts(meta: YMap, spec: YMap, kind: str) -> dict[str, str]:
    """What --principal-from rules may read (principal_rules.py)."""
    facts: dict[str, str] = {}
    if isinstance(meta.get("namespace"), str):
        facts["namespace"] = meta["namespace"]
    tables = [meta]
    template = spec.get("jobTemplate")
    if kind == "CronJob" and isinstance(template, YMap) and isinstance(template.get("metadata"), YMap):
        tables.append(template["metadata"])  # the labels of the Jobs it creates, which Kueue reads
    for table_meta in tables:
        for section in ("labels", "annotations"):
            table = table_meta.get(section)
            if isinstance(table, YMap):
                for k, v in table.items():
                    if isinstance(v, str | int) and not isinstance(v, bool):
                        facts[f"{section[:-1]}:{k}"] = str(v)
    queue = facts.get(f"label:{QUEUE_LABEL}")
    if kind == "Workload" and isinstance(spec.get("queueName"), str):
        queue = spec["queueName"]
    if kind == "Job" and "tasks" in spec and isinstance(spec.get("queue"), str):
        queue = spec["queue"]  # a Volcano Job names its Volcano queue in its spec
    job_spec = template.get("spec") if kind == "CronJob" and isinstance(template, YMap) else None
    if isinstance(job_spec, YMap) and "tasks" in job_spec and isinstance(job_spec.get("queue"), str):
        queue = job_spec["queue"]  # a Volcano CronJob's: the queue of the Volcano Jobs it creates
    if queue is not None:
        facts["queue"] = queue
    return facts


def _level(
    value: object, loc: SourceLocation, required: bool, what: str, p: Problems, notes: list[Diagnostic]
) -> str | None:
    """The scope of a Kueue topology level; a required level topolog has no scope for is a problem."""
    level = str(value).strip()
    scope = LEVEL_SCOPES.get(level)
    if not required:
        notes.append(
            Diagnostic(
                loc,
                f"{what} prefers topology level {level}: a preference, not judged "
                "(placements are ranked by bottleneck bandwidth)",
            )
        )
        return None
    if scope is None:
        known = one_of([f"{k} ({v})" for k, v in LEVEL_SCOPES.items()])
        p.add(
            loc,
            f"{what} requires topology level {level!r}, which is no topolog scope; expected one of {known} "
            "(or make it a podset-preferred-topology)",
        )
    return scope


def _topology(ps: PodSet, what: str, p: Problems, notes: list[Diagnostic]) -> str | None:
    """The scope a pod set requires (None: none)."""
    pwhat = f"{what} (pod set {ps.name})"
    scope: str | None = None
    if ps.annotations is not None:
        for key, required in ((REQUIRED, True), (PREFERRED, False)):
            if key in ps.annotations:
                found = _level(ps.annotations[key], ps.annotations.key_loc(key), required, pwhat, p, notes)
                scope = found if required else scope
        scope = _slice(ps.annotations, SLICE_REQUIRED, SLICE_SIZE, ps, pwhat, p, notes) or scope
        if SLICE_LAYERS in ps.annotations:
            layers = _slice_layers(ps.annotations, ps, pwhat, p, notes)
            scope = min((x for x in (*layers, scope) if x is not None), key=SCOPES.index, default=None)
        unread = [k for k in ps.annotations if k not in (*TAS_ANNOTATIONS, GPU_IN_USE, GPU_NO_USE)]
        if unread:
            notes.append(Diagnostic(ps.annotations.loc, f"pod annotations {', '.join(unread)} not judged"))
    if ps.topology is not None:
        scope = _slice(ps.topology, "podSetSliceRequiredTopology", "podSetSliceSize", ps, pwhat, p, notes) or scope
        for key in ps.topology:
            if key not in _TAS_KEYS and "equired" in key:
                # A required constraint this reading does not know: noted, the job was placed looser
                # than Kueue would.
                p.add(
                    ps.topology.key_loc(key),
                    f"topologyRequest.{key} of {pwhat} is a required topology topolog does not read; expected "
                    "required, or podSetSliceRequiredTopology with podSetSliceSize",
                )
            elif key not in _TAS_KEYS:
                notes.append(Diagnostic(ps.topology.key_loc(key), f"topologyRequest.{key} of {pwhat} not judged"))
        for key, required in (("required", True), ("preferred", False)):
            if key in ps.topology:
                found = _level(ps.topology[key], ps.topology.key_loc(key), required, pwhat, p, notes)
                scope = found if required else scope
    return scope


def _job(
    name: str,
    what: str,
    sets: list[PodSet],
    facts: dict[str, str],
    rules: tuple[PrincipalRule, ...],
    doc: YMap,
    notes: list[Diagnostic],
    p: Problems,
    read_from: int,
    cpu_only: list[Diagnostic] | None = None,
    together: bool = False,
) -> Job | None:
    """The job of `sets`; `read_from` is how many problems there were before the workload was read.
    A workload with no GPU asked goes to `cpu_only` where given (read_workload), else is refused.
    """
    before = len(p.items)
    meta = doc.get("metadata")
    written = meta.get("namespace") if isinstance(meta, YMap) else None
    namespace = written if isinstance(written, str) else None  # the pods' own: their DRA templates' too
    needs: list[tuple[PodSet, PodNeeds]] = []
    scopes: list[tuple[PodSet, str]] = []
    idle = False  # a pod set that asks for GPUs runs no pod (a worker group at 0 replicas)
    for ps in sets:
        n = ps.needs if ps.needs is not None else read_pod_spec(ps.spec, f"{what} (pod set {ps.name})", p, namespace)
        if ps.annotations is not None and n.gpus > 0 and (GPU_IN_USE in ps.annotations or GPU_NO_USE in ps.annotations):
            read_gpu_types(n, ps.annotations, p)
        notes.extend(n.notes)
        scope = _topology(ps, what, p, notes)
        if ps.pods == 0:
            idle = idle or n.gpus > 0
            continue
        if n.gpus == 0:
            notes.append(Diagnostic(ps.loc, f"pod set {ps.name} of {what} requests no GPU: its pods are not placed"))
            continue
        needs.append((ps, n))
        if scope is not None:
            scopes.append((ps, scope))
    if not needs:
        # A count already refused (replicas: 'x') left its pod set empty: "requests no GPU" would be false.
        if len(p.items) == read_from:
            said = (
                f"{what} runs no pod that asks for a GPU (its GPU pod sets run 0 pods)"
                if idle
                else f"{what} requests no GPU (nvidia.com/gpu, amd.com/gpu or nvidia.com/mig-*)"
            )
            if cpu_only is not None:
                cpu_only.append(Diagnostic(doc.loc, said))
            else:
                p.add(doc.loc, f"{said}: nothing to place")
        return None
    kinds = {(n.vendor, n.mig) for _, n in needs}
    selected = _common_accepts([(n.accepts, n.families) for _, n in needs])
    if len(kinds) > 1 or selected is None:
        p.add(
            doc.loc,
            f"the pod sets of {what} ask for different GPUs ({', '.join(ps.name for ps, _ in needs)}); "
            "topolog places a job on one kind of GPU: write them as separate workloads",
        )
        return None
    if len({n.accepts for _, n in needs}) > 1:
        notes.append(
            Diagnostic(doc.loc, f"{what}: the GPU models one pod set selects are required of all its pod sets")
        )
    vendor, mig = kinds.pop()
    service_accounts = {n.service_account for _, n in needs if n.service_account}
    if len(service_accounts) == 1:
        facts = {**facts, "service-account": service_accounts.pop()}
    principal = resolve(rules, facts, doc.loc, what, p)
    if principal is None or len(p.items) > before:
        return None
    pods = sum(ps.pods for ps, _ in needs)
    gpus = sum(ps.pods * n.gpus for ps, n in needs)
    if gpus > INT64_MAX:
        # Each count is bounded, their product is not: such a number cannot reach the facts.
        p.add(doc.loc, f"{what} asks for {gpus} GPUs in all; expected at most {INT64_MAX} (64 bits)")
        return None
    required = [scope for _, scope in scopes] if together else _required_scopes(needs, scopes, what, notes)
    if together and len(needs) > 1 and scopes:
        notes.append(Diagnostic(doc.loc, f"{what}: the required topology is judged for all its pods together"))
    if pods == 1:
        required.append("node")  # one pod runs on one node
    scope = min(required, key=SCOPES.index, default="any")
    exclude = tuple(dict.fromkeys(x for _, n in needs for x in n.exclude))
    return Job(
        name=name,
        principal=principal[0],
        principal_type=principal[1],
        gpus=gpus,
        gpus_declared=True,
        accepts=selected or ((vendor,) if vendor is not None else ()),
        scope=scope,
        max_nodes=pods if pods > 1 and scope != "node" else None,
        exclude=exclude,
        mig=mig,
        description=f"{what}: {pods} pod{'s' if pods != 1 else ''}",
        loc=_name_loc(doc),
        notes=tuple(sorted(set(notes))),
    )


def _name_loc(doc: YMap) -> SourceLocation:
    meta = doc["metadata"]
    return next((meta.key_loc(k) for k in ("name", "generateName") if k in meta), doc.loc)


def _common_accepts(choices: list[tuple[tuple[str, ...], frozenset[str]]]) -> tuple[str, ...] | None:
    """The models every pod set allows (an empty choice allows any), each choice with its words that
    stand for a GPU family (a pod set on hopper and one on NVIDIA-H100-80GB-HBM3 meet in the H100);
    None when none is common.
    """
    common: tuple[str, ...] = ()
    families: frozenset[str] = frozenset()
    for choice, choice_families in choices:
        if not choice:
            continue
        common, families = (
            common_words(common, families, choice, choice_families) if common else (choice, choice_families)
        )
        if not common:
            return None
    return common


def _slice(
    holder: YMap, level_key: str, size_key: str, ps: PodSet, what: str, p: Problems, notes: list[Diagnostic]
) -> str | None:
    """A Kueue slice topology: every `size` pods of the pod set in one domain of the level.

    A slice of all the pod set's pods is the pod set required in one domain, which topolog judges.
    Smaller slices are not: topolog places a job in one domain, and judging it whole (stricter) or
    anywhere (looser) would answer another question, so it is refused.
    """
    if level_key not in holder:
        return None
    raw = holder.get(size_key)
    size = int(raw) if isinstance(raw, int | str) and str(raw).strip().isdigit() and len(str(raw)) < 8 else None
    loc = holder.key_loc(level_key)
    if size == ps.pods:
        return _level(holder[level_key], loc, True, what, p, notes)
    p.add(
        loc,
        f"{what} requires each slice of {size if size is not None else '(no size)'} of its {ps.pods} pods in one "
        f"{str(holder[level_key]).strip()} ({size_key} {raw!r}): topolog places a job in one domain, not in "
        f"slices; expected the pod set required whole (a slice size of {ps.pods}, or the required topology)",
    )
    return None


def _slice_layers(holder: YMap, ps: PodSet, what: str, p: Problems, notes: list[Diagnostic]) -> list[str | None]:
    """The scopes of a multi-layer slice annotation: a layer whose slice is all the pod set's pods is
    that level required; a smaller slice is refused, as a single slice is (_slice).
    """
    loc = holder.key_loc(SLICE_LAYERS)
    try:
        layers = json.loads(str(holder[SLICE_LAYERS]))
    except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the parser's depth
        layers = None
    if not isinstance(layers, list) or not layers or not all(isinstance(x, dict) for x in layers):
        p.add(loc, f'{SLICE_LAYERS} of {what} is not a JSON list of {{"topology": level, "size": pods}}')
        return []
    found: list[str | None] = []
    for layer in layers:
        size, level = layer.get("size"), layer.get("topology")
        if not isinstance(level, str) or not isinstance(size, int) or isinstance(size, bool):
            p.add(loc, f'{SLICE_LAYERS} of {what}: {layer!r} is not {{"topology": level, "size": pods}}')
        elif size == ps.pods:
            found.append(_level(level, loc, True, what, p, notes))
        else:
            p.add(
                loc,
                f"{what} requires each slice of {size} of its {ps.pods} pods in one {level} ({SLICE_LAYERS}): "
                "topolog places a job in one domain, not in slices; expected the pod set required whole "
                f"(a size of {ps.pods}, or the required topology)",
            )
    return found


def _group_name(ps: PodSet) -> str | None:
    """The Kueue pod set group a pod set belongs to (annotation, or a Workload's topologyRequest)."""
    for holder, key in ((ps.annotations, GROUP_NAME), (ps.topology, "podSetGroupName")):
        if holder is not None and isinstance(holder.get(key), str) and holder[key].strip():
            return str(holder[key]).strip()
    return None


def _required_scopes(
    needs: list[tuple[PodSet, PodNeeds]], scopes: list[tuple[PodSet, str]], what: str, notes: list[Diagnostic]
) -> list[str]:
    """The scopes the job is placed under, from its GPU pod sets' required topologies.

    Kueue places each pod set in a domain of its own unless pod sets share a podset-group-name, and
    then the group in one domain. topolog places a job in one domain: exact when the job has one GPU
    pod set, or when all of them are in one group. A lone pod required on a node (or anything wider)
    is there already and asks nothing more. Any other mix (a PyTorchJob's Master and Workers each
    required in a rack) is judged with all its pods in the tightest domain its pod sets require,
    with a note: never looser than Kueue (such a placement is one Kueue may make), stricter where
    the pod sets would fit only apart. Refusing the spec outright would refuse a valid job
    everywhere, where judged whole it fits on most fleets.
    """
    if not scopes:
        return []
    groups = {_group_name(ps) for ps, _ in needs}
    if len(needs) == 1 or (len(scopes) == len(needs) and len(groups) == 1 and None not in groups):
        return [scope for _, scope in scopes]
    binding = [
        (ps, scope) for ps, scope in scopes if _group_name(ps) is not None or ps.pods > 1 or scope == "nvlink_domain"
    ]
    if not binding:
        return []
    tightest = min((scope for _, scope in binding), key=SCOPES.index)
    named = ", ".join(f"{ps.name} ({scope})" for ps, scope in binding)
    notes.append(
        Diagnostic(
            binding[0][0].loc,
            f"{what}: its GPU pod sets {', '.join(ps.name for ps, _ in needs)} are not all in one pod set group, "
            f"and {named} requires a topology domain of its own (Kueue places each group, and each pod set "
            f"outside one, in a domain apart): judged with all its pods in one {tightest}, stricter than Kueue "
            f"where the pod sets fit only apart (every GPU pod set in one group, annotation {GROUP_NAME}, "
            "makes the answer exact)",
        )
    )
    return [scope for _, scope in binding]
