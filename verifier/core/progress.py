"""Progress on stderr, shown only once a run has taken more than a second.

Quick runs print nothing extra; slow ones say which phase they are in, so a CI log
shows where a long verification spends its time. Nothing here writes to stdout.

Whether a line appears depends on how fast the machine is, so nothing that compares output
may see one: `topolog --quiet` (pre-commit's hook, the tests' run_cli) turns progress off for
the command through `quiet()`.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TextIO

DELAY = 1.0
"""Seconds a run goes before its progress shows."""

_quiet = False
lines_written = 0
"""Progress lines this process has written: a run that wrote one is not kept (verifier.core.kept_recording)."""


@contextmanager
def quiet() -> Iterator[None]:
    """No progress line is written while this is in force (one command of `topolog --quiet`)."""
    global _quiet
    before, _quiet = _quiet, True
    try:
        yield
    finally:
        _quiet = before


class Progress:
    def __init__(self, stream: TextIO | None = None, delay: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay = DELAY if delay is None else delay
        self.silent = _quiet
        self.start = time.monotonic()
        self.phase = ""
        self.visible = False
        self._lock = threading.Lock()
        self._timer = threading.Timer(self.delay, self._reveal)
        self._timer.daemon = True

    def __enter__(self) -> Progress:
        self._timer.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._timer.cancel()
        with self._lock:
            if self.visible and exc_type is None:
                self._write(f"done in {time.monotonic() - self.start:.1f} s")

    def step(self, phase: str) -> None:
        with self._lock:
            self.phase = phase
            if self.visible:
                self._write(phase)

    def _reveal(self) -> None:
        with self._lock:
            self.visible = True
            if self.phase:
                self._write(self.phase)

    def _write(self, text: str) -> None:
        if self.silent:
            return
        global lines_written
        lines_written += 1
        elapsed = time.monotonic() - self.start
        self.stream.write(f"topolog: [{elapsed:5.1f} s] {text}\n")
        self.stream.flush()
