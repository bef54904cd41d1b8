"""The `topolog` console script: the cyclic collector off before topolog is imported, no teardown after.

A run is one command, then the process exits (see verifier.cli.main.run, which turns the
collector off for the command itself). Importing the CLI creates tens of thousands of objects
that hold no cycles (dataclass methods, the grammar, the click commands) and the collector
would walk them several times over: 10-15 ms of every run. Only the console script imports
this module, so a library user's process keeps its collector.

Once the command has returned, the interpreter's own shutdown would free, one object at a
time, everything the run built (the rule program, the inventory, the engine's relations): 15 ms
of a shipped example's 0.3 s, and more the larger the inventory. Every file a command writes is
closed before it returns and nothing registers work for the interpreter's exit, so once stdout
and stderr are flushed the process ends at once with the command's exit code.

Before any of that, a `verify` run kept earlier on the very same inputs (verifier.core.kept_report)
answers with its kept output, having imported only the cache's modules; a run that may be kept is
recorded while it goes (verifier.core.kept_recording).
"""

from __future__ import annotations

import gc
import os
import sys

gc.disable()

TYPE_CHECKING = False  # not typing's: importing typing is 2-5 ms of a kept report's 30 ms answer
if TYPE_CHECKING:
    from typing import NoReturn

__all__ = ["run"]


def run() -> NoReturn:
    """The console entry point: verifier.cli.main.run, then an exit that skips the interpreter's teardown.

    A run kept earlier on the same inputs (verifier.core.kept_report) answers first, before the CLI
    is imported at all; a run that may be kept is recorded.
    """
    from verifier.core import kept_report

    key = kept_report.report_key(sys.argv[1:])  # None: not a kept command, or the cache is off
    recording = None
    if key is not None:
        kept = kept_report.replay(key)
        if kept is not None:
            os._exit(kept)
        from verifier.core import kept_recording

        recording = kept_recording.start(key)  # before the CLI's imports, so that what they read is recorded
    from verifier.core.exit_soon import process_ends_with_command

    process_ends_with_command()  # the exit below skips teardown: what a command closes is left for it
    from verifier.cli.main import run as run_command

    try:
        run_command()
    except SystemExit as done:
        status = done.code
    else:
        status = 0
    if recording is not None:
        recording.finish(status)
    if status is not None and not isinstance(status, int):
        # A message for the exit (sys.exit("...")): printed by the interpreter, as it always is.
        raise SystemExit(status)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        # A closed or broken output stream (`topolog ... | head -1`): the interpreter's usual exit
        # reports it as it would have without this module.
        raise SystemExit(status) from None
    os._exit(status or 0)
