"""Query answers as an aligned table or JSON. Rows arrive sorted from the engine."""

from __future__ import annotations

import json

from verifier.datalog.ast import Row


def render_rows(variables: tuple[str, ...], rows: list[Row], fmt: str) -> str:
    if fmt == "json":
        doc = {"columns": list(variables), "rows": [list(r) for r in rows], "count": len(rows)}
        return json.dumps(doc, indent=2, sort_keys=True) + "\n"
    if not variables:
        return ("true" if rows else "false") + "\n"
    cells = [list(variables)] + [[str(v) for v in r] for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(variables))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in cells]
    lines.insert(1, "  ".join("-" * w for w in widths))
    noun = "row" if len(rows) == 1 else "rows"
    lines.append(f"({len(rows)} {noun})")
    return "\n".join(lines) + "\n"
