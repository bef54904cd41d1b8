"""The `topolog` console script: the cyclic collector is turned off before topolog is imported.

A run is one command, then the process exits (see verifier.cli.main.run, which turns the
collector off for the command itself). Importing the CLI creates tens of thousands of objects
that hold no cycles (dataclass methods, the grammar, the click commands) and the collector
would walk them several times over: 10-15 ms of every run. Only the console script imports
this module, so a library user's process keeps its collector.
"""

from __future__ import annotations

import gc

gc.disable()

from verifier.cli.main import run  # noqa: E402  (after the collector is off, which is this module's point)

__all__ = ["run"]
