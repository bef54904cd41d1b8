"""`topolog export`: what schedulers should believe, written from a shipped inventory."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
NVL72 = ROOT / "inventories" / "gb200-nvl72.yaml"


def test_k8s_labels_of_an_nvl72_rack() -> None:
    # gb200-nvl72.yaml: rack nvl72-r0 of 18 compute trays (tray00..tray17), 4 Blackwell GPUs each,
    # all in the rack's one NVLink domain: every tray gets that domain and a GPU count of 4. Every
    # tray is cabled to the 4 rail leaves (gb-leaf0..3, each up to gb-spine0..1): the leaf and spine
    # labels name the first of each, as for the rail-optimised DGX pod.
    code, out, _ = run_cli("export", "k8s-labels", str(NVL72))
    assert code == 0
    lines = [line for line in out.splitlines() if not line.startswith("#")]
    assert lines == [
        f"kubectl label --overwrite node tray{i:02d} network.topology.nvidia.com/accelerator=nvl72-r0 "
        "network.topology.nvidia.com/leaf=gb-leaf0 network.topology.nvidia.com/spine=gb-spine0 "
        "nvidia.com/gpu.count=4"
        for i in range(18)
    ]


def test_slurm_block_of_an_nvl72_rack(tmp_path: Path) -> None:
    # One NVLink domain of 18 trays is one Slurm block of 18 nodes.
    out_file = tmp_path / "topology.conf"
    code, out, _ = run_cli("export", "slurm-topology", str(NVL72), "--form", "block", "-o", str(out_file))
    assert code == 0 and out == ""
    lines = [line for line in out_file.read_text().splitlines() if not line.startswith("#")]
    assert lines == ["BlockName=nvl72-r0 Nodes=tray[00-17]", "BlockSizes=18"]


def test_export_never_overwrites_its_inventory(tmp_path: Path) -> None:
    inv = tmp_path / "rack.yaml"
    inv.write_bytes(NVL72.read_bytes())
    code, _, err = run_cli("export", "k8s-labels", str(inv), "-o", str(inv))
    assert code == 2 and "is an input of this run" in err
    assert inv.read_bytes() == NVL72.read_bytes()


def test_slurm_topology_refuses_a_node_name_slurm_reads_as_other_nodes(tmp_path: Path) -> None:
    # Written as-is, `SwitchName=leaf0 Nodes=node a,1,rack[2]` is read by Slurm as the nodes
    # "node", "a" (the line splits at the blank), "1" and "rack2" (brackets are a range): neither
    # node named in the inventory. Each such name is refused at the line that names it (5 and 10),
    # with the characters a host name cannot hold; nothing is written.
    inv = tmp_path / "odd.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\n"
        "kind: Inventory\n"
        "metadata: {name: odd}\n"
        "objects:\n"
        '  - name: "node a,1"\n'
        "    kind: node\n"
        "    children:\n"
        "      - {name: nic0, kind: nic, model: ConnectX-7}\n"
        "  - {name: leaf0, kind: switch, model: QM9700}\n"
        '  - name: "rack[2]"\n'
        "    kind: node\n"
        "    children:\n"
        "      - {name: nic0, kind: nic, model: ConnectX-7}\n"
        "links:\n"
        '  - {a: "node a,1/nic0", b: leaf0, kind: infiniband, bandwidth: 50 GB/s}\n'
        '  - {a: "rack[2]/nic0", b: leaf0, kind: infiniband, bandwidth: 50 GB/s}\n'
    )
    out_file = tmp_path / "topology.conf"
    code, out, err = run_cli("export", "slurm-topology", str(inv), "--form", "tree", "-o", str(out_file))
    assert code == 2 and out == "" and not out_file.exists()
    assert f"{inv}:5:5: 'node a,1' cannot be written as one Slurm name (it holds ' ,')" in err, err
    assert f"{inv}:10:5: 'rack[2]' cannot be written as one Slurm name (it holds '[]')" in err, err
