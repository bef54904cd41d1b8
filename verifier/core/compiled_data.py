"""The command behind each `python -m ... compile_*` step of a release: write the compiled data file, or
with `--check` say whether the committed one is current (the tests and the end-of-release routine run it).
"""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(argv: list[str], path: Path, text: str, command: str) -> int:
    """Write `text` to `path` (exit 0), or with `--check` exit 1 when the file differs; other arguments exit 2."""
    if argv == ["--check"]:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            sys.stderr.write(f"{path} is not current: run {command}\n")
            return 1
        return 0
    if argv:
        sys.stderr.write(f"usage: {command} [--check]\n")
        return 2
    path.write_text(text, encoding="utf-8")
    sys.stdout.write(f"wrote {path}\n")
    return 0
