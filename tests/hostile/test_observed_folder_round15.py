"""Entries of a host's observation folder that are not regular files are read, and refused, not skipped.

A fifo, a link to no file or a loop of links inside `OBSERVED/<host>/` was left out of the listing
(the host was judged without it, with no word) or, for a loop, stopped the run as an internal error
(OSError: Too many levels of symbolic links). An empty observation file is named as empty.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed.load import read_observations

SAMPLE = Path(__file__).resolve().parents[2] / "inventories" / "observed" / "dgx-h100-pod" / "dgx01" / "nvidia-smi.xml"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    host = tmp_path / "observed" / "dgx01"
    host.mkdir(parents=True)
    shutil.copy(SAMPLE, host / "nvidia-smi.xml")
    return tmp_path / "observed", host


def test_the_folder_with_one_regular_file_reads(tmp_path: Path) -> None:
    root, _ = _folder(tmp_path)
    assert read_observations([root]).gpus


@pytest.mark.parametrize("kind", ["fifo", "dangling", "loop"])
def test_a_host_folder_entry_that_is_no_regular_file_is_refused(tmp_path: Path, kind: str) -> None:
    root, host = _folder(tmp_path)
    entry = host / "nvlink.txt"
    if kind == "fifo":
        os.mkfifo(entry)
    elif kind == "dangling":
        entry.symlink_to(host / "gone.txt")
    else:
        entry.symlink_to(host / "other.txt")
        (host / "other.txt").symlink_to(entry)
    with pytest.raises(TopologError) as err:
        read_observations([root])
    shown = [str(d) for d in err.value.diagnostics]
    if kind == "fifo":
        # Opened without waiting, the fifo with no writer reads as nothing.
        assert shown == [f"{entry}:1: the observation file is empty; expected a tool's output (docs/observed.md)"]
    else:
        # The loop is two links, each named; a dangling link once.
        assert f"{entry}: cannot read observation file: it is a symbolic link that leads to no file" in shown[0]
        assert len(shown) == (2 if kind == "loop" else 1)


def test_an_empty_observation_file_is_named_empty(tmp_path: Path) -> None:
    root, host = _folder(tmp_path)
    (host / "smi.txt").write_text("  \n")
    with pytest.raises(TopologError) as err:
        read_observations([root])
    assert (
        str(err.value)
        == f"{host / 'smi.txt'}:1: the observation file is empty; expected a tool's output (docs/observed.md)"
    )


def test_a_nul_byte_in_an_observation_file_is_refused_at_its_line(tmp_path: Path) -> None:
    # The nvidia-smi XML scanner passed over a NUL between two elements and read the file as whole.
    root, host = _folder(tmp_path)
    text = SAMPLE.read_text(encoding="utf-8")
    first, rest = text.split("\n", 1)
    (host / "nvidia-smi.xml").write_text(first + "\n\x00" + rest, encoding="utf-8")
    with pytest.raises(TopologError) as err:
        read_observations([root])
    # The NUL opens line 2.
    assert str(err.value).startswith(f"{host / 'nvidia-smi.xml'}:2: the observation file holds a NUL byte (U+0000)")
