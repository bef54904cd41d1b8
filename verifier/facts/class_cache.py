"""Node-class summaries kept on disk between runs, so a CI gate does not work them out every time.

A node class's summaries (PCIe paths, switch loads, GPU pair and GPU-NIC bottlenecks, the
nearest NIC) depend only on the class's shape, and the shapes of a fleet rarely change from
one run to the next (a changed label, a cable to the fabric or a new principal leave them
as they were). Working them out takes a max-flow per GPU pair of every class. One entry
holds every class of a run, named by a digest of the shapes in the order the run meets them,
of the relations asked for and of the code that computes them (verifier/facts/graph.py,
small_graph.py and this file, topolog's version): an edited node, another question or an upgraded topolog is a
miss, never a stale row (see verifier.core.cache for where entries live and why they can
be trusted).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from verifier.core.cache import code_digest, enabled, entry_key, read_pickled, write_pickled

KIND = "nodeclasses"
_CODE = ("graph.py", "small_graph.py", "class_cache.py")
"""The files whose change can change a class's summaries."""

ShapeKey = tuple[tuple[tuple[str, str, str | None, int | None], ...], tuple[tuple[str, str, str, int], ...]]
"""A node class's objects (local name, kind, parent, index) and working links (a, b, kind, MB/s)."""
ClassRows = dict[str, list[tuple[str | int, ...]]]
"""A class's rows per relation, in local names."""


def classes_key(shapes: Sequence[ShapeKey], relations: Collection[str]) -> str | None:
    """The entry name for the summaries of `shapes` (in the order met) with `relations` computed;
    None with the cache off, when nothing is read or written (no code digest, no shape printed).
    """
    if not enabled():
        return None
    parts = [repr(sorted(relations)), *(repr(shape) for shape in shapes)]
    return entry_key(code_digest("verifier.facts", _CODE), parts)


def cached_classes(key: str, shapes: Sequence[ShapeKey]) -> list[ClassRows] | None:
    """The rows stored under `key`, one dict per shape of `shapes`, or None."""
    stored = read_pickled(KIND, key)
    # The shapes are stored with their rows: an entry is used only for exactly the shapes it was made from.
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != list(shapes):
        return None
    rows = stored[1]
    return rows if isinstance(rows, list) and len(rows) == len(shapes) else None


def remember_classes(key: str, shapes: Sequence[ShapeKey], rows: Sequence[ClassRows]) -> None:
    """Store the rows of `shapes` under `key` for the next run."""
    write_pickled(KIND, key, (list(shapes), list(rows)))
