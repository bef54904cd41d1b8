"""The nvbandwidth reader on NVIDIA's README outputs (samples/nvbandwidth/README.md) and variants."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvbandwidth
from verifier.sources.observed.model import GpuRef

SAMPLES = Path(__file__).parent / "samples" / "nvbandwidth"


def test_device_to_device_matrix_one_measurement_per_pair() -> None:
    text = (SAMPLES / "readme-8gpu-d2d-read.txt").read_text()
    obs = nvbandwidth.read(text, "nvb.txt", "dgx01")
    # 8 x 8 cells less the 0.00 diagonal: 56 GPU pairs.
    assert len(obs.bandwidth) == 56
    first = obs.bandwidth[0]
    # Row 0, column 1: 264.36 GB/s = 264,360 MB/s, both algbw and busbw; line 4 is row 0.
    assert (first.gpus, first.busbw_mbps, first.algbw_mbps, first.source.line) == (
        (GpuRef("dgx01", index=0), GpuRef("dgx01", index=1)),
        Fraction(264360),
        Fraction(264360),
        4,
    )
    assert (first.operation, first.tool, first.hosts, first.size_bytes, first.in_place) == (
        "device_to_device_memcpy_read_ce",
        "nvbandwidth",
        ("dgx01",),
        0,
        None,
    )
    # The lowest cell: row 0, column 5, 263.05 GB/s (the next lowest is row 6, column 2: 263.30).
    low = min(obs.bandwidth, key=lambda m: m.busbw_mbps)
    assert ([g.index for g in low.gpus], low.busbw_mbps) == ([0, 5], Fraction(263050))
    assert obs.hosts == ()


def test_host_to_device_names_the_gpu_column() -> None:
    obs = nvbandwidth.read((SAMPLES / "readme-2gpu-h2d.txt").read_text(), "nvb.txt", "ws")
    assert [(m.gpus, m.busbw_mbps) for m in obs.bandwidth] == [
        ((GpuRef("ws", index=0),), Fraction(6200)),
        ((GpuRef("ws", index=1),), Fraction(12360)),
    ]


def test_na_cells_waived_cases_and_printed_bus_ids() -> None:
    text = """\
Device 0: NVIDIA H100 80GB HBM3 (00000000:1b:00)
Device 1: NVIDIA H100 80GB HBM3 (00000000:43:00)

Running device_to_device_memcpy_write_ce.
memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)
           0         1
 0       N/A    339.87
 1    340.55       N/A

SUM device_to_device_memcpy_write_ce 680.42
Running device_to_device_memcpy_read_sm.
WAIVED device_to_device_memcpy_read_sm
"""
    obs = nvbandwidth.read(text, "nvb.txt", "h")
    assert [tuple(g.pci_bus_id for g in m.gpus) for m in obs.bandwidth] == [
        ("0000:1b:00.0", "0000:43:00.0"),
        ("0000:43:00.0", "0000:1b:00.0"),
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "nvb.txt:1: no 'Running <testcase>.' line"),
        (
            "Running x_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n   0   1\n0  N/A\n",
            "nvb.txt:4: 1 values under 2 columns in x_ce; the file looks truncated",
        ),
        (
            "Running x_ce.\nmemcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)\n   0   1\n0  N/A  lots\n",
            "nvb.txt:4: 'lots' in x_ce is not a bandwidth",
        ),
    ],
)
def test_bad_input_is_refused(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        nvbandwidth.read(text, "nvb.txt", "h")
    assert str(err.value).startswith(message)


def test_no_host_is_refused() -> None:
    with pytest.raises(TopologError, match="names no host"):
        nvbandwidth.read((SAMPLES / "readme-2gpu-h2d.txt").read_text(), "nvb.txt", None)
