"""The PCI id / product name table (verifier/sources/inventory/device_ids.yaml) maps to catalogue models."""

from __future__ import annotations

import pytest

from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.device_ids import device_ids, is_emulated_bridge, model_for_name, model_for_pci


def test_every_entry_names_a_catalogue_model() -> None:
    known = {m.name for m in builtin_models()}
    table = device_ids()
    assert table.pci and table.names
    assert set(table.pci.values()) | set(table.names.values()) <= known


def test_ids_in_the_forms_tools_write_them() -> None:
    # lspci/hwloc write 10de:2330, NCCL vendor="0x10de" device="0x2330"; pci.ids: "GH100 [H100 SXM5 80GB]".
    assert model_for_pci("10de", "2330") == model_for_pci("0x10DE", "0x2330") == "H100-SXM5-80GB"
    assert model_for_pci("0x10de", "0x20b0") == "A100-SXM4-40GB"  # "GA100 [A100 SXM4 40GB]"
    assert model_for_pci("0x15b3", "0x1021") == "ConnectX-7"  # "MT2910 Family [ConnectX-7]"
    # Not in the table: unknown, never the nearest match. pci.ids 2026.05.24 names 10de:2336 only
    # "GH100 [H100]" (no memory size, no form factor) and 10de:2909 "GB100 [HGX B200 168GB]" (a
    # memory size no catalogue model has).
    assert model_for_pci("0x10de", "0x2336") is None and model_for_pci(None, "0x2330") is None
    assert model_for_pci("10de", "2909") is None
    # 10de:26b5 is the L40 (not the L40S) and 1002:740c names the MI250X and the MI250 alike.
    assert model_for_pci("10de", "26b5") is None and model_for_pci("1002", "740c") is None


def test_product_names_as_nvml_reports_them() -> None:
    assert model_for_name("Tesla V100-SXM3-32GB-H") == "V100-SXM3-32GB"
    assert model_for_name("  nvidia  H100 80GB HBM3 ") == "H100-SXM5-80GB"
    assert model_for_name("Tesla P100-SXM2-16GB") is None and model_for_name("") is None


def test_emulated_bridges() -> None:
    assert is_emulated_bridge("0x104c", "0x8232") and is_emulated_bridge("1b36", "000c")
    assert not is_emulated_bridge("0x10b5", "0x9781")  # a real PLX/Broadcom switch of the DGX-2


# Current parts by the PCI id lspci/hwloc/NCCL write (pci.ids 2026.05.24, names quoted) and by the
# product name nvidia-smi / amd-smi print (each seen in public tool output, device_ids.yaml says where).
CURRENT = [
    ("10de", "2331", "NVIDIA H100 PCIe", "H100-PCIE-80GB"),  # GH100 [H100 PCIe]
    ("10de", "2335", "NVIDIA H200", "H200-SXM-141GB"),  # GH100 [H200 SXM 141GB]
    ("10de", "2901", "NVIDIA B200", "B200-HGX-180GB"),  # GB100 [B200]
    ("10de", "2941", "NVIDIA GB200", "B200-GB200-186GB"),  # GB100 [HGX GB200]
    ("1002", "74a5", "AMD Instinct MI325X", "MI325X"),  # Aqua Vanjaram [Instinct MI325X]
    ("1002", "75a3", "AMD Instinct MI355X", "MI355X"),  # Aqua Vanjaram [Instinct MI355X]
    # Names as nvidia-smi prints them in its GPU table on these cards (public pastes: "NVIDIA H100
    # NVL ... 95830MiB / 400W", "NVIDIA L40S ... 46068MiB / 350W", lspci "AD104GL [L4] [10de:27b8]").
    ("10de", "2321", "NVIDIA H100 NVL", "H100-NVL-94GB"),  # GH100 [H100 NVL]
    ("10de", "26b9", "NVIDIA L40S", "L40S"),  # AD102GL [L40S]
    ("10de", "27b8", "NVIDIA L4", "L4"),  # AD104GL [L4]
]


@pytest.mark.parametrize(("vendor", "device", "name", "model"), CURRENT, ids=[c[3] for c in CURRENT])
def test_current_parts_by_id_and_by_name(vendor: str, device: str, name: str, model: str) -> None:
    assert model_for_pci(f"0x{vendor}", f"0x{device}") == model_for_name(name) == model


def test_current_parts_carry_their_published_figures() -> None:
    # Figures from the datasheets named in each model's source (per direction for links):
    # H100 PCIe: 80 GB HBM2e at 2 TB/s, NVLink bridge 600 GB/s both ways = 12 NVLink 4 links of
    #   25 GB/s = 300,000 MB/s per direction; bridged pairs, so no nvswitch feature.
    # H200 SXM: 141 GB at 4.8 TB/s, 18 links, 900 GB/s both ways = 450,000 MB/s; on HGX boards.
    # MI325X: 256 GB at 6 TB/s, 7 links x 128 GB/s both ways / 2 = 448,000 MB/s.
    # MI355X: 288 GB at 8 TB/s, 7 links x 153.6 GB/s both ways / 2 = 537,600 MB/s.
    models = {m.name: m for m in builtin_models()}
    want = {
        "H100-PCIE-80GB": (80000, 2000000, 12, 300000, False),
        "H200-SXM-141GB": (141000, 4800000, 18, 450000, True),
        "MI325X": (256000, 6000000, 7, 448000, False),
        "MI355X": (288000, 8000000, 7, 537600, False),
    }
    for name, (mem, bw, links, up, board) in want.items():
        m = models[name]
        got = (m.specs["mem_mb"], m.specs["mem_mbps"], m.specs["scaleup_links"], m.specs["scaleup_mbps"])
        assert got == (mem, bw, links, up), name
        assert ("nvswitch" in m.features) is board, name
    # The NVSwitch-board parts: every NVIDIA GPU with 18 NVLinks (H100/H200 SXM, B200, GB200).
    eighteen = {n for n, m in models.items() if m.kind == "gpu" and m.specs.get("scaleup_links") == 18}
    assert eighteen == {"H100-SXM5-80GB", "H200-SXM-141GB", "B200-HGX-180GB", "B200-GB200-186GB"}
    assert all("nvswitch" in models[n].features for n in eighteen)
