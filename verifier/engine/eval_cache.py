"""Memory-engine evaluations kept on disk between runs, so that a CI gate re-run on an unchanged
inventory reads back what it derived last time instead of deriving it again.

An evaluation is a function of nothing but the rules it runs, their declarations and the facts
loaded: an entry is named by all of them (each rule as its text, each relation's rows in the
order they were loaded), by the input limits (a smaller `derived_tuples` must fail again) and by
the engine's code and topolog's version, so a changed fact, rule, limit or engine is a miss,
never a stale answer (see verifier.core.cache for where entries live and why they can be
trusted). Entries are written only after an evaluation succeeded; a run that failed is run
again next time.

Only the memory engine's evaluations of small inputs are kept (a shipped example derives
about 25,000 tuples: reading them back takes a tenth of deriving them). A fleet runs in
DuckDB, where reading back a million tuples would cost about what deriving them does.
"""

from __future__ import annotations

import marshal
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from verifier.core.cache import enabled, entry_key, package_digest, read_pickled, write_pickled
from verifier.core.limits import current_limits
from verifier.engine.ast import Program, Row

if TYPE_CHECKING:
    from verifier.engine.memory_backend import State

KIND = "evaluation"
KEEP = 16
"""Entries kept: one per inventory and rule pack a user verifies often."""
MAX_TUPLES = 500_000
"""Evaluations holding more tuples than this (input and derived) are not kept."""
_FORMAT = 1


def evaluation_key(program: Program, loads: Mapping[str, Sequence[Row]]) -> str | None:
    """The entry name for evaluating `program` on `loads` (relation -> rows, in load order); None when
    the cache is off or the facts alone are more than an entry may hold.
    """
    if not enabled() or sum(map(len, loads.values())) > MAX_TUPLES:  # a state that big would not be kept
        return None
    parts: list[str | bytes] = [f"memory evaluation {_FORMAT}", repr(current_limits())]
    parts += (
        f"{d.name}({', '.join(c.type for c in d.columns)}){' input' if d.is_input else ''}"
        for d in program.declarations
    )
    parts.append("rules")
    parts += map(str, program.rules)  # in program order: the order strata and stages follow
    parts.append("facts")
    try:
        for relation, rows in loads.items():
            # Every value with its type (str, int, bool), at C speed. Format 0 has no back-references
            # and no interning marks, which depend on how the rows were built, not on what they hold.
            parts += (relation, marshal.dumps(rows if type(rows) is list else list(rows), 0))
    except ValueError:  # a value marshal cannot write: not a fact the engine takes, which it reports
        return None
    return entry_key(package_digest("verifier.engine"), parts)


def cached_state(key: str) -> State | None:
    """The state stored under `key`, or None."""
    stored = read_pickled(KIND, key)
    if not isinstance(stored, tuple) or len(stored) != 2 or stored[0] != _FORMAT:
        return None
    state = stored[1]
    if not isinstance(state, tuple) or len(state) != 4 or not isinstance(state[3], dict):
        return None
    return state


def remember_state(key: str, state: State) -> None:
    """Store `state` under `key` unless it is too big to be worth reading back."""
    if sum(len(rows) for rows in state[3].values()) <= MAX_TUPLES:
        write_pickled(KIND, key, (_FORMAT, state), KEEP)
