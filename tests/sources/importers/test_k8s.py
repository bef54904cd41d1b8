"""Kubernetes node labels (GFD, topograph) imported and checked against the inventory's NVLink domains."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def test_labels_only(fx: Path) -> None:
    # k8s-gb200-nodes-handwritten.json alone: four nodes, what the scheduler believes about each.
    result = import_files("k8s-labels", [fx / "k8s-gb200-nodes-handwritten.json"])
    inv = result.inventory
    assert sorted(o.id for o in inv.of_kind("node")) == ["gb-a0", "gb-a1", "gb-b0", "gb-b1"]
    b1 = inv.objects["gb-b1"]
    assert b1.labels["k8s_gpu_clique"] == "7c1d2f3a-0000-4000-8000-000000000001.1"
    assert b1.labels["k8s_nvlink_domain"] == "nvl-b"
    assert b1.labels["k8s_topology.leaf"] == "leaf-2" and b1.labels["k8s_topology.spine"] == "spine-1"
    assert b1.labels["k8s_gpu_product"] == "NVIDIA-GB200"
    assert b1.quantities["k8s_gpu_count"] == 2
    assert b1.loc.line == 65  # `"name": "gb-b1"` in the JSON
    # kubernetes.io/hostname on each of the 4 nodes is not topology: one note counts them.
    assert any("4 other node labels" in n.message for n in result.notes)


def test_checked_against_the_inventory(fx: Path) -> None:
    # With k8s-gb200-inventory.yaml (racks nvl-a = {gb-a0, gb-a1}, nvl-b = {gb-b0, gb-b1}, one NVLink domain
    # each), by hand:
    # - accelerator labels: nvl-a on a0, a1 and nvl-b on b0, b1: each domain one value, no finding;
    # - gpu.clique: a0, a1 and b1 say <uuid>.1, b0 says <uuid>.2. Domain nvl-b (named by its smallest GPU,
    #   gb-b0/gpu0) spans cliques .1 and .2: SCHED001 once; clique .1 holds nodes of both domains
    #   (gb-a0/gpu0's and gb-b0/gpu0's): SCHED002 once.
    from verifier.session.verify_run import VerifyRun, verify

    files = [fx / "k8s-gb200-nodes-handwritten.json", fx / "k8s-gb200-inventory.yaml"]
    report = verify(files, VerifyRun(from_kind="k8s-labels"))
    c = "7c1d2f3a-0000-4000-8000-000000000001"
    assert sorted((f.rule, f.message) for f in report.findings if f.rule.startswith("SCHED")) == [
        ("SCHED001", f"The NVLink domain of gb-b0/gpu0 spans gpu.clique {c}.1 and {c}.2."),
        ("SCHED002", f"gpu.clique {c}.1 joins the NVLink domains of gb-a0/gpu0 and gb-b0/gpu0."),
    ]


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (
            '{"kind": "Node", "metadata": {"name": "n1",\n "labels": {"nvidia.com/gpu.count": "eight"}}}',
            2,
            "whole number",
        ),
        ('{"kind": "List", "items": [{"metadata": {}}]}', 1, "no metadata.name"),
        ('{"kind": "Node",\n "metadata": ', 2, "not valid JSON"),
        ('{"hello": 1}', 1, "a List of Nodes"),
    ],
)
def test_errors(tmp_path: Path, text: str, line: int, needle: str) -> None:
    p = tmp_path / "nodes.json"
    p.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("k8s-labels", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value
