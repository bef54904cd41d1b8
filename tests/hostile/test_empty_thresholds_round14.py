"""An empty thresholds file is refused, not read as "every default" (round 14, fail closed).

`--thresholds <(writer)` whose writer wrote nothing, a fifo opened and closed, a file cut short to
no bytes: each was read as an override that changes nothing, so the run went on with the defaults
whatever the writer meant to set, and said nothing. A file written to change nothing says so with
a comment, which still reads as the defaults.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.thresholds import default_thresholds, load_thresholds

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
TOPOLOG = f"{shlex.quote(sys.executable)} -c 'from verifier.cli.entry import run; run()'"
SAID = "the thresholds file is empty"


@pytest.mark.parametrize("content", ["", "\n", "  \n\t\n\r\n"])
def test_an_empty_or_blank_file_is_refused_at_its_first_line(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t.yaml"
    path.write_bytes(content.encode())
    with pytest.raises(TopologError) as err:
        load_thresholds([], path)
    assert [str(d.location) for d in err.value.diagnostics] == [f"{path}:1:1"]
    assert SAID in err.value.diagnostics[0].message


def test_a_comment_alone_still_keeps_every_default(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("# no override\n", encoding="utf-8")
    assert load_thresholds([], path) == default_thresholds()


def test_a_pipe_whose_writer_wrote_nothing_fails_the_run() -> None:
    # bash hands `<(true)` over as /dev/fd/63: a pipe that ends at once, with no byte in it.
    done = subprocess.run(
        ["bash", "-c", f"{TOPOLOG} verify {POD} --thresholds <(true)"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 2, done.stderr
    assert f"/dev/fd/63:1:1: {SAID}" in done.stderr and "Traceback" not in done.stderr
