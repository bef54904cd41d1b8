"""Input files read to bytes, before any parsing, and the digest of exactly what was read.

A command that keeps what it derives from an inventory in the cache (verifier.core.cache)
names the entry by these bytes, then parses the same bytes on a miss
(verifier.sources.inventory.loader.load_inventory_read): a pipe can be read only once, and a
file rewritten between a digest and a second read must not pass for the one digested.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from verifier.core.errors import TopologError
from verifier.core.limits import current_limits, read_limited

ReadFile = tuple[str, bytes | TopologError]
"""A file's name as locations print it, and its bytes or why they could not be read."""


def read_files(paths: Iterable[str | Path]) -> list[ReadFile]:
    """Each file's bytes (at most `file_size` of them), or the located error of reading it
    (validate.documents_of parses them).
    """
    out: list[ReadFile] = []
    for path in paths:
        name = str(path)
        try:
            out.append((name, read_limited(path, name)))
        except TopologError as err:
            out.append((name, err))
    return out


def read_digest_parts(files: Sequence[ReadFile]) -> list[str | bytes] | None:
    """What an entry derived from these files is named by: every name and its bytes, and the
    input limits in force (a load that passed under a larger limit must be judged again under a
    smaller one); None when a file could not be read (nothing to cache: the load fails).
    """
    parts: list[str | bytes] = [repr(current_limits())]
    for name, data in files:
        if isinstance(data, TopologError):
            return None
        parts += [name, data]
    return parts
