"""R-RT3 (round 16): `nvidia-smi --query-retired-pages` and `--query-supported-clocks` CSVs.

Both print the `--query-gpu` identity fields (gpu_uuid, gpu_bus_id, gpu_serial), so the reader of 9895ddd5 took them
for --query-gpu rows carrying identity only: a retired-pages file's pages were dropped (one GPU kept, no count).
Field sets as real collectors ask for them:
- sosreport's nvidia plugin (sosreport/sos, sos/report/plugins/nvidia.py):
  `--query-retired-pages=timestamp,gpu_bus_id,gpu_serial,gpu_uuid,retired_pages.address,retired_pages.cause`;
- without identity (an A100 fault write-up's capture, `retired_pages.address, retired_pages.cause` then
  `[N/A], Single Bit ECC` / `[N/A], Double Bit ECC`).
Values as nvidia-smi prints them: bus id `00000000:1B:00.0`, addresses `0x...`, causes `Single Bit ECC` and
`Double Bit ECC` (nvidia-smi's words for NVML's two page retirement causes).
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_query
from verifier.sources.observed.sniff import sniff

HEADER = "timestamp, gpu_bus_id, gpu_serial, gpu_uuid, retired_pages.address, retired_pages.cause\n"
A = "00000000:1B:00.0, 1652222014738, GPU-4a2e0e9f-2a0b-4c4e-8b55-1a7ad2c1e3f0"
B = "00000000:43:00.0, 1652222014801, GPU-9d5c7b31-6e0f-4a4b-9e07-0c2f3b8d6a11"
PAGES = (
    HEADER
    + f"2024/01/16 14:44:16.977, {A}, 0x000000000001b7e5, Single Bit ECC\n"
    + f"2024/01/16 14:44:16.977, {A}, 0x00000000000372c0, Double Bit ECC\n"
    + f"2024/01/16 14:44:16.977, {B}, [N/A], Double Bit ECC\n"
)


def test_retired_pages_counted_per_gpu() -> None:
    # GPU A (bus 1B) has two pages listed (lines 2-3), GPU B (bus 43) one (line 4, address unreadable: a page of its
    # own). No index is printed: each GPU is named by uuid, bus id and serial, and the file is no listing. Bus ids are
    # kept in the project's one form (4-digit domain, lower case: 00000000:1B:00.0 -> 0000:1b:00.0).
    assert sniff(PAGES) == nvidia_smi_query.FORMAT
    obs = nvidia_smi_query.read(PAGES, "dgx02/pages.csv", "dgx02")
    got = [(g.pci_bus_id, g.uuid, g.index, g.retired_pages, g.source.line) for g in obs.gpus]
    assert got == [
        ("0000:1b:00.0", "GPU-4a2e0e9f-2a0b-4c4e-8b55-1a7ad2c1e3f0", None, 2, 2),
        ("0000:43:00.0", "GPU-9d5c7b31-6e0f-4a4b-9e07-0c2f3b8d6a11", None, 1, 4),
    ]
    (file,) = obs.files
    assert file.format == nvidia_smi_query.RETIRED_PAGES


def test_loop_log_counts_the_last_sample() -> None:
    # `-l 5`: GPU A's two pages at 14:44:16, then at 14:44:21 the same two and a third (0x...4a10): its last sample
    # lists 3 pages (not 2 + 3 = 5 rows).
    later = "2024/01/16 14:44:21.001"
    text = (
        HEADER
        + f"2024/01/16 14:44:16.977, {A}, 0x000000000001b7e5, Single Bit ECC\n"
        + f"2024/01/16 14:44:16.977, {A}, 0x00000000000372c0, Double Bit ECC\n"
        + f"{later}, {A}, 0x000000000001b7e5, Single Bit ECC\n"
        + f"{later}, {A}, 0x00000000000372c0, Double Bit ECC\n"
        + f"{later}, {A}, 0x0000000000004a10, Single Bit ECC\n"
    )
    (gpu,) = nvidia_smi_query.read(text, "dgx02/pages.csv", "dgx02").gpus
    assert gpu.retired_pages == 3


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # --query-supported-clocks=gpu_uuid,memory,graphics: no state to judge (line 1, the header).
        (
            f"gpu_uuid, memory [MHz], graphics [MHz]\n{A.rsplit(', ', 1)[1]}, 1593 MHz, 1410 MHz\n",
            1,
            "--query-supported-clocks",
        ),
        # The A100 write-up's capture: pages tied to no GPU (line 1).
        ("retired_pages.address, retired_pages.cause\n[N/A], Single Bit ECC\n", 1, "add gpu_uuid"),
        # A cause nvidia-smi does not print (line 2).
        (HEADER + f"2024/01/16 14:44:16.977, {A}, 0x01, Triple Bit ECC\n", 2, "Double Bit ECC"),
    ],
)
def test_refused_saying_what_to_use(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        nvidia_smi_query.read(text, "dgx02/q.csv", "dgx02")
    (diag,) = err.value.diagnostics
    assert diag.location.line == line
    assert words in diag.message
