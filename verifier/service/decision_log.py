"""The decision log: one JSON line per decision, in a file rotated by size.

The standard library's RotatingFileHandler rotates under its own lock, between two whole
records, so no line is lost or split by a rotation (a test writes past several rotations and
counts them). Lines are written with sorted keys: the same decision is the same line.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import time
from pathlib import Path


class DecisionLog:
    """Writes decision records to `path` (None: nowhere), rotating at `max_bytes`, keeping `backups` old files."""

    def __init__(self, path: Path | None, max_bytes: int, backups: int) -> None:
        self._handler: logging.Handler | None = None
        if path is not None:
            self._handler = logging.handlers.RotatingFileHandler(
                path, maxBytes=max_bytes, backupCount=backups, encoding="utf-8", delay=True
            )
            self._handler.setFormatter(logging.Formatter("%(message)s"))

    def write(self, record: dict[str, object]) -> None:
        if self._handler is None:
            return
        line = json.dumps({"time": _now(), **record}, sort_keys=True, separators=(",", ":"), default=str)
        self._handler.handle(logging.makeLogRecord({"msg": line, "levelno": logging.INFO, "levelname": "INFO"}))

    def close(self) -> None:
        if self._handler is not None:
            self._handler.close()


def _now() -> str:
    t = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1000):03d}Z"
