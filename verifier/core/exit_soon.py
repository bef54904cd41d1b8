"""Memory a command is done with, left for the process's exit when the process ends with the command.

The console script (verifier.cli.entry) runs one command and ends the process at once, without
the interpreter's teardown. Memory a command frees before it returns is then freed for nothing,
one object at a time: closing the memory engine after a verification frees every derived tuple
and index, 4-6 ms of a shipped example and 40 ms of a 1,024-GPU fleet. Such memory is handed
here instead: in the console script it stays referenced until the process ends; in any other
process (a library user's, a test's) nothing is kept and it is freed as before.

One value is kept per kind, the last handed in: a command that closes several evaluations (a
verification of several clusters) frees each when the next takes its place, so a process never
holds more than one closed evaluation beyond what it would anyway.
"""

from __future__ import annotations

_ENDS_WITH_COMMAND = False
_KEPT: dict[str, object] = {}


def process_ends_with_command() -> None:
    """Said by the console script only: this process exits as soon as its command returns."""
    global _ENDS_WITH_COMMAND
    _ENDS_WITH_COMMAND = True


def ends_with_command() -> bool:
    """Whether this process exits as soon as its command returns (the console script said so)."""
    return _ENDS_WITH_COMMAND


def leave_for_exit(kind: str, value: object) -> None:
    """Keep `value` until the process ends when it ends with its command (replacing the last value of
    `kind`, then freed); otherwise keep nothing, so that the caller's dropping it frees it.
    """
    if _ENDS_WITH_COMMAND:
        _KEPT[kind] = value


def kept(kind: str) -> object | None:
    """The value of `kind` left for the exit, if any (for tests)."""
    return _KEPT.get(kind)
