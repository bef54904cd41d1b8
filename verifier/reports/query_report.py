"""A query's answers as a table or JSON (rows arrive sorted from the engine)."""

from __future__ import annotations

import json

from verifier.engine.answers import QueryResult


def render_json(result: QueryResult) -> str:
    doc = {"columns": list(result.variables), "rows": [list(r) for r in result.rows], "count": len(result.rows)}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


def render_table(result: QueryResult) -> str:
    variables, rows = result.variables, result.rows
    if not variables:
        return ("true" if rows else "false") + "\n"
    # Column by column, then one format per line: a REPL answer of thousands of rows is printed
    # at the prompt, and per-cell calls were most of its time.
    columns = [[str(v) for v in col] for col in zip(*rows, strict=True)] if rows else [[] for _ in variables]
    widths = [max([len(name), *map(len, col)]) for name, col in zip(variables, columns, strict=True)]
    line = "  ".join(f"{{:<{w}}}" for w in widths).format
    lines = [line(*variables).rstrip(), "  ".join("-" * w for w in widths)]
    lines.extend(line(*cells).rstrip() for cells in zip(*columns, strict=True))
    noun = "row" if len(rows) == 1 else "rows"
    lines.append(f"({len(rows)} {noun})")
    return "\n".join(lines) + "\n"


FORMATS = {"table": render_table, "json": render_json}
