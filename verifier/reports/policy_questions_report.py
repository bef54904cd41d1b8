"""`topolog policy who|what|compare` as text and as JSON: sorted, so two runs print the same bytes."""

from __future__ import annotations

from verifier.authorization.analysis.equivalence import CompareResult, Counterexample
from verifier.authorization.analysis.questions import ByContext, Context, Coverage, Failure, WhatResult, WhoResult
from verifier.authorization.audit import context_label
from verifier.reports import indented_json
from verifier.reports.safe_text import one_line


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _dumps(doc: dict[str, object]) -> str:
    return indented_json.dumps(doc, indent=2, sort_keys=True) + "\n"


def _contexts_line(cov: Coverage) -> str:
    asked = ", ".join(context_label(c) for c in cov.contexts)
    return f"  contexts asked: {asked} ({cov.note})\n"


def _allowed_text(allowed: ByContext, contexts: list[Context]) -> str:
    """`policies (every context)`, or each set of policies with the contexts it allows in."""
    by_policies: dict[tuple[str, ...], list[int]] = {}
    for ci, policies in allowed:
        by_policies.setdefault(policies, []).append(ci)
    parts = []
    for policies, cis in sorted(by_policies.items()):
        where = "every context" if len(cis) == len(contexts) else ", ".join(context_label(contexts[c]) for c in cis)
        parts.append(f"{', '.join(policies)} ({where})")
    return "; ".join(parts)


def _allowed_doc(allowed: ByContext, contexts: list[Context]) -> list[dict[str, object]]:
    return [{"context": contexts[ci], "policies": list(policies)} for ci, policies in allowed]


def _failure_lines(errors: list[Failure]) -> list[str]:
    return [
        f"error: policy {f.policy or '?'} failed on {f.principal} {f.action} {f.resource} "
        f"(context {context_label(f.context)}, {f.requests} request(s) alike); denied (fail closed): {f.message}\n"
        for f in errors
    ]


def _failure_doc(f: Failure) -> dict[str, object]:
    return vars(f).copy()


def _coverage_doc(cov: Coverage) -> dict[str, object]:
    return {"contexts": cov.contexts, "complete": cov.complete, "note": cov.note}


def _table(rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  " + "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() + "\n" for r in rows]


# -- who ---------------------------------------------------------------------------


def render_who_text(r: WhoResult) -> str:
    out = [
        f"who may {r.action} on {one_line(r.resource)}\n",
        one_line(f"  {', '.join(r.inventories)} with {r.policies} and {r.principals_file}") + "\n",
        _contexts_line(r.coverage),
        "\n",
    ]
    out.append(
        f"{len(r.allowed)} of {r.principals} principals may ({r.principal_classes} principal classes, "
        f"{r.requests} Cedar requests):\n"
    )
    if r.allowed:
        out += _table([[e.principal, _allowed_text(e.allowed, r.coverage.contexts)] for e in r.allowed])
    else:
        out.append("  nobody\n")
    out += _failure_lines(r.errors)
    return "".join(out)


def who_doc(r: WhoResult) -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "question": "who",
        "inventories": list(r.inventories),
        "policies": r.policies,
        "principals": r.principals_file,
        "action": r.action,
        "resource": r.resource,
        "coverage": _coverage_doc(r.coverage),
        "allowed": [
            {"principal": e.principal, "allowed": _allowed_doc(e.allowed, r.coverage.contexts)} for e in r.allowed
        ],
        "errors": [_failure_doc(f) for f in r.errors],
        "stats": {"principals": r.principals, "principalClasses": r.principal_classes, "requests": r.requests},
    }


# -- what --------------------------------------------------------------------------


def render_what_text(r: WhatResult) -> str:
    out = [
        f"what {one_line(r.principal)} may do on {r.resource_type} resources\n",
        one_line(f"  {', '.join(r.inventories)} with {r.policies} and {r.principals_file}") + "\n",
        _contexts_line(r.coverage),
    ]
    for action in r.actions:
        rows = [row for row in r.rows if row.action == action]
        out.append(f"\n{action}:\n")
        if not rows:
            out.append("  nothing\n")
            continue
        table = []
        for row in rows:
            amount = f"{row.gpus} of {r.groups.get(row.group, 0)} GPUs"
            if r.resource_type != "Gpu":
                amount = f"{row.resources} {r.resource_type}, {amount}"
            table.append([row.group, amount, _allowed_text(row.allowed, r.coverage.contexts)])
        out += _table(table)
    out += _failure_lines(r.errors)
    out.append(
        f"\n{r.requests} Cedar requests for {r.resources} resources in {r.resource_classes} classes x "
        f"{_count(len(r.actions), 'action')} x {_count(len(r.coverage.contexts), 'context')}\n"
    )
    return "".join(out)


def what_doc(r: WhatResult) -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "question": "what",
        "inventories": list(r.inventories),
        "policies": r.policies,
        "principals": r.principals_file,
        "principal": r.principal,
        "resourceType": r.resource_type,
        "actions": list(r.actions),
        "coverage": _coverage_doc(r.coverage),
        "groups": [{"id": g, "gpus": n} for g, n in r.groups.items()],
        "allowed": [
            {
                "action": row.action,
                "group": row.group,
                "resources": row.resources,
                "gpus": row.gpus,
                "allowed": _allowed_doc(row.allowed, r.coverage.contexts),
            }
            for row in r.rows
        ],
        "errors": [_failure_doc(f) for f in r.errors],
        "stats": {"resources": r.resources, "resourceClasses": r.resource_classes, "requests": r.requests},
    }


# -- compare -----------------------------------------------------------------------


def _example_line(d: Counterexample) -> str:
    first = ", ".join(d.first_policies) or "no policy"
    second = ", ".join(d.second_policies) or "no policy"
    return (
        one_line(
            f"  {d.principal} {d.action} {d.resource} context {d.context}: "
            f"first {d.first.upper()} ({first}), second {d.second.upper()} ({second})"
        )
        + "\n"
    )


def render_compare_text(r: CompareResult) -> str:
    inv = r.inventory
    out = [
        one_line(f"compare {r.first} (first) with {r.second} (second)") + "\n",
        "\n",
        one_line(
            f"inventory analysis: {', '.join(r.inventories)}: {inv.principals} principals x {inv.resources} resources "
            f"(every resource type) x every action; {inv.requests} Cedar requests"
        )
        + "\n",
        _contexts_line(inv.contexts),
    ]
    if inv.decisions:
        out.append(f"  DIFFERENT: {inv.decisions} decisions differ; the first, sorted:\n")
        out += [_example_line(d) for d in inv.differences]
    else:
        # Only in the contexts asked, where those are not every context (the schema-wide line then decides).
        where = "" if inv.contexts.complete else ", in the contexts asked"
        out.append(f"  equivalent for every principal and resource of this inventory{where}\n")
    out.append("\n")
    if r.schema_wide is None:
        out.append("schema-wide analysis: not asked (--inventory-only)\n")
    else:
        out.append("schema-wide analysis (SMT): every entity and context the schema allows\n")
        if r.schema_wide.differences:
            out.append(
                f"  DIFFERENT: {len(r.schema_wide.differences)} counterexample(s), one per action and entity types:\n"
            )
            out += [_example_line(d) for d in r.schema_wide.differences]
        else:
            out.append("  equivalent for every entity the schema allows\n")
    out.append("\n" + ("equivalent\n" if r.equivalent else "not equivalent\n"))
    return "".join(out)


def _difference_doc(d: Counterexample) -> dict[str, object]:
    doc: dict[str, object] = vars(d).copy()
    doc["first_policies"] = list(d.first_policies)
    doc["second_policies"] = list(d.second_policies)
    return doc


def compare_doc(r: CompareResult) -> dict[str, object]:
    inv = r.inventory
    return {
        "schemaVersion": 1,
        "question": "compare",
        "inventories": list(r.inventories),
        "first": r.first,
        "second": r.second,
        "equivalent": r.equivalent,
        "inventory": {
            "equivalent": not inv.decisions,
            "decisionsDiffering": inv.decisions,
            "differences": [_difference_doc(d) for d in inv.differences],
            "coverage": _coverage_doc(inv.contexts),
            "stats": {"principals": inv.principals, "resources": inv.resources, "requests": inv.requests},
        },
        "schemaWide": None
        if r.schema_wide is None
        else {
            "equivalent": not r.schema_wide.differences,
            "differences": [_difference_doc(d) for d in r.schema_wide.differences],
        },
    }


WHO_FORMATS = {"text": render_who_text, "json": lambda r: _dumps(who_doc(r))}
WHAT_FORMATS = {"text": render_what_text, "json": lambda r: _dumps(what_doc(r))}
COMPARE_FORMATS = {"text": render_compare_text, "json": lambda r: _dumps(compare_doc(r))}
