"""The shipped software compatibility table (verifier/sources/inventory/software.yaml) and its encodings."""

from __future__ import annotations

from importlib import resources

import pytest
import yaml

from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.software import release_number, software_table, version_number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("535.129.03", 535_129_003),
        ("535.54.03", 535_054_003),
        ("12.2", 12_002_000),
        ("6", 6_000_000),
        (" 570.26 ", 570_026_000),
        ("amdgpu 6.7.0", None),
        ("1.2.3.4", None),
        ("12.1000", None),
        ("R535", None),
        ("", None),
    ],
)
def test_release_number(text: str, number: int | None) -> None:
    assert release_number(text) == number


def test_release_number_orders_patch_levels_numerically() -> None:
    # As text "535.129.03" < "535.54.03"; as releases it is the newer one.
    newer, older = release_number("535.129.03"), release_number("535.54.03")
    assert newer is not None and older is not None
    assert newer > older


def test_every_table_cites_a_source() -> None:
    doc = yaml.safe_load(
        resources.files("verifier.sources.inventory").joinpath("software.yaml").read_text(encoding="utf-8")
    )
    for table in ("cuda_driver", "rocm_gpus", "collectives"):
        assert "http" in doc[table]["source"], table


def test_libyaml_reads_the_table_as_the_pure_parser_does() -> None:
    # software_table() reads with libyaml when PyYAML has it; the data must not depend on that.
    text = resources.files("verifier.sources.inventory").joinpath("software.yaml").read_text(encoding="utf-8")
    if not hasattr(yaml, "CSafeLoader"):
        pytest.skip("PyYAML built without libyaml")
    assert yaml.load(text, Loader=yaml.CSafeLoader) == yaml.safe_load(text)


def test_rows_as_read_from_the_table() -> None:
    rows = software_table().rows()
    cuda = {r[1]: r for r in rows["cuda_driver_minimum"]}
    assert cuda["12.2"] == (12_002, "12.2", 535_054_003, "535.54.03")
    assert cuda["12.4"] == (12_004, "12.4", 550_054_014, "550.54.14")
    assert cuda["11.8"] == (11_008, "11.8", 520_061_005, "520.61.05")
    for c, text, _d, _dt in rows["cuda_driver_minimum"]:
        assert c == version_number(str(text))  # the key joins software_version and job_stack
    drivers = [r[2] for r in sorted(rows["cuda_driver_minimum"])]
    assert drivers == sorted(drivers)  # a newer toolkit never needs an older driver
    assert ("MI300X", "gfx942", 6_000_000, "6.0") in rows["rocm_gpu_minimum"]
    assert set(rows["vendor_software"]) == {
        ("cuda", "nvidia", "toolkit"),
        ("nccl", "nvidia", "collective"),
        ("rocm", "amd", "toolkit"),
        ("rccl", "amd", "collective"),
        ("hccl", "intel", "collective"),
    }
    vendors = {m.name: m.vendor for m in builtin_models()}
    assert all(vendors.get(str(r[0]), "amd") == "amd" for r in rows["rocm_gpu_minimum"])


def test_rows_past_12_8_and_before_11_8() -> None:
    # From NVIDIA's "CUDA Toolkit and Corresponding Driver Versions" (Linux x86_64, GA rows):
    # 13.0 GA >= 580.65.06, 12.9 GA >= 575.51.03, 11.4.0 GA >= 470.42.01; 11.1 GA ">= 455.23"
    # has no patch level, so it encodes as 455 * 1,000,000 + 23 * 1,000 = 455,023,000.
    cuda = {r[1]: r for r in software_table().rows()["cuda_driver_minimum"]}
    assert cuda["13.0"] == (13_000, "13.0", 580_065_006, "580.65.06")
    assert cuda["12.9"] == (12_009, "12.9", 575_051_003, "575.51.03")
    assert cuda["11.4"] == (11_004, "11.4", 470_042_001, "470.42.01")
    assert cuda["11.1"] == (11_001, "11.1", 455_023_000, "455.23")
    assert "12.7" not in cuda  # NVIDIA released no CUDA 12.7


def test_the_13_3_row() -> None:
    # CUDA 13.3 GA >= 610.43.02 (NVIDIA's 13.3.0 installer cuda_13.3.0_610.43.02_linux.run, and the
    # 13.3 notes' driver table): 610 * 1,000,000 + 43 * 1,000 + 2 = 610,043,002; 13.3 -> 13,003.
    # 13.4 and 13.5 have no cited figure and are left out (not compared).
    cuda = {r[1]: r for r in software_table().rows()["cuda_driver_minimum"]}
    assert cuda["13.3"] == (13_003, "13.3", 610_043_002, "610.43.02")
    assert "13.4" not in cuda and "13.5" not in cuda
