"""Both policy analyses as Datalog facts, so rules/policy/ turns them into findings like any check's.

The schema-wide analysis (analysis/symbolic.py, an SMT solver) says what holds for every entity
the schema allows; the inventory analysis (analysis/inventory.py) what holds for the inventory's
principals and hardware. Which of them a policy is reported under (one root cause, one finding)
is the rules' to decide, from these rows (declared in rules/schema.dl).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from verifier.authorization.analysis.inventory import NO_PERMIT, InventoryFinding, analyse_inventory
from verifier.authorization.policies import PolicyBundle
from verifier.authorization.relations import POLICY_RELATIONS
from verifier.authorization.setup import AuthzSetup
from verifier.engine.ast import Row


class SchemaFinding(Protocol):
    """What the schema-wide analysis says of one policy (analysis.symbolic.SymbolicFinding)."""

    @property
    def kind(self) -> str: ...
    @property
    def policy(self) -> str: ...
    @property
    def related(self) -> tuple[str, ...]: ...
    @property
    def example(self) -> str: ...
    @property
    def message(self) -> str: ...


SchemaAnalysis = Callable[[PolicyBundle], Sequence[SchemaFinding]]


def _symbolic(bundle: PolicyBundle) -> Sequence[SchemaFinding]:
    # Imported when asked: the solver costs a run that does not analyse policies nothing.
    from verifier.authorization.analysis.symbolic import analyse_policies

    return analyse_policies(bundle)


def policy_facts(
    setup: AuthzSetup, schema_wide: bool = True, schema_analysis: SchemaAnalysis | None = None
) -> dict[str, list[Row]]:
    """The rows of every relation in POLICY_RELATIONS for `setup`'s policies and inventory.

    Without `schema_wide`, the inventory's analysis only (`policy check --inventory-only`: for a
    policy set the schema-wide one does not cover). `schema_analysis`: the schema-wide analysis
    (default: the SMT one). An analysis that cannot cover a policy raises (TopologError, exit 2):
    never a partial answer.
    """
    rows: dict[str, list[Row]] = {name: [] for name in sorted(POLICY_RELATIONS)}
    bundle = setup.bundle
    rows["policy_analysed"] = [(p.id, p.effect) for p in sorted(bundle.policies.values(), key=lambda p: p.id)]
    schema_rows = {
        (f.policy, f.kind, ", ".join(sorted(f.related)), f.example, f.message)
        for f in ((schema_analysis or _symbolic)(bundle) if schema_wide else ())
    }
    rows["policy_schema_finding"] = sorted(schema_rows)
    rows["policy_inventory_finding"] = sorted(_inventory_row(f) for f in analyse_inventory(setup).findings)
    return rows


def _inventory_row(f: InventoryFinding) -> Row:
    return (f.policy, f.kind, deciding_words(f.related, f.denying), f.example)


def deciding_words(related: tuple[str, ...], denying: tuple[str, ...] = ()) -> str:
    """`related` (of which `denying` decide by denying) as the words POLICY004's message reads after
    "decided by".

    NO_PERMIT alone stays the marker the rule words itself ("no permit applies to them"). Beside
    policies it is said in words: a forbid denied anyway by another forbid on some requests and for
    want of a permit on the rest would otherwise read "decided by (no permit), fp64-...". A permit
    whose requests others allow on some and deny on the rest says which does which ("decided by
    sre-drain, which allows them, except where quarantine-closed denies them").
    """
    others = [r for r in related if r != NO_PERMIT]
    if NO_PERMIT in related and others:
        return f"{', '.join(others)} on some, and on the rest by the lack of any permit"
    allowing = [r for r in related if r not in denying]
    if allowing and denying:
        allow = "allows" if len(allowing) == 1 else "allow"
        deny = "denies" if len(denying) == 1 else "deny"
        return f"{', '.join(allowing)}, which {allow} them, except where {', '.join(denying)} {deny} them"
    return ", ".join(related)
