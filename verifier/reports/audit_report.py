"""`topolog audit` as text (a matrix per action and context) and as JSON; the same for `audit --against`."""

from __future__ import annotations

import json

from verifier.authorization.audit import MAX_EXAMPLES, AuditResult, DiffResult, context_label
from verifier.reports import indented_json
from verifier.reports.safe_text import one_line


def render_text(result: AuditResult) -> str:
    # Paths from the command line (a folder's name may hold a newline): escaped, one header line.
    out = [
        one_line(f"audit of {', '.join(result.inventories)} with {result.policies} and {result.principals_file}") + "\n"
    ]
    group_ids = list(result.groups)
    header = ["principal", *(f"{g} ({result.groups[g]})" for g in group_ids), "total"]
    same = _SameContent()
    for action in result.actions:
        # One matrix per distinct outcome: contexts that change nothing share a table. Rows are
        # the same principals in every context, so the cells alone tell two tables apart.
        tables: dict[tuple[int, ...], list[int]] = {}
        for ci in range(len(result.contexts)):
            key = tuple(same.key(result.cells.get((action, ci, r), _NO_CELL)) for r in result.rows)
            tables.setdefault(key, []).append(ci)
        for cis in tables.values():
            ctx = ", ".join(context_label(result.contexts[ci]) for ci in cis)
            out.append(f"\n{action}  (context {ctx})\n")
            _matrix(result, action, cis[0], group_ids, header, out)
    for e in result.errors:
        out.append(
            f"error: policy {e.policy or '?'} failed on {e.principal} {e.action} {e.resource} "
            f"(context {context_label(e.context)}); denied (fail closed): {e.message}\n"
        )
    s = result.stats
    out.append(
        f"\n{s.requests} Cedar requests for {s.principals} principals x {s.resources} resources x "
        f"{s.actions} actions x {s.contexts} contexts ({s.principal_classes} principal classes, "
        f"{s.resource_classes} resource classes; {s.requests_without_classes} without classes)\n"
    )
    return "".join(out)


_NO_CELL: dict[str, int] = {}
"""The cell of a principal allowed nothing: one shared, never-written dict, so that it is rendered once."""


class _SameContent:
    """A small int per cell content: equal for cells that `json.dumps(cell, sort_keys=True)` writes alike.

    Comparing tables by their JSON meant dumping every cell of every context (4,096 groups per
    cell at 131,072 GPUs); cells are shared by every member of a principal class, so each distinct
    object is looked at once here (by id: every cell lives in the result for the whole render).
    """

    def __init__(self) -> None:
        self._by_id: dict[int, int] = {}
        self._by_content: dict[tuple[tuple[str, type, int], ...], int] = {}

    def key(self, cell: dict[str, int]) -> int:
        known = self._by_id.get(id(cell))
        if known is None:
            # The type too: True == 1 in Python but not in JSON.
            content = tuple((g, type(n), n) for g, n in sorted(cell.items()))
            known = self._by_id[id(cell)] = self._by_content.setdefault(content, len(self._by_content))
        return known


def _matrix(result: AuditResult, action: str, ci: int, group_ids: list[str], header: list[str], out: list[str]) -> None:
    """The table, one line per principal, appended to `out`; columns padded to their widest cell.

    Every member of a principal class shares one cell object, so its cells (one per hardware
    group, thousands on a big fleet) are formatted once per distinct cell, not once per row.
    """
    cells = [result.cells.get((action, ci, r), _NO_CELL) for r in result.rows]
    distinct: dict[int, list[str]] = {}  # id(cell) -> its cells as text: groups, then total
    for cell in cells:
        if id(cell) not in distinct:
            values = [cell.get(g, 0) for g in group_ids]
            distinct[id(cell)] = [*(str(v) if v else "-" for v in values), str(sum(values))]
    widths = [
        max(len(r) for r in [header[0], *result.rows]),
        *(max(map(len, column)) for column in zip(header[1:], *distinct.values(), strict=True)),
    ]
    out.append(_line(header, widths) + "\n")
    tails: dict[int, str] = {}  # id(cell) -> its line after the principal column
    for r, cell in zip(result.rows, cells, strict=True):
        tail = tails.get(id(cell))
        if tail is None:
            tail = tails[id(cell)] = "  " + "  ".join(
                c.rjust(w) for c, w in zip(distinct[id(cell)], widths[1:], strict=True)
            )
        if tail[-1].isspace():
            # Never so (the total is the last column), but then the line is stripped whole.
            out.append(_line([r, *distinct[id(cell)]], widths) + "\n")
        else:
            out.extend((r.ljust(widths[0]), tail, "\n"))


def _line(row: list[str], widths: list[int]) -> str:
    return "  ".join(
        c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
    ).rstrip()


def audit_doc(result: AuditResult) -> dict[str, object]:
    """The JSON report as data; each matrix row its own `gpus` dict, sorted."""
    return _doc(result, shared=False)


def _doc(result: AuditResult, shared: bool, matrix: bool = True) -> dict[str, object]:
    """The report as data (without `matrix`, its matrix empty: render_json writes it).

    With `shared`, rows hold the result's cell dicts themselves (the encoder sorts their keys and
    writes each distinct one once); otherwise each row gets a sorted copy, safe to change.
    """
    totals: dict[int, int] = {}  # id(cell) -> its sum (cells live in the result throughout)
    rows: list[dict[str, object]] = []
    for action in result.actions if matrix else ():
        for ci, ctx in enumerate(result.contexts):
            for r in result.rows:
                cell = result.cells.get((action, ci, r), _NO_CELL)
                total = totals.get(id(cell))
                if total is None:
                    total = totals[id(cell)] = sum(cell.values())
                rows.append(
                    {
                        "action": action,
                        "context": ctx,
                        "principal": r,
                        "gpus": cell if shared else dict(sorted(cell.items())),
                        "total": total,
                    }
                )
    return {
        "schemaVersion": 1,
        "inventories": list(result.inventories),
        "policies": result.policies,
        "principals": result.principals_file,
        "actions": list(result.actions),
        "contexts": result.contexts,
        "groups": [{"id": g, "gpus": n} for g, n in result.groups.items()],
        "matrix": rows,
        "errors": [vars(e) for e in result.errors],
        "stats": result.stats.to_dict(),
    }


def render_diff_text(result: DiffResult) -> str:
    lines = [
        f"decisions changed from {one_line(str(result.old))}",
        f"                     to {one_line(str(result.new))}",
    ]
    for c in result.changes:
        lines.append("")
        lines.append(
            f"{c.action} (context {context_label(c.context)}): {c.before} -> {c.after}: "
            f"{c.decisions} decisions ({c.gpus} principal-GPU pairs)"
        )
        for ex in c.examples:
            before = ", ".join(ex["before"]) or "no policy"  # type: ignore[arg-type]
            after = ", ".join(ex["after"]) or "no policy"  # type: ignore[arg-type]
            lines.append(f"  e.g. {ex['principal']} on {ex['resource']}: was {before}; now {after}")
    for label, uids in (("only before", result.only_old), ("only after", result.only_new)):
        if uids:
            more = ", ..." if len(uids) > MAX_EXAMPLES else ""
            lines.append(f"{label}: {len(uids)} ({', '.join(uids[:MAX_EXAMPLES])}{more})")
    lines.append("")
    s = result.stats
    lines.append(
        f"{result.changed} decisions changed; {s.requests} Cedar requests "
        f"({s.requests_without_classes} without classes)"
    )
    return "\n".join(lines) + "\n"


def diff_doc(result: DiffResult) -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "old": result.old,
        "new": result.new,
        "changed": result.changed,
        "changes": [vars(c) for c in result.changes],
        "onlyOld": result.only_old,
        "onlyNew": result.only_new,
        "stats": result.stats.to_dict(),
    }


def render_json(result: AuditResult) -> str:
    """`json.dumps(audit_doc(result), indent=2, sort_keys=True)` and a newline, byte for byte.

    Not json.dumps: with an indent it runs the pure-Python encoder (11 s at 131,072 GPUs). The
    matrix (a row per principal, action and context: 12,276 rows with 1,023 principals) is not
    walked value by value either: every row has the same five keys, and its two containers (the
    context, the cell) are each one of a few objects, each encoded once; a row is then a few
    pieces of text, joined once with the rest. The rest of the document goes through indented_json
    with an empty matrix, and the matrix takes that empty one's place.
    """
    text = indented_json.dumps(_doc(result, shared=True, matrix=False), indent=2, sort_keys=True)
    # Top-level keys are the only text at the start of a line after two spaces (a string holds no
    # raw newline, deeper keys are indented further): the empty matrix's place is found exactly.
    empty = '\n  "matrix": [],\n'
    at = text.index(empty)
    out = [text[:at], '\n  "matrix": ']
    _matrix_json(result, out)
    out += [",\n", text[at + len(empty) :], "\n"]
    return "".join(out)


_ROW_PAD = "\n" + " " * 6
"""Before each key of a matrix row: the row is at depth 2 of the document, its keys at depth 3."""


def _matrix_json(result: AuditResult, out: list[str]) -> None:
    """The matrix as indented_json writes it at depth 1 (its rows in `_doc`'s order), appended to `out`."""
    string = json.encoder.encode_basestring_ascii  # what json writes a str as
    encoded: dict[int, str] = {}  # id(container) -> its text at depth 3 (each lives in the result)

    def at_depth_3(value: dict[str, object] | dict[str, int]) -> str:
        text = encoded.get(id(value))
        if text is None:
            # At depth 0 and moved three levels in: what indented_json writes there (a string holds
            # no raw newline, so every newline is indentation).
            text = indented_json.dumps(value, indent=2, sort_keys=True).replace("\n", _ROW_PAD)
            encoded[id(value)] = text
        return text

    totals: dict[int, str] = {}  # id(cell) -> its sum
    principals = [f',{_ROW_PAD}"principal": {string(r)},{_ROW_PAD}"total": ' for r in result.rows]
    first = True
    for action in result.actions:
        action_text = string(action)
        for ci, ctx in enumerate(result.contexts):
            head = f'{{{_ROW_PAD}"action": {action_text},{_ROW_PAD}"context": {at_depth_3(ctx)},{_ROW_PAD}"gpus": '
            for r, principal in zip(result.rows, principals, strict=True):
                cell = result.cells.get((action, ci, r), _NO_CELL)
                total = totals.get(id(cell))
                if total is None:
                    total = totals[id(cell)] = int.__repr__(sum(cell.values()))
                out += ("[\n    " if first else ",\n    ", head, at_depth_3(cell), principal, total, "\n    }")
                first = False
    out.append("[]" if first else "\n  ]")


def render_diff_json(result: DiffResult) -> str:
    return indented_json.dumps(diff_doc(result), indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
DIFF_FORMATS = {"text": render_diff_text, "json": render_diff_json}
