"""What the report-format tests share: the pinned runs and ways to get their reports."""

from __future__ import annotations

import functools
import os
from datetime import date
from pathlib import Path

from cli_helpers import run_cli

from verifier.checks.verify import VerifyReport
from verifier.session.verify_run import SideFileFlags, VerifyRun, verify

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
HERE = Path(__file__).resolve().parent
STRAY = "tests/golden/stray-devices.yaml"
WAIVERS = "tests/golden/waivers.yaml"
# Pinned rules and date: adding a check elsewhere, or the calendar, must not change these goldens.
PINNED_RULES = ("--no-shipped-rules", "--rules", "rules/schema.dl", "--rules", "rules/topology")
WAIVED_RUN = ("verify", STRAY, *PINNED_RULES, "--waivers", WAIVERS, "--today", "2025-06-01")
# Real inventories: one with findings of several checks (several on one template line), one with none.
FLEET_RUN = ("verify", "inventories/mixed-fleet.yaml")
CLEAN_RUN = ("verify", "inventories/edge-soc.yaml")
# 12 BW002 warnings, one per GPU line, and nothing else (see the file's comment).
MANY_RUN = ("verify", "tests/reports/many-warnings.yaml")


def report_of(*args: str, fmt: str) -> str:
    """stdout of `topolog ARGS --format FMT`, which must exit 0 or 1 (never 2, never a crash).

    Runs are remembered per folder and arguments: reports are deterministic, and the machine
    is small. Tests that change an input file give it a fresh path (tmp_path), so never get
    a stale report.
    """
    return _report(os.getcwd(), args, fmt)


@functools.lru_cache(maxsize=64)
def _report(cwd: str, args: tuple[str, ...], fmt: str) -> str:
    assert os.getcwd() == cwd
    code, out, err = run_cli(*args, "--format", fmt)
    assert code in (0, 1), err
    return out


def waived_report(with_proofs: bool = False) -> VerifyReport:
    """WAIVED_RUN through the Python API, for renderers given more than the CLI passes them."""
    run = VerifyRun(
        rules=[Path("rules/schema.dl"), Path("rules/topology")],
        flags=SideFileFlags(waivers=Path(WAIVERS)),
        today=date(2025, 6, 1),
        with_proofs=with_proofs,
    )
    return verify([Path(STRAY)], run)
