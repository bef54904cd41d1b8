"""Writers of what schedulers should believe (Slurm topology, Kubernetes labels), from the inventory."""

from __future__ import annotations

from pathlib import Path

from verifier.reports import k8s_labels, slurm_topology
from verifier.sources.importers import import_files
from verifier.sources.inventory.loader import load_inventory


def _data(text: str) -> set[str]:
    return {ln.split("#", 1)[0].strip() for ln in text.splitlines() if ln.split("#", 1)[0].strip()}


def test_compress() -> None:
    assert slurm_topology.compress(["n001", "n002", "n003", "n005", "m", "x1"]) == "n[001-003,005],x1,m"
    assert slurm_topology.compress(["switch.1.1", "switch.1.2", "switch.1.10"]) == "switch.1.[1-2,10]"


def test_tree_round_trip(fx: Path) -> None:
    # topograph-tree.conf imported, then written back: the same 19 switch lines (core, 6 spines, 12 leaves).
    inv = import_files("slurm", [fx / "topograph-tree.conf"]).inventory
    out = slurm_topology.render(inv, "tree")
    assert _data(out) == _data((fx / "topograph-tree.conf").read_text())
    assert out == slurm_topology.render(inv, "tree")  # deterministic


def test_gb200_blocks_and_labels(fx: Path) -> None:
    # k8s-gb200-inventory.yaml by hand: racks nvl-a {gb-a0, gb-a1} and nvl-b {gb-b0, gb-b1} each hold one
    # NVLink domain over two nodes; no fabric switches. So: two blocks named after their racks, BlockSizes 2,
    # the block topology is the cluster default (there is no tree); each node its domain label. Its GPUs name no
    # catalogue model, so no vendor: no vendor's GPU labels, each node said so in a comment (sorted first).
    inv = load_inventory([fx / "k8s-gb200-inventory.yaml"])
    assert slurm_topology.render(inv, "block").splitlines()[1:] == [
        "BlockName=nvl-a Nodes=gb-a[0-1]",
        "BlockName=nvl-b Nodes=gb-b[0-1]",
        "BlockSizes=2",
    ]
    yaml_text = slurm_topology.render(inv)
    assert "- topology: nvlink\n  cluster_default: true\n  block:\n" in yaml_text
    assert k8s_labels.render(inv).splitlines()[1:] == [
        *(
            f"# gb-{r}{i}: GPUs not all of one known vendor's catalogue models: no GPU labels"
            for r in "ab"
            for i in "01"
        ),
        *(
            f"kubectl label --overwrite node gb-{r}{i} network.topology.nvidia.com/accelerator=nvl-{r}"
            for r in "ab"
            for i in "01"
        ),
    ]


def test_exported_yaml_imports_back(fx: Path, tmp_path: Path) -> None:
    # What `export slurm-topology` writes is a topology.yaml the Slurm importer reads: the same blocks.
    inv = load_inventory([fx / "k8s-gb200-inventory.yaml"])
    p = tmp_path / "topology.yaml"
    p.write_text(slurm_topology.render(inv))
    back = import_files("slurm", [p]).inventory
    assert {o.id: o.parent for o in back.of_kind("node")} == {
        "gb-a0": "nvl-a",
        "gb-a1": "nvl-a",
        "gb-b0": "nvl-b",
        "gb-b1": "nvl-b",
    }


def test_rail_optimised_nodes_share_one_slurm_leaf() -> None:
    # dgx-h100-pod: every node's 8 NICs go to the 8 rail leaves. Slurm's tree holds one leaf per node, so the
    # nodes cabled to the same set of leaves are one Slurm leaf (all 8 nodes here), never a leaf picked per
    # node; every switch named in Switches= is defined (tests/sources/importers/test_export_round_trip.py).
    inv = load_inventory([Path(__file__).resolve().parents[3] / "inventories" / "dgx-h100-pod.yaml"])
    out = slurm_topology.render(inv, "tree")
    assert [ln for ln in out.splitlines() if not ln.startswith("#")] == [
        "SwitchName=spine0 Switches=leaf0",
        "SwitchName=leaf0 Nodes=dgx[00-07]",
    ]


def test_partly_shared_leaves_get_one_slurm_leaf_per_set(tmp_path: Path) -> None:
    # By hand: n1 and n2 are cabled to {la, lb}, n3 to {lb} alone, n4 to {lc}; la, lb and lc to spine s.
    # Sets: {la, lb} -> n1, n2; {lb} -> n3; {lc} -> n4. A one-switch set keeps its name (lb, lc), so the
    # {la, lb} set takes la. s sits above la (for {la, lb}), lb and lc.
    p = tmp_path / "inv.yaml"
    p.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: t}\nobjects:\n"
        "  - {name: n1, kind: node, children: [{name: nic0, kind: nic}, {name: nic1, kind: nic}]}\n"
        "  - {name: n2, kind: node, children: [{name: nic0, kind: nic}, {name: nic1, kind: nic}]}\n"
        "  - {name: n3, kind: node, children: [{name: nic0, kind: nic}]}\n"
        "  - {name: n4, kind: node, children: [{name: nic0, kind: nic}]}\n"
        "  - {name: la, kind: switch}\n  - {name: lb, kind: switch}\n  - {name: lc, kind: switch}\n"
        "  - {name: s, kind: switch}\n"
        "links:\n"
        "  - {a: n1/nic0, b: la, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: n1/nic1, b: lb, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: n2/nic0, b: la, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: n2/nic1, b: lb, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: n3/nic0, b: lb, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: n4/nic0, b: lc, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: la, b: s, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: lb, b: s, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: lc, b: s, kind: infiniband, bandwidth: 400 Gb/s}\n"
    )
    out = slurm_topology.render(load_inventory([p]), "tree")
    assert [ln for ln in out.splitlines() if not ln.startswith("#")] == [
        "SwitchName=s Switches=la,lb,lc",
        "SwitchName=la Nodes=n[1-2]",
        "SwitchName=lb Nodes=n3",
        "SwitchName=lc Nodes=n4",
    ]


def test_blocks_of_different_sizes_take_the_smallest_as_base(tmp_path: Path) -> None:
    # By hand: rack r0 holds a0, a1 and rack r1 b0, b1, b2, each rack (promised one NVLink domain) joined into
    # one by GPU-to-GPU NVLinks across its nodes. Blocks r0 (2 nodes) and r1 (3). Slurm stops at a block smaller than
    # its base block (the first BlockSizes value, or else the first block's size), so BlockSizes is 2.
    p = tmp_path / "inv.yaml"
    p.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: t}\nobjects:\n"
        "  - {name: r0, kind: rack, promises: [nvlink_domain]}\n"
        "  - {name: r1, kind: rack, promises: [nvlink_domain]}\n"
        "  - {name: 'a{i}', kind: node, count: 2, parent: r0, children: [{name: gpu0, kind: gpu}]}\n"
        "  - {name: 'b{i}', kind: node, count: 3, parent: r1, children: [{name: gpu0, kind: gpu}]}\n"
        "links:\n"
        "  - {a: a0/gpu0, b: a1/gpu0, kind: nvlink, generation: 5, count: 18}\n"
        "  - {a: b0/gpu0, b: b1/gpu0, kind: nvlink, generation: 5, count: 18}\n"
        "  - {a: b1/gpu0, b: b2/gpu0, kind: nvlink, generation: 5, count: 18}\n"
    )
    out = slurm_topology.render(load_inventory([p]), "block")
    assert out.splitlines()[1:] == [
        "BlockName=r0 Nodes=a[0-1]",
        "BlockName=r1 Nodes=b[0-2]",
        "# blocks hold 2, 3 nodes: the base block is the smallest, 2",
        "BlockSizes=2",
    ]
    conf = tmp_path / "topology.conf"
    conf.write_text(out)
    back = import_files("slurm", [conf]).inventory
    assert {o.id: o.parent for o in back.of_kind("node")} == {
        "a0": "r0",
        "a1": "r0",
        "b0": "r1",
        "b1": "r1",
        "b2": "r1",
    }
