"""OB63: a GPU with 63 or more retired memory pages is out of service (OBS004), as DCGM's health watch judges it.

NVIDIA/DCGM modules/health/DcgmHealthWatch.cpp (MonitorMem) fails a GPU's memory when its retired pages, single and
double bit together, reach DCGM_LIMIT_MAX_RETIRED_PAGES, 63 ("updated to match the field diag": the field
diagnostic's RMA criterion). Before, the count was read and stored (observed_count retired_pages) but judged by no
rule. The `Retired Pages` section is the real `nvidia-smi -q` layout of samples/nvidia-smi-q/rtx4090-8gpu-535-first1.txt
(leptonai/gpud test data, cited in that folder's README), its three N/A values replaced by counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

SAMPLE = Path(__file__).parent / "samples" / "nvidia-smi-q" / "rtx4090-8gpu-535-first1.txt"


def _verify(tmp_path: Path, single: str, double: str, pending: str = "No") -> list[tuple[str, list[str]]]:
    # n1 declares one RTX 4090 tied by the sample's bus id (00000000:01:00.0); the sample says Attached GPUs 8 with
    # one block shown, so the node declares 8 and the other 7 (buses 0x02-0x08) are a selection's (OBS009 only).
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i in range(8):
        bus = f"00000000:{i + 1:02X}:00.0"
        lines.append(f"      - {{name: gpu{i}, kind: gpu, model: RTX-4090, labels: {{pci_bus_id: '{bus}'}}}}")
    (tmp_path / "inv.yaml").write_text("\n".join(lines) + "\n")
    text = SAMPLE.read_text()
    for name, value in (("Single Bit ECC", single), ("Double Bit ECC", double), ("Pending Page Blacklist", pending)):
        old = f"        {name:<34}: N/A\n"
        assert text.count(old) == 1, name
        text = text.replace(old, f"        {name:<34}: {value}\n")
    (tmp_path / "obs" / "n1").mkdir(parents=True)
    (tmp_path / "obs" / "n1" / "nvidia-smi-q.txt").write_text(text)
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2024-07-18T09:30:00Z",
    )  # fmt: skip
    assert code in (0, 1), err
    return sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"] == "OBS004")


@pytest.mark.parametrize(
    ("single", "double", "expected"),
    [
        ("40", "23", [("OBS004", ["n1/gpu0"])]),  # 40 + 23 = 63: DCGM's limit reached
        ("40", "22", []),  # 62: below it
        ("N/A", "63", [("OBS004", ["n1/gpu0"])]),  # one count unknown, the other alone reaches it
        ("N/A", "N/A", []),  # nothing known: nothing judged
    ],
)
def test_retired_pages_at_dcgms_limit_take_the_gpu_out_of_service(
    tmp_path: Path, single: str, double: str, expected: list[tuple[str, list[str]]]
) -> None:
    assert _verify(tmp_path, single, double) == expected


def test_a_pending_retirement_beside_the_count_is_its_own_reason(tmp_path: Path) -> None:
    # 63 pages and one pending: OBS004 says each reason of gpu0 (one finding per reason, as for any two of them).
    assert _verify(tmp_path, "40", "23", pending="Yes") == [("OBS004", ["n1/gpu0"]), ("OBS004", ["n1/gpu0"])]


def _exporter(tmp_path: Path, samples: dict[str, int]) -> list[tuple[str, list[str]]]:
    # dcgm-exporter's retired-page counters (named and described as in its default-counters.csv, "Total number of
    # retired pages due to single-bit errors." etc.), labels as inventories/observed/dgx-h100-pod/dgx03's scrape,
    # for GPU 0 of n1 (one V100 declared by its UUID).
    uuid = "GPU-6f1c0a2e-4d3b-8c01-9e0f-2b7a5c0d8e31"
    (tmp_path / "inv.yaml").write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        f"      - {{name: gpu0, kind: gpu, model: V100-SXM3-32GB, labels: {{uuid: '{uuid}'}}}}\n"
    )
    labels = f'gpu="0",UUID="{uuid}",pci_bus_id="00000000:18:00.0",device="nvidia0",Hostname="n1"'
    lines = []
    for name, value in samples.items():
        lines += [f"# TYPE {name} counter", f"{name}{{{labels}}} {value}"]
    (tmp_path / "obs" / "n1").mkdir(parents=True)
    (tmp_path / "obs" / "n1" / "dcgm-exporter.prom").write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json"
    )
    assert code in (0, 1), err
    return sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"] == "OBS004")


@pytest.mark.parametrize(
    ("samples", "expected"),
    [
        ({"DCGM_FI_DEV_RETIRED_SBE": 40, "DCGM_FI_DEV_RETIRED_DBE": 23}, [("OBS004", ["n1/gpu0"])]),  # 63
        ({"DCGM_FI_DEV_RETIRED_SBE": 40, "DCGM_FI_DEV_RETIRED_DBE": 22}, []),  # 62
        ({"DCGM_FI_DEV_RETIRED_DBE": 63}, [("OBS004", ["n1/gpu0"])]),  # DBE alone reaches it
        ({"DCGM_FI_DEV_RETIRED_PENDING": 1}, [("OBS004", ["n1/gpu0"])]),  # a page pending: needs a reset
        ({"DCGM_FI_DEV_RETIRED_PENDING": 0, "DCGM_FI_DEV_RETIRED_DBE": 2}, []),
    ],
)
def test_dcgm_exporters_retired_page_counters_are_judged_alike(
    tmp_path: Path, samples: dict[str, int], expected: list[tuple[str, list[str]]]
) -> None:
    assert _exporter(tmp_path, samples) == expected
