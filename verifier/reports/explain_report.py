"""`topolog explain` as text (proof trees) and as JSON, each input fact followed by where it was written."""

from __future__ import annotations

import json
from collections.abc import Callable

from verifier.checks.explain import ExplainReport
from verifier.core.errors import SourceLocation
from verifier.engine.backend import Proof
from verifier.reports.safe_text import one_line
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals


def leaf_locator(
    inventory: Inventory,
    principals: Principals | None = None,
) -> Callable[[Proof], SourceLocation | None]:
    """Where an input fact was written: its first argument that is an object or link id, else a
    model, else a principal of the principals file (authorization facts such as `permitted`).
    """

    def locate(proof: Proof) -> SourceLocation | None:
        symbols = [v for v in proof.row if isinstance(v, str)]
        for v in symbols:
            if v in inventory.objects or v in inventory.links:
                return inventory.location(v)
        for v in symbols:
            if v in inventory.models or v in inventory.templates:
                return inventory.location(v)
        if principals is not None:
            for v in symbols:
                if v in principals.principals:
                    return principals.principals[v].loc
        return None

    return locate


def render_text(report: ExplainReport) -> str:
    items = report.items
    locate = leaf_locator(report.inventory, report.principals)  # Proof.render escapes the places
    blocks: list[str] = []
    for item in items:
        tree = item.proof.render(locate=locate)
        if item.finding is not None:
            f = item.finding
            head = one_line(f"{f.location}: {f.severity} {f.rule}: {f.message} [{', '.join(f.subjects)}]")
            tree = f"{head}\nfingerprint {item.fingerprint}\n{tree}"
        blocks.append(tree)
    return "\n\n".join(blocks) + "\n"


def render_json(report: ExplainReport) -> str:
    """A fact: its proof tree. Findings: `{"findings": [finding with fingerprint and proof, ...]}`."""
    items = report.items
    locate = leaf_locator(report.inventory, report.principals)
    if len(items) == 1 and items[0].finding is None:
        doc: object = items[0].proof.to_dict(locate)
    else:
        findings = []
        for item in items:
            entry = item.finding.to_dict() if item.finding is not None else {}
            entry["fingerprint"] = item.fingerprint
            entry["proof"] = item.proof.to_dict(locate)
            findings.append(entry)
        doc = {"findings": findings}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


FORMATS = {"text": render_text, "json": render_json}
