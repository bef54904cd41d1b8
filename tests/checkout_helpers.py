"""This checkout's files as git sees them, for tests that build or clone topolog like a user."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from filelock import FileLock

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


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, make: Callable[[Path], None]) -> Path:
    """A folder that `make` fills once per test run, shared by every pytest-xdist worker.

    Tests that need one costly build (a wheel installed in a venv, pre-commit's hook
    environment) may then run on any worker: the first to get here builds under a file
    lock, the others wait and reuse it. A build that failed leaves no mark, so the next
    test tries again and reports its own failure.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # the run's folder, common to the workers' own ones
    folder, done = root / name, root / f"{name}.done"
    with FileLock(str(root / f"{name}.lock")):
        if not done.exists():
            if folder.exists():
                shutil.rmtree(folder)
            folder.mkdir()
            make(folder)
            done.touch()
    return folder


def release() -> str:
    """The newest release CHANGELOG.md names (`## X.Y.Z (YYYY-MM-DD)`); its git tag is `vX.Y.Z`."""
    found = re.search(r"^## (\d+\.\d+\.\d+) \(\d{4}-\d\d-\d\d\)$", (ROOT / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert found, "CHANGELOG.md has no release heading '## X.Y.Z (YYYY-MM-DD)'"
    return found.group(1)


def _git(repo: Path, *args: str) -> str:
    user = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    return subprocess.run(["git", "-C", str(repo), *user, *args], check=True, capture_output=True, text=True).stdout


def tagged_clone(clone: Path) -> None:
    """A clone of this checkout at `clone`, its working tree committed and tagged as the release.

    The test makes the tag itself: a CI clone may carry no tags, and a tag cloned from the
    checkout would name an older commit than the working tree under test.
    """
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, capture_output=True)
    copy_checkout(clone)
    _git(clone, "add", "-A")
    _git(clone, "commit", "-q", "--allow-empty", "-m", "snapshot of the working tree")
    tag = f"v{release()}"
    if _git(clone, "tag", "--list", tag).split():
        _git(clone, "tag", "-d", tag)
    _git(clone, "tag", "-a", tag, "-m", f"topolog {tag}")
