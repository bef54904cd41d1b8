"""core.limits.read_regular: a regular file (a link to one followed) or a located refusal, never a wait (R-HI review).

serve reads its inputs at every reload (twice per build) and its token file; read_limited takes a
pipe and waits for its writer to finish, so a fifo put under one of those names that a process
held open without writing had the reload, and every reload queued behind it, wait for ever
(3111de2 fixed only a fifo with no writer). read_regular refuses what is not a regular file.
"""

from __future__ import annotations

import os
import threading
from dataclasses import replace
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.core.limits import current_limits, read_regular, use_limits
from verifier.service.revision import _read_one


def _problem(read: object, path: Path) -> str:
    with pytest.raises(TopologError) as caught:
        read(path)  # type: ignore[operator]
    (problem,) = caught.value.diagnostics
    return str(problem)


@pytest.mark.parametrize(
    ("read", "says"),
    [
        (
            lambda p: read_regular(p, str(p), "the input"),
            "cannot read the input: it is a pipe; expected a regular file",
        ),
        # An inventory (or principals, policy, thresholds) file swapped for a fifo during serve.
        (lambda p: _read_one("inventory", p), "cannot read file: it is a pipe; expected a regular file"),
    ],
    ids=["read_regular", "serve-inventory"],
)
def test_a_fifo_held_open_by_a_writer_is_refused_without_waiting(tmp_path: Path, read: object, says: str) -> None:
    fifo = tmp_path / "in.yaml"
    os.mkfifo(fifo, 0o600)
    # This process holds the fifo open for writing and writes nothing. The read runs in a thread
    # joined with a bound: a wait fails the test instead of hanging it (a guard, not a timing).
    writer = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    said: list[str] = []
    try:
        reader = threading.Thread(target=lambda: said.append(_problem(read, fifo)), daemon=True)
        reader.start()
        reader.join(60)
        assert not reader.is_alive(), "the read waited on the fifo's writer"
    finally:
        os.close(writer)
    assert said == [f"{fifo}: {says}"]


def test_a_folder_and_a_device_are_refused_by_kind(tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    assert (
        _problem(read_regular, tmp_path / "d")
        == f"{tmp_path / 'd'}: cannot read file: it is a folder; expected a regular file"
    )
    assert (
        _problem(read_regular, Path("/dev/null"))
        == "/dev/null: cannot read file: it is a device file; expected a regular file"
    )


def test_a_link_to_a_regular_file_is_read_and_a_file_over_the_limit_refused(tmp_path: Path) -> None:
    (tmp_path / "real").write_bytes(b"12345")
    (tmp_path / "link").symlink_to("real")
    assert read_regular(tmp_path / "link") == b"12345"
    # 5 bytes over a 4-byte file_size: refused by size before reading, as read_limited does.
    with use_limits(replace(current_limits(), file_size=4)):
        assert "file_size" in _problem(read_regular, tmp_path / "link")
    with use_limits(replace(current_limits(), file_size=5)):
        assert read_regular(tmp_path / "link") == b"12345"
