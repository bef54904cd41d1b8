"""Kubernetes workloads read as topolog jobs (verifier/sources/jobs/kubernetes.py, pod_spec.py).

Each expected figure is derived by hand from the fixture, in the comment beside it. The fixtures
come from public Kubernetes, Kueue, JobSet and LWS examples (fixtures/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs, read_jobs_text
from verifier.sources.jobs.spec import Job

FIXTURES = Path(__file__).parent / "fixtures"
BY_NAMESPACE = parse_rules(["namespace=Team"])


def _one(name: str) -> Job:
    jobs = read_jobs([FIXTURES / name], BY_NAMESPACE)
    assert len(jobs) == 1
    return next(iter(jobs))


def _notes(job: Job) -> str:
    return "\n".join(str(n) for n in job.notes)


def test_jobset_adds_up_its_pods() -> None:
    # replicatedJobs: one, "workers", replicas not written (1); its Job runs parallelism 2 of
    # completions 2 -> 2 pods at once, each limits nvidia.com/gpu "2": 1 x 2 x 2 = 4 GPUs on at
    # most 2 nodes (a pod is on one node). nvidia.com/gpu without a product selector: any NVIDIA GPU.
    job = _one("jobset-gpu-training.yaml")
    assert (job.name, job.principal, job.principal_type) == ("pytorch-gpu", "research", "Team")
    assert (job.gpus, job.scope, job.max_nodes, job.accepts, job.mig) == (4, "any", 2, ("nvidia",), None)
    # network, failurePolicy, backoffLimit and the container's image/ports/env/command are not judged: noted.
    notes = _notes(job)
    assert "fields network, failurePolicy not judged" in notes
    assert "backoffLimit not judged" in notes
    assert "image, ports, env, command not judged" in notes


def test_leaderworkerset_is_one_job_per_group() -> None:
    jobs = read_jobs([FIXTURES / "lws-vllm-gpu.yaml"], BY_NAMESPACE)
    # replicas 2 -> groups vllm-0 and vllm-1 (LWS names a group's leader pod so); size 2 with a
    # leaderTemplate: 1 leader + 1 worker, 8 GPUs each -> 16 GPUs on at most 2 nodes per group.
    assert [(j.name, j.gpus, j.max_nodes, j.scope) for j in jobs] == [
        ("vllm-0", 16, 2, "any"),
        ("vllm-1", 16, 2, "any"),
    ]
    vllm0 = jobs.jobs["vllm-0"]
    notes = _notes(vllm0)
    assert "limits.memory: 1124Gi" in notes and "requests.cpu: 125" in notes  # CPU/memory: noted, not judged
    assert "has 2 groups: each is placed on its own" in notes
    # The Service of the same file is no workload: a file-level note, not a job.
    assert [n.message for n in jobs.notes] == ["Service vllm-leader is not a workload topolog places: not placed"]
    assert jobs.notes[0].location.line == 5  # `kind: Service` is the file's fifth line


def test_kueue_job_with_required_rack_topology() -> None:
    # parallelism 2, completions 4: 2 pods at once; 4 GPUs each -> 8 GPUs, at most 2 nodes.
    # podset-required-topology cloud.provider.com/topology-rack -> scope rack; the preferred
    # hostname level is a preference (noted); nodeSelector NVIDIA-H100-80GB-HBM3 is GFD's name
    # of the catalogue's H100-SXM5-80GB (NVML "NVIDIA H100 80GB HBM3", spaces as dashes).
    job = _one("kueue-tas-gpu.yaml")
    assert (job.gpus, job.scope, job.max_nodes, job.accepts) == (8, "rack", 2, ("H100-SXM5-80GB",))
    notes = _notes(job)
    assert "runs 4 completions 2 at a time: placed as 2 pods at once" in notes
    assert "prefers topology level kubernetes.io/hostname" in notes
    assert "tolerations of nvidia.com/gpu not judged" in notes
    assert "annotations example.com/owner not judged" in notes


def test_kueue_sample_without_gpus_is_refused() -> None:
    # Kueue's own sample requests CPU and memory only: nothing for topolog to place, and saying
    # "0 of 0 jobs placeable" would pass a check that checked nothing.
    with pytest.raises(TopologError) as err:
        read_jobs([FIXTURES / "kueue-tas-required.yaml"], BY_NAMESPACE)
    assert "kueue-tas-required.yaml:3:1: Job tas-sample-required requests no GPU" in str(err.value)


def test_kueue_workload_pod_sets_and_clique_topology() -> None:
    # podSets: main, count 3, 1 GPU each -> 3 GPUs on at most 3 nodes; topologyRequest.required
    # nvidia.com/gpu.clique (GFD's NVLink clique label) -> scope nvlink_domain.
    job = _one("kueue-workload.yaml")
    assert (job.name, job.principal, job.gpus, job.scope, job.max_nodes) == (
        "sample-job",
        "team-a",
        3,
        "nvlink_domain",
        3,
    )
    assert "requests.cpu: 1, requests.memory: 200Mi not judged" in _notes(job)


def test_queue_and_service_account_rules() -> None:
    # The Workload's spec.queueName is team-a-queue; its pod template runs as service account trainer.
    queue = read_jobs([FIXTURES / "kueue-workload.yaml"], parse_rules(["queue=Team"]))
    assert next(iter(queue)).principal == "team-a-queue"
    sa = read_jobs([FIXTURES / "kueue-workload.yaml"], parse_rules(["service-account=ServiceAccount"]))
    assert (next(iter(sa)).principal, next(iter(sa)).principal_type) == ("trainer", "ServiceAccount")


def test_mig_pod_asks_for_instances_on_one_node() -> None:
    # One pod, limits nvidia.com/mig-1g.10gb: 1 -> one 1g.10gb MIG instance; one pod -> scope node.
    job = _one("mig-pod.yaml")
    assert (job.gpus, job.mig, job.scope, job.max_nodes, job.accepts) == (1, "1g.10gb", "node", None, ())


def test_kubectl_list_affinity_and_amd() -> None:
    jobs = read_jobs([FIXTURES / "kubectl-list.yaml"], BY_NAMESPACE)
    infer, amd = jobs.jobs["infer-a"], jobs.jobs["amd-batch"]
    # Pod infer-a: required node affinity In [NVIDIA-H100-80GB-HBM3, NVIDIA-A100-SXM4-80GB] -> those two
    # catalogue models; NotIn quarantine ["true"] -> exclude (quarantine, true); one pod, 2 GPUs, scope node.
    assert (infer.gpus, infer.scope, infer.accepts, infer.exclude) == (
        2,
        "node",
        ("H100-SXM5-80GB", "A100-SXM4-80GB"),
        (("quarantine", "true"),),
    )
    # Job amd-batch: no parallelism (1 pod), amd.com/gpu 8; amd.com/gpu.device-id 74a1 is PCI 1002:74a1, MI300X.
    assert (amd.principal, amd.gpus, amd.scope, amd.accepts) == ("hpc", 8, "node", ("MI300X",))


def _text(body: str) -> str:
    return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: research\nspec:\n" + body


GPU8 = "  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n"


@pytest.mark.parametrize(
    ("body", "where", "expected"),
    [
        # A fraction of a GPU: Kubernetes refuses it, and so does topolog (line 11: the quantity).
        (
            "  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 500m\n",
            ":11:",
            "expected a whole number of devices",
        ),
        # Requests differing from limits for an extended resource (line 13: the request).
        (
            "  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 8\n"
            "      requests:\n        nvidia.com/gpu: 4\n",
            ":13:",
            "Kubernetes requires an extended resource's request to equal its limit",
        ),
        # More devices than a container may ask (1,000,000), as an integer and as text: the count
        # reached the job's facts, past 64 bits once times the pods, and failed there without a line.
        (
            "  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 99999999999999999999\n",
            ":11:",
            "is 99999999999999999999; expected a whole number of devices from 0 to 1,000,000",
        ),
        (
            '  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: "1000001"\n',
            ":11:",
            "is 1000001; expected a whole number of devices from 0 to 1,000,000",
        ),
        # Two kinds of GPU in one pod.
        (
            "  containers:\n  - name: c\n    resources:\n      limits:\n        nvidia.com/gpu: 1\n"
            "        amd.com/gpu: 1\n",
            ":7:",
            "topolog places one kind of GPU per job",
        ),
    ],
)
def test_pod_problems_name_file_and_line(body: str, where: str, expected: str) -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(_text(body), "pod.yaml", BY_NAMESPACE)
    message = str(err.value)
    assert f"pod.yaml{where}" in message and expected in message


def test_required_block_level_is_refused() -> None:
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: research\n  annotations:\n"
        "    kueue.x-k8s.io/podset-required-topology: cloud.provider.com/topology-block\n"
        "spec:\n" + GPU8
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "pod.yaml", BY_NAMESPACE)
    # Line 7: the annotation. A block is no topolog scope: judging it at rack or any would answer another question.
    assert "pod.yaml:7:" in str(err.value) and "requires topology level 'cloud.provider.com/topology-block'" in str(
        err.value
    )


def test_principal_that_cannot_be_determined_is_refused() -> None:
    text = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n" + GPU8
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "pod.yaml", BY_NAMESPACE)  # no namespace written: namespace=Team finds nothing
    assert "pod.yaml:1:1: Pod p: cannot tell which principal it acts as" in str(err.value)
    with pytest.raises(TopologError) as err:
        read_jobs_text(_text(GPU8), "pod.yaml", ())  # no rule at all
    assert "no --principal-from rule is given" in str(err.value)


def test_wrong_api_group_and_multi_document_errors() -> None:
    text = "apiVersion: batch/v1\nkind: JobSet\nmetadata:\n  name: x\nspec: {}\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "js.yaml", BY_NAMESPACE)
    assert "js.yaml:1:1: a JobSet has apiVersion 'batch/v1'; expected jobset.x-k8s.io/*" in str(err.value)
    with pytest.raises(TopologError) as err:
        read_jobs_text(_text(GPU8) + "---\n- not a mapping\n", "two.yaml", BY_NAMESPACE)
    assert "two.yaml:13:1: document is not a mapping" in str(err.value)


def test_gke_accelerator_selector() -> None:
    # GKE labels A3 High nodes cloud.google.com/gke-accelerator=nvidia-h100-80gb: the H100 SXM5 80GB.
    text = _text("  nodeSelector:\n    cloud.google.com/gke-accelerator: nvidia-h100-80gb\n" + GPU8)
    job = next(iter(read_jobs_text(text, "pod.yaml", BY_NAMESPACE)))
    assert (job.gpus, job.scope, job.accepts) == (8, "node", ("H100-SXM5-80GB",))


@pytest.mark.parametrize(
    ("accelerator", "model"),
    [
        # GKE's accelerator names for A3 Ultra (HGX H200 141 GB SXM) and G2 (one L4 per 12 vCPU):
        # one catalogue model each, so the job accepts that model only.
        ("nvidia-h200-141gb", "H200-SXM-141GB"),
        ("nvidia-l4", "L4"),
    ],
)
def test_gke_accelerators_of_current_machine_types(accelerator: str, model: str) -> None:
    text = _text(f"  nodeSelector:\n    cloud.google.com/gke-accelerator: {accelerator}\n" + GPU8)
    job = next(iter(read_jobs_text(text, "pod.yaml", BY_NAMESPACE)))
    assert job.accepts == (model,)


def test_a_workload_scaled_to_zero_is_refused() -> None:
    # replicas 0: no group runs, so nothing is placed; said as bad input, never "0 of 0 placeable".
    text = (
        "apiVersion: leaderworkerset.x-k8s.io/v1\nkind: LeaderWorkerSet\nmetadata:\n  name: idle\n"
        "  namespace: research\nspec:\n  replicas: 0\n  leaderWorkerTemplate:\n    workerTemplate:\n"
        "      spec:\n" + "".join("    " + line + "\n" for line in GPU8.splitlines())
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "lws.yaml", BY_NAMESPACE)
    assert "lws.yaml:1:1: LeaderWorkerSet idle runs no pod" in str(err.value)


def test_a_name_topolog_cannot_carry_is_refused() -> None:
    text = _text(GPU8).replace("name: p", "name: '-p q'")
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "pod.yaml", BY_NAMESPACE)
    assert "pod.yaml:4:3: Pod name '-p q' must start with a letter or digit" in str(err.value)
