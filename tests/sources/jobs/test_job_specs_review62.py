"""Review R-JS (round 62) of the GPU family selector (4c3935ad) and of node affinity expressions.

- A pod that selects `nvidia.com/gpu.family: hopper` and `nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3`
  together asks for an H100 node, and every DGX H100 carries both labels (GPU Feature Discovery writes
  the family from the compute capability, 9.0 -> hopper, beside the product). 4c3935ad read the family
  as the words H100 and H200 and kept only the words both selections wrote alike, so the product's
  model H100-SXM5-80GB met neither word and the valid pod was refused, exit 2 (base 07c97283: placed on
  the H100 nodes). A family word stands for the models whose names start with it, as the placement
  reads it; it meets such a model in that model.
- A required node affinity `operator: Exists` (or DoesNotExist) has no `values`: Kubernetes requires
  them to be left out for these operators. The reader took the missing list as not a list and
  refused every such pod, exit 2 ("'values' of a match expression must be a list"), on the base too.
  GPU Operator clusters select GPU nodes this way (`nvidia.com/gpu.present` Exists).

Each expected figure is derived by hand from inventories/mixed-fleet.yaml: h100-n0 and h100-n1 hold 8
H100-SXM5-80GB each, a100-n0 and a100-n1 8 A100-SXM4-80GB each, mi300x-n0/n1 8 AMD MI300X each, and
rtx-n0..n3 2 RTX-4090 each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])
FLEET = str(Path(__file__).resolve().parents[3] / "inventories" / "mixed-fleet.yaml")


def _pod(name: str, selection: str, limits: str = "nvidia.com/gpu: 4") -> str:
    # One Pod of one container; `selection` is written under the pod spec (indented two spaces).
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}, namespace: research}}\nspec:\n{selection}"
        f"  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {{{limits}}}\n"
    )


def _placed_nodes(tmp_path: Path, text: str) -> tuple[int, list[str], str]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    code, out, err = run_cli(
        "place", FLEET, str(path), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    if code == 2:
        return code, [], err
    (job,) = json.loads(out)["jobs"]
    return code, sorted(p["domain"] for p in job["placements"]), err


FAMILY_AND_PRODUCT = (
    "  nodeSelector: {nvidia.com/gpu.family: hopper, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n",
    # The same two labels, the family in a required affinity and the product in the node selector.
    "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n        - matchExpressions:\n"
    "          - {key: nvidia.com/gpu.family, operator: In, values: [hopper, ampere]}\n",
)


@pytest.mark.parametrize("selection", FAMILY_AND_PRODUCT)
def test_a_family_and_a_product_of_it_select_that_product(tmp_path: Path, selection: str) -> None:
    # hopper is H100 and H200 by name; the product is H100-SXM5-80GB, an H100: both hold on h100-n0
    # and h100-n1 (4 GPUs of 8 free on each), and on no other node.
    (job,) = read_jobs_text(_pod("fp", selection), "fp.yaml", RULES)
    assert job.accepts == ("H100-SXM5-80GB",)
    code, nodes, err = _placed_nodes(tmp_path, _pod("fp", selection))
    assert (code, nodes) == (0, ["h100-n0", "h100-n1"]), err


def test_a_family_and_a_product_of_another_family_still_share_nothing() -> None:
    # ampere is A100 by name: no A100 is an H100-SXM5-80GB, so no node carries both labels.
    text = _pod(
        "fq", "  nodeSelector: {nvidia.com/gpu.family: ampere, nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n"
    )
    with pytest.raises(TopologError, match="no node can satisfy both"):
        read_jobs_text(text, "fq.yaml", RULES)


def test_two_products_one_the_others_prefix_still_share_nothing() -> None:
    # Control: NVIDIA-L4 and NVIDIA-L40S are two products; a node is one or the other. Only a family
    # word stands for the models under it, so L4 does not meet L40S (as on the base: refused).
    text = _pod(
        "pp",
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-L40S]}\n",
    )
    with pytest.raises(TopologError, match="no node can satisfy both"):
        read_jobs_text(text, "pp.yaml", RULES)


def test_pod_sets_of_a_family_and_of_a_product_under_it_are_one_kind_of_gpu() -> None:
    # A PyTorchJob whose Master selects the family and whose Workers the product: both are the H100
    # nodes, so the job is 1 + 2 pods of 4 GPUs = 12 GPUs on H100-SXM5-80GB (before: "ask for
    # different GPUs", refused).
    text = """apiVersion: kubeflow.org/v1
kind: PyTorchJob
metadata: {name: mixed-sel, namespace: research}
spec:
  pytorchReplicaSpecs:
    Master:
      replicas: 1
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.family: hopper}
          containers:
          - {name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 4}}}
    Worker:
      replicas: 2
      template:
        spec:
          nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}
          containers:
          - {name: pytorch, image: x, resources: {limits: {nvidia.com/gpu: 4}}}
"""
    (job,) = read_jobs_text(text, "pj.yaml", RULES)
    assert (job.gpus, job.accepts) == (12, ("H100-SXM5-80GB",))


EXISTS = (
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n        - matchExpressions:\n"
    "          - key: nvidia.com/gpu.present\n            operator: {op}\n"
)


@pytest.mark.parametrize("op", ["Exists", "DoesNotExist"])
def test_an_expression_without_values_is_read_and_noted(tmp_path: Path, op: str) -> None:
    # No values: the expression is not judged (a note), and the pod's 4 NVIDIA GPUs are placed as
    # without it: any node of 8 free NVIDIA GPUs (a100-n0/n1, h100-n0/n1); not the AMD or RTX nodes.
    text = _pod("ex", EXISTS.format(op=op))
    (job,) = read_jobs_text(text, "ex.yaml", RULES)
    assert (job.gpus, job.accepts) == (4, ("nvidia",))
    assert any(f"nvidia.com/gpu.present {op}" in n.message and "not judged" in n.message for n in job.notes)
    code, nodes, err = _placed_nodes(tmp_path, text)
    assert (code, nodes) == (0, ["a100-n0", "a100-n1", "h100-n0", "h100-n1"]), err


def test_values_that_are_not_a_list_are_still_refused() -> None:
    # Control: a scalar where the list goes is bad input, as before.
    text = _pod(
        "bad",
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - {key: example.com/pool, operator: In, values: gpu}\n",
    )
    with pytest.raises(TopologError, match="'values' of a match expression must be a list"):
        read_jobs_text(text, "bad.yaml", RULES)


@pytest.mark.parametrize("values", ["", ", values: []"])
def test_in_without_values_is_refused_at_its_line(values: str) -> None:
    # In needs values (the API server refuses the pod without); with the list now optional for
    # Exists, an In with none must not read as "allows nothing" in a garbled message.
    text = _pod(
        "novalues",
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        f"          - {{key: nvidia.com/gpu.product, operator: In{values}}}\n",
    )
    with pytest.raises(TopologError, match=r"novalues.yaml:10:\d+: a match expression with operator In needs"):
        read_jobs_text(text, "novalues.yaml", RULES)


@pytest.mark.parametrize(
    ("selection", "limits", "vendors"),
    [
        # 4c3935ad read the family as H100/H200 and dropped the pod's vendor: AMD devices were placed
        # on h100-n0/n1 (base: on mi300x-n0/n1, the family not judged). No node is both.
        ("  nodeSelector: {nvidia.com/gpu.family: hopper}\n", "amd.com/gpu: 1", ("nvidia", "amd")),
        # The same on the base for GPU Feature Discovery's product label (placed on h100-n0/n1) ...
        ("  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n", "amd.com/gpu: 1", ("nvidia", "amd")),
        # ... and for AMD's device-id label under an NVIDIA request (placed on mi300x-n0/n1).
        ("  nodeSelector: {amd.com/gpu.device-id: 74a1}\n", "nvidia.com/gpu: 1", ("amd", "nvidia")),
    ],
)
def test_a_label_of_another_vendors_gpus_is_refused(selection: str, limits: str, vendors: tuple[str, str]) -> None:
    text = _pod("vv", selection, limits)
    labelled, asked = vendors
    with pytest.raises(TopologError, match=f"selects {labelled} GPU nodes, but the pod asks for {asked} devices"):
        read_jobs_text(text, "vv.yaml", RULES)


def test_a_mig_slice_under_its_family_is_read() -> None:
    # Control: a MIG instance is NVIDIA's; ampere allows the A100s, whose 1g.10gb slices the pod asks.
    (job,) = read_jobs_text(
        _pod("mig", "  nodeSelector: {nvidia.com/gpu.family: ampere}\n", "nvidia.com/mig-1g.10gb: 1"), "m.yaml", RULES
    )
    assert (job.gpus, job.mig, job.accepts) == (1, "1g.10gb", ("A100",))


USE_GPUTYPE = """apiVersion: v1
kind: Pod
metadata:
  name: gpu-pod
  namespace: research
  annotations:
    {annotation}
spec:
  schedulerName: volcano
  containers:
    - name: ubuntu-container
      image: ubuntu:18.04
      command: ["bash", "-c", "sleep 86400"]
      resources:
        limits:
          {limits}
"""


@pytest.mark.parametrize("limits", ["volcano.sh/vgpu-number: 2", "nvidia.com/gpu: 2"])
def test_hami_and_volcano_gpu_type_annotation_chooses_the_models(tmp_path: Path, limits: str) -> None:
    # Project-HAMi/website, userguide/NVIDIA-device/specify-device-type-to-use ("A100,V100"); Volcano's
    # vGPU reads the same annotation (vgpu/type.go GPUInUse, utils.go checkGPUtype: the device type,
    # "NVIDIA-" and NVML's name, must hold one of the words). In the catalogue, A100 is part of the
    # names of A100-SXM4-80GB, A100-SXM4-40GB and A100-PCIE-80GB, V100 of V100-SXM3-32GB; the fleet's
    # A100 nodes (a100-n0/n1, 8 A100-SXM4-80GB each) are the only ones that qualify. Before, the
    # annotation was "not judged" and the vGPU pod placed on the H100 nodes first.
    text = USE_GPUTYPE.format(annotation='nvidia.com/use-gputype: "A100,V100"', limits=limits)
    (job,) = read_jobs_text(text, "u.yaml", RULES)
    assert job.accepts == ("A100-SXM4-80GB", "A100-SXM4-40GB", "A100-PCIE-80GB", "V100-SXM3-32GB")
    assert not any("not judged" in n.message and "gputype" in n.message for n in job.notes)
    code, nodes, err = _placed_nodes(tmp_path, text)
    assert (code, nodes) == (0, ["a100-n0", "a100-n1"]), err


def test_nouse_gpu_type_leaves_the_other_models() -> None:
    # nouse "H100,H200,B200" (checkGPUtype: no word may be part of the type): of the catalogue's
    # NVIDIA models with an NVML name, the A100s, the V100, the RTX 4090, L40S and L4 remain (B200 is
    # part of "NVIDIA GB200" too, so the GB200's B200 is out as well).
    text = USE_GPUTYPE.format(annotation='nvidia.com/nouse-gputype: "H100,H200,B200"', limits="nvidia.com/gpu: 1")
    (job,) = read_jobs_text(text, "n.yaml", RULES)
    assert set(job.accepts) == {
        "A100-SXM4-80GB",
        "A100-SXM4-40GB",
        "A100-PCIE-80GB",
        "V100-SXM3-32GB",
        "RTX-4090",
        "L40S",
        "L4",
    }


def test_a_gpu_type_outside_the_node_selection_is_refused() -> None:
    # The product label allows the H100 (H100-SXM5-80GB) only, the annotation the A100s and V100: none.
    text = USE_GPUTYPE.format(annotation='nvidia.com/use-gputype: "A100,V100"', limits="nvidia.com/gpu: 1")
    text = text.replace("spec:\n", "spec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-H100-80GB-HBM3}\n")
    with pytest.raises(TopologError, match="no node can satisfy both"):
        read_jobs_text(text, "x.yaml", RULES)


def test_use_and_nouse_together_both_hold() -> None:
    # HAMi's own example writes both (use "A100,V100", nouse "A100-SXM"): its scheduler applies both,
    # so of the A100s and the V100 the two SXM4 A100s are out: A100-PCIE-80GB and V100-SXM3-32GB.
    text = USE_GPUTYPE.format(
        annotation='nvidia.com/use-gputype: "A100,V100"\n    nvidia.com/nouse-gputype: "A100-SXM"',
        limits="nvidia.com/gpu: 1",
    )
    (job,) = read_jobs_text(text, "b.yaml", RULES)
    assert job.accepts == ("A100-PCIE-80GB", "V100-SXM3-32GB")


def test_a_family_in_another_case_selects_no_node() -> None:
    # Label values match case for case and GPU Feature Discovery writes `hopper`: a pod selecting
    # `Hopper` stays pending on every node. 4c3935ad lower-cased it and placed the pod on the H100s.
    (job,) = read_jobs_text(_pod("fc", "  nodeSelector: {nvidia.com/gpu.family: Hopper}\n"), "fc.yaml", RULES)
    assert job.accepts == ("Hopper",)  # no model is named so: it fits nowhere
    assert any("matched case for case" in n.message for n in job.notes)


def _not_in(key: str, values: str) -> str:
    return (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        f"          - {{key: {key}, operator: NotIn, values: [{values}]}}\n"
    )


@pytest.mark.parametrize(
    ("key", "values", "expected"),
    [
        # Not ampere: the A100 nodes are out; of the rest only h100-n0/n1 hold 4 free NVIDIA GPUs (the
        # RTX nodes have 2, the MI300X nodes are AMD's). Before: "not judged", the A100s placed too.
        ("nvidia.com/gpu.family", "ampere", ["h100-n0", "h100-n1"]),
        # Not the H100 SXM product: the A100 nodes remain.
        ("nvidia.com/gpu.product", "NVIDIA-H100-80GB-HBM3", ["a100-n0", "a100-n1"]),
    ],
)
def test_not_in_on_a_gpu_label_leaves_the_other_models(
    tmp_path: Path, key: str, values: str, expected: list[str]
) -> None:
    code, nodes, err = _placed_nodes(tmp_path, _pod("ni", _not_in(key, values)))
    assert (code, nodes) == (0, expected), err


def test_not_in_on_another_vendors_label_holds_everywhere() -> None:
    # An AMD pod: no AMD node carries nvidia.com/gpu.family, and NotIn holds on a node without the
    # label, so it restricts nothing (noted, the pod's vendor kept).
    (job,) = read_jobs_text(_pod("na", _not_in("nvidia.com/gpu.family", "ampere"), "amd.com/gpu: 1"), "na.yaml", RULES)
    assert job.accepts == ("amd",)
    assert any("NotIn ampere not judged" in n.message for n in job.notes)


def test_not_in_a_family_meets_a_product_selection() -> None:
    # Product A100-SXM4-80GB selected, family ampere excluded: no node is both.
    text = _pod(
        "nb",
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}\n"
        + _not_in("nvidia.com/gpu.family", "ampere"),
    )
    with pytest.raises(TopologError, match="no node can satisfy both"):
        read_jobs_text(text, "nb.yaml", RULES)


def _script(*lines: str) -> str:
    return "#!/bin/bash\n#SBATCH --account=research\n" + "".join(f"#SBATCH {line}\n" for line in lines) + "srun x\n"


SLURM = parse_rules(["account=Team"])


def test_gpus_beside_nodes_times_tasks_per_node_must_be_their_gpus() -> None:
    # -N 2 --ntasks-per-node=4: sbatch counts 8 tasks; 1 GPU each is 8 GPUs. 7a231f25 took --gpus=6
    # over the GPUs per task as the task count and read a 6-GPU job (base: 8): looser than the tasks.
    text = _script("-N 2", "--ntasks-per-node=4", "--gpus-per-task=1", "--gpus=6")
    with pytest.raises(TopologError, match=r"--gpus=6 is not the 8 tasks \(-N x --ntasks-per-node\) times"):
        read_jobs_text(text, "t.sh", SLURM)
    # Control: --gpus=8 agrees, 8 GPUs on exactly 2 nodes (4 each).
    (job,) = read_jobs_text(_script("-N 2", "--ntasks-per-node=4", "--gpus-per-task=1", "--gpus=8"), "t.sh", SLURM)
    assert (job.gpus, job.max_nodes, job.min_nodes) == (8, 2, 2)


def test_the_type_gpus_names_holds_for_untyped_gpus_per_task() -> None:
    # --gpus=h100:2 with -n 2 --gpus-per-task=1: the two GPUs are H100s (before: any GPU).
    (job,) = read_jobs_text(_script("-n 2", "--gpus-per-task=1", "--gpus=h100:2"), "t.sh", SLURM)
    assert (job.gpus, job.accepts) == (2, ("H100",))
