"""This checkout's files as git sees them, for tests that build or clone topolog like a user."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def copy_checkout(target: Path) -> None:
    """Copy the checkout's files (tracked, plus new files not ignored) to `target`, without build outputs.

    A file deleted in the working tree but still tracked is removed from `target`, so a clone
    of the repository brought up to date this way matches the working tree.
    """
    listed = (
        subprocess.run(
            ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source, copy = ROOT / name, target / name
        if source.is_file():
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
        elif copy.exists():
            copy.unlink()
