"""`topolog serve` leaves no snapshot folder behind when it stops.

Every revision copies its policy files into a `topolog-revision-*` folder of the temporary
directory (verifier.service.revision). The console script ends the process without the
interpreter's teardown (verifier.cli.entry), so a folder left for that teardown to remove stayed
behind at every stop of the gate. These tests run the gate as the console script does, with a
temporary directory of their own, and count the folders left in it.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx
from service.serve_helpers import LISTENING, START_S, copy_inputs, wait_for

# The console script's own entry (pyproject's `topolog = verifier.cli.entry:run`), not
# `python -m verifier.cli.main`, whose ordinary exit runs the finalizers.
ENTRY = "import sys; sys.argv[0] = 'topolog'; from verifier.cli.entry import run; run()"


def _gate(folder: Path, tmp: Path, port: int) -> subprocess.Popen[bytes]:
    log = folder / "serve.log"
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONUNBUFFERED": "1"}
    with log.open("wb") as out:
        return subprocess.Popen(
            [sys.executable, "-c", ENTRY, "serve", str(folder / "mixed-fleet.yaml"), "--port", str(port)],
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
        )


def _left(tmp: Path) -> list[str]:
    return sorted(p.name for p in tmp.iterdir() if p.name.startswith("topolog-revision-"))


def test_sigterm_after_a_reload_leaves_no_snapshot_folder(tmp_path: Path) -> None:
    folder = copy_inputs(tmp_path / "gate").parent
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    process = _gate(folder, tmp, 0)
    try:
        found: list[str] = []

        def listening() -> bool:
            assert process.poll() is None, (folder / "serve.log").read_text()
            m = LISTENING.search((folder / "serve.log").read_text(errors="replace"))
            if m:
                found.append(f"http://{m.group(2)}:{m.group(3)}")
            return m is not None

        wait_for("topolog serve listening", listening, START_S)
        # The revision the gate serves has its folder while it runs.
        assert len(_left(tmp)) == 1
        # An edit and a reload: a second revision, hence a second folder, goes live (the first
        # one's folder goes with it once unreferenced).
        first = httpx.get(found[0] + "/v1/revision", timeout=30.0).json()["revision"]
        with (folder / "mixed-fleet.yaml").open("a") as f:
            f.write("# edited\n")
        # Reloaded by this request or, before it, by the gate's own watch of its files.
        assert httpx.post(found[0] + "/v1/reload", timeout=30.0).json()["ok"]
        assert httpx.get(found[0] + "/v1/revision", timeout=30.0).json()["revision"] != first
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=30) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
    assert _left(tmp) == []


def test_a_gate_that_cannot_listen_leaves_no_snapshot_folder(tmp_path: Path) -> None:
    folder = copy_inputs(tmp_path / "gate").parent
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    # The revision is built before the port is taken: a port already in use stops the gate
    # (exit 2) after its first revision's folder was made.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        process = _gate(folder, tmp, taken.getsockname()[1])
        assert process.wait(timeout=START_S) == 2
    assert "cannot listen on" in (folder / "serve.log").read_text()
    assert _left(tmp) == []
