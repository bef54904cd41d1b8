"""dcgm-exporter samples that carry their own time date their file, and a file older than the threshold is stale.

The Prometheus text format lets a sample end with its time, milliseconds since 1970 as an integer
(https://prometheus.io/docs/instrumenting/exposition_formats/, "timestamp"): a saved `/federate` answer, or a
collector's file of scrapes, carries it; dcgm-exporter's own /metrics does not. Before, the time was parsed and
dropped: such a file was never stale (OBS007), however old, and its XIDs were judged as if current.
The samples are the shipped dgx03 scrape's (inventories/observed/dgx-h100-pod/dgx03/dcgm-exporter.prom).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgm

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
SCRAPE = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "dcgm-exporter.prom"
# 2026-12-04 is day 20,791 since 1970-01-01 (56 years with 14 leap days: 20,454 days to 2026-01-01, + 337 to
# December 4th); 20,791 x 86,400 s + 8 h = 1,796,371,200 s: 2026-12-04T08:00:00Z, in milliseconds:
STAMP = 1796371200000


def _stamped(text: str, stamps: dict[int, int]) -> str:
    """The scrape with a time after the sample of each line number given."""
    lines = text.splitlines()
    for number, ms in stamps.items():
        lines[number - 1] = f"{lines[number - 1]} {ms}"
    return "\n".join(lines) + "\n"


def test_the_oldest_judged_sample_dates_the_file() -> None:
    # Lines 3 and 4 are XID samples (judged): the file is as old as the older of the two, 08:00.
    text = _stamped(SCRAPE.read_text(), {3: STAMP, 4: STAMP + 60_000})
    (f,) = dcgm.read(text, "dcgm.prom", "dgx03").files
    assert f.observed_at == datetime(2026, 12, 4, 8, 0, tzinfo=UTC)
    (f,) = dcgm.read(SCRAPE.read_text(), "dcgm.prom", "dgx03").files
    assert f.observed_at is None  # no time printed: judged on what it says, as before


@pytest.mark.parametrize("stamp", ["-5", "1.5e12", "99999999999999999"])
def test_a_time_that_is_no_time_is_refused_at_its_line(stamp: str) -> None:
    lines = SCRAPE.read_text().splitlines()
    lines[2] += f" {stamp}"
    with pytest.raises(TopologError, match=r"dcgm\.prom:3: "):
        dcgm.read("\n".join(lines) + "\n", "dcgm.prom", "dgx03")


def test_verify_calls_a_two_day_old_scrape_stale_and_judges_nothing_in_it(tmp_path: Path) -> None:
    # dgx03's scrape alone, every judged line stamped 2026-12-04T08:00Z, judged at 2026-12-06T09:00Z: 176,400 s
    # old, above the default observed_max_age_s of 86,400: OBS007, and GPU 0's XID 95 is not judged (no OBS004).
    text = SCRAPE.read_text()
    judged = {n: STAMP for n, line in enumerate(text.splitlines(), start=1) if line.startswith("DCGM_FI_DEV_")}
    (tmp_path / "dgx03").mkdir()
    (tmp_path / "dgx03" / "dcgm-exporter.prom").write_text(_stamped(text, judged))
    _, out, err = run_cli(
        "verify", str(POD), "--observed", str(tmp_path), "--observed-now", "2026-12-06T09:00:00Z", "--format", "json"
    )
    found = sorted(f["rule"] for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))
    assert found == ["OBS007"], err
