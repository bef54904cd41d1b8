"""`topolog import -o x.yaml` then `verify x.yaml` loads what `verify --from` loads: every real file, every scalar."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory

REAL = [
    ("hwloc", "16amd64-4distances.xml"),
    ("hwloc", "16intel64-manyVFs.xml"),
    ("hwloc", "24em64t-2n6c2t-pci.xml"),  # DMI asset tags of blanks only
    ("hwloc", "32em64t-2n8c2t-pci-wholeio.xml"),
    ("hwloc", "64intel64-heteromem.xml"),
    ("hwloc", "8intel64-4n2t-memattrs.xml"),
    ("hwloc", "cxlmem+dax.v3.xml"),  # empty DMI serials
    ("hwloc", "fakecpukinds.xml"),
    ("hwloc", "memorysidecaches.xml"),  # empty DMI strings
    ("hwloc", "nvidiaDGX2.xml"),
    ("hwloc", "power8gpudistances.xml"),
    ("nccl-xml", "aws-p4d-24xl-topo.xml"),
    ("nccl-xml", "aws-p4de-24xl-topo.xml"),
    ("nccl-xml", "azure-ncv4-topo.xml"),
    ("nccl-xml", "azure-ndv2-topo.xml"),
    ("nccl-xml", "azure-ndv4-topo.xml"),
    ("nccl-xml", "ibm-cn-h100-topo.xml"),
    ("nvidia-smi", "gb200-4gpu-numa-lists.txt"),
    ("nvidia-smi", "h100-8gpu-no-nic.txt"),
    ("nvidia-smi", "h200-8gpu-10nic-empty-affinity.txt"),
    ("nvidia-smi", "rtx5090-2gpu-tabs.txt"),
    ("nvidia-smi", "workstation-2gpu-2nic-node.txt"),
]


def _view(inv: Inventory) -> tuple[object, ...]:
    objs = {o.id: (o.kind, o.parent, o.model, dict(o.labels), dict(o.quantities)) for o in inv.objects.values()}
    links = {lk.id: (lk.a, lk.b, lk.kind, lk.mbps, dict(lk.attrs), dict(lk.labels)) for lk in inv.links.values()}
    return objs, links


@pytest.mark.parametrize(("kind", "name"), REAL)
def test_written_inventory_loads_back_the_same(fx: Path, tmp_path: Path, kind: str, name: str) -> None:
    imported = import_files(kind, [fx / name]).inventory
    out = tmp_path / "x.yaml"
    out.write_text(to_yaml(imported, "x", "test"))
    assert _view(load_inventory([out])) == _view(imported)


def test_text_that_reads_as_another_type_is_quoted(fx: Path, tmp_path: Path) -> None:
    # A serial of digits with a leading zero is octal to a YAML 1.1 reader and an integer (or text)
    # to others; yes/no/on/off and null are booleans or null to some: all must come back as text.
    inv = import_files("nvidia-smi", [fx / "rtx5090-2gpu-tabs.txt"], node="n").inventory
    node = inv.objects["n"]
    values = ["0123456789", "12", "1.5", "yes", "No", "on", "null", "~", "2024-01-01", " padded", "0x1f", "1e3"]
    node.labels = {**node.labels, **{f"k{i}": v for i, v in enumerate(values)}}
    text = to_yaml(inv, "x", "test")
    assert 'k0: "0123456789"' in text
    out = tmp_path / "x.yaml"
    out.write_text(text)
    back = load_inventory([out]).objects["n"].labels
    assert [back[f"k{i}"] for i in range(len(values))] == values


def test_promises_and_software_survive_being_written_back(tmp_path: Path) -> None:
    """An inventory laid onto by an importer (k8s-labels, slurm) is written whole: what a node
    promises and the software it runs are facts that checks judge (SCHED001, SW001)."""
    from verifier.sources.importers.yaml_out import to_yaml
    from verifier.sources.inventory.loader import load_inventory

    source = Path(__file__).resolve().parents[3] / "inventories" / "dgx-h100-pod.yaml"
    inv = load_inventory([source])
    out = tmp_path / "back.yaml"
    out.write_text(to_yaml(inv, "back", "test"), encoding="utf-8")
    again = load_inventory([out])
    # Every DGX H100 node promises nvlink_domain, rail_optimized and gpu_nic_affinity (the template).
    assert again.promises == inv.promises and inv.promises["dgx00"] == (
        "nvlink_domain",
        "rail_optimized",
        "gpu_nic_affinity",
    )
    assert again.software == inv.software and inv.software["dgx00"]["driver"] == "535.129.03"
