"""An empty configuration file is refused, as an empty thresholds file is (review 60 of HI's 3d8faf2).

A `.topolog.yaml` or `--config x.yaml` with no bytes, or white space only (a pipe named x.yaml
whose writer wrote nothing, a file cut short or not written yet), was read as "no setting": the
run went on with every default, so a `fail-on: note` the file was meant to hold was gone and a
run with findings passed (exit 0) without a word. A file holding only a comment still sets
nothing, as before (test_config.test_an_empty_yaml_file_sets_nothing).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.cli.config import find_config, read_config
from verifier.core.errors import TopologError

STRAY = str(Path(__file__).resolve().parents[1] / "golden" / "stray-devices.yaml")


@pytest.mark.parametrize("text", ["", "\n", "  \n\t\n", "\r\n"])
def test_an_empty_config_named_by_flag_is_refused_at_its_first_line(tmp_path: Path, text: str) -> None:
    path = tmp_path / "ci.yaml"
    path.write_bytes(text.encode())
    with pytest.raises(TopologError) as caught:
        read_config(path)
    (diag,) = caught.value.diagnostics
    assert str(diag.location) == f"{path}:1:1"
    assert "is empty" in diag.message and "comment" in diag.message


def test_an_empty_found_config_is_refused_not_passed_over(tmp_path: Path) -> None:
    (tmp_path / ".topolog.yaml").write_bytes(b"")
    with pytest.raises(TopologError) as caught:
        find_config(tmp_path)
    (diag,) = caught.value.diagnostics
    # Named as found (relative to the working folder): the file and its first line.
    assert str(diag.location).endswith(f"{tmp_path.name}/.topolog.yaml:1:1") and "is empty" in diag.message


def test_a_comment_alone_still_sets_nothing(tmp_path: Path) -> None:
    path = tmp_path / "ci.yaml"
    path.write_text("# no settings yet\n", encoding="utf-8")
    assert dict(read_config(path).data) == {}


def test_an_empty_config_pipe_fails_the_run_closed(tmp_path: Path) -> None:
    # A fifo named ci.yaml whose writer closes it at once (os.open with O_NONBLOCK for reading
    # first, so that the writer's open does not wait): the CLI reads no bytes. Before, the run
    # went on with every default (stray-devices.yaml's findings at the default gate: exit 1), the
    # file never named; now it is refused at 1:1, exit 2.
    fifo = tmp_path / "ci.yaml"
    os.mkfifo(fifo)
    keep = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        os.close(os.open(fifo, os.O_WRONLY))
        code, _out, err = run_cli("--config", str(fifo), "verify", STRAY)
    finally:
        os.close(keep)
    assert code == 2, err
    assert f"{fifo}:1:1" in err and "is empty" in err and "Traceback" not in err
