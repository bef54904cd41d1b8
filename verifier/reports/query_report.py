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
    cells = [list(variables)] + [[str(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(variables))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    noun = "row" if len(rows) == 1 else "rows"
    lines.append(f"({len(rows)} {noun})")
    return "\n".join(lines) + "\n"


FORMATS = {"table": render_table, "json": render_json}
