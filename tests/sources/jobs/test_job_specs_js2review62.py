"""Review of JS2 (round 62): GPU labels the pod reader now notes as "not judged" must still keep a
required `NotIn` on them, as every other plain label does.

A required node affinity `NotIn` on a label that is not a GPU product label excludes the nodes the
inventory labels with that value (Kubernetes keeps a pod off a node whose label holds a NotIn value).
3fa6ab9e made `nvidia.com/gpu.count`, `nvidia.com/gpu.memory` and `amd.com/gpu.family` "not judged"
for any operator, so a NotIn on them no longer excluded the nodes an inventory labels so: the pod was
placed on nodes Kubernetes keeps it off (base 07c97283 excluded them).

Expected nodes are derived by hand from inventories/mixed-fleet.yaml: h100-n0/n1 and a100-n0/n1 hold 8
NVIDIA GPUs each, rtx-n0..rtx-n3 2 RTX-4090 each (rtx-n2 one of them down), mi300x-n0/n1 8 MI300X each.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

FLEET = Path(__file__).resolve().parents[3] / "inventories" / "mixed-fleet.yaml"
RTX_LABELS = "    labels: {tenant: students}\n"
MI300X_LABELS = '    labels: {tenant: team-nlp}\n    software: {driver: "amdgpu'


def _place(tmp_path: Path, fleet: str, expression: str, limits: str) -> tuple[int, list[str], str]:
    inv = tmp_path / "fleet.yaml"
    inv.write_text(fleet)
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: js, namespace: research}\nspec:\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms:\n        - matchExpressions:\n          - {expression}\n"
        f"  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {{{limits}}}\n"
    )
    code, out, err = run_cli(
        "place", str(inv), str(job), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    if code == 2:
        return code, [], err
    (placed,) = json.loads(out)["jobs"]
    return code, sorted(p["domain"] for p in placed["placements"]), err


@pytest.mark.parametrize(
    "expression",
    [
        "{key: nvidia.com/gpu.count, operator: NotIn, values: ['2']}",
        "{key: nvidia.com/gpu.memory, operator: NotIn, values: ['24564']}",
    ],
)
def test_not_in_on_an_unjudged_nvidia_label_keeps_the_labelled_nodes_off(tmp_path: Path, expression: str) -> None:
    # The RTX workstations carry gpu.count 2 and gpu.memory 24564 (an RTX 4090's NVML MiB): NotIn keeps
    # the pod (2 NVIDIA GPUs) off all four; the A100 and H100 nodes carry neither label and stay.
    text = FLEET.read_text()
    assert text.count(RTX_LABELS) == 1
    fleet = text.replace(
        RTX_LABELS, '    labels: {tenant: students, nvidia.com/gpu.count: "2", nvidia.com/gpu.memory: "24564"}\n'
    )
    code, nodes, err = _place(tmp_path, fleet, expression, "nvidia.com/gpu: 2")
    assert (code, nodes) == (0, ["a100-n0", "a100-n1", "h100-n0", "h100-n1"]), err


@pytest.mark.parametrize("key", ["amd.com/gpu.family", "beta.amd.com/gpu.family"])
def test_not_in_on_the_amd_family_keeps_the_labelled_nodes_off(tmp_path: Path, key: str) -> None:
    # Both MI300X nodes are labelled family AI (under the key the pod names): NotIn AI leaves the pod
    # (2 AMD GPUs) no node, so it fits nowhere (exit 1) instead of being placed on mi300x-n0/n1.
    text = FLEET.read_text()
    assert text.count(MI300X_LABELS) == 1
    fleet = text.replace(MI300X_LABELS, MI300X_LABELS.replace("team-nlp}", f"team-nlp, {key}: AI}}"))
    code, nodes, err = _place(tmp_path, fleet, f"{{key: {key}, operator: NotIn, values: [AI]}}", "amd.com/gpu: 2")
    assert (code, nodes) == (1, []), err


def test_a_not_in_on_an_unjudged_label_of_nodes_without_it_excludes_nothing(tmp_path: Path) -> None:
    # Control: no node carries gpu.count, so NotIn keeps every NVIDIA node with 2 GPUs up: the four
    # HGX nodes and rtx-n0, rtx-n1, rtx-n3 (rtx-n2 has one GPU up).
    code, nodes, err = _place(
        tmp_path, FLEET.read_text(), "{key: nvidia.com/gpu.count, operator: NotIn, values: ['8']}", "nvidia.com/gpu: 2"
    )
    assert (code, nodes) == (0, ["a100-n0", "a100-n1", "h100-n0", "h100-n1", "rtx-n0", "rtx-n1", "rtx-n3"]), err


def test_an_l4_product_is_not_an_l40s(tmp_path: Path) -> None:
    # nvidia.com/gpu.product NVIDIA-L4 is GFD's label for the L4 (NVML "NVIDIA L4"): a node of L40S
    # GPUs carries NVIDIA-L40S, so Kubernetes never puts the pod there. Inventory: one node of each.
    inv = tmp_path / "fleet.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: l4}\nobjects:\n"
        "  - name: f\n    kind: fleet\n    children:\n"
        "      - {name: n-l4, kind: node, children: [{name: 'gpu{i}', kind: gpu, model: L4, count: 2}]}\n"
        "      - {name: n-l40s, kind: node, children: [{name: 'gpu{i}', kind: gpu, model: L40S, count: 2}]}\n"
    )
    job = tmp_path / "job.yaml"
    job.write_text(
        "apiVersion: v1\nkind: Pod\nmetadata: {name: js, namespace: research}\nspec:\n"
        "  nodeSelector: {nvidia.com/gpu.product: NVIDIA-L4}\n"
        "  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {nvidia.com/gpu: 1}\n"
    )
    code, out, err = run_cli(
        "place", str(inv), str(job), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    (placed,) = json.loads(out)["jobs"]
    assert (code, sorted(p["domain"] for p in placed["placements"])) == (0, ["n-l4"]), err
