"""Review R-RT2 (round 14) of the `dcgmi diag` reader (9dae1d8): a 4.x warning read as a failure, JSON shapes that
crashed, rows whose reading took time quadratic in their length, GPU ids in other digits.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_diag

PASS_442 = Path(__file__).parent / "samples" / "dcgmi-diag" / "dcgm-4.4.2-a30-pass.txt"


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |\n"


def _442(memory_rows: str) -> str:
    text = PASS_442.read_text()
    old = _row("memory", "Pass") + _row("", "GPU0: Pass")
    assert text.count(old) == 1
    return text.replace(old, memory_rows)


def _failed(text: str) -> list[tuple[int | None, int | None]]:
    return [(c.gpu.index, c.source.line) for c in dcgmi_diag.read(text, "diag.txt", "n1").counters]


def test_4x_warn_printed_as_gpu_fail_is_no_failure() -> None:
    # dcgmi 4.x (dcgmi/Diag.cpp, HelperDisplayEntityResults) prints an entity's result with HelperDisplayDiagResult's
    # default, which shows Warn as "Fail"; only the test's own row (HelperDisplayGlobalResult) shows "Warn". So a
    # GPU that only warned reads `memory | Warn`, `GPU0: Fail`, `Warning: GPU0 | ...`: no failure.
    warned = (
        _row("memory", "Warn")
        + _row("", "GPU0: Fail")
        + _row("Warning: GPU0", "Found 3 faulty memory elements on GPU 0")
    )
    assert _failed(_442(warned)) == []
    # The same rows under a test whose own row says Fail are GPU 0's failure: Hardware header at line 12, memory
    # at 13, GPU0 at 14, its Warning at 15 (the observation's line).
    failed = warned.replace(_row("memory", "Warn"), _row("memory", "Fail"))
    assert _failed(_442(failed)) == [(0, 15)]


@pytest.mark.parametrize("categories", ["5", "true", '"Hardware"', '{"category": "Hardware"}'])
def test_json_test_categories_not_a_list_is_refused_at_its_file(categories: str) -> None:
    # An int or true was iterated: TypeError, 'internal error' without a file or line.
    text = '{"DCGM GPU Diagnostic": {"test_categories": ' + categories + "}}"
    with pytest.raises(TopologError, match=r"^diag\.txt:1: 'test_categories' is not a list"):
        dcgmi_diag.read(text, "diag.txt", "n1")


def test_long_rows_of_spaces_are_refused_at_their_line() -> None:
    # A category-header-like row `|- x<spaces>-` and a GPU result `GPU0: x<spaces>y`, 60,000 spaces each: both
    # are refused at their line (the header at 5, the result row at 6). The patterns before took time quadratic in
    # the spaces (40,000: 26 s and 13 s).
    head = PASS_442.read_text().split("|-----  Metadata", 1)[0]
    assert head.count("\n") == 4
    for row, line in (
        ("|- x" + " " * 60_000 + "-\n", 5),
        ("| memory" + " " * 19 + "| GPU0: x" + " " * 60_000 + "y |\n", 6),
    ):
        text = head + "+-----  Hardware  ----------+------------------------------------------------+\n" * (line - 5)
        with pytest.raises(TopologError, match=rf"^diag\.txt:{line}: "):
            dcgmi_diag.read(text + row + "+---------------------------+---+\n", "diag.txt", "n1")


def test_gpu_ids_only_in_ascii_whole_numbers() -> None:
    # "٣" (ARABIC-INDIC DIGIT THREE) was read as GPU 3, in the table and in JSON; a negative id was kept as -1.
    with pytest.raises(TopologError, match=r"^diag\.txt:13: diagnostic result 'Fail - GPU: ٣'"):
        dcgmi_diag.read(_442(_row("memory", "Fail - GPU: ٣")), "diag.txt", "n1")
    for gpu in ("٣", -1):
        result = {"gpu_id": gpu, "status": "Fail", "warnings": [{"warning": "bad page"}]}
        doc = {
            "DCGM GPU Diagnostic": {
                "test_categories": [{"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [result]}]}]
            }
        }
        with pytest.raises(TopologError, match=r"GPU id .*; expected a whole number"):
            dcgmi_diag.read(json.dumps(doc), "diag.txt", "n1")


@pytest.mark.parametrize(
    "message",
    [
        # DCGM_FR_THERMAL_VIOLATIONS_TS, as DCGM#242 quotes it (a 0.0 s violation failed the test).
        "GPU 0 Thermal violations totaling 0.0 seconds started at 30.0 seconds into the test",
        # DCGM_FR_THROTTLING_VIOLATION, DCGM_FR_TARGET_POWER, DCGM_FR_MEMORY_ALLOC (format strings in dcgm_errors.h).
        "Clocks are being throttled for GPU 0 because of clock throttling starting 2.0 seconds into the test. "
        "HW Power Brake",
        "Max power of 180.0 did not reach desired power minimum target_power of 240.0 for GPU 0",
        "Couldn't allocate at least 50.0% of GPU memory on GPU 0",
    ],
)
def test_conditions_a_gpu_ran_under_are_no_fault_of_it(message: str) -> None:
    # DCGM ranks each DCGM_ERROR_MONITOR ("can perform workload", dcgm_errors.c): a failed targeted_stress whose
    # only message is one of these takes no GPU out of service. Beside it, a message of a fault (DCGM_FR_FAULTY_MEMORY,
    # DCGM_ERROR_ISOLATE) under memory still does: Hardware header at 12, memory 13, GPU0 14, its Warning 15.
    stress = "+-----  Stress  ------------+------------------------------------------------+\n"
    rows = _row("memory", "Pass") + _row("", "GPU0: Pass") + stress + _row("targeted_stress", "Fail")
    rows += _row("", "GPU0: Fail") + "".join(
        _row("Warning: GPU0" if i == 0 else "", message[i : i + 45]) for i in range(0, len(message), 45)
    )
    assert _failed(_442(rows)) == []
    faulty = (
        _row("memory", "Fail")
        + _row("", "GPU0: Fail")
        + _row("Warning: GPU0", "Found 3 faulty memory elements on GPU 0")
    )
    assert _failed(_442(faulty + rows[len(_row("memory", "Pass") + _row("", "GPU0: Pass")) :])) == [(0, 15)]


def test_a_gpu_list_dcgmi_cut_at_its_column() -> None:
    # dcgmi cuts a value wider than its 46-character column to 43 characters and '...' (ReplaceTag in
    # dcgmi/CommandOutputController.cpp): sixteen GPUs of which GPU 15 fails print `Pass - GPUs: 0, 1, ..., 14   `
    # ("Pass - GPUs: " 13, "0, " .. "9, " 30, "10, 11, 12, 13, 14" 18, three spaces: 64 > 46) as its first 43
    # characters "Pass - GPUs: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, " and "...". Before, the whole file was refused there.
    passed = "Pass - GPUs: " + ", ".join(str(i) for i in range(15)) + "   "
    shown = passed[:43] + "..."
    assert shown == "Pass - GPUs: 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, ..."
    hardware = "+-----  Hardware  ----------+------------------------------------------------+\n"
    head = PASS_442.read_text().split(hardware, 1)[0] + hardware
    # Hardware at line 12: GPU Memory at 13, its Fail row at 14, GPU 15's Warning at 15 (the observation's line).
    rows = _row("GPU Memory", shown) + _row("", "Fail - GPU: 15") + _row("Warning", "GPU 15 Found 3 faulty memory")
    footer = "+---------------------------+------------------------------------------------+\n"
    assert _failed(head + rows + footer) == [(15, 15)]
    # A cut list of failed GPUs does not say which failed: refused at its line.
    failed = _row("GPU Memory", "Pass - GPU: 15") + _row("", shown.replace("Pass", "Fail"))
    with pytest.raises(TopologError, match=r"^diag\.txt:14: the list of failed GPUs is cut short"):
        dcgmi_diag.read(head + failed + footer, "diag.txt", "n1")


def test_a_4x_gpu_result_after_a_message_of_whole_rows_is_that_gpus() -> None:
    # GPU 0's message is 90 characters: two full rows of 45 (lines 15-16); the next row `GPU1: Fail` (line 17) is
    # GPU 1's own result, then its Warning (line 18). Before, that row was joined to GPU 0's message as its third
    # piece and GPU 1's failure was lost.
    message = "Found 3 faulty memory elements on GPU 0 at 0x7f3a0000,0x7f3a0040,0x7f3a0080,0x7f3a00c0,0x7f3a0"
    message = message[:90]
    assert len(message) == 90 and message[44] != " " and message[89] != " "
    rows = _row("memory", "Fail") + _row("", "GPU0: Fail") + _row("Warning: GPU0", message[:45])
    rows += _row("", message[45:]) + _row("", "GPU1: Fail") + _row("Warning: GPU1", "Found 2 faulty memory elements")
    assert _failed(_442(rows)) == [(0, 15), (1, 18)]
