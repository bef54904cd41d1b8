"""How every command turns bad input into exit code 2: each problem on stderr, never a traceback."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

import click

from verifier.core.errors import EngineError, TopologError
from verifier.core.limits import out_of_memory
from verifier.reports.safe_text import one_line

T = TypeVar("T")

_LOCATED = re.compile(r"(?P<place>[^\s:]+:\d+(?::\d+)?): (?P<what>.+)")


def fail(err: TopologError) -> NoReturn:
    for diag in err.diagnostics:
        # One problem, one line: a path, an option value or an id from the input may hold a
        # newline, and `...\n::error::` would start a line that GitHub Actions runs as a command.
        click.echo(f"error: {one_line(str(diag))}", err=True)
    sys.exit(2)


def guard(action: Callable[[], T], nothing: str = "nothing is verified") -> T:
    """Run a command body. `nothing` says what an evaluation failure leaves undecided (fail closed)."""
    try:
        return action()
    except TopologError as err:
        fail(err)
    except MemoryError:
        # The frames that held the memory are gone by now: there is room to say what happened.
        fail(out_of_memory())
    except EngineError as err:
        text = one_line(str(err))
        # The place first, where the engine names one (`rules.dl:2:27: arithmetic overflowed ...`).
        located = _LOCATED.match(text)
        if located is not None:
            click.echo(
                f"error: {located['place']}: {located['what']}; the rules could not be evaluated, so {nothing}",
                err=True,
            )
        else:
            click.echo(f"error: the rules could not be evaluated, so {nothing}: {text}", err=True)
        sys.exit(2)
