"""The audit report renders as the plain implementation did, byte for byte, only faster.

The reference below is that implementation (one `json.dumps` per matrix to find the tables
that contexts share, one Python step per cell); the renderers must agree with it on real
audits and on hand-made results with the awkward cases: shared and unshared cells, a zero
count next to a missing one, names that need escaping, no principals at all.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reports.output_helpers import ROOT

from verifier.authorization.audit import AuditError, AuditResult, AuditStats, audit, context_label
from verifier.authorization.evaluate import ACTIONS
from verifier.reports.audit_report import audit_doc, render_json, render_text
from verifier.session.api import load_authorization

SMALL = ROOT / "tests" / "authorization" / "small"


def _reference_text(result: AuditResult) -> str:
    lines = [f"audit of {', '.join(result.inventories)} with {result.policies} and {result.principals_file}"]
    group_ids = list(result.groups)
    for action in result.actions:
        tables: dict[str, list[int]] = {}
        for ci in range(len(result.contexts)):
            key = json.dumps([[r, result.cells.get((action, ci, r), {})] for r in result.rows], sort_keys=True)
            tables.setdefault(key, []).append(ci)
        for cis in tables.values():
            lines.append("")
            lines.append(f"{action}  (context {', '.join(context_label(result.contexts[ci]) for ci in cis)})")
            header = ["principal", *(f"{g} ({result.groups[g]})" for g in group_ids), "total"]
            table = [header]
            for r in result.rows:
                cell = result.cells.get((action, cis[0], r), {})
                values = [cell.get(g, 0) for g in group_ids]
                table.append([r, *(str(v) if v else "-" for v in values), str(sum(values))])
            widths = [max(len(row[i]) for row in table) for i in range(len(header))]
            for row in table:
                cols = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
                lines.append("  ".join(cols).rstrip())
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


def _reference_json(result: AuditResult) -> str:
    return json.dumps(audit_doc(result), indent=2, sort_keys=True) + "\n"


def _hand_made(rows: list[str]) -> AuditResult:
    shared = {"rä☃": 4, 'r"q\\': 2}
    zero = {"rä☃": 0}  # a zero count: "-" in the table like a missing one, but another JSON cell
    contexts: list[dict[str, object]] = [{}, {"incident": False}, {"incident": True}, {"note": "é\n"}]
    cells: dict[tuple[str, int, str], dict[str, int]] = {}
    for ci in range(len(contexts)):
        for i, r in enumerate(rows):
            if ci == 0 and i % 2 == 0:
                cells[("schedule", ci, r)] = shared
            elif ci == 1 and i % 2 == 0:
                cells[("schedule", ci, r)] = {'r"q\\': 2, "rä☃": 4}  # equal to `shared`, another object
            elif ci == 2 and i == 0:
                cells[("schedule", ci, r)] = zero
            elif ci == 3:
                cells[("drain", ci, r)] = {"rä☃": 1000 + i, "gone": 7}  # one per row; a group not in `groups`
    return AuditResult(
        ("inv/ä.yaml", "b.yaml"),
        "pol",
        "people.yml",
        ("schedule", "drain"),
        contexts,
        {'r"q\\': 2, "rä☃": 4, "empty": 0},
        rows,
        cells,
        [AuditError('User::"ü"', "drain", 'Gpu::"n0/gpu0"', {"incident": True}, "", "boom\t\u2028")],
        AuditStats(principals=len(rows), resources=6, actions=2, contexts=4, requests=9),
    )


HAND_MADE = {
    "rows": ['Team::"a"', 'User::"üser𝄞"', 'User::"a-much-longer-name"', 'User::"b"'],
    "one row": ['User::"x"'],
    "no rows": [],
}


@pytest.mark.parametrize("rows", HAND_MADE.values(), ids=HAND_MADE.keys())
def test_hand_made_results_render_as_the_reference(rows: list[str]) -> None:
    result = _hand_made(rows)
    assert render_text(result) == _reference_text(result)
    assert render_json(result) == _reference_json(result)


CASES = {
    "small": ([SMALL / "cluster.yaml"], "Gpu", False),
    "small teams": ([SMALL / "cluster.yaml"], "Gpu", True),
    "small nodes": ([SMALL / "cluster.yaml"], "Node", False),
    "mixed fleet": ([ROOT / "inventories" / "mixed-fleet.yaml"], "Gpu", False),
    "mixed fleet nodes": ([ROOT / "inventories" / "mixed-fleet.yaml"], "Node", False),
    "errors": ([ROOT / "tests" / "rules" / "fixtures" / "AUTHZ002" / "fail.yaml"], "Gpu", False),
}


@pytest.mark.parametrize(("inventory", "resource_type", "teams"), CASES.values(), ids=CASES.keys())
def test_audits_render_as_the_reference(inventory: list[Path], resource_type: str, teams: bool) -> None:
    result = audit(load_authorization(inventory), list(ACTIONS), resource_type, teams)
    assert render_text(result) == _reference_text(result)
    assert render_json(result) == _reference_json(result)


def test_the_document_keeps_one_sorted_dict_per_row() -> None:
    # audit_doc is data for callers: changing one row must not change another through a shared cell.
    doc = audit_doc(_hand_made(HAND_MADE["rows"]))
    matrix = doc["matrix"]
    assert isinstance(matrix, list)
    first, third = matrix[0], matrix[2]  # both rows of the shared cell
    assert first["gpus"] == third["gpus"] and first["gpus"] is not third["gpus"]
    assert list(first["gpus"]) == sorted(first["gpus"])


def test_the_matrix_goes_where_the_documents_own_key_is() -> None:
    # render_json writes the matrix in place of an empty one; text that looks like that key inside
    # strings (a path, a principal, a context value, the other top-level values) must not draw it.
    # json.dumps escapes the quotes and the newline of such text, so the reference has one matrix.
    lookalike = '\n  "matrix": [],\n'
    result = _hand_made([f'User::"{lookalike}"', 'User::"b"'])
    result.inventories = (lookalike, "b.yaml")
    result.policies = lookalike
    result.contexts.append({"note": lookalike})
    assert render_json(result) == _reference_json(result)
    # No actions: an empty matrix, written as json.dumps writes an empty list.
    result.actions = ()
    assert render_json(result) == _reference_json(result)
    assert '\n  "matrix": [],\n' in render_json(result)
