"""Side files through pipes, report files that must not be replaced, devices, and errors that
quote a huge value: each decided, each shown here (issue: "nothing opens the gate by accident").
"""

from __future__ import annotations

import errno
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.cli import output
from verifier.core.errors import MAX_MESSAGE_CHARS, TopologError

ROOT = Path(__file__).resolve().parents[2]
POD = "inventories/dgx-h100-pod.yaml"
TOPOLOG = f"{shlex.quote(sys.executable)} -c 'from verifier.cli.entry import run; run()'"


def _bash(command: str) -> subprocess.CompletedProcess[str]:
    """`command` as a user types it in bash, process substitution included (`<(cat x)` is a pipe)."""
    return subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True, check=False, timeout=300)


# The shipped pod has one finding: TOPO005 on dgx03/gpu2<->dgx03/nvsw1 and dgx03/gpu2, an NVLink
# bond written as 3 links where the node type has 4, degraded (inventories/dgx-h100-pod.yaml,
# dgx03's override): the fabric manager's default takes gpu2 out of the NVLink domain.
WAIVER = """\
waivers:
  - rule: TOPO005
    subject: "dgx03/*"
    reason: dgx03's third NVLink bond is being reseated (INFRA-1).
    expires: 2099-01-01
"""


def test_waivers_through_a_pipe_are_read_as_from_a_file(tmp_path: Path) -> None:
    as_file = tmp_path / "waivers.yaml"
    as_file.write_text(WAIVER)
    piped = _bash(f"{TOPOLOG} verify {POD} --waivers <(cat {shlex.quote(str(as_file))})")
    from_file = _bash(f"{TOPOLOG} verify {POD} --waivers {shlex.quote(str(as_file))}")
    assert piped.returncode == from_file.returncode == 0, piped.stderr
    # The one finding is waived either way; only the file's name differs in what is shown.
    assert "1 waived" in piped.stdout
    assert piped.stdout.replace("/dev/fd/63", str(as_file)) == from_file.stdout


def test_a_baseline_through_a_pipe_holds_back_its_findings(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    # Writing the baseline still judges the run: the pod's TOPO005 error fails it (exit 1).
    assert _bash(f"{TOPOLOG} verify {POD} --write-baseline {baseline}").returncode == 1
    piped = _bash(f"{TOPOLOG} verify {POD} --baseline <(cat {baseline})")
    assert piped.returncode == 0, piped.stderr
    assert "0 findings (0 error, 0 warning, 0 note, 1 in the baseline)" in piped.stdout


def test_principals_and_thresholds_through_pipes(tmp_path: Path) -> None:
    # The mixed fleet with its own principals and an empty thresholds override: the same answer
    # whether both come from files or from pipes.
    inventory = "inventories/mixed-fleet.yaml"
    thresholds = tmp_path / "topolog.thresholds.yaml"
    thresholds.write_text("# no override\n")
    files = f"--principals inventories/principals.yml --thresholds {thresholds}"
    pipes = f"--principals <(cat inventories/principals.yml) --thresholds <(cat {thresholds})"
    from_files = _bash(f"{TOPOLOG} verify {inventory} {files} --format json")
    piped = _bash(f"{TOPOLOG} verify {inventory} {pipes} --format json")
    assert piped.returncode == from_files.returncode, piped.stderr
    assert piped.returncode in (0, 1)
    # Findings located in the principals file name it as given: bash hands the first pipe over as
    # /dev/fd/63, the second as /dev/fd/62.
    named = piped.stdout.replace("/dev/fd/63", "inventories/principals.yml").replace("/dev/fd/62", str(thresholds))
    assert "/dev/fd/63" in piped.stdout  # a finding located in the principals file was shown
    assert named == from_files.stdout


@pytest.mark.parametrize("how", ["pipe", "fifo in a rules folder"])
def test_rules_from_a_pipe_are_refused_with_the_reason(tmp_path: Path, how: str) -> None:
    if how == "pipe":
        done = _bash(f"{TOPOLOG} verify {POD} --rules <(cat rules/schema.dl)")
        where = "/dev/fd/63"
    else:
        folder = tmp_path / "rules"
        folder.mkdir()
        os.mkfifo(folder / "extra.dl")  # skipped, it would leave its checks out without a word
        done = _bash(f"{TOPOLOG} verify {POD} --rules {folder}")
        where = str(folder / "extra.dl")
    assert done.returncode == 2
    assert f"{where}: a pipe; expected a .dl rule file on disk" in done.stderr


def test_thresholds_from_a_device_say_it_is_a_device() -> None:
    status, _out, err = run_cli("verify", str(ROOT / POD), "--thresholds", "/dev/zero")
    assert status == 2
    assert "/dev/zero: cannot read thresholds: it is a device file" in err


def test_a_read_only_report_file_is_kept(tmp_path: Path) -> None:
    kept = tmp_path / "approved.json"
    kept.write_text("{}\n")
    kept.chmod(0o444)
    status, _out, err = run_cli("verify", str(ROOT / POD), "--output", f"json={kept}")
    assert status == 2
    assert f"{kept}: cannot write report: the file is read-only" in err
    assert kept.read_text() == "{}\n"


def test_a_terminal_this_process_lacks_is_not_called_a_fifo(monkeypatch: pytest.MonkeyPatch) -> None:
    # /dev/tty without a controlling terminal (CI, cron) fails to open with ENXIO, the error a
    # FIFO with no reader gives too; only the FIFO may be described as one.
    def no_terminal(path: object, flags: int, *args: object) -> int:
        raise OSError(errno.ENXIO, "No such device or address")

    monkeypatch.setattr(os, "open", no_terminal)
    with pytest.raises(TopologError) as caught:
        output.write_in_place(Path("/dev/null"), b"x", "report")
    assert "no such device here" in str(caught.value)
    assert "FIFO" not in str(caught.value)


def test_an_error_quoting_a_huge_value_stays_a_readable_line(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "edge-soc.yaml").read_text()
    huge = "x" * 10_000_000
    inventory = tmp_path / "edge.yaml"
    inventory.write_text(text.replace("kind: socket", f"kind: sock{huge}", 1))
    # 10 MB is over the default yaml_size (6 MiB), which would refuse the file unparsed: raised, so
    # that the value reaches the check that quotes it.
    status, _out, err = run_cli("--input-limit", "yaml_size=16MiB", "verify", str(inventory))
    assert status == 2
    assert f"{inventory}:" in err
    assert "characters left out" in err
    assert len(err) < MAX_MESSAGE_CHARS + 500  # the location and the sentence around the value


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        ("--principals", "a principals file with 'apiVersion: topolog.dev/v1' and 'kind: Principals'"),
        ("--scenario", "a scenario with 'apiVersion: topolog.dev/v1' and 'kind: Scenario'"),
        ("--thresholds", "a mapping of threshold names to integers, such as 'nic_pcie_ratio_permille: 1000'"),
    ],
)
def test_a_side_file_that_is_no_mapping_says_what_it_should_be(tmp_path: Path, option: str, expected: str) -> None:
    # A list at line 1, column 1 where each of these files holds a mapping: the message names the
    # file's own kind, not an inventory (what an inventory holds is no help to whoever wrote it).
    side = tmp_path / "side.yaml"
    side.write_text("- a\n")
    status, _out, err = run_cli("verify", str(ROOT / POD), option, str(side))
    assert status == 2
    assert f"{side}:1:1: top level is not a mapping; expected {expected}" in err
