"""Hostile inputs, round 13: a configuration nested past the interpreter's stack, and a link loop.

`--config` with 100,000 nested `[` ended as "internal error (RecursionError) ... a bug in topolog":
the configuration reader composed the YAML once (to tell an empty file from a list) before the
loader, which bounds the nesting. An inventory or principals file that is a link leading to itself
was "no such file or directory", while `ls` shows it.
"""

from __future__ import annotations

import os
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "inventories" / "edge-soc.yaml"


def test_a_configuration_nested_past_the_stack_is_refused_at_its_line(tmp_path: Path) -> None:
    # Line 1 is "a: " then 100,000 "[". The top mapping is level 1, so the n-th "[" is level n + 1:
    # level 101 (over nesting_depth 100) is the 100th "[", at column 3 + 100.
    config = tmp_path / "topolog.yaml"
    config.write_text("a: " + "[" * 100_000 + "]" * 100_000 + "\n")
    code, _out, err = run_cli("--config", str(config), "verify", str(INVENTORY))
    assert code == 2
    assert err.startswith(
        f"error: {config}:1:103: YAML nested 101 levels deep here, over the limit nesting_depth = 100"
    )
    assert "internal error" not in err


def test_a_link_loop_is_named_as_a_link(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    os.symlink(b, a)
    os.symlink(a, b)
    expected = (
        f"error: {a}: it is a symbolic link that leads to no file (dangling, or a loop of links); expected a file\n"
    )
    code, _out, err = run_cli("verify", str(a))
    assert (code, err) == (2, expected)
    # A link to nothing is said the same way; a name that is nowhere is still "no such file".
    dangling = tmp_path / "gone.yaml"
    os.symlink(tmp_path / "never-there.yaml", dangling)
    code, _out, err = run_cli("verify", str(dangling))
    assert code == 2 and "symbolic link that leads to no file" in err
    code, _out, err = run_cli("verify", str(tmp_path / "absent.yaml"))
    assert (code, err) == (2, f"error: {tmp_path / 'absent.yaml'}: no such file or directory\n")
