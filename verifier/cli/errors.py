"""How every command turns bad input into exit code 2: each problem on stderr, never a traceback."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import NoReturn, TypeVar

import click

from verifier.core.errors import EngineError, TopologError

T = TypeVar("T")


def fail(err: TopologError) -> NoReturn:
    for diag in err.diagnostics:
        click.echo(f"error: {diag}", err=True)
    sys.exit(2)


def guard(action: Callable[[], T], nothing: str = "nothing is verified") -> T:
    """Run a command body. `nothing` says what an evaluation failure leaves undecided (fail closed)."""
    try:
        return action()
    except TopologError as err:
        fail(err)
    except EngineError as err:
        click.echo(f"error: the rules could not be evaluated, so {nothing}: {err}", err=True)
        sys.exit(2)
