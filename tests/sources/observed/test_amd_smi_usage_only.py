"""`amd-smi metric -u --json` (usage alone) is amd-smi's JSON and is read, not refused as another tool's.

Real output: a Radeon Pro W7700's `amd-smi metric -u --json` pasted in henrygd/beszel issue 737
(https://github.com/henrygd/beszel/issues/737): one object `{"gpu": 0, "usage": {...}}` with gfx_activity 42 %,
umc_activity 1 %, mm_activity 0 %, a vcn_activity list of one value and three "N/A", and a jpeg_activity list of
"N/A" (the paste shows more of them than are written here). Before, its marker keys were only those of the other
sections (bus, asic, pcie, ecc, ...): the file was "not a format topolog reads observations from" (exit 2).
"""

from __future__ import annotations

import json

from verifier.sources.observed import amd_smi
from verifier.sources.observed.sniff import sniff

USAGE_ONLY = json.dumps(
    [
        {
            "gpu": 0,
            "usage": {
                "gfx_activity": {"value": 42, "unit": "%"},
                "umc_activity": {"value": 1, "unit": "%"},
                "mm_activity": {"value": 0, "unit": "%"},
                "vcn_activity": [{"value": 0, "unit": "%"}, "N/A", "N/A", "N/A"],
                "jpeg_activity": ["N/A"] * 8,
            },
        }
    ],
    indent=4,
)


def test_usage_alone_is_amd_smi_and_read() -> None:
    # One GPU, index 0 (`"gpu": 0`), busy 42 % (gfx_activity); nothing else is stated, so nothing else is known.
    assert sniff(USAGE_ONLY) == "amd-smi"
    (gpu,) = amd_smi.read(USAGE_ONLY, "metric.json", "w7700").gpus
    assert (gpu.index, gpu.utilization_percent, gpu.pci_bus_id, gpu.pcie_width_current) == (0, 42, None, None)


def test_other_json_with_a_gpu_number_is_still_not_amd_smi() -> None:
    # `"gpu": 0` alone, with keys no amd-smi section has: not recognised (another tool's JSON).
    assert sniff(json.dumps([{"gpu": 0, "temperature_c": 41}])) is None
