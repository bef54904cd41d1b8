"""Heavy libraries imported when first used, not when a module that may need them is imported.

networkx takes 0.3-0.4 s to import, more than `authorize` spends deciding a request, and
only some runs call it (graph summaries for `verify`, stratifying a program that is not in
the cache). The standard library's `importlib.util.LazyLoader` defers a module's execution
to its first attribute access; this is its documented recipe.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """`name`, imported on first attribute access (at once if it is already imported or cannot be deferred)."""
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        return importlib.import_module(name)  # raises the usual ModuleNotFoundError
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module
