"""JSON read exactly: Python's json keeps the last of a repeated key and accepts NaN and Infinity silently."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any


class InexactJSON(ValueError):
    """JSON that parses but cannot be read exactly: a key given twice, NaN or Infinity."""


def loads_exact(text: str, parse_int: Callable[[str], Any] | None = None) -> Any:
    """`json.loads`, refusing what json would read inexactly (InexactJSON); JSONDecodeError and
    RecursionError (nesting past the interpreter's stack) come from json as they are.
    """
    return json.loads(text, object_pairs_hook=_unique_keys, parse_constant=_no_constant, parse_int=parse_int)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InexactJSON(f"key {key!r} is given twice in one object; expected each key once")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise InexactJSON(f"{name} is not JSON; expected a number, a string or a boolean")
