"""topolog: verify AI infrastructure topology with Datalog rules and Cedar policies.

The library API (documented in docs/library.md) is imported on first use, so that
`import verifier.<stage>` stays as light as that stage:

    from verifier import audit, authorize, explain, load, place, query, verify
"""

from __future__ import annotations

from verifier.core.version import __version__

# Not typing.TYPE_CHECKING: importing typing is 2-5 ms of every run, and a kept report's whole
# answer (verifier.core.kept_report) is about 30 ms. Type checkers read any TYPE_CHECKING as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from verifier.core.errors import TopologError
    from verifier.reports import render
    from verifier.session.api import (
        audit,
        authorize,
        explain,
        load,
        load_authorization,
        place,
        query,
        verify,
        what_if,
    )

__all__ = [
    "TopologError",
    "__version__",
    "audit",
    "authorize",
    "explain",
    "load",
    "load_authorization",
    "place",
    "query",
    "render",
    "verify",
    "what_if",
]

_LAZY = {
    "TopologError": "verifier.core.errors",
    "render": "verifier.reports",
    **{
        name: "verifier.session.api"
        for name in (
            "audit",
            "authorize",
            "explain",
            "load",
            "load_authorization",
            "place",
            "query",
            "verify",
            "what_if",
        )
    },
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'verifier' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
