"""A query's answers as a table or JSON (rows arrive sorted from the engine)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from itertools import islice, starmap

from verifier.engine.answers import QueryResult


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
    # Column by column, then one format per line: a REPL answer of thousands of rows is printed
    # at the prompt, and per-cell calls were most of its time. The widths need every cell.
    columns = [[str(v) for v in col] for col in zip(*rows, strict=True)] if rows else [[] for _ in variables]
    widths = [max([len(name), *map(len, col)]) for name, col in zip(variables, columns, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    yield line(*variables).rstrip() + "\n" + "  ".join("-" * w for w in widths) + "\n"
    cells = zip(*columns, strict=True)
    for _ in range(0, len(rows), rows_per_chunk):
        # map and starmap: no Python frame per row (a generator's was half of a 6,000-row answer).
        yield "\n".join(map(str.rstrip, starmap(line, islice(cells, rows_per_chunk)))) + "\n"
    noun = "row" if len(rows) == 1 else "rows"
    yield f"({len(rows)} {noun})\n"


FORMATS = {"table": render_table, "json": render_json}
