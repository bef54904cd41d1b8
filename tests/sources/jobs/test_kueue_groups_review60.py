"""Review R-JS of b56a19a: GPU pod sets required in a topology domain each, in no pod set group.

b56a19a refused such a spec (exit 2) whatever the fleet; the base wheel judged all its pods in one
domain with a note. Kueue places each pod set in a domain of its own, so all of them in one domain
is one placement Kueue may make: judged that way the answer is never looser than Kueue, and exact
wherever it fits. The shape is the usual Kubeflow one (a Master and its Workers, each template
annotated, as kerthcet/benchmark kueue-tas/tp16.yaml at 5a039e4 writes its preferred level).
Expected figures are worked out by hand from the spec.
"""

from __future__ import annotations

from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])

PYTORCHJOB = """\
apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata:
  name: ptj
  namespace: research
  labels:
    kueue.x-k8s.io/queue-name: default
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
        spec:
          containers:
          - name: pytorch
            resources:
              limits:
                nvidia.com/gpu: 8
    Worker:
      replicas: 3
      template:
        metadata:
          annotations:
            kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack
        spec:
          containers:
          - name: pytorch
            resources:
              limits:
                nvidia.com/gpu: 8
"""


def test_master_and_workers_each_required_in_a_rack_are_judged_in_one_rack() -> None:
    # 1 Master + 3 Workers, 8 GPUs each: 32 GPUs, all in one rack (the Workers, 3 pods, bind; the
    # lone Master is on one node anyway), on up to 4 nodes. The note names the Worker pod set at
    # its replica type (line 22, column 5: `Worker:`, after the Master's 12 lines from line 10).
    (job,) = read_jobs_text(PYTORCHJOB, "ptj.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (32, "rack", 4)
    (note,) = [n for n in job.notes if "not all in one pod set group" in n.message]
    assert str(note.location) == "ptj.yaml:22:5"
    assert "Worker (rack) requires a topology domain of its own" in note.message
    assert "judged with all its pods in one rack, stricter than Kueue" in note.message


def test_the_tightest_level_holds_when_pod_sets_differ() -> None:
    # Master at kubernetes.io/hostname is a lone pod (on one node anyway): it binds nothing. The
    # Workers at rack bind: 32 GPUs in one rack, as above.
    text = PYTORCHJOB.replace("topology: cloud.provider.com/topology-rack", "topology: kubernetes.io/hostname", 1)
    (job,) = read_jobs_text(text, "ptj.yaml", RULES)
    assert (job.gpus, job.scope) == (32, "rack")
    # Workers at hostname as well: 3 pods on one host bind, so the whole job is judged on one node
    # (32 GPUs there: stricter than Kueue, which would put the Master elsewhere).
    both = text.replace("topology: cloud.provider.com/topology-rack", "topology: kubernetes.io/hostname")
    (job,) = read_jobs_text(both, "ptj.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (32, "node", None)
