"""A jobs folder holding a pipe or a dangling link named like a job file (round 14, hostile inputs).

The folder was listed for regular files only: `b.yaml` as a fifo, or as a link to a file since
removed, was left out without a word, and the run judged the other jobs and passed, the job in
b.yaml never judged. Each is now read like any file named there, and refused where it is read.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
JOB = 'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"research", gpus: 8}\n'


@pytest.mark.parametrize("how", ["fifo", "dangling link"])
def test_a_job_file_that_cannot_be_read_fails_the_run(tmp_path: Path, how: str) -> None:
    (tmp_path / "principals.yml").write_bytes((ROOT / "inventories" / "principals.yml").read_bytes())
    pod = tmp_path / "pod.yaml"
    pod.write_bytes(POD.read_bytes())
    folder = tmp_path / "jobs"
    folder.mkdir()
    (folder / "a.yaml").write_text(JOB, encoding="utf-8")
    if how == "fifo":
        os.mkfifo(folder / "b.yaml")  # no writer: nothing in it
    else:
        os.symlink(folder / "gone.yaml", folder / "b.yaml")
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder))
    assert code == 2, err
    assert f"{folder / 'b.yaml'}" in err and "Traceback" not in err
