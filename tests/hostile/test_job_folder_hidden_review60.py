"""Hidden entries of a jobs folder, and links to nothing (review of 6074b2b, round 14).

Since 6074b2b a jobs folder lists every entry named like a job file, not regular files only, so
Emacs's lock beside an open a.yaml, `.#a.yaml` (a symbolic link to "user@host.pid:time", never a
file), stopped the run with a bare "No such file or directory". A hidden entry (its name starts
with '.') is now left out of a folder, as the shell's `jobs/*.yaml` leaves it out, and a note names
it; a file named on the command line is read whatever its name. A link to nothing that is not
hidden (b.yaml to a removed file) is still refused, and the error now says what it is.

Expected, from the folders below (job j asks for 8 GPUs of the pod; BAD is a Jobs document whose
job names no principal, which the reader refuses):
- a.yaml + `.#a.yaml` (dangling): a.yaml read, `.#a.yaml` named in a note, not an error -> not 2.
- `.#a.yaml` alone: nothing left to read -> exit 2, "folder holds no job files", naming `.#a.yaml`.
- a.yaml + `.b.yaml` holding BAD: `.b.yaml` not read -> not 2, the note names it; the same file
  given by name is read -> exit 2.
- a.yaml + b.yaml linked to a removed file: read and refused -> exit 2, "symbolic link that leads
  to no file" at b.yaml.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
JOB = 'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"research", gpus: 8}\n'
BAD = "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: k, gpus: 8}\n"


def _setup(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "principals.yml").write_bytes((ROOT / "inventories" / "principals.yml").read_bytes())
    pod = tmp_path / "pod.yaml"
    pod.write_bytes(POD.read_bytes())
    folder = tmp_path / "jobs"
    folder.mkdir()
    return pod, folder


def test_an_editor_lock_beside_a_job_file_is_left_out_with_a_note(tmp_path: Path) -> None:
    pod, folder = _setup(tmp_path)
    (folder / "a.yaml").write_text(JOB, encoding="utf-8")
    os.symlink("me@host.4242:1700000000", folder / ".#a.yaml")
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder))
    assert code in (0, 1), err
    assert f"note: {folder}: hidden entries not read: .#a.yaml" in err
    assert "Traceback" not in err


def test_a_folder_of_hidden_entries_only_holds_no_job_files(tmp_path: Path) -> None:
    pod, folder = _setup(tmp_path)
    os.symlink("me@host.4242:1700000000", folder / ".#a.yaml")
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder))
    assert code == 2, err
    assert f"{folder}: folder holds no job files" in err and "hidden entries not read: .#a.yaml" in err


def test_a_hidden_job_file_is_read_only_when_named(tmp_path: Path) -> None:
    pod, folder = _setup(tmp_path)
    (folder / "a.yaml").write_text(JOB, encoding="utf-8")
    (folder / ".b.yaml").write_text(BAD, encoding="utf-8")
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder))
    assert code in (0, 1), err
    assert "hidden entries not read: .b.yaml" in err
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder / ".b.yaml"))
    assert code == 2, err
    assert f"{folder / '.b.yaml'}:" in err


@pytest.mark.parametrize("target", ["gone.yaml", "b.yaml"], ids=["to a removed file", "to itself"])
def test_a_link_to_nothing_in_a_folder_is_named_a_link(tmp_path: Path, target: str) -> None:
    pod, folder = _setup(tmp_path)
    (folder / "a.yaml").write_text(JOB, encoding="utf-8")
    os.symlink(folder / target, folder / "b.yaml")
    code, _out, err = run_cli("verify", str(pod), "--jobs", str(folder))
    assert code == 2, err
    assert f"{folder / 'b.yaml'}: cannot read file: it is a symbolic link that leads to no file" in err
