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
    units = np.frombuffer(flat.encode("utf-16-le"), dtype="<u2").astype(np.uint64)
    return np.concatenate([units, np.array([EOF_CODE], dtype=np.uint64), np.zeros(BLOCK_SIZE, dtype=np.uint64)])


def line_hashes(text: str) -> list[str]:
    """The action's value for each line of `text` (line 1 first), `<hex>:<N>`."""
    units = normalized(text)
    # A line starts at the first unit and after each "\n"; the end marker starts the line after a final "\n".
    starts = np.concatenate([[0], np.flatnonzero(units[: len(units) - BLOCK_SIZE - 1] == ord("\n")) + 1])
    hashes = np.zeros(len(starts), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for j in range(BLOCK_SIZE):
            hashes += units[starts + j] * _POWERS[j]
    seen: dict[int, int] = {}
    values = []
    for h in hashes.tolist():
        seen[h] = seen.get(h, 0) + 1
        values.append(f"{h:x}:{seen[h]}")
    return values


class LineHashes:
    """Each file's line values, computed once per report."""

    def __init__(self) -> None:
        self._files: dict[str, list[str] | None] = {}

    def of(self, path: str, line: int) -> str | None:
        """The action's value for `line` (1-based) of the file at `path`; None where it cannot be read."""
        if path not in self._files:
            try:
                with open(path, encoding="utf-8", errors="replace", newline="") as handle:
                    self._files[path] = line_hashes(handle.read())
            except OSError:
                self._files[path] = None
        values = self._files[path]
        if values is None or not 1 <= line <= len(values):
            return None
        return values[line - 1]


def salted(line_value: str, fingerprint: str) -> str:
    """One result's primaryLocationLineHash: its line's value, then topolog's fingerprint of the finding."""
    return f"{line_value}:{fingerprint}"
