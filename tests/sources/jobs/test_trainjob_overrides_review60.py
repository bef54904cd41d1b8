"""Review R-JS of 719af08: a TrainJob's podTemplateOverrides merge their annotations key by key.

Kubeflow Trainer's guide (kubeflow/trainer docs/operator-guides/podtemplate-overrides.md at
725b9f7, "Field-Level Merging"): labels and annotations are merged, new keys added and existing
keys overridden; nodeSelector, affinity and serviceAccountName are replaced. 719af08 kept only the
last override's annotations, so a later override writing another annotation dropped an earlier
Kueue required topology and the job was placed looser than Kueue runs it (fail open).
"""

from __future__ import annotations

from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])

TRAINJOB = """\
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: tj
  namespace: ml-team
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    numNodes: 2
    resourcesPerNode:
      limits:
        nvidia.com/gpu: 4
  podTemplateOverrides:
    - targetJobs:
        - name: node
      metadata:
        annotations:
          kueue.x-k8s.io/podset-required-topology: kubernetes.io/hostname
    - targetJobs:
        - name: node
      metadata:
        annotations:
          description: run A
"""


def test_a_later_override_keeps_an_earlier_required_topology() -> None:
    # 2 nodes x 4 GPUs = 8 GPUs; the first override requires one host, the second adds only a
    # description: merged, both hold, so all 8 GPUs on one node (719af08: any scope, up to 2 nodes).
    (job,) = read_jobs_text(TRAINJOB, "tj.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (8, "node", None)


def test_a_later_override_of_the_same_key_wins() -> None:
    # The second override writes the same key at the rack level: the later value holds, 8 GPUs in
    # one rack on up to 2 nodes.
    text = TRAINJOB.replace(
        "          description: run A\n",
        "          kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-rack\n",
    )
    (job,) = read_jobs_text(text, "tj.yaml", RULES)
    assert (job.gpus, job.scope, job.max_nodes) == (8, "rack", 2)
