"""A query's answers as a table or JSON (rows arrive sorted from the engine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import cast

from verifier.engine.answers import QueryResult
from verifier.engine.ast import Value


def render_json(result: QueryResult) -> str:
    doc = {"columns": list(result.variables), "rows": [list(r) for r in result.rows], "count": len(result.rows)}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def render_table(result: QueryResult) -> str:
    return "".join(table_chunks(result))


CHUNK_ROWS = 512
"""Rows per piece of a table written at a time (`table_chunks`)."""


def table_chunks(result: QueryResult, rows_per_chunk: int = CHUNK_ROWS) -> Iterator[str]:
    """`render_table`'s text in pieces, header first: a REPL writes each as it comes, so that the first
    rows of a 4,000-row answer are on the screen before the last ones are formatted.
    """
    variables, rows = result.variables, result.rows
    if not variables:
        yield ("true" if rows else "false") + "\n"
        return
    # The widths need every cell, but not every cell as text: a column's width comes from its values
    # in bulk (_width), and each piece formats only its own rows, one format per line. So the first
    # rows of a 6,000-row answer are written after a third of the work, not all of it.
    columns: list[tuple[Value, ...]] = list(zip(*rows, strict=True)) if rows else [() for _ in variables]
    widths = [max(len(name), _width(col)) for name, col in zip(variables, columns, strict=True)]
    # printf-style: `%-Ns` writes str(value) padded to N, as str.ljust would, in half the time of
    # str.format's `{:<N}` (whose spec is parsed again for every row).
    line = "  ".join(f"%-{w}s" for w in widths).__mod__
    yield line(tuple(variables)).rstrip() + "\n" + "  ".join("-" * w for w in widths) + "\n"
    # `%` reads a tuple as the row's values (rows are tuples; anything else is made one).
    texts = rows if all(type(row) is tuple for row in rows[:1]) else [tuple(row) for row in rows]
    for start in range(0, len(rows), rows_per_chunk):
        # map: no Python frame per row (a generator's was half of a 6,000-row answer).
        yield "\n".join(map(str.rstrip, map(line, texts[start : start + rows_per_chunk]))) + "\n"
    noun = "row" if len(rows) == 1 else "rows"
    yield f"({len(rows)} {noun})\n"


def _width(column: tuple[Value, ...]) -> int:
    """The width of a column's widest value as str() writes it.

    In bulk, without making each value text: symbols by their lengths, whole numbers by their extremes.
    """
    kinds = set(map(type, column))
    if kinds == {str}:
        return max(map(len, cast("tuple[str, ...]", column)))
    if kinds == {int}:
        return max(len(str(max(column))), len(str(min(column))))
    return max(map(len, map(str, column)), default=0)


FORMATS = {"table": render_table, "json": render_json}
