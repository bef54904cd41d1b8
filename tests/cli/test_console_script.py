"""The console script (verifier.cli.entry) ends the process itself once the command returns:
its exit code and every byte the command wrote must be what the command meant.

Each case runs the entry point in a fresh interpreter, as the installed `topolog` does.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
MIXED = "inventories/mixed-fleet.yaml"


def _console(*args: str) -> subprocess.CompletedProcess[str]:
    code = "import sys\nfrom verifier.cli.entry import run\nsys.argv[0] = 'topolog'\nrun()\n"
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300
    )


def test_findings_exit_1_with_the_whole_report_written() -> None:
    # mixed-fleet.yaml's BW003 is a warning (its NICs' one cabled 100 Gb/s port, 12,500 MB/s, is
    # over their PCIe Gen4 x4 links' 7,876 MB/s): with --fail-on warning it fails the run. The JSON report
    # (over 100 kB, more than one pipe buffer) must arrive whole before the process ends.
    done = _console("verify", MIXED, "--fail-on", "warning", "--format", "json")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert "BW003" in {f["rule"] for f in report["findings"]}


def test_a_passing_run_exits_0_and_its_summary_line_is_flushed() -> None:
    done = _console("verify", MIXED)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("passed (--fail-on error)")


def test_bad_input_exits_2_with_its_message() -> None:
    done = _console("verify", "no-such-inventory.yaml")
    assert done.returncode == 2
    assert "no-such-inventory.yaml" in done.stderr and done.stdout == ""


def test_a_usage_error_exits_2_with_clicks_message() -> None:
    done = _console("no-such-command")
    assert done.returncode == 2
    assert "No such command 'no-such-command'" in done.stderr
