"""Minimal-height proofs from the stage each tuple first appeared in: what the memory and duckdb engines share.

An engine supplies `instance(rule, row, stage)`: the body facts (with their stages) and the
absent facts of one instance of `rule` deriving `row` from facts older than `stage`, or None.
Among the rules, the search takes the instance whose latest premise is earliest (then the
first rule), and recurses into its premises; every premise is strictly older, so it ends.

Each query is an engine's join (1-5 ms in DuckDB at fleet scale), so a rule that cannot win is
not asked: once an instance is found, a later rule wins only with every premise older than that
instance's latest, so it is asked for exactly those (the same instance an engine would give it
then, as instances are taken earliest-latest first), and not at all when the found instance
rests on input facts only (stage 0: nothing is older). An aggregate rule's instance is its whole
group, which a tighter bound would cut short: it is asked with the row's own stage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from verifier.core.errors import EngineError
from verifier.engine.ast import Atom, Row, Rule
from verifier.engine.backend import Proof, format_fact

Instance = tuple[list[tuple[Atom, Row, int]], list[tuple[str, Row]]]
"""Premises (atom, fact, stage) and absent facts (relation, row) of one rule instance."""


class ProofSearch:
    """Proofs for one evaluation's tuples, each built once."""

    def __init__(
        self,
        rules_by_head: Mapping[str, Sequence[Rule]],
        instance: Callable[[Rule, Row, int], Instance | None],
    ) -> None:
        self._rules_by_head = rules_by_head
        self._instance = instance
        self._proofs: dict[tuple[str, Row], Proof] = {}

    def prove(self, relation: str, row: Row, stage: int) -> Proof:
        key = (relation, row)
        found = self._proofs.get(key)
        if found is None:
            found = Proof(relation, row, stage=0) if stage == 0 else self._derive(relation, row, stage)
            self._proofs[key] = found
        return found

    def _derive(self, relation: str, row: Row, stage: int) -> Proof:
        best: tuple[int, int, Rule, Instance] | None = None
        for index, rule in enumerate(self._rules_by_head.get(relation, ())):
            bound = stage
            if best is not None:
                if best[0] <= 0:
                    break  # premises at stage 0 at most: no later rule has an earlier latest premise
                if rule.head.aggregate is None:
                    bound = min(stage, best[0])  # winning needs every premise older than best's latest
            found = self._instance(rule, row, bound)
            if found is None:
                continue
            latest = max((s for _, _, s in found[0]), default=0)
            if best is None or (latest, index) < best[:2]:
                best = (latest, index, rule, found)
        if best is None:
            raise EngineError(f"no rule instance derives {format_fact(relation, row)} at stage {stage}")
        _, _, rule, (premises, absent) = best
        subproofs = tuple(self.prove(atom.relation, r, s) for atom, r, s in premises)
        return Proof(relation, row, rule, subproofs, tuple(absent), stage)
