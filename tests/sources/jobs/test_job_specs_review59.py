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


@pytest.mark.parametrize(
    ("gres", "mig"),
    [
        # NVIDIA's own names of MIG profiles of models whose profiles the catalogue does not list:
        # H200 141GB 1g.18gb, B200 1g.23gb (NVIDIA's MIG user guide, supported profiles). f72abac
        # read them as the catalogue profile 0 to 2 GB above: 1g.20gb (A100-80GB, H100) and 1g.24gb
        # (H100 NVL), and placed them there. Slurm's AutoDetect=nvml never writes a profile with no
        # GPU before it (the device name's first word, then _<slices>g.<GiB>gb: gpu_nvml.c), so
        # nothing says whose slice it is: kept as written, refused at placement with the profiles
        # that exist, as before f72abac.
        ("gpu:1g.18gb:1", "1g.18gb"),
        ("gpu:1g.23gb:1", "1g.23gb"),
        # With its GPU named as nvml names it, the H200's is no A100's or H100's either.
        ("gpu:nvidia_h200_1g.18gb:1", "1g.18gb"),
    ],
)
def test_a_mig_profile_of_another_model_is_not_read_as_a_nearby_one(gres: str, mig: str) -> None:
    text = f"#!/bin/bash\n#SBATCH -A research -J m --gres={gres}\n"
    (job,) = read_jobs_text(text, "m.sh", parse_rules(["account=Team"])).jobs.values()
    assert (job.gpus, job.mig) == (1, mig)
    assert not any("Slurm names a slice's memory in GiB" in n.message for n in job.notes)
