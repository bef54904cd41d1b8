"""Are two policy sets equivalent? First for this inventory, then for every entity the schema allows.

The inventory analysis is `topolog audit --against` (verifier.authorization.audit.diff) over every
action, every resource type and every enumerated context: its classes are the common refinement
of what either policy set can observe, so it is complete for the principals and hardware the
inventory has today (and for the contexts verifier.authorization.analysis.questions.coverage
says). The schema-wide analysis (verifier.authorization.analysis.symbolic, an SMT encoding)
answers for every entity and context the schema allows, entities that do not exist yet included;
it refuses (OutsideAnalysis, exit 2) a policy set it does not cover rather than answer wrongly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

from verifier.authorization.analysis.context_reads import refuse_uncovered_context_reads
from verifier.authorization.analysis.questions import Coverage, coverage
from verifier.authorization.audit import context_label, diff
from verifier.authorization.classes import policy_reads
from verifier.authorization.entities import RESOURCE_TYPES
from verifier.authorization.evaluate import ACTIONS, Authorizer
from verifier.authorization.policies import load_policies
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import SourceLocation, TopologError

MAX_SHOWN = 10
"""Counterexamples listed per analysis (the first, sorted); the count says how many decisions differ."""


@dataclass(frozen=True)
class Counterexample:
    """One request the two policy sets decide differently, with what decided it on each side."""

    action: str
    principal: str
    resource: str
    context: str  # JSON text, keys sorted
    first: str  # "allow" | "deny" (any evaluation error is a deny)
    second: str
    first_policies: tuple[str, ...]
    second_policies: tuple[str, ...]

    def key(self) -> tuple[str, ...]:
        return (self.action, self.principal, self.resource, self.context)


@dataclass
class InventoryComparison:
    """The answer for the inventory's principals and hardware: complete for them."""

    differences: list[Counterexample]  # the first MAX_SHOWN, sorted
    decisions: int  # principal x resource x action x context decisions that differ
    principals: int
    resources: int  # of every resource type
    contexts: Coverage
    requests: int


@dataclass
class SchemaComparison:
    """The answer for every entity the schema allows (one counterexample per action and entity types)."""

    differences: list[Counterexample]  # sorted


@dataclass
class CompareResult:
    inventories: tuple[str, ...]
    first: str  # policy directory
    second: str
    inventory: InventoryComparison
    schema_wide: SchemaComparison | None = None  # None: not asked (--inventory-only)

    @property
    def equivalent(self) -> bool:
        return not self.inventory.decisions and not (self.schema_wide and self.schema_wide.differences)

    @property
    def exit_code(self) -> int:
        return 0 if self.equivalent else 1


def with_policies(setup: AuthzSetup, directory: Path) -> AuthzSetup:
    """The same entities judged by the policies of `directory` (validated against its own schema).

    Both sides of a comparison share one entity graph: the inventory is read, and its NVLink
    domains found (which reads the whole inventory, links included), once instead of twice.
    """
    bundle = load_policies(directory)
    return dataclasses.replace(setup, bundle=bundle, authorizer=Authorizer(bundle, setup.graph))


def compare_in_inventory(first: AuthzSetup, second: AuthzSetup) -> InventoryComparison:
    """Every decision of the inventory's classes, every action, resource type and context, on both sides."""
    for side in (first, second):
        refuse_uncovered_context_reads(side.bundle, "the comparison over the inventory")
    found: list[Counterexample] = []
    decisions = requests = resources = principals = 0
    for resource_type in RESOURCE_TYPES:
        result = diff(first, second, ACTIONS, resource_type)
        principals = result.stats.principals
        resources += result.stats.resources
        requests += result.stats.requests
        decisions += result.changed
        for change in result.changes:
            for ex in change.examples:
                found.append(
                    Counterexample(
                        change.action,
                        str(ex["principal"]),
                        str(ex["resource"]),
                        context_label(change.context),
                        change.before.lower(),
                        change.after.lower(),
                        tuple(ex["before"]),  # type: ignore[arg-type]
                        tuple(ex["after"]),  # type: ignore[arg-type]
                    )
                )
    found.sort(key=Counterexample.key)
    return InventoryComparison(
        found[:MAX_SHOWN],
        decisions,
        principals,
        resources,
        coverage(policy_reads(first.bundle, second.bundle)),
        requests,
    )


def compare_schema_wide(first: AuthzSetup, second: AuthzSetup) -> SchemaComparison:
    """The SMT answer (OutsideAnalysis, a TopologError, for a policy set it does not cover)."""
    # Imported here: the solver is loaded only by the runs that ask it.
    from verifier.authorization.analysis.symbolic import compare_policies

    found = [
        Counterexample(
            d.action,
            d.principal,
            d.resource,
            d.context,
            d.first,
            d.second,
            tuple(d.first_policies),
            tuple(d.second_policies),
        )
        for d in compare_policies(first.bundle, second.bundle)
    ]
    return SchemaComparison(sorted(found, key=Counterexample.key))


def compare(first: AuthzSetup, second: AuthzSetup, schema_wide: bool = True) -> CompareResult:
    """Both analyses (the schema-wide one unless `schema_wide` is False); the inventory's first.

    Without the schema-wide analysis, "equivalent" rests on the inventory's contexts alone: where
    those are not every context that matters (cut past MAX_CONTEXTS combinations), no difference found
    proves nothing, so the comparison is refused (exit 2) rather than passed. Differences found are
    real either way.
    """
    inventory = compare_in_inventory(first, second)
    if not schema_wide and not inventory.decisions and not inventory.contexts.complete:
        raise TopologError.at(
            SourceLocation(str(second.bundle.directory)),
            "the comparison over the inventory found no difference, but not in every context "
            f"({inventory.contexts.why_not}): that does not show the two policy sets decide alike; compare without "
            "--inventory-only (the schema-wide analysis answers for every context the schema allows)",
        )
    return CompareResult(
        first.inventories,
        str(first.bundle.directory),
        str(second.bundle.directory),
        inventory,
        compare_schema_wide(first, second) if schema_wide else None,
    )
