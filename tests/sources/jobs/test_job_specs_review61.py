"""Review of round 61's job specs (DisaggregatedSet, --tres-per-task, DRA claims): inputs the change did
not consider. Each expected figure is worked out by hand from the spec beside it.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team", "account=Team"])


# --- DisaggregatedSet: a CPU-only role first ---------------------------------------------------------------

ROUTER_FIRST = """apiVersion: disaggregatedset.x-k8s.io/v1
kind: DisaggregatedSet
metadata: {name: pd, namespace: research}
spec:
  slices: 2
  roles:
  - name: router
    spec:
      replicas: 1
      leaderWorkerTemplate:
        workerTemplate:
          spec:
            containers: [{name: r, image: x, resources: {limits: {cpu: 2}}}]
  - name: decode
    spec:
      replicas: 1
      leaderWorkerTemplate:
        size: 2
        workerTemplate:
          spec:
            containers: [{name: d, image: x, resources: {limits: {nvidia.com/gpu: 4}}}]
"""


def test_a_cpu_only_first_role_repeated_by_a_slice_is_no_copy_of_the_gpu_role() -> None:
    # Groups, slice after slice: router (0), decode (1), router (2), decode (3). The router asks no
    # GPU: no job. Decode: 1 group of size 2 (leader + 1 worker) x 4 GPUs = 8 GPUs. So two jobs, pd-1
    # and pd-3, 16 GPUs in all. Before: group 2 (the router again) was given a copy of the workload's
    # first job, the decode one: a third job pd-2 of 8 GPUs that no pod asks for.
    jobs = read_jobs_text(ROUTER_FIRST, "ds.yaml", RULES)
    assert [(j.name, j.gpus) for j in jobs] == [("pd-1", 8), ("pd-3", 8)]


# --- --tres-per-task: a GPU entry in a form not read ------------------------------------------------------


@pytest.mark.parametrize(
    "tres",
    [
        "gres/gpu",  # no count: before, noted as "not judged" and the script read as CPU-only
        "gres:gpu:2",  # ':' after gres
        "GRES/GPU:1",  # another case
        "gres/gpu/a100:1",  # a type after a '/'
        "gpu:2",  # no gres/
        "cpu=4,gres/gpu",  # beside an entry that is read
    ],
)
def test_a_gpu_entry_not_read_is_refused_not_passed_over(tres: str) -> None:
    # Base refused every --tres-per-task; round 61 read gres/gpu[:type]=N and noted the rest, so each
    # of these (a GPU entry in a shape the reader does not take) made the script "no GPU": a GPU job
    # through a GPU gate unjudged. Line 2 holds the option.
    text = f"#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --tres-per-task={tres}\nsrun x\n"
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "t.sh", RULES)
    assert f"t.sh:2: --tres-per-task={tres}: expected one GPU entry gres/gpu[:type]=count" in str(err.value)


def test_other_tres_entries_are_still_noted() -> None:
    # license/x:1 names no GPU: noted; gres/gpu:1 x 4 tasks = 4 GPUs.
    text = "#!/bin/bash\n#SBATCH -A research -J t -N 1 -n 4 --tres-per-task=license/x:1,gres/gpu:1\nsrun x\n"
    (job,) = read_jobs_text(text, "t.sh", RULES)
    assert job.gpus == 4
    assert [n.message for n in job.notes if "license/x:1" in n.message] == [
        "--tres-per-task entry license/x:1 not judged"
    ]


# --- DRA: the template of the pod's own namespace -----------------------------------------------------------

DRA = """apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus, namespace: TEMPLATE_NS}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
---
apiVersion: v1
kind: Pod
metadata: {name: p0, namespace: research}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: gpus}]
  containers: [{name: c, image: x, resources: {claims: [{name: gpus}]}}]
"""


def test_a_claim_reads_the_template_of_its_own_namespace() -> None:
    # Template and pod in research; the request writes no count: the DRA API's default for ExactCount
    # is 1 (resource.k8s.io ExactDeviceRequest.count), so 1 whole NVIDIA GPU.
    (job,) = read_jobs_text(DRA.replace("TEMPLATE_NS", "research"), "dra.yaml", RULES)
    assert job.gpus == 1


def test_a_template_written_for_another_namespace_is_not_the_pods() -> None:
    # Kubernetes makes the pod's claim from the template named gpus in the pod's namespace, research;
    # the file's gpus is demo's and says nothing of research's (which may ask 8, or All). Before, the
    # pod was read as 1 GPU. Line 15 col 33 is the pod's resourceClaimTemplateName.
    with pytest.raises(TopologError) as err:
        read_jobs_text(DRA.replace("TEMPLATE_NS", "demo"), "dra.yaml", RULES)
    assert "dra.yaml:15:33: " in str(err.value)
    assert "is in the file only for namespace demo, not the pod's namespace research" in str(err.value)


def test_a_kueue_pod_group_pod_reads_the_template_beside_it() -> None:
    # A plain Pod of a Kueue pod group is read once every file is; its template (count 2) is in its
    # file: 2 GPUs. Before, the group was read after the file's templates were gone, and refused as
    # "not among the documents of the file", which it is.
    text = (
        DRA.replace("TEMPLATE_NS", "research")
        .replace("exactly: {deviceClassName: gpu.nvidia.com}", "exactly: {deviceClassName: gpu.nvidia.com, count: 2}")
        .replace(
            "metadata: {name: p0, namespace: research}",
            "metadata:\n  name: p0\n  namespace: research\n  labels: {kueue.x-k8s.io/pod-group-name: g1}\n"
            "  annotations: {kueue.x-k8s.io/pod-group-total-count: '1'}",
        )
    )
    (job,) = read_jobs_text(text, "dra.yaml", RULES)
    assert (job.name, job.gpus) == ("g1", 2)


# --- a MIG resource name not read ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "resource",
    [
        "nvidia.com/mig-1g.10gb.meh",  # an extension not read
        "nvidia.com/mig-1g.10gb.ME",  # the device plugin writes NVIDIA's lower-case 'me'
        "nvidia.com/mig-1c.1g.10gb",  # a compute-instance profile (the device plugin offers none)
        "nvidia.com/mig-1g.10gb.me.me",
    ],
)
def test_a_mig_resource_of_a_form_not_read_is_refused_not_no_gpu(resource: str) -> None:
    # Base and round 61 read each as "no GPU" (no MIG_RESOURCE match, an unknown extended resource):
    # a pod asking for a MIG slice let through a GPU gate unjudged. Line 6 col 14 is its limits entry.
    text = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: research}\nspec:\n"
        f"  containers:\n  - {{name: c, image: x, resources: {{limits: {{{resource}: 1}}}}}}\n"
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "mig.yaml", RULES)
    assert f"limits {resource} of container c is an NVIDIA MIG resource of a form topolog does not read" in str(
        err.value
    )


# --- DRA: a ComputeDomain's IMEX channel claim (GB200 specs) ------------------------------------------------

COMPUTE_DOMAIN = """apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: nvbandwidth-test-compute-domain, namespace: CD_NS}
spec:
  numNodes: 2
  channel:
    resourceClaimTemplate:
      name: nvbandwidth-test-compute-domain-channel
---
apiVersion: leaderworkerset.x-k8s.io/v1
kind: LeaderWorkerSet
metadata: {name: nvb, namespace: research}
spec:
  leaderWorkerTemplate:
    size: 2
    workerTemplate:
      spec:
        containers:
        - name: w
          image: x
          resources:
            limits: {nvidia.com/gpu: 4}
            claims: [{name: compute-domain-channel}]
        resourceClaims:
        - name: compute-domain-channel
          resourceClaimTemplateName: nvbandwidth-test-compute-domain-channel
"""
# The shape of NVIDIA's multi-node specs on GB200 (GPU Operator documentation, "Run a Multi-node
# nvbandwidth Test Requiring IMEX Channels", NVIDIA/k8s-dra-driver-gpu's ComputeDomain CRD): the
# ComputeDomain's controller makes the ResourceClaimTemplate spec.channel.resourceClaimTemplate.name
# in its own namespace; a claim of it is an IMEX channel; the GPUs are the pod's nvidia.com/gpu limits.


def test_a_compute_domain_channel_claim_is_no_gpu() -> None:
    # 1 group of size 2 (leader + 1 worker, both the worker template) x 4 GPUs = 8 GPUs; the channel
    # claim adds none and is noted at its template name (line 26). Before: refused, the template being
    # "not among the documents of the file".
    (job,) = read_jobs_text(COMPUTE_DOMAIN.replace("CD_NS", "research"), "cd.yaml", RULES)
    assert job.gpus == 8
    assert [n.message for n in job.notes if "IMEX" in n.message] == [
        "claim compute-domain-channel: an IMEX channel of ComputeDomain nvbandwidth-test-compute-domain "
        "(multi-node NVLink), no GPU; the domain is not judged"
    ]


def test_a_compute_domain_of_another_namespace_is_not_the_pods() -> None:
    with pytest.raises(TopologError) as err:
        read_jobs_text(COMPUTE_DOMAIN.replace("CD_NS", "demo"), "cd.yaml", RULES)
    assert "cd.yaml:26:11: " in str(err.value)  # the pod's resourceClaimTemplateName
    assert "only for namespace demo, not the pod's namespace research" in str(err.value)


def test_slices_times_replicas_past_the_bound_are_refused_before_the_list_is_built() -> None:
    # ROUTER_FIRST with router replicas 1,000 and decode 1: 1,001 groups a slice, x 1,000,000 slices = about
    # 10^9 jobs, past the 10,000 a workload may expand into. Before, the list of 10^9 groups was built
    # (8 GB; 0.8 GB and 10 s at 100,000 slices) before the bound looked at it. Line 5 col 3: slices.
    text = ROUTER_FIRST.replace("slices: 2", "slices: 1000000").replace("replicas: 1\n", "replicas: 1000\n", 1)
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "ds.yaml", RULES)
    assert "ds.yaml:5:3: DisaggregatedSet pd is more than 10,000 jobs placed one by one" in str(err.value)


def test_a_claim_in_the_older_source_form_is_refused_by_its_own_name() -> None:
    # `source: {resourceClaimTemplateName: ...}` (the pod API of older Kubernetes releases): refused at
    # the claim (line 16 col 5: the list item after `resourceClaims:` on line 15), naming the claim, not
    # "ResourceClaimTemplate None".
    text = DRA.replace("TEMPLATE_NS", "research").replace(
        "resourceClaims: [{name: gpus, resourceClaimTemplateName: gpus}]",
        "resourceClaims:\n  - name: gpus\n    source: {resourceClaimTemplateName: gpus}",
    )
    with pytest.raises(TopologError) as err:
        read_jobs_text(text, "dra.yaml", RULES)
    assert "dra.yaml:16:5: " in str(err.value)
    assert "claim gpus names no resourceClaimTemplateName (the `source:` form" in str(err.value)


def test_a_template_read_for_one_request_is_not_read_for_the_next() -> None:
    # serve reads each request's text on a worker thread that outlives it: the templates of the
    # first text (template + pod, 1 GPU) must be gone when the second (the pod alone) is read, which
    # is refused as holding no template. Also after a first read that failed.
    one = DRA.replace("TEMPLATE_NS", "research")
    pod_alone = one.split("---\n", 1)[1]
    (job,) = read_jobs_text(one, "a.yaml", RULES)
    assert job.gpus == 1
    with pytest.raises(TopologError):
        read_jobs_text(one.replace("gpu.nvidia.com", "mig.nvidia.com"), "a.yaml", RULES)
    with pytest.raises(TopologError) as err:
        read_jobs_text(pod_alone, "b.yaml", RULES)
    assert "its ResourceClaimTemplate gpus is not among the documents of the file" in str(err.value)
