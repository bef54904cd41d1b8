"""A verification of some checks only (`topolog test`, evaluate_only) slices the loaded program once per set of
checks and keeps the slice on the program: the next case of the same check reuses it."""

from __future__ import annotations

from verifier.core.resources import shipped_rules_dir
from verifier.engine.loader import load_program
from verifier.session import verify_run


def test_a_kept_slice_is_the_one_made_again_and_other_checks_get_their_own() -> None:
    program = load_program([shipped_rules_dir()])
    one, two = frozenset({"TOPO005"}), frozenset({"TOPO005", "PLACE001"})
    first = verify_run._slice(program, one)
    # Asked again: the kept object itself, not a new slice.
    assert verify_run._slice(program, one) is first
    # The same rules, metadata and strata as a slice made afresh.
    fresh = verify_run._make_slice(program, one)
    assert (first.rules, first.metadata, first.declarations) == (fresh.rules, fresh.metadata, fresh.declarations)
    # Other check ids: a slice of their own (PLACE001 adds place_why_not's rules, so more rules).
    other = verify_run._slice(program, two)
    assert other is not first
    assert len(other.rules) > len(first.rules)
    assert {r.head.relation for r in other.rules} >= {"place_why_not"}
    # Another loaded program keeps nothing of this one's.
    again = load_program([shipped_rules_dir()])
    assert verify_run._slice(again, one) is not first
