"""Shared fixtures. (tests/ is on sys.path through this file, so tests import cli_helpers.)"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from verifier.core.cache import ENV_DIR, ENV_KEY

# Each test process gets a cache folder and a signing key of its own, the folder removed at
# exit: no test reads what a user's earlier runs left in theirs, leaves entries there, or
# makes a key file in the user's home.
os.environ[ENV_DIR] = tempfile.mkdtemp(prefix="topolog-test-cache-")
os.environ[ENV_KEY] = os.urandom(32).hex()
atexit.register(shutil.rmtree, os.environ[ENV_DIR], True)

ROOT = Path(__file__).resolve().parent.parent


REPORT_VERSION = "1.2.3"
"""The topolog version the reports of in-process runs name. The real one comes from git
(setuptools-scm: 0.3.1.dev4+g<commit> past a tag) and changes with every commit; golden reports
pin it as they pin the rules and the date. tests/test_release.py checks the real one."""


@pytest.fixture(autouse=True)
def _pinned_report_version(monkeypatch: pytest.MonkeyPatch) -> None:
    import verifier.reports.diff_report
    import verifier.reports.json_report
    import verifier.reports.sarif_report

    for module in (verifier.reports.diff_report, verifier.reports.json_report, verifier.reports.sarif_report):
        monkeypatch.setattr(module, "__version__", REPORT_VERSION)


@pytest.fixture
def in_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reports name files relative to the working directory, as a user running from the repo sees them."""
    monkeypatch.chdir(ROOT)


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT handled by Python's own handler (a KeyboardInterrupt), as in `topolog`'s process.

    A test of what a Ctrl-C does needs that handler; another test run earlier in the same worker
    process (pytest-xdist) may have left SIGINT ignored, and a Ctrl-C would then not arrive at all.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


# Tests that hold one worker for a long time (whole-process builds, mypy, many child processes),
# moved to the front of the run. pytest-xdist's `--dist load` hands each worker a first chunk of
# the collection in order and the rest as workers free up, so these start at once on the first
# worker while the other runs the many short tests, and the run ends on short tests on both.
# Left where pytest collects them (tests/test_*.py sort last), they began in the last minute:
# the wheel build and install held one worker while the other, given a test of the same
# build, waited on its file lock (checkout_helpers.made_once), and mypy came after both.
# Kept in this order, the consumers of one made_once build are sent to one worker together.
COSTLY_FIRST = (
    "test_packaging.py",  # the release clone, the build venv, an sdist + wheel, a venv with the wheel installed
    "test_release.py",  # the same release clone
    "test_style.py",  # mypy --strict over every module and test
    "test_precommit.py",  # pre-commit runs of the installed entry point
    "core/test_kept_report.py",  # about 70 child verify runs
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    rank = {name: at for at, name in enumerate(COSTLY_FIRST)}
    tests = Path(__file__).resolve().parent

    def place(item: pytest.Item) -> int:
        try:
            return rank.get(item.path.relative_to(tests).as_posix(), len(rank))
        except ValueError:  # a test file named on the command line outside tests/
            return len(rank)

    items.sort(key=place)  # stable: every other test keeps the order pytest collected it in
