"""The PCI id / product name table (verifier/sources/inventory/device_ids.yaml) maps to catalogue models."""

from __future__ import annotations

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
    # Not in the table: unknown, never the nearest match.
    assert model_for_pci("0x10de", "0x2331") is None and model_for_pci(None, "0x2330") is None


def test_product_names_as_nvml_reports_them() -> None:
    assert model_for_name("Tesla V100-SXM3-32GB-H") == "V100-SXM3-32GB"
    assert model_for_name("  nvidia  H100 80GB HBM3 ") == "H100-SXM5-80GB"
    assert model_for_name("Tesla P100-SXM2-16GB") is None and model_for_name("") is None


def test_emulated_bridges() -> None:
    assert is_emulated_bridge("0x104c", "0x8232") and is_emulated_bridge("1b36", "000c")
    assert not is_emulated_bridge("0x10b5", "0x9781")  # a real PLX/Broadcom switch of the DGX-2
