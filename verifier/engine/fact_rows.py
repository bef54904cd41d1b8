"""Checking input facts against their declarations: what every engine refuses before it stores a row."""

from __future__ import annotations

from collections.abc import Sequence
from operator import itemgetter
from typing import Any

from verifier.core.errors import Diagnostic, FactError, SourceLocation
from verifier.engine.ast import INT64_MAX, INT64_MIN, Declaration, Row, Value
from verifier.engine.backend import format_fact

MAX_FACT_ERRORS = 20
"""A bad fact batch lists at most this many of its rows."""


def input_declaration(declarations: dict[str, Declaration], relation: str) -> Declaration:
    """The declaration of an input relation that facts are given for (FactError otherwise)."""
    decl = declarations.get(relation)
    where = SourceLocation(f"<facts for {relation}>")
    if decl is None:
        raise FactError.at(where, f"facts for undeclared relation {relation!r}")
    if not decl.is_input:
        raise FactError.at(decl.loc, f"{relation} is derived by rules, not an input relation; it takes no facts")
    return decl


def fact_columns(decl: Declaration, rows: Sequence[Row]) -> list[Sequence[Value]]:
    """Rows turned column-wise, after checking every arity and type (FactError listing the first few)."""
    where = SourceLocation(f"<facts for {decl.name}>")
    signature = ", ".join(f"{c.name}: {c.type}" for c in decl.columns)
    bad: list[Diagnostic] = []
    if set(map(len, rows)) != {decl.arity}:
        for r in rows:
            if len(r) != decl.arity:
                message = (
                    f"fact {show_fact(decl.name, r)} has {len(r)} argument(s); "
                    f"{decl.name}({signature}) takes {decl.arity}"
                )
                bad.append(Diagnostic(where, message))
                if len(bad) >= MAX_FACT_ERRORS:
                    break
        raise FactError(bad)
    columns: list[Sequence[Value]] = []
    for i, col in enumerate(decl.columns):
        values = list(map(itemgetter(i), rows))
        wanted: type = str if col.type == "symbol" else int
        # Comparing exact types rejects bool, which would otherwise pass as an int.
        if set(map(type, values)) == {wanted} and (
            wanted is str or (min(values) >= INT64_MIN and max(values) <= INT64_MAX)
        ):
            columns.append(values)
            continue
        for r in rows:
            if not fits(r[i], col.type):
                message = f"fact {show_fact(decl.name, r)}: argument {col.name!r} must be a {col.type}, got {r[i]!r}"
                bad.append(Diagnostic(where, message))
                if len(bad) >= MAX_FACT_ERRORS:
                    break
    if bad:
        raise FactError(bad)
    return columns


def fits(value: Any, column_type: str) -> bool:
    """Whether a value can be stored in a column of this type (a 64-bit integer, or a string)."""
    if column_type == "symbol":
        return type(value) is str
    return type(value) is int and INT64_MIN <= value <= INT64_MAX


def show_fact(relation: str, row: Row) -> str:
    try:
        return format_fact(relation, row)
    except (AttributeError, TypeError):
        return f"{relation}{tuple(row)!r}"
