"""`topolog audit` as text (a matrix per action and context) and as JSON; the same for `audit --against`."""

from __future__ import annotations

import json

from verifier.authorization.audit import MAX_EXAMPLES, AuditResult, DiffResult, context_label


def render_text(result: AuditResult) -> str:
    lines = [f"audit of {', '.join(result.inventories)} with {result.policies} and {result.principals_file}"]
    group_ids = list(result.groups)
    for action in result.actions:
        # One matrix per distinct outcome: contexts that change nothing share a table.
        tables: dict[str, list[int]] = {}
        for ci in range(len(result.contexts)):
            key = json.dumps([[r, result.cells.get((action, ci, r), {})] for r in result.rows], sort_keys=True)
            tables.setdefault(key, []).append(ci)
        for cis in tables.values():
            ctx = ", ".join(context_label(result.contexts[ci]) for ci in cis)
            lines.append("")
            lines.append(f"{action}  (context {ctx})")
            lines.extend(_matrix(result, action, cis[0], group_ids))
    for e in result.errors:
        lines.append(
            f"error: policy {e.policy or '?'} failed on {e.principal} {e.action} {e.resource} "
            f"(context {context_label(e.context)}); denied (fail closed): {e.message}"
        )
    s = result.stats
    lines.append("")
    lines.append(
        f"{s.requests} Cedar requests for {s.principals} principals x {s.resources} resources x "
        f"{s.actions} actions x {s.contexts} contexts ({s.principal_classes} principal classes, "
        f"{s.resource_classes} resource classes; {s.requests_without_classes} without classes)"
    )
    return "\n".join(lines) + "\n"


def _matrix(result: AuditResult, action: str, ci: int, group_ids: list[str]) -> list[str]:
    header = ["principal", *(f"{g} ({result.groups[g]})" for g in group_ids), "total"]
    table = [header]
    for r in result.rows:
        cell = result.cells.get((action, ci, r), {})
        values = [cell.get(g, 0) for g in group_ids]
        table.append([r, *(str(v) if v else "-" for v in values), str(sum(values))])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    return [
        "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ).rstrip()
        for row in table
    ]


def audit_doc(result: AuditResult) -> dict[str, object]:
    matrix = []
    for action in result.actions:
        for ci, ctx in enumerate(result.contexts):
            for r in result.rows:
                cell = result.cells.get((action, ci, r), {})
                matrix.append(
                    {
                        "action": action,
                        "context": ctx,
                        "principal": r,
                        "gpus": dict(sorted(cell.items())),
                        "total": sum(cell.values()),
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
        "matrix": matrix,
        "errors": [vars(e) for e in result.errors],
        "stats": result.stats.to_dict(),
    }


def render_diff_text(result: DiffResult) -> str:
    lines = [f"decisions changed from {result.old}", f"                     to {result.new}"]
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
    return json.dumps(audit_doc(result), indent=2, sort_keys=True) + "\n"


def render_diff_json(result: DiffResult) -> str:
    return json.dumps(diff_doc(result), indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
DIFF_FORMATS = {"text": render_diff_text, "json": render_diff_json}
