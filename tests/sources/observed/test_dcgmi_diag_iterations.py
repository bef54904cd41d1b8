"""`dcgmi diag --iterations N`: every run's table (or JSON) is read; before, the whole file was refused.

Its frame is dcgmi's own (RunStartDiag in NVIDIA/DCGM dcgmi/Diag.cpp, https://github.com/NVIDIA/DCGM/blob/master/
dcgmi/Diag.cpp): a blank line and `Running iteration K of N...` before each run's output, then `Passed all N runs of
the diagnostic`, or, where a run failed (the runs stop there), `Aborting the iterative runs of the diagnostic due to
failure: ...`; with -j one document `{"iterations": [<each run's document>], "result": ...}`. The runs' tables are
the real 4.4.2 A30 sample (samples/dcgmi-diag/dcgm-4.4.2-a30-pass.txt, DCGM#124), as printed and with memory
failing on GPU0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_diag
from verifier.sources.observed.sniff import sniff

PASS_442 = Path(__file__).parent / "samples" / "dcgmi-diag" / "dcgm-4.4.2-a30-pass.txt"
PASS = PASS_442.read_text()  # 18 lines


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |\n"


FAIL = PASS.replace(
    _row("memory", "Pass") + _row("", "GPU0: Pass"),
    _row("memory", "Fail") + _row("", "GPU0: Fail") + _row("Warning", "GPU 0 had a memory error."),
)  # 19 lines: the Warning is its line 15
TWO = f"\nRunning iteration 1 of 2...\n{PASS}\nRunning iteration 2 of 2...\n{PASS}"  # lines 1-40
ABORT = "Aborting the iterative runs of the diagnostic due to failure: The diagnostic found an error\n"


def _failed(text: str) -> list[tuple[int | None, int | None, str]]:
    obs = dcgmi_diag.read(text, "diag.txt", "n1")
    return [(c.gpu.index, c.source.line, dict(c.labels)["reason"]) for c in obs.counters]


def test_three_passing_runs_fail_no_gpu() -> None:
    text = (
        "".join(f"\nRunning iteration {k} of 3...\n{PASS}" for k in (1, 2, 3)) + "Passed all 3 runs of the diagnostic\n"
    )
    assert sniff(text) == dcgmi_diag.FORMAT
    assert _failed(text) == []


def test_a_failure_in_a_later_run_is_the_gpus_at_its_line() -> None:
    # Run 1: lines 1 (blank), 2 (Running ...), 3-20 its table; run 2: 21 blank, 22 Running, 23-41 its table, whose
    # Warning is its line 15: 22 + 15 = 37.
    text = f"\nRunning iteration 1 of 3...\n{PASS}\nRunning iteration 2 of 3...\n{FAIL}{ABORT}"
    assert _failed(text) == [(0, 37, "DCGM diagnostic (dcgmi diag) failed on it: memory: GPU 0 had a memory error.")]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # Runs out of order, or a run after the last: another output pasted in.
        (f"\nRunning iteration 1 of 2...\n{PASS}\nRunning iteration 3 of 2...\n{PASS}", 22, "Running iteration 2 of 2"),
        # The file ends after run 1 of 3 with no line ending the runs: cut short.
        (f"\nRunning iteration 1 of 3...\n{PASS}", 20, "run 1 of 3 ends the file"),
        # A second table with no iteration lines is still one diagnostic too many.
        (f"{PASS}\n{PASS}", 20, "one diagnostic per file"),
        # `Passed all` with a count other than the runs shown: line 41, after run 2's table (lines 23-40).
        (f"{TWO}Passed all 3 runs of the diagnostic\n", 41, "expected 'Passed all 2 runs of the diagnostic'"),
    ],
    ids=["out of order", "cut short", "no iteration lines", "count"],
)
def test_runs_that_do_not_follow_refused_at_their_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError, match=rf"diag\.txt:{line}: .*{words}"):
        dcgmi_diag.read(text, "diag.txt", "n1")


def test_json_iterations_read_every_run() -> None:
    # Two 3.x runs (`DCGM GPU Diagnostic`, gpu_id as a string); the second's memory result fails GPU 1 with its
    # warning. The observation points at that result's "status" line: the file's second (the first is run 1's).
    def run(status: str, warnings: list[dict[str, object]]) -> dict[str, object]:
        result = {"gpu_id": "1", "status": status, "warnings": warnings}
        tests = [{"name": "GPU Memory", "results": [result]}]
        return {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": tests}]}}

    doc = {"iterations": [run("Pass", []), run("Fail", [{"warning": "bad page"}])], "result": "Fail"}
    text = json.dumps(doc, indent=1)
    assert sniff(text) == dcgmi_diag.FORMAT
    line = [n for n, t in enumerate(text.splitlines(), start=1) if '"status"' in t][1]
    assert _failed(text) == [(1, line, "DCGM diagnostic (dcgmi diag) failed on it: GPU Memory: GPU 1 bad page")]
    with pytest.raises(TopologError, match="'iterations' is not a list"):
        dcgmi_diag.read(json.dumps({"iterations": {}}), "diag.txt", "n1")
