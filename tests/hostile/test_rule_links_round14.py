"""A `--rules` folder holding links in a loop (round 14, hostile inputs).

x.dl -> y.dl -> x.dl: the folder listing finds both, and resolving either (to see whether it is
part of the shipped pack, and to read each file once) raised Python's RuntimeError("Symlink
loop"): "internal error ... this is a bug in topolog", exit 2 with no file named. Each is now
refused where it is read, named as the link it is.
"""

from __future__ import annotations

import os
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"


def test_rule_files_linked_in_a_loop_are_named(tmp_path: Path) -> None:
    folder = tmp_path / "rules"
    folder.mkdir()
    os.symlink(folder / "y.dl", folder / "x.dl")
    os.symlink(folder / "x.dl", folder / "y.dl")
    code, _out, err = run_cli("verify", str(POD), "--rules", str(folder))
    assert code == 2
    assert "internal error" not in err and "Traceback" not in err
    said = "it is a symbolic link that leads to no file (dangling, or a loop of links); expected a .dl rule file"
    assert f"{folder / 'x.dl'}: {said}" in err
    assert f"{folder / 'y.dl'}: {said}" in err
