"""Review of the nvidia-smi -q text reader (round 58, R-QT): numbers beyond what NVML can hold are
refused at their own line, never an internal error nor a fact-loader error that names no line."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text

H100 = Path(__file__).parent / "samples" / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"


def _first(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# Line numbers by hand from the real sample: the first GPU block's "Uncorrectable Error" (Remapped Rows)
# is line 163, its first "DRAM Uncorrectable" (ECC Volatile) line 143, its PCIe Generation "Current"
# line 76, its Link Width "Current" line 82, its Utilization "Gpu" line 120.
@pytest.mark.parametrize(
    ("old", "new", "line", "expected"),
    [
        # 5000 digits: int() refuses more than 4300 (Python's limit), which was an internal error.
        (
            "        Uncorrectable Error               : 0",
            "        Uncorrectable Error               : " + "9" * 5000,
            163,
            "at most 18446744073709551615",
        ),
        # 2**64: one more than NVML's 64-bit counter can hold.
        (
            "            DRAM Uncorrectable            : 0",
            "            DRAM Uncorrectable            : 18446744073709551616",
            143,
            "at most 18446744073709551615",
        ),
        # A generation or a width beyond 32 bits reached the fact loader, whose error named no file line.
        (
            "                Current                   : 5",
            "                Current                   : " + "9" * 30,
            76,
            "at most 4294967295",
        ),
        (
            "                Current                   : 16x",
            "                Current                   : " + "9" * 30 + "x",
            82,
            "at most 4294967295",
        ),
        # A utilisation is a share of the sampling period: 101 % cannot be.
        (
            "        Gpu                               : 0 %",
            "        Gpu                               : 101 %",
            120,
            "at most 100",
        ),
    ],
    ids=["count-5000-digits", "count-2**64", "generation-30-digits", "width-30-digits", "utilization-101"],
)
def test_a_number_beyond_what_nvml_holds_is_refused_at_its_line(old: str, new: str, line: int, expected: str) -> None:
    text = _first(H100.read_text(), old, new)
    with pytest.raises(TopologError) as err:
        nvidia_smi_text.read(text, "q.txt", "node1")
    message = str(err.value)
    assert message.startswith(f"q.txt:{line}: ") and expected in message
    assert len(message) < 300  # the 5000 digits are not all echoed back


def test_the_largest_values_nvml_holds_are_read_exactly() -> None:
    # 2**64 - 1 is what a 64-bit counter can show; 100 % a fully busy GPU; both read as printed.
    text = _first(
        H100.read_text(),
        "        Uncorrectable Error               : 0",
        "        Uncorrectable Error               : 18446744073709551615",
    )
    text = _first(
        text, "        Gpu                               : 0 %", "        Gpu                               : 100 %"
    )
    g0 = nvidia_smi_text.read(text, "q.txt", "node1").gpus[0]
    assert (g0.remapped_rows_uncorrectable, g0.utilization_percent) == (2**64 - 1, 100)


def test_a_file_cut_before_its_gpu_count_is_refused_not_a_listing_of_none() -> None:
    # The real sample's first 6 lines (blank, banner, blank, Timestamp, Driver Version, CUDA Version):
    # cut before line 8's "Attached GPUs : 8", as a collection killed or timed out leaves it. It was
    # read as a listing of no GPU, every GPU its node declares OBS006 missing; refused at its last line.
    head = "".join(H100.read_text().splitlines(keepends=True)[:6])
    with pytest.raises(TopologError, match=r"^q\.txt:6: the file ends with no 'Attached GPUs' line and no GPU"):
        nvidia_smi_text.read(head, "q.txt", "node1")
    # An empty file (read as this format by --observed-format): refused at line 1.
    with pytest.raises(TopologError, match=r"^q\.txt:1: "):
        nvidia_smi_text.read("", "q.txt", "node1")
    # With its count, the header alone lists none of 8: a selection of nothing, no listing (partial).
    with_count = "".join(H100.read_text().splitlines(keepends=True)[:8])
    obs = nvidia_smi_text.read(with_count, "q.txt", "node1")
    assert (obs.gpus, obs.files[0].partial) == ((), True)
