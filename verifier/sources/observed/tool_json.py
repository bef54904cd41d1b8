"""One tool output's JSON document, refused at its line when it is not one."""

from __future__ import annotations

import json
from typing import Any

from verifier.core.errors import SourceLocation, TopologError


def tool_json(text: str, filename: str, expected: str, invalid: str) -> Any:
    """The JSON document `text` holds. NaN and Infinity stay the words they are (no figure a tool
    prints is one, so a reader refuses them where it reads a number). `expected` ends the message for
    a document nested past Python's recursion limit, `invalid` the one for text that is no JSON.
    """
    try:
        return json.loads(text, parse_constant=lambda c: c)
    except RecursionError:
        raise TopologError.at(SourceLocation(filename, 1), f"JSON nested too deeply; {expected}") from None
    except json.JSONDecodeError as err:
        raise TopologError.at(
            SourceLocation(filename, err.lineno, err.colno), f"not valid JSON ({err.msg}); {invalid}"
        ) from None
