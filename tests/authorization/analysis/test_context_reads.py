"""Context reads the inventory's enumerated contexts cover, and those refused (analysis/context_reads.py).

The enumeration asks each context attribute with both booleans, or with the literals (and whole
numbers' neighbours) it is compared with; a read whose outcome depends on other values would be
answered for some contexts only, so it is named and refused.
"""

from __future__ import annotations

import pytest

from verifier.authorization.analysis.context_reads import uncovered_read

HEAD = "permit (principal, action, resource) "


@pytest.mark.parametrize(
    "condition",
    [
        # The shipped quarantine policies: `has`, then the attribute as a condition.
        "when { context has incident && context.incident && principal.on_call }",
        # Literal comparisons, the literal on either side (each outcome is shown by 4, 5, 6 / 2, 3, 4).
        'when { context.n > 5 && 3 <= context.n && context.s != "x" }',
        # Conditions under !, as an `if` test, and as the branches of an `if` that is itself a condition.
        "unless { if context.f then !context.g else context.h }",
        "when { (if context.f then 1 else 2) == 1 }",
    ],
)
def test_covered_reads(condition: str) -> None:
    assert uncovered_read(HEAD + condition + ";") is None


@pytest.mark.parametrize(
    ("condition", "named"),
    [
        # "a*" and "*b" both hold only for texts like "ab", which no literal of the enumeration is.
        ('when { context has tag && context.tag like "a*" && context.tag like "*b" }', "`context.tag` with `like`"),
        # 5 is compared with n + 1, not n: n = 5 (true) is no neighbour of any literal compared with n.
        ("when { context.n + 1 > 5 }", "`context.n` in `add`"),
        # Equal to an entity attribute: no enumerated text is any resource's tenant.
        ("when { context.t == resource.tenant }", "`context.t` in `eq` with something other than a literal"),
        ("when { context.s.contains(1) }", "`context.s` in `contains`"),
        ("when { context.r.x }", "`context.r` as a record (`.x`)"),
        ("when { context == {} }", "the whole `context` record"),
        # A branch of an `if` compared with a literal is a value, not a condition.
        ("when { (if true then context.n else 2) == 1 }", "`context.n` in IfThenElse"),
    ],
)
def test_uncovered_reads_are_named(condition: str, named: str) -> None:
    assert uncovered_read(HEAD + condition + ";") == named
