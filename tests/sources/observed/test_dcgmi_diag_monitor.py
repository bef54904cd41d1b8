"""`dcgmi diag` table: a failure whose every message DCGM ranks monitor or config takes no GPU out of service.

The table prints no severity; -j prints it (`error_severity`) and was already read so. DCGM's messages for those
failures are fixed words (NVIDIA/DCGM dcgmlib/dcgm_errors.h, severities in dcgmlib/src/dcgm_errors.c), e.g.
DCGM_FR_CUDA_API "Error using CUDA API %s" (monitor), DCGM_FR_PCIE_WIDTH "GPU %u is running at PCI link width %dX,
which is below the minimum allowed ..." (config). Before, each made an OBS004 "out of service".
The table is the real 4.4.2 A30 sample (samples/dcgmi-diag/, DCGM#124) with its memory test failing on GPU0.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.sources.observed import dcgmi_diag

PASS_442 = (Path(__file__).parent / "samples" / "dcgmi-diag" / "dcgm-4.4.2-a30-pass.txt").read_text()


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |\n"


def _memory_fails(*messages: str) -> str:
    rows = _row("memory", "Fail") + _row("", "GPU0: Fail")
    for words in messages:
        cut = [words[k : k + 45] for k in range(0, len(words), 45)]  # dcgmi cuts a message every 45 characters
        rows += _row("Warning", cut[0]) + "".join(_row("", piece) for piece in cut[1:])
    return PASS_442.replace(_row("memory", "Pass") + _row("", "GPU0: Pass"), rows)


def _failed(text: str) -> list[int | None]:
    return [c.gpu.index for c in dcgmi_diag.read(text, "diag.txt", "n1").counters]


@pytest.mark.parametrize(
    "words",
    [
        "GPU 0 Error using CUDA API cudaMalloc Check DCGM and system logs for errors. Reset GPU. Restart DCGM.",
        "Cannot reliably read the power usage for GPU 0.",
        "Detected clock throttling due to thermal violation in GPU 0.",
        "Temperature 91 of GPU 0 exceeded user-specified maximum allowed temperature 90",
        "More than 10 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 12",
        "GPU 0 is running at PCI link width 8X, which is below the minimum allowed link generation of 16 "
        "(parameter 'min_pci_width')",
        "Skipping test memory because ECC is not enabled on GPU 0",
        # DCGM 4.x's words for the same codes (DCGM_FR_CLOCKS_EVENT_THERMAL / _POWER, the HBM form of
        # DCGM_FR_TEMP_VIOLATION, DCGM_FR_CLOCKS_EVENT_VIOLATION: NVIDIA/DCGM's message tests); each was OBS004 before.
        "Detected clocks event due to thermal violation in GPU 0.",
        "Detected clocks event due to power violation in GPU 0.",
        "Temperature 96 of HBM Memory on GPU 0 exceeded user-specified maximum allowed temperature 95",
        "Clocks event for GPU 0 because of event starting 12.5 seconds into the test. HW Slowdown",
    ],
)
def test_a_monitor_or_config_message_alone_fails_no_gpu(words: str) -> None:
    assert _failed(_memory_fails(words)) == []


def test_a_fault_message_beside_it_still_does() -> None:
    # DCGM_FR_FAULTY_MEMORY "Found %d faulty memory elements on GPU %u" is ranked isolate.
    text = _memory_fails("Cannot reliably read the power usage for GPU 0.", "Found 3 faulty memory elements on GPU 0")
    assert _failed(text) == [0]
