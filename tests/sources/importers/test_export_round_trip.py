"""Every shipped inventory's exports are what the schedulers accept, and topolog reads each back unchanged.

Slurm: `export slurm-topology` (yaml, tree, block) read back by topolog's Slurm importer has the same
switches and node membership as the inventory's fabric and NVLink domains, and, laid onto the inventory,
no SLURM or SCHED finding. Kubernetes: `export k8s-labels` applied to Nodes (as `kubectl label` would)
and read back by the node-list reader gives each node the labels written, and no SCHED finding.
"""

from __future__ import annotations

import json
import shlex
from functools import cache
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.reports import k8s_labels, slurm_topology
from verifier.session.verify_run import VerifyRun, verify
from verifier.sources.importers import import_files
from verifier.sources.importers.node_lists import hosts
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = sorted((ROOT / "inventories").glob("*.yaml"))

# By hand from each inventory file (Slurm switch -> members):
# - dgx-h100-pod: NIC r of each of dgx00..dgx07 is cabled to rail leaf r (leaf0..leaf7), and each
#   leaf to spine0..spine3. All 8 nodes share the one set of leaves {leaf0..leaf7}: one Slurm leaf,
#   named leaf0; the 4 spines each sit above that same leaf: parallel, one Slurm switch spine0.
# - mixed-fleet: euw-spine0 above the four leaves; a100-n0/1, h100-n0/1, mi300x-n0/1 and rtx-n0..3
#   each cabled to the leaf of their kind only.
# - gb200-nvl72, edge-soc: no fabric switch.
TREES: dict[str, dict[str, list[str]]] = {
    "dgx-h100-pod": {"spine0": ["leaf0"], "leaf0": [f"dgx{i:02d}" for i in range(8)]},
    "mixed-fleet": {
        "euw-spine0": ["euw-a100-leaf", "euw-h100-leaf", "euw-mi300x-leaf", "euw-rtx-leaf"],
        "euw-a100-leaf": ["a100-n0", "a100-n1"],
        "euw-h100-leaf": ["h100-n0", "h100-n1"],
        "euw-mi300x-leaf": ["mi300x-n0", "mi300x-n1"],
        "euw-rtx-leaf": ["rtx-n0", "rtx-n1", "rtx-n2", "rtx-n3"],
    },
    # gb200-nvl72: every tray is cabled to the 4 rail leaves gb-leaf0..3 (one leaf per node in Slurm's
    # tree, as for the DGX pod), and the leaves to spines gb-spine0..1.
    "gb200-nvl72": {"gb-spine0": ["gb-leaf0"], "gb-leaf0": [f"tray{i:02d}" for i in range(18)]},
    "edge-soc": {},
}
# Blocks (multi-node NVLink domains): only gb200-nvl72's rack nvl72-r0, whose 18 trays share one
# NVLink domain through the rack's NVLink switch trays. A DGX H100's NVLink stays inside the node.
BLOCKS: dict[str, dict[str, list[str]]] = {
    "dgx-h100-pod": {},
    "mixed-fleet": {},
    "gb200-nvl72": {"nvl72-r0": [f"tray{i:02d}" for i in range(18)]},
    "edge-soc": {},
}


@cache
def _inventory(path: Path) -> Inventory:
    return load_inventory([path])


def test_every_shipped_inventory_is_covered() -> None:
    assert sorted(p.stem for p in SHIPPED) == sorted(TREES)


def _structure(inv: Inventory) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """Switch -> its members and block -> its nodes, as an import reads them (membership links, block racks)."""
    tree: dict[str, list[str]] = {}
    for lk in inv.links.values():
        if "slurm_member" in lk.labels:
            tree.setdefault(lk.a.removeprefix("slurm-"), []).append(lk.b.removeprefix("slurm-"))
    blocks: dict[str, list[str]] = {}
    for o in inv.of_kind("node"):
        block = o.labels.get("slurm_block") or (o.parent if o.parent is not None else None)
        if block is not None and (o.labels.get("slurm_block") or inv.objects[block].labels.get("slurm_block")):
            blocks.setdefault(block.removeprefix("slurm-"), []).append(o.id)
    return {k: sorted(v) for k, v in tree.items()}, {k: sorted(v) for k, v in blocks.items()}


def _sched_findings(files: list[Path], kind: str) -> list[str]:
    report = verify(files, VerifyRun(from_kind=kind, authorize=False))
    return sorted(f"{f.rule} {f.message}" for f in report.findings if f.rule.startswith(("SLURM", "SCHED")))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
@pytest.mark.parametrize("form", slurm_topology.FORMS)
def test_slurm_export_reads_back(path: Path, form: str, tmp_path: Path) -> None:
    inv = _inventory(path)
    tree, blocks = TREES[path.stem], BLOCKS[path.stem]
    wanted = {"yaml": (tree, blocks), "tree": (tree, {}), "block": ({}, blocks)}[form]
    if (form == "tree" and not tree) or (form == "block" and not blocks):
        # Nothing for this form to say: refused with the file named (exit 2 at the CLI), never written empty.
        with pytest.raises(TopologError) as err:
            slurm_topology.render(inv, form)
        assert err.value.diagnostics[0].location.file == str(path)
        return
    text = slurm_topology.render(inv, form)
    out = tmp_path / ("topology.yaml" if form == "yaml" else "topology.conf")
    out.write_text(text)
    assert _structure(import_files("slurm", [out]).inventory) == wanted
    assert _sched_findings([out, path], "slurm") == []


def test_flat_yaml_for_an_inventory_without_fabric_or_blocks(tmp_path: Path) -> None:
    # edge-soc: one node, no switch, no NVLink domain across nodes: topology.yaml holds one flat topology.
    text = slurm_topology.render(_inventory(ROOT / "inventories" / "edge-soc.yaml"))
    assert [ln for ln in text.splitlines() if not ln.startswith("#")] == [
        "- topology: flat",
        "  cluster_default: true",
        "  flat: true",
    ]


def test_rail_optimised_pod_comments_say_what_the_leaf_stands_for() -> None:
    out = slurm_topology.render(_inventory(ROOT / "inventories" / "dgx-h100-pod.yaml"), "tree")
    assert out.splitlines()[1:] == [
        "# leaf0 stands for switches leaf[0-7]: each of dgx[00-07] is cabled to all of them (a rail-optimised "
        "fabric), and Slurm's tree holds one leaf per node",
        "# spine0 stands for switches spine[0-3]: parallel switches above the same switches",
        "SwitchName=spine0 Switches=leaf0",
        "SwitchName=leaf0 Nodes=dgx[00-07]",
    ]


def _nodes_json(script: str, inv: Inventory) -> tuple[dict[str, dict[str, str]], str]:
    """`kubectl get nodes -o json` of a cluster whose Nodes are the inventory's hosts, after `sh script`."""
    labels: dict[str, dict[str, str]] = {n: {} for n in hosts(inv)}
    for line in script.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        words = shlex.split(line)
        assert words[:4] == ["kubectl", "label", "--overwrite", "node"], line
        labels[words[4]] = dict(w.split("=", 1) for w in words[5:])
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"labels": labels[n], "name": n}} for n in sorted(labels)]
    return labels, json.dumps({"apiVersion": "v1", "items": items, "kind": "List"}, indent=4)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_k8s_labels_read_back(path: Path, tmp_path: Path) -> None:
    inv = _inventory(path)
    labels, text = _nodes_json(k8s_labels.render(inv), inv)
    nodes = tmp_path / "nodes.json"
    nodes.write_text(text)
    back = import_files("k8s-labels", [nodes]).inventory
    assert sorted(o.id for o in back.of_kind("node")) == sorted(labels)
    for name, written in labels.items():
        obj = back.objects[name]
        leaf = written.get("network.topology.nvidia.com/leaf")
        assert obj.labels.get("k8s_topology.leaf") == leaf
        count = written.get("nvidia.com/gpu.count")
        assert obj.quantities.get("k8s_gpu_count") == (int(count) if count is not None else None)
    assert _sched_findings([nodes, path], "k8s-labels") == []
