"""Job specs, round 17 (HJ): a GPU label beside a zone or Karpenter label in one affinity term, and
gpu.product values GFD never writes.

- Kubernetes ORs the terms of a required node affinity and ANDs the expressions inside a term
  (kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/, "Node affinity"). A term such as
  `nvidia.com/gpu.product In [H100...]` AND `topology.kubernetes.io/zone In [us-east-1a]` selects a
  subset of the nodes its GPU part selects, so the union of the terms' GPU parts holds every node any
  term selects. Before, one non-GPU expression (a zone, Karpenter's `karpenter.sh/capacity-type`,
  karpenter.sh/docs/concepts/scheduling) left the whole OR "not judged": any GPU was accepted.
- GPU Feature Discovery writes NVML's name with each space made `-` (gpu-feature-discovery
  mig-strategy.go, migStrategyNone): never `_`. `NVIDIA_H100_80GB_HBM3` was read as the H100 through
  the importers' separator-blind gpu_names._key (which a Slurm Gres type needs); a label value is
  matched character for character, so no node carries it.

Figures are derived by hand from inventories/mixed-fleet.yaml: h100-n0/n1 hold 8 H100-SXM5-80GB,
a100-n0/n1 8 A100-SXM4-80GB, mi300x-n0/n1 8 MI300X, rtx-n0..n3 2 RTX-4090 (rtx-n2's gpu1 down).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])
FLEET = str(Path(__file__).resolve().parents[3] / "inventories" / "mixed-fleet.yaml")


def _pod(selection: str, limits: str = "nvidia.com/gpu: 2") -> str:
    return (
        f"apiVersion: v1\nkind: Pod\nmetadata: {{name: hj, namespace: research}}\nspec:\n{selection}"
        f"  containers:\n  - name: c\n    image: x\n    resources:\n      limits: {{{limits}}}\n"
    )


def _terms(*terms: tuple[str, ...]) -> str:
    # A required node affinity; each term is its expressions (flow mappings), the terms ORed.
    body = "".join("        - matchExpressions:\n" + "".join(f"          - {e}\n" for e in term) for term in terms)
    return (
        "  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n" + body
    )


def _nodes(tmp_path: Path, text: str) -> tuple[int, list[str], str]:
    path = tmp_path / "job.yaml"
    path.write_text(text)
    code, out, err = run_cli(
        "place", FLEET, str(path), "--principal-from", "namespace=Team", "--no-authorization", "--format", "json"
    )
    if code == 2:
        return code, [], err
    (job,) = json.loads(out)["jobs"]
    return code, sorted(p["domain"] for p in job["placements"]), err


H100 = "{key: nvidia.com/gpu.product, operator: In, values: [NVIDIA-H100-80GB-HBM3]}"
AMPERE = "{key: nvidia.com/gpu.family, operator: In, values: [ampere]}"
ZONE = "{key: topology.kubernetes.io/zone, operator: In, values: [us-east-1a]}"
SPOT = "{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}"
HOST = "{key: kubernetes.io/hostname, operator: In, values: [a100-n0]}"


def test_each_terms_gpu_part_is_kept_beside_a_zone(tmp_path: Path) -> None:
    # (H100 AND zone) OR (ampere AND on-demand), 2 GPUs: the GPU parts H100 OR ampere: h100-n0/n1 and
    # a100-n0/n1; not the RTX or MI300X nodes. Before: "not judged", the RTX nodes placed too (the
    # MI300X are AMD: an nvidia.com/gpu pod never went there).
    text = _pod(_terms((H100, ZONE), (AMPERE, SPOT)))
    code, nodes, err = _nodes(tmp_path, text)
    assert (code, nodes) == (0, ["a100-n0", "a100-n1", "h100-n0", "h100-n1"]), err
    (job,) = read_jobs_text(text, "t.yaml", RULES)
    # Each left-out expression is named at its line: term 1's zone, term 2's capacity type.
    left = sorted(n.message for n in job.notes if "judged alone" in n.message)
    assert left == [
        "node affinity karpenter.sh/capacity-type In on-demand not judged (term 2's GPU labels judged alone)",
        "node affinity topology.kubernetes.io/zone In us-east-1a not judged (term 1's GPU labels judged alone)",
    ]


def test_one_term_of_one_product_per_zone_is_that_product() -> None:
    # (H100 AND zone a) OR (H100 AND zone b): the same product in each term: the H100 alone.
    zone_b = ZONE.replace("us-east-1a", "us-east-1b")
    (job,) = read_jobs_text(_pod(_terms((H100, ZONE), (H100, zone_b))), "t.yaml", RULES)
    assert job.accepts == ("H100-SXM5-80GB",)


def test_a_term_with_no_gpu_label_still_narrows_nothing() -> None:
    # Control: (H100 AND zone) OR a hostname alone: the second term's node may hold any GPU: unjudged.
    (job,) = read_jobs_text(_pod(_terms((H100, ZONE), (HOST,))), "t.yaml", RULES)
    assert job.accepts == ("nvidia",)
    assert any("several terms (any of them) not judged" in n.message for n in job.notes)


def test_a_product_joined_by_underscores_selects_no_node(tmp_path: Path) -> None:
    # NVIDIA_H100_80GB_HBM3: GFD writes NVIDIA-H100-80GB-HBM3 ("NVIDIA H100 80GB HBM3", spaces made -).
    text = _pod("  nodeSelector: {nvidia.com/gpu.product: NVIDIA_H100_80GB_HBM3}\n")
    (job,) = read_jobs_text(text, "t.yaml", RULES)
    assert job.accepts == ("NVIDIA_H100_80GB_HBM3",)  # no model is named so: it fits nowhere
    assert any(
        "is written NVIDIA-H100-80GB-HBM3 by GPU Feature Discovery, and a label value is matched character "
        "for character" in n.message
        for n in job.notes
    )
    # Before: placed on h100-n0 and h100-n1.
    code, nodes, _err = _nodes(tmp_path, text)
    assert (code, nodes) == (1, [])


def test_the_written_product_and_its_older_form_still_select_the_h100() -> None:
    # Controls: GFD's value, and the form before drivers named "NVIDIA " (about R470).
    for value in ("NVIDIA-H100-80GB-HBM3", "H100-80GB-HBM3"):
        (job,) = read_jobs_text(_pod(f"  nodeSelector: {{nvidia.com/gpu.product: {value}}}\n"), "t.yaml", RULES)
        assert job.accepts == ("H100-SXM5-80GB",), value


def _amd(expression: str) -> str:
    return _pod(_terms((expression,)), "amd.com/gpu: 1")


def test_amd_plain_per_value_labels_select_no_node_of_one_model(tmp_path: Path) -> None:
    # AMD's labeller (ROCm/k8s-device-plugin cmd/k8s-node-labeller, createLabels) writes the count of
    # each value under `amd.com/gpu.<name>.<value>` only on a node whose GPUs differ (one value gives
    # the plain key `amd.com/gpu.<name>: <value>` instead), while it always writes the `beta.amd.com/`
    # per-value keys. The mixed fleet's MI300X nodes hold 8 MI300X each: no node carries these keys
    # (review R-HJ 63: HJ's b8c0fd1e read them as the beta. forms and placed on mi300x-n0/n1).
    (job,) = read_jobs_text(_amd("{key: amd.com/gpu.device-id.74a1, operator: Exists}"), "t.yaml", RULES)
    assert job.accepts == ("amd.com/gpu.device-id.74a1",)  # a word no model has: fits nowhere
    product = "{key: amd.com/gpu.product-name.AMD_Instinct_MI300X, operator: In, values: ['2']}"
    (job,) = read_jobs_text(_amd(product), "t.yaml", RULES)
    assert job.accepts == ("amd.com/gpu.product-name.AMD_Instinct_MI300X",)
    # 74a5 is the MI325X, which the mixed fleet lacks: fits nowhere (before: placed on the MI300X nodes).
    code, nodes, _err = _nodes(tmp_path, _amd("{key: amd.com/gpu.device-id.74a5, operator: Exists}"))
    assert (code, nodes) == (1, [])
