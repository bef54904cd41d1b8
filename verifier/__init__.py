"""topolog: verify AI infrastructure topology with Datalog rules and Cedar policies.

The library API (documented in docs/library.md) is imported on first use, so that
`import verifier.<stage>` stays as light as that stage:

    from verifier import audit, authorize, explain, load, place, query, verify
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from verifier.core.version import __version__

if TYPE_CHECKING:
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
    return getattr(importlib.import_module(module), name)
