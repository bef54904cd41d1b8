"""nvidia-smi's matrix lists RDMA devices only: a file without NIC columns leaves the NICs unknown (R-FP).

h100-8gpu-no-nic.txt and rtx5090-2gpu-tabs.txt (fixtures/README.md) have GPU columns only; a
workstation's onboard Ethernet never shows there. Their node is labelled nics_described "false",
which TOPO001 reads as "unknown, not absent", with a note saying so. A file with NIC columns
(workstation-2gpu-2nic-node.txt: NIC0, NIC1) describes its NICs, and gets no such label.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.sources.importers.nvidia_smi import import_nvidia_smi

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.mark.parametrize("name", ["h100-8gpu-no-nic.txt", "rtx5090-2gpu-tabs.txt"])
def test_no_nic_column_leaves_the_nics_unknown(name: str) -> None:
    imported = import_nvidia_smi([FIXTURES / name])
    node = Path(name).stem
    assert imported.inventory.objects[node].labels.get("nics_described") == "false"
    assert not [o for o in imported.inventory.objects.values() if o.kind == "nic"]
    assert any("NICs are unknown, not absent" in d.message for d in imported.notes)


def test_nic_columns_describe_the_nics() -> None:
    imported = import_nvidia_smi([FIXTURES / "workstation-2gpu-2nic-node.txt"])
    node = "workstation-2gpu-2nic-node"
    assert "nics_described" not in imported.inventory.objects[node].labels
    assert len([o for o in imported.inventory.objects.values() if o.kind == "nic"]) == 2
