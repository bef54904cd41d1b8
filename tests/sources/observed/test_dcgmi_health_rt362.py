"""R-RT3 (round 16): `dcgmi health -c` joins every NVLink incident of a GPU into one `NVLINK system` row.

NVIDIA/DCGM dcgmi/Health.cpp, HandleOneEntity + AppendSystemIncidents: a GPU's incidents of one system are printed
as one row, their messages joined with `, `, at the worst incident's health. DcgmHealthWatch::MonitorNVLink raises
DCGM_FR_NVLINK_DOWN ("GPU %u's NvLink link %d is currently down") and DCGM_FR_NVLINK_ERROR_CRITICAL ("Detected %ld
%s NvLink errors on GPU %u's NVLink (should be 0)", replay/recovery errors) at Failure, and
DCGM_FR_NVLINK_ERROR_THRESHOLD ("... which exceeds threshold of %u") as a Warning (dcgm_errors.h messages). The
reader of 1c5e8628 passed over a whole NVLINK row whose text said " down" anywhere: a replay-error Failure joined
beside a link down was dropped.
"""

from __future__ import annotations

from verifier.sources.observed import dcgmi_health


def _row(left: str, right: str) -> str:
    return f"| {left:<25} | {right:<56} |\n"


def _table(*rows: tuple[str, str]) -> str:
    # DcgmiOutputTree(28, 60): a 27- and a 58-character column between '+'.
    hline = "+" + "-" * 27 + "+" + "-" * 58 + "+\n"
    title = "| " + "Health Monitor Report".ljust(85) + "|\n"
    return hline + title + hline.replace("-", "=") + "".join(_row(a, b) for a, b in rows) + hline


# Lines: 1 hline, 2 title, 3 '=' line, 4 Overall Health, 5 GPU, then GPU 2 (6-11), GPU 3 (12-16), GPU 4 (17-22).
REPORT = _table(
    ("Overall Health", "Failure"),
    ("GPU", ""),
    ("-> 2", "Failure"),
    ("   -> Errors", ""),
    ("      -> NVLINK system", "Failure"),
    ("", "GPU 2's NvLink link 3 is currently down, Detected 12"),
    ("", "nvlink_replay_error_count_total NvLink errors on GPU"),
    ("", "2's NVLink (should be 0)"),
    ("-> 3", "Failure"),
    ("   -> Errors", ""),
    ("      -> NVLINK system", "Failure"),
    ("", "GPU 3's NvLink link 0 is currently down, GPU 3's"),
    ("", "NvLink link 1 is currently down"),
    ("-> 4", "Failure"),
    ("   -> Errors", ""),
    ("      -> NVLINK system", "Failure"),
    ("", "GPU 4's NvLink link 5 is currently down, Detected 150"),
    ("", "nvlink_crc_flit_error_count_total NvLink errors on"),
    ("", "GPU 4's NVLink which exceeds threshold of 100"),
)


def test_each_nvlink_incident_is_judged() -> None:
    # GPU 2 (row at line 8): a link down (passed over: the NVLink readers') joined with 12 replay errors, a Failure
    # (DCGM_FR_NVLINK_ERROR_CRITICAL) -> out of service, saying the replay errors only.
    # GPU 3: two links down and nothing else -> not judged here.
    # GPU 4: a link down and a CRC count over the threshold (a Warning, DCGM_FR_NVLINK_ERROR_THRESHOLD) -> not judged.
    obs = dcgmi_health.read(REPORT, "dgx02/dcgmi-health.txt", "dgx02")
    got = [(c.gpu.host, c.gpu.index, c.source.line, dict(c.labels)["reason"]) for c in obs.counters]
    assert got == [
        (
            "dgx02",
            2,
            8,
            "DCGM health check (dcgmi health) says it failed: NVLINK system Failure: Detected 12 "
            "nvlink_replay_error_count_total NvLink errors on GPU 2's NVLink (should be 0)",
        )
    ]
