"""Review of the twelfth round's job readers (R-JS): inputs the new readers misread or refused.

Each expected value is derived by hand in the comment beside it.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team", "queue=Team", "account=Team"])


def _script(*lines: str) -> str:
    return "#!/bin/bash\n#SBATCH -A research -J j\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "srun x\n"


@pytest.mark.parametrize(
    ("lines", "gpus", "max_nodes"),
    [
        # slurmctld (gres.c, _job_state_validate): --gpus / --gpus-per-node is the node count, and it
        # must lie within -N min-max. 32 / 8 = 4 nodes, inside 2-4: 32 GPUs on 4 nodes.
        (("-N 2-4", "--gpus=32", "--gpus-per-node=8"), 32, 4),
        # 24 / 8 = 3 nodes, inside 2-4: 24 GPUs on 3 nodes (--gres=gpu:8 is GPUs per node too).
        (("--nodes=2-4", "--gpus=24", "--gres=gpu:8"), 24, 3),
        # 16 / 8 = 2 nodes, the minimum: 16 GPUs on 2 nodes (read so before too).
        (("-N 2-4", "--gpus=16", "--gpus-per-node=8"), 16, 2),
    ],
)
def test_gpus_with_gpus_per_node_within_a_node_range(lines: tuple[str, ...], gpus: int, max_nodes: int) -> None:
    (job,) = read_jobs_text(_script(*lines), "j.sh", RULES).jobs.values()
    assert (job.gpus, job.scope, job.max_nodes) == (gpus, "any", max_nodes)


def test_gpus_with_gpus_per_node_outside_the_node_range_is_refused() -> None:
    # 40 / 8 = 5 nodes, above the maximum 4 of -N 2-4: slurmctld rejects the job, and so does topolog
    # (line 4: the shebang, the -A/-J line, then -N on 3 and --gpus on 4).
    with pytest.raises(TopologError) as err:
        read_jobs_text(_script("-N 2-4", "--gpus=40", "--gres=gpu:8"), "j.sh", RULES)
    assert "j.sh:4: --gpus=40 is not 2-4 node(s) of 8 GPUs per node" in str(err.value)


@pytest.mark.parametrize(
    ("gres", "accepts", "mig"),
    [
        # As public sbatch scripts for a MIG partition write it (gpu:nvidia_a100_3g.39gb:1): the
        # vendor, the model, then the profile; "nvidia_" dropped, "a100" is the catalogue's A100.
        # 39 is Slurm's round(40,192 MiB / 1024) for NVIDIA's 3g.40gb (gpu_words.nvml_mig_profile).
        ("gpu:nvidia_a100_3g.39gb:1", ("A100",), "3g.40gb"),
        # The same shape on an H100: a 1g.10gb instance of an H100, never of an A100-80GB (which has
        # 1g.10gb instances too): the model is kept in accepts.
        ("gpu:nvidia_h100_1g.10gb:1", ("H100",), "1g.10gb"),
        # A model word no catalogue model has is kept as written (nothing matches it), as for a
        # whole-GPU type, instead of being dropped (which allowed the profile on every GPU).
        ("gpu:foo_1g.10gb:1", ("foo",), "1g.10gb"),
    ],
)
def test_typed_mig_gres_keeps_its_model(gres: str, accepts: tuple[str, ...], mig: str) -> None:
    (job,) = read_jobs_text(_script(f"--gres={gres}"), "j.sh", RULES).jobs.values()
    assert (job.gpus, job.accepts, job.mig) == (1, accepts, mig)


# Kueue's "An example for managing GPUs" (https://kueue.sigs.k8s.io/docs/concepts/topology_aware_scheduling/):
# a ResourceFlavor tolerating the nvidia.com/gpu taint and a ClusterQueue with an nvidia.com/gpu quota,
# set up beside the job that uses them. Neither asks for a GPU: they are noted, and the Job is placed.
KUEUE_GPU_SETUP = """\
kind: ResourceFlavor
apiVersion: kueue.x-k8s.io/v1beta2
metadata:
  name: "tas-flavor"
spec:
  nodeLabels:
    cloud.provider.com/node-group: "tas-group"
  topologyName: "default"
  tolerations:
  - key: "nvidia.com/gpu"
    operator: "Exists"
    effect: "NoSchedule"
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: ClusterQueue
metadata:
  name: "tas-cluster-queue"
spec:
  namespaceSelector: {}
  resourceGroups:
  - coveredResources: ["cpu", "memory", "nvidia.com/gpu"]
    flavors:
    - name: "tas-flavor"
      resources:
      - name: "cpu"
        nominalQuota: 100
      - name: "memory"
        nominalQuota: 100Gi
      - name: "nvidia.com/gpu"
        nominalQuota: 16
---
apiVersion: kueue.x-k8s.io/v1beta2
kind: LocalQueue
metadata:
  namespace: "default"
  name: "tas-user-queue"
spec:
  clusterQueue: "tas-cluster-queue"
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  namespace: default
  labels:
    kueue.x-k8s.io/queue-name: tas-user-queue
spec:
  template:
    spec:
      containers:
      - name: t
        resources:
          limits: {nvidia.com/gpu: 2}
"""


def test_kueue_gpu_quota_setup_beside_a_job_is_noted_not_refused() -> None:
    # The Job: 1 pod x 2 GPUs on one node. ResourceFlavor, ClusterQueue and LocalQueue: one note each.
    jobs = read_jobs_text(KUEUE_GPU_SETUP, "q.yaml", RULES)
    assert [(j.name, j.gpus, j.scope) for j in jobs.jobs.values()] == [("train", 2, "node")]
    noted = sorted(n.message.split(" is not")[0] for n in jobs.notes)
    assert noted == ["ClusterQueue tas-cluster-queue", "LocalQueue tas-user-queue", "ResourceFlavor tas-flavor"]


@pytest.mark.parametrize(
    ("kind", "api", "body"),
    [
        # core/v1 quota and defaults: caps on others' pods, no request of their own.
        ("ResourceQuota", "v1", "spec:\n  hard:\n    nvidia.com/gpu: 4\n"),
        ("LimitRange", "v1", "spec:\n  limits:\n  - type: Container\n    default:\n      nvidia.com/gpu: 1\n"),
        # A Volcano queue's capability: what the queue's jobs may use together.
        ("Queue", "scheduling.volcano.sh/v1beta1", "spec:\n  capability:\n    nvidia.com/gpu: 16\n"),
    ],
)
def test_quota_objects_are_noted(kind: str, api: str, body: str) -> None:
    pod = "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n  - name: c\n"
    pod += "    resources: {limits: {nvidia.com/gpu: 1}}\n"
    text = f"apiVersion: {api}\nkind: {kind}\nmetadata: {{name: q}}\n{body}---\n{pod}"
    jobs = read_jobs_text(text, "q.yaml", RULES)
    assert list(jobs.jobs) == ["p"]
    assert [n.message for n in jobs.notes] == [f"{kind} q is not a workload topolog places: not placed"]


DAEMONSET = """\
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: dcgm-exporter, namespace: monitoring}
spec:
  template:
    spec:
      nodeSelector: {nvidia.com/gpu: "true"}
      tolerations:
      - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}
      containers:
      - name: exporter
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: ml}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 1}}
"""


def test_a_monitoring_daemonset_on_gpu_nodes_asks_for_no_gpu() -> None:
    # The taint's key and a node label named nvidia.com/gpu select GPU nodes; the exporter asks for
    # no GPU: a note, and the Pod (1 GPU) is placed.
    jobs = read_jobs_text(DAEMONSET, "d.yaml", RULES)
    assert list(jobs.jobs) == ["p"]
    assert [n.message for n in jobs.notes] == ["DaemonSet dcgm-exporter is not a workload topolog places: not placed"]


def test_a_daemonset_that_asks_for_gpus_is_still_refused() -> None:
    # The same DaemonSet with limits nvidia.com/gpu: 8 asks for GPUs in a kind not read: refused at
    # the key (line 12, indented 8: "resources: {limits: {" is 21 characters, so the key is at column 30).
    asking = "      - name: exporter\n        resources: {limits: {nvidia.com/gpu: 8}}\n"
    text = DAEMONSET.replace("      - name: exporter\n", asking)
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "d.yaml", RULES)
    assert "d.yaml:12:30: DaemonSet dcgm-exporter asks for GPUs, but a DaemonSet is no workload kind" in str(err.value)


def test_a_refused_count_is_the_only_error() -> None:
    # replicas '2' (a string) is refused at its line (6, column 14); the Worker pod set is then empty,
    # and "requests no GPU" would be false: it asks for nvidia.com/gpu 1. One error, not two.
    text = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: a, namespace: ml}
spec:
  pytorchReplicaSpecs:
    Worker: {replicas: '2', template: {spec: {containers: [{name: c, resources: {limits: {nvidia.com/gpu: 1}}}]}}}
"""
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "pt.yaml", RULES)
    assert [str(d.location) for d in err.value.diagnostics] == ["pt.yaml:6:14"]


def test_a_gpu_named_as_a_value_in_an_unread_kind_is_still_refused() -> None:
    # Only a taint's, toleration's or label's `key: nvidia.com/gpu` is passed over; a resource named
    # by value under any other key (here `type`, line 5: two spaces, "accel:", a space and "{" put it at
    # column 11) asks for GPUs: refused, not passed.
    text = """\
apiVersion: example.com/v1
kind: GpuTask
metadata: {name: t, namespace: ml}
spec:
  accel: {type: nvidia.com/gpu, amount: 2}
"""
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "g.yaml", RULES)
    assert "g.yaml:5:11: GpuTask t asks for GPUs, but a GpuTask is no workload kind" in str(err.value)
