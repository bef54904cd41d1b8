"""`topolog explain` (and the REPL's `.explain`): why a fact or a finding holds, down to inventory lines.

What to explain is one of:

- a ground fact, `within("dgx00/gpu0", "pod0")`;
- a finding's fingerprint, as `topolog verify --format json` reports it (field
  `fingerprint`; a unique prefix of at least 8 hex digits is enough);
- `RULE:subject[,subject...]`, e.g. `TOPO004:n1`: the findings of that check whose
  subjects include every subject given.

Every input fact of a proof is shown with the inventory file:line:col that it came from:
the place of its first argument that is an object or link id (else a catalogue model).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Protocol

from verifier.checks.check import Check
from verifier.checks.findings import Finding
from verifier.checks.verify import check_findings, link_lines, locator, made_places
from verifier.core.errors import ProgramError, SourceLocation, TopologError
from verifier.engine.ast import Atom, Const, Program, Row
from verifier.engine.backend import Backend, Proof, format_fact
from verifier.engine.checks import check_query
from verifier.engine.parser import parse_query
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals

WHERE = SourceLocation("<explain>", 1, 1)
_FINGERPRINT = re.compile(r"[0-9a-f]{8,32}")
_FINDING_REF = re.compile(r"([A-Za-z]{2,8}[0-9]{3}):(.*)", re.DOTALL)
MIN_FINGERPRINT = 8


class Evaluated(Protocol):
    """An evaluated program on an inventory (verifier.session.session.Evaluation is one)."""

    @property
    def program(self) -> Program: ...

    @property
    def checks(self) -> list[Check]: ...

    @property
    def engine(self) -> Backend: ...

    @property
    def inventory(self) -> Inventory: ...


@dataclass(frozen=True)
class ExplainReport:
    """What `explain` answers: proofs, and where their input facts were written."""

    items: list[Explained]
    inventory: Inventory
    principals: Principals | None = None


@dataclass(frozen=True)
class Explained:
    """A proof, and the finding it was asked for by (None when a fact was given)."""

    proof: Proof
    finding: Finding | None = None
    fingerprint: str | None = None


def parse_fact(text: str, filename: str = "<fact>") -> tuple[str, Row]:
    """One ground atom such as `within("n1/gpu0", "rack-a")`; ProgramError otherwise."""
    parsed = parse_query(text, filename)
    lit = parsed.body[0] if len(parsed.body) == 1 else None
    if not isinstance(lit, Atom) or not all(isinstance(a, Const) for a in lit.args):
        raise ProgramError.at(
            SourceLocation(filename, 1, 1),
            'expected one ground fact such as within("n1/gpu0", "rack-a"), a finding fingerprint, '
            "or RULE:subject such as TOPO004:n1",
        )
    return lit.relation, tuple(a.value for a in lit.args if isinstance(a, Const))


def fact_relation(text: str) -> str | None:
    """The relation a fact reference names (so a loader can make sure it is loaded); None for findings."""
    if _is_finding_ref(text):
        return None
    try:
        return parse_fact(text)[0]
    except TopologError:
        return None


def _is_finding_ref(text: str) -> bool:
    stripped = text.strip()
    return bool(_FINGERPRINT.fullmatch(stripped) or _FINDING_REF.fullmatch(stripped))


def explain(model: Evaluated, text: str) -> list[Explained]:
    """Proofs for a fact or a finding reference (see the module doc). TopologError when there is none."""
    stripped = text.strip()
    if _FINGERPRINT.fullmatch(stripped):
        return _explain_fingerprint(model, stripped)
    ref = _FINDING_REF.fullmatch(stripped)
    if ref is not None:
        subjects = tuple(s.strip() for s in ref.group(2).split(",") if s.strip())
        return _explain_rule_ref(model, ref.group(1).upper(), subjects)
    relation, row = parse_fact(stripped)
    decl = model.program.relations.get(relation)
    if decl is None or decl.arity != len(row):
        check_query(parse_query(stripped, "<fact>"), model.program)
    try:
        return [Explained(model.engine.explain(relation, row))]
    except KeyError:
        raise TopologError.at(SourceLocation("<fact>", 1, 1), f"{format_fact(relation, row)} does not hold") from None


def _explained(model: Evaluated, check: Check, finding: Finding, fp: str, row: Row) -> Explained:
    return Explained(model.engine.explain(check.reports, row), finding, fp)


def _explain_fingerprint(model: Evaluated, prefix: str) -> list[Explained]:
    if len(prefix) < MIN_FINGERPRINT:
        raise TopologError.at(WHERE, f"give at least {MIN_FINGERPRINT} hex digits of a fingerprint")
    locate = locator(model.inventory)
    matches = [
        (check, finding, fp, rows[0])
        for check in model.checks
        for finding, fp, rows in check_findings(
            model.engine, check, locate, link_lines(model.inventory), made_places(model.inventory)
        )
        if fp.startswith(prefix)
    ]
    if not matches:
        raise TopologError.at(
            WHERE,
            f"no finding of the checks has a fingerprint starting {prefix} on this inventory "
            "(waiver findings have no proof; run topolog verify --format json for the fingerprints)",
        )
    if len({fp for _, _, fp, _ in matches}) > 1:
        listed = ", ".join(f"{fp} ({f.rule})" for _, f, fp, _ in matches[:5])
        raise TopologError.at(WHERE, f"fingerprint prefix {prefix} is ambiguous: {listed}")
    return [_explained(model, *m) for m in matches]


def _explain_rule_ref(model: Evaluated, rule: str, subjects: tuple[str, ...]) -> list[Explained]:
    check = next((c for c in model.checks if c.id == rule), None)
    if check is None:
        known = ", ".join(c.id for c in model.checks)
        raise TopologError.at(WHERE, f"no check {rule}; the checks are: {known}")
    if not subjects:
        raise TopologError.at(WHERE, f"name the finding's subjects after the colon, e.g. {rule}:n1")
    everything = check_findings(
        model.engine, check, locator(model.inventory), link_lines(model.inventory), made_places(model.inventory)
    )
    wanted = set(subjects)
    matches = [(finding, fp, rows) for finding, fp, rows in everything if wanted <= set(finding.subjects)]
    if not matches:
        examples = "; ".join(",".join(f.subjects) for f, _, _ in everything[:3])
        hint = (
            f" ({len(everything)} {rule} findings here, e.g. {rule}:{examples})"
            if everything
            else (f" ({rule} reports nothing on this inventory)")
        )
        raise TopologError.at(WHERE, f"no {rule} finding has subjects {', '.join(subjects)}{hint}")
    out: list[Explained] = []
    for finding, fp, rows in matches:
        # The proof of the row that names what was asked about, where the finding has several.
        row = next((r for r in rows if wanted <= set(check.subjects_of(r))), rows[0])
        out.append(_explained(model, check, finding, fp, row))
    return out
