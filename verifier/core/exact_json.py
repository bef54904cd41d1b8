"""JSON read exactly: Python's json keeps the last of a repeated key and accepts NaN and Infinity silently."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any


class InexactJSON(ValueError):
    """JSON that parses but cannot be read exactly: a key given twice, NaN or Infinity, a number
    past a float's range (1e400 would be read as infinity, 1e-400 as 0), a string holding half a
    surrogate pair.
    """


_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
"""A \\uD800..\\uDFFF escape: only then can a parsed string hold a lone surrogate (a text decoded
from UTF-8 holds none), so only then are the strings looked through."""


def loads_exact(text: str, parse_int: Callable[[str], Any] | None = None) -> Any:
    """`json.loads`, refusing what json would read inexactly (InexactJSON); JSONDecodeError and
    RecursionError (nesting past the interpreter's stack) come from json as they are.
    """
    doc = json.loads(
        text,
        object_pairs_hook=_unique_keys,
        parse_constant=_no_constant,
        parse_int=parse_int,
        parse_float=_finite_float,
    )
    if _SURROGATE_ESCAPE.search(text):
        _no_lone_surrogate(doc)
    return doc


def _finite_float(digits: str) -> float:
    value = float(digits)
    if not math.isfinite(value):
        raise InexactJSON(
            f"{_shown(digits)} is past the largest number a float holds (about 1.8e308); expected a finite number"
        )
    if value == 0.0 and _NONZERO.search(digits.partition("e")[0].partition("E")[0]):
        # 1e-400 is below the smallest float (about 4.9e-324): json reads it as 0, a value the
        # request did not write (a share, a threshold). Refused like 1e400 rather than guessed.
        raise InexactJSON(
            f"{_shown(digits)} is not 0 but below the smallest number a float holds (about 4.9e-324), "
            "so it would be read as 0; expected 0 or a number a float holds"
        )
    return value


_NONZERO = re.compile("[1-9]")


def _shown(digits: str) -> str:
    return digits if len(digits) <= 40 else f"{digits[:40]}... ({len(digits)} characters)"


def _no_lone_surrogate(value: Any) -> None:
    """InexactJSON for a string (key or value) with an unpaired \\uD800..\\uDFFF escape: it is no
    character, and nothing can write it back as UTF-8 (the answer echoing it could not be sent).
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as err:
                code = ord(item[err.start])
                raise InexactJSON(
                    f"the string {item[:40]!r} holds \\u{code:04x}, half of a surrogate pair; expected whole characters"
                ) from None
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InexactJSON(f"key {key!r} is given twice in one object; expected each key once")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise InexactJSON(f"{name} is not JSON; expected a number, a string or a boolean")
