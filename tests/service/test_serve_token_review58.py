"""The token file is read only when it is a regular file (or a link to one), never waited on (R-HI review).

3111de2 had the token read as a one-shot input is (core.limits.read_limited), which takes a pipe
and waits for its writer to finish: a fifo under the token's name that a process holds open
without writing still had the read, and every reload queued behind it, wait for ever. The token
is read at the start and again at every reload, so a pipe can never hold it (it is read twice at
the start already); only a regular file is read. A Secret mounted by Kubernetes is a chain of
links (token -> ..data/token, ..data -> ..2026_12_07_...): followed, and read.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.service.config import read_token

TOKEN = "s3cret-token-for-the-gate-0123456789"


def _problem(path: Path) -> str:
    with pytest.raises(TopologError) as caught:
        read_token(path)
    (problem,) = caught.value.diagnostics
    return str(problem)


def test_a_fifo_held_open_by_a_writer_is_refused_without_waiting(tmp_path: Path) -> None:
    fifo = tmp_path / "token"
    os.mkfifo(fifo, 0o600)
    # This process holds the fifo open for writing and writes nothing: a reader that waits for the
    # writer to finish waits for ever. The read runs in a thread joined with a bound, so a wait fails
    # the test instead of hanging it (the bound is a guard, not a timing: the answer is immediate).
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    said: list[str] = []
    try:
        reader = threading.Thread(target=lambda: said.append(_problem(fifo)), daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "the token read waited on the fifo's writer"
    finally:
        os.close(writer)
    assert said == [f"{fifo}: cannot read the token file: it is a pipe; expected a regular file"]


def test_a_folder_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "token").mkdir()
    assert (
        _problem(tmp_path / "token")
        == f"{tmp_path / 'token'}: cannot read the token file: it is a folder; expected a regular file"
    )


def test_a_secret_mounted_as_links_is_read(tmp_path: Path) -> None:
    # The layout kubelet's atomic writer makes for a Secret with the key `token`.
    data = tmp_path / "mount" / "..2026_12_07_11_00_00.123456789"
    data.mkdir(parents=True)
    (data / "token").write_text(TOKEN + "\n")
    (tmp_path / "mount" / "..data").symlink_to(data.name)
    (tmp_path / "mount" / "token").symlink_to("..data/token")
    assert read_token(tmp_path / "mount" / "token") == TOKEN


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    gone = tmp_path / "token"
    assert _problem(gone) == f"{gone}: cannot read the token file: No such file or directory"
