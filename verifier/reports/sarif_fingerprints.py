"""GitHub code scanning's `primaryLocationLineHash`, computed as its upload action computes it.

GitHub's upload action (github/codeql-action, src/fingerprints.ts, function `hash`:
https://github.com/github/codeql-action/blob/main/src/fingerprints.ts) gives every line of a
file a rolling polynomial hash, base 37 modulo 2**64, over the first 100 characters from the
line's start in the file read as UTF-16 code units with spaces and tabs left out and every
line ending (`\\r\\n`, `\\r`, `\\n`) made one `\\n`; the file is followed by the character 65535
and enough zeros to fill the last windows. A line's value is the hash as unsigned hex, then
`:N`, N counting the lines before it with the same hash plus one. The action fills in that
value only for a result that has none.

The action computes it one character at a time; here the same sums are taken for every line
start at once (numpy's uint64 arithmetic wraps modulo 2**64 as the action's Long does):
hash(line) = sum over j < 100 of c[start + j] * 37**(99 - j). tests/reports/test_sarif_github.py
ports the action's loop as written and checks both against its own published test vectors.

topolog's findings share lines (the findings of one template or `foreach` line), and GitHub
matches alerts by this value, so each result's value is the line's value salted with topolog's
own fingerprint: `<hash>:<N>:<fingerprint>`.
"""

from __future__ import annotations

import numpy as np

BLOCK_SIZE = 100
MOD = 37
EOF_CODE = 65535
_POWERS = np.array([pow(MOD, BLOCK_SIZE - 1 - j, 2**64) for j in range(BLOCK_SIZE)], dtype=np.uint64)


def normalized(text: str) -> np.ndarray:
    """The code units the action hashes: line endings made `\\n`, spaces and tabs left out, the end marker,
    then the zeros that fill the last window.
    """
    # "\r\n" first, then a lone "\r": the action skips a "\n" only right after a "\r".
    flat = text.replace("\r\n", "\n").replace("\r", "\n").replace(" ", "").replace("\t", "")
    # Kept as 16-bit units (the end marker, 65535, fits too); widened per line start when summed.
    units = np.frombuffer(flat.encode("utf-16-le"), dtype="<u2")
    return np.concatenate([units, np.array([EOF_CODE], dtype=np.uint16), np.zeros(BLOCK_SIZE, dtype=np.uint16)])


def _line_values(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Each line's hash and its `N` (how many lines up to this one have that hash), line 1 first."""
    units = normalized(text)
    # A line starts at the first unit and after each "\n"; the end marker starts the line after a final "\n".
    starts = np.concatenate([[0], np.flatnonzero(units[: len(units) - BLOCK_SIZE - 1] == ord("\n")) + 1])
    hashes = np.zeros(len(starts), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(BLOCK_SIZE):
            hashes += units[starts + j].astype(np.uint64) * _POWERS[j]
    # N: a line's rank among the lines with its hash, in file order (a stable sort keeps that order).
    order = np.argsort(hashes, kind="stable")
    ranked = hashes[order]
    first = np.concatenate([[True], ranked[1:] != ranked[:-1]])
    group_start = np.maximum.accumulate(np.where(first, np.arange(len(ranked)), 0))
    occurrence = np.empty(len(ranked), dtype=np.int64)
    occurrence[order] = np.arange(len(ranked)) - group_start + 1
    return hashes, occurrence


def _value(hashes: np.ndarray, occurrence: np.ndarray, index: int) -> str:
    return f"{int(hashes[index]):x}:{int(occurrence[index])}"


def line_hashes(text: str) -> list[str]:
    """The action's value for each line of `text` (line 1 first), `<hex>:<N>`."""
    hashes, occurrence = _line_values(text)
    return [_value(hashes, occurrence, i) for i in range(len(hashes))]


class LineHashes:
    """Each file's line values, computed once per report and written out only for the lines asked."""

    def __init__(self) -> None:
        self._files: dict[str, tuple[np.ndarray, np.ndarray] | None] = {}

    def of(self, path: str, line: int) -> str | None:
        """The action's value for `line` (1-based) of the file at `path`; None where it cannot be read."""
        if path not in self._files:
            try:
                with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                    self._files[path] = _line_values(handle.read())
            except OSError:
                self._files[path] = None
        values = self._files[path]
        if values is None or not 1 <= line <= len(values[0]):
            return None
        return _value(*values, line - 1)


def salted(line_value: str, fingerprint: str) -> str:
    """One result's primaryLocationLineHash: its line's value, then topolog's fingerprint of the finding."""
    return f"{line_value}:{fingerprint}"
