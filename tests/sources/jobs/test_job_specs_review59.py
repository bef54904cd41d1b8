"""Review of f72abac (R-JS, round 13): a workload scaled to 0 beside GPU jobs, as CPU-only ones are.

A namespace's manifests (`kubectl get deploy,job -o yaml`) hold Deployments scaled to 0 beside
the GPU Jobs: the whole file was refused for it ("runs no pod ...: nothing to place", exit 2),
while a CPU-only Deployment beside them is a note. Scaled to 0, it asks for no GPU: a note too;
alone, nothing to place (NoGpuRequested, exit 2 as before).
"""

from __future__ import annotations

import pytest

from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs_text

RULES = parse_rules(["namespace=Team"])

SCALED_DOWN = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: infer, namespace: team-a}
spec:
  replicas: 0
  selector: {matchLabels: {app: infer}}
  template:
    metadata: {labels: {app: infer}}
    spec:
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 8}}}]
"""

TRAIN = """\
apiVersion: batch/v1
kind: Job
metadata: {name: train, namespace: team-a}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: 2}}}]
"""


def test_a_deployment_scaled_to_zero_beside_a_gpu_job_is_a_note() -> None:
    jobs = read_jobs_text(SCALED_DOWN + "---\n" + TRAIN, "ns.yaml", RULES)
    # One job: train, 1 pod x 2 GPUs; infer (0 x 8) is not placed, named at its line 1.
    assert [(j.name, j.gpus) for j in jobs.jobs.values()] == [("train", 2)]
    said = [str(n) for n in jobs.notes if "infer" in n.message]
    assert said == ["ns.yaml:1:1: Deployment infer runs no pod (a replica, parallelism or count of 0): not placed"]


def test_a_deployment_scaled_to_zero_alone_is_nothing_to_place() -> None:
    with pytest.raises(NoGpuRequested) as err:
        read_jobs_text(SCALED_DOWN, "ns.yaml", RULES)
    assert "ns.yaml:1:1: Deployment infer runs no pod (a replica, parallelism or count of 0): nothing to place" in str(
        err.value
    )
