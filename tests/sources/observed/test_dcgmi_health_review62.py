"""Review R-OB (round 16): `dcgmi health -c` from an older dcgmi, which the reader of 1c5e8628 passed over.

NVIDIA/DCGM's dcgmi/Health.cpp at commit 28bfbd4c (Health::CheckWatches, before HandleOneEntity) keys each entity by
`to_string(entityHealth)`, its first incident's health code (DCGM_HEALTH_RESULT_FAIL = 20), not by its id, and adds a
system under `-> Errors` only while the next incident is of the same entity: a GPU with one incident prints as
`-> 20 | Failure` with an empty `-> Errors`. The reader judged only systems at Failure, so such a report (one GPU
failed) read as no fault at all. A GPU at Failure with no system at Failure cannot come from current dcgmi (an
entity's health is the worst of its systems'): refused at its line.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_health


def _row(left: str, right: str) -> str:
    return f"| {left:<25} | {right:<56} |\n"


def _table(*rows: tuple[str, str]) -> str:
    # DcgmiOutputTree(28, 60): a 27- and a 58-character column between '+'.
    hline = "+" + "-" * 27 + "+" + "-" * 58 + "+\n"
    title = "| " + "Health Monitor Report".ljust(85) + "|\n"
    return hline + title + hline.replace("-", "=") + "".join(_row(a, b) for a, b in rows) + hline


def test_gpu_at_failure_naming_no_system_is_refused() -> None:
    # Lines: 1 hline, 2 title, 3 '=' line, 4 Overall Health, 5 GPU, 6 '-> 20 | Failure', 7 '-> Errors'.
    text = _table(("Overall Health", "Failure"), ("GPU", ""), ("-> 20", "Failure"), ("   -> Errors", ""))
    with pytest.raises(TopologError) as err:
        dcgmi_health.read(text, "h.txt", "n1")
    (diag,) = err.value.diagnostics
    assert diag.location.line == 6
    assert "GPU 20 is at Failure but no system of it is" in diag.message


def test_gpu_at_failure_with_its_failed_system_still_read() -> None:
    # Control: GPU 1 at Failure with its Memory system at Failure (line 8) -> one out-of-service counter for GPU 1;
    # GPU 2 at Failure for its Thermal system only (a condition, line 11): named, not refused, not out of service.
    text = _table(
        ("Overall Health", "Failure"),
        ("GPU", ""),
        ("-> 1", "Failure"),
        ("   -> Errors", ""),
        ("      -> Memory system", "Failure"),
        ("-> 2", "Failure"),
        ("   -> Errors", ""),
        ("      -> Thermal system", "Failure"),
    )
    (c,) = dcgmi_health.read(text, "h.txt", "n1").counters
    assert (c.gpu.index, c.source.line) == (1, 8)
