"""Pausing the cyclic garbage collector while a fleet's objects, facts, entities or rows are built.

YAML parsing, expansion, fact generation, Cedar entities and placement ranking allocate
millions of small objects and no reference cycles:
the collector would rescan the growing heap again and again (measured: a third of the
load). Pausing it is not enough on its own: everything allocated meanwhile waits in the
youngest generation, and the first collections after the pause walk all of it, and again
as it is promoted (a second at 32,768 GPUs, later in the run). What a pause leaves behind
in bulk lives for the rest of the run or dies by reference counting, so it is frozen
(`gc.freeze`): the collector never walks it again, and it is still freed when unreferenced.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

FREEZE_ABOVE = 50_000
"""Objects the collector tracks that a pause may leave before they are frozen: a fleet's worth,
not a test's (freezing also keeps any garbage cycle of the moment from ever being collected)."""


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cyclic GC off for the block; what the block left in bulk frozen at its end."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        # The youngest generation's count grows with every tracked object made and shrinks with
        # every one freed, and nothing collects while paused: it is what the block left.
        if gc.get_count()[0] > FREEZE_ABOVE:
            gc.freeze()
        if enabled:
            gc.enable()
