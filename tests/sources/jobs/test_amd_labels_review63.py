"""Review R-HJ (round 17) of b8c0fd1e: AMD's per-value labels without `beta.`.

AMD's node labeller (ROCm/k8s-device-plugin, cmd/k8s-node-labeller/main.go, createLabels) writes, for
each property (device-id, product-name, ...):
- `beta.amd.com/gpu.<name>.<value>: <count>` for every value, always;
- `beta.amd.com/gpu.<name>: <value>` and `amd.com/gpu.<name>: <value>` when the node's GPUs all agree;
- `amd.com/gpu.<name>.<value>: <count>` only when they differ (two or more values on one node).
So on a node of 8 MI300X (device id 74a1) the labels are beta.amd.com/gpu.device-id.74a1=8,
beta.amd.com/gpu.device-id=74a1 and amd.com/gpu.device-id=74a1, and no amd.com/gpu.device-id.74a1.
A pod requiring `amd.com/gpu.device-id.74a1` (Exists or In) stays pending on such nodes. b8c0fd1e read
the key as the beta. one and placed the pod on the mixed fleet's MI300X nodes (mi300x-n0/n1, 8 MI300X
each, inventories/mixed-fleet.yaml): it fits nowhere there.
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


def _pod(expression: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: research}\nspec:\n"
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        f"        nodeSelectorTerms:\n        - matchExpressions:\n          - {expression}\n"
        "  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {amd.com/gpu: 1}\n"
    )


def test_plain_per_value_device_id_fits_no_node_of_one_model(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(_pod("{key: amd.com/gpu.device-id.74a1, operator: Exists}"))
    code, out, err = run_cli(
        "place", FLEET, str(path), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    (job,) = json.loads(out)["jobs"]
    # Every AMD node of the fleet holds one model (MI300X): no node carries the key, nothing is placed.
    assert (code, job["placements"]) == (1, []), err
    (read,) = read_jobs_text(_pod("{key: amd.com/gpu.device-id.74a1, operator: Exists}"), "t.yaml", RULES)
    assert any("only on a node whose GPUs differ in it" in n.message for n in read.notes)


def test_the_beta_and_plain_keys_the_labeller_writes_on_one_model_still_select_it() -> None:
    # Controls: the keys a node of 8 MI300X does carry select the MI300X.
    for expression in (
        "{key: beta.amd.com/gpu.device-id.74a1, operator: Exists}",
        "{key: beta.amd.com/gpu.product-name.AMD_Instinct_MI300X, operator: In, values: ['8']}",
        "{key: amd.com/gpu.device-id, operator: In, values: ['74a1']}",
        "{key: amd.com/gpu.product-name, operator: In, values: [AMD_Instinct_MI300X]}",
    ):
        (job,) = read_jobs_text(_pod(expression), "t.yaml", RULES)
        assert job.accepts == ("MI300X",), expression


def test_a_plain_per_value_key_in_one_term_leaves_the_other_terms() -> None:
    # (device-id.74a1 exists) OR (device-id In [74a5]): the first term selects no node of one model,
    # the second the MI325X: the pod accepts the MI325X alone (the first term's word matches no model).
    text = _pod(
        "{key: amd.com/gpu.device-id.74a1, operator: Exists}\n"
        "        - matchExpressions:\n          - {key: amd.com/gpu.device-id, operator: In, values: ['74a5']}"
    )
    (job,) = read_jobs_text(text, "t.yaml", RULES)
    assert job.accepts == ("amd.com/gpu.device-id.74a1", "MI325X")


def test_a_device_id_as_rocm_smi_prints_it_selects_no_node() -> None:
    # The labeller's device-id generator reads /sys/class/drm/card<N>/device/device ("0x74a1", lower-case
    # hex as the kernel prints it) and takes the "0x" off: every node of MI300X carries 74a1. rocm-smi
    # and amd-smi print "0x74a1"; neither it nor "74A1" is a value any node carries, so the pod fits
    # nowhere (before: read through the importers' case-blind lookup as the MI300X).
    for selection in ("{amd.com/gpu.device-id: '0x74a1'}", "{amd.com/gpu.device-id: '74A1'}"):
        text = _pod("{key: x, operator: DoesNotExist}").replace(
            "  affinity:", f"  nodeSelector: {selection}\n  affinity:"
        )
        (job,) = read_jobs_text(text, "t.yaml", RULES)
        written = selection.split("'")[1]
        assert job.accepts == (written,), selection
        said = f"amd.com/gpu.device-id={written} is written 74a1 by AMD's node labeller"
        assert any(n.message.startswith(said) for n in job.notes), [n.message for n in job.notes]
    # Control: the value as the labeller writes it.
    text = _pod("{key: x, operator: DoesNotExist}").replace(
        "  affinity:", "  nodeSelector: {amd.com/gpu.device-id: '74a1'}\n  affinity:"
    )
    (job,) = read_jobs_text(text, "t.yaml", RULES)
    assert job.accepts == ("MI300X",)


def test_the_product_name_an_mi300x_node_carries_selects_the_mi300x() -> None:
    # ROCm/k8s-device-plugin docs/user-guide/installation.md, "Example labels for an AMD MI300X GPU":
    # amd.com/gpu.device-id=74a1 beside amd.com/gpu.product-name=AMD_Instinct_MI300X_OAM (sysfs's
    # product_name "AMD Instinct MI300X OAM", spaces made _). It names the MI300X, as device id 74a1
    # does; before it was "not judged" (any AMD GPU). On the mixed fleet the AMD nodes are
    # mi300x-n0 and mi300x-n1 (8 MI300X each), which it now selects as the MI300X.
    text = _pod("{key: amd.com/gpu.product-name, operator: In, values: [AMD_Instinct_MI300X_OAM]}")
    (job,) = read_jobs_text(text, "t.yaml", RULES)
    assert job.accepts == ("MI300X",)
    # A VF's name (a virtual function of a partitioned board) stays unjudged: any AMD GPU, with a note.
    (job,) = read_jobs_text(text.replace("_OAM", "_VF"), "t.yaml", RULES)
    assert job.accepts == ("amd",)


def _nvidia_pod(expression: str) -> str:
    return _pod(expression).replace("amd.com/gpu: 1", "nvidia.com/gpu: 1")


def test_not_in_a_value_no_node_carries_keeps_no_node_off() -> None:
    # As `In` reads a spelling no labeller writes as fitting nowhere (no node carries it), `NotIn` on
    # it holds on every node: GFD writes NVIDIA-H100-80GB-HBM3, so NotIn [NVIDIA_H100_80GB_HBM3] keeps
    # no H100 node off (Kubernetes places the pod there). Before, the value was read as the H100 and
    # the H100 left out of what the pod accepts.
    (job,) = read_jobs_text(
        _nvidia_pod("{key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA_H100_80GB_HBM3]}"), "t.yaml", RULES
    )
    assert "H100-SXM5-80GB" in job.accepts
    assert any("it keeps no node off" in n.message for n in job.notes)
    # Control: the value GFD writes keeps the H100 off.
    (job,) = read_jobs_text(
        _nvidia_pod("{key: nvidia.com/gpu.product, operator: NotIn, values: [NVIDIA-H100-80GB-HBM3]}"), "t.yaml", RULES
    )
    assert "H100-SXM5-80GB" not in job.accepts and "A100-SXM4-80GB" in job.accepts
    # AMD: 0x74a1 (rocm-smi's spelling) is on no node; 74a1 is, and keeps the MI300X off.
    (job,) = read_jobs_text(_pod("{key: amd.com/gpu.device-id, operator: NotIn, values: ['0x74a1']}"), "t.yaml", RULES)
    assert "MI300X" in job.accepts
    (job,) = read_jobs_text(_pod("{key: amd.com/gpu.device-id, operator: NotIn, values: ['74a1']}"), "t.yaml", RULES)
    assert "MI300X" not in job.accepts


_TERMS = (
    "apiVersion: v1\nkind: Pod\nmetadata: {name: r, namespace: research}\nspec:\n"
    "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
    "        nodeSelectorTerms:\n%s"
    "  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {nvidia.com/gpu: 1}\n"
)
_H100_TERM = (
    "        - matchExpressions:\n"
    "          - {key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}\n"
)


@pytest.mark.parametrize(
    ("first", "error"),
    [
        ("        - foo\n", "t.yaml:9:11: a node selector term must be a mapping with 'matchExpressions'"),
        ("        - matchExpressions: foo\n", "t.yaml:9:11: 'matchExpressions' must be a list"),
    ],
)
def test_a_malformed_term_beside_others_is_refused_as_one_alone_is(first: str, error: str) -> None:
    # One term `foo` (or matchExpressions `foo`) is refused at its line; beside a second term it was
    # read as "several terms, not judged" (any GPU). Line 9 is the first term, column 11 its value.
    with pytest.raises(TopologError) as err:
        read_jobs_text(_TERMS % (first + _H100_TERM), "t.yaml", RULES)
    assert [str(d) for d in err.value.diagnostics] == [error]


def test_an_empty_term_adds_nothing_to_the_or() -> None:
    # Kubernetes: an empty node selector term matches no node. `{}` OR (H100): the H100 alone (it was
    # "not judged", any GPU). Every term empty: no node, refused at the terms (line 9, column 9).
    (job,) = read_jobs_text(_TERMS % ("        - {}\n" + _H100_TERM), "t.yaml", RULES)
    assert job.accepts == ("H100-SXM5-80GB",)
    with pytest.raises(TopologError) as err:
        read_jobs_text(_TERMS % "        - {}\n        - matchExpressions: []\n", "t.yaml", RULES)
    assert [str(d) for d in err.value.diagnostics] == [
        "t.yaml:9:9: every term of the required node affinity is empty: it matches no node"
    ]
