"""LINK001 works out what a link end can carry per model and kind, and reads links only where a
declared figure is over some model's limit; rules/links/lib/endpoints.dl's link_capacity joins those
figures back to links. Both must give exactly what the direct form, a row per link end, gives:
link_capacity_reference.dl keeps that form, and every shipped inventory and rule fixture (LINK001's
failing one among them) is evaluated with both. (The rule fixtures run both engines on LINK001.)
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.engine.ast import Row
from verifier.engine.queries import program_for
from verifier.engine.rule_pack import shipped_first
from verifier.session.session import load_rules, open_evaluation

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).with_name("link_capacity_reference.dl")
INVENTORIES = sorted(
    p
    for p in [*(ROOT / "inventories").glob("*.yaml"), *(ROOT / "tests" / "rules" / "fixtures").glob("*/*.yaml")]
    if p.name != "jobs.yaml"
)
PAIRS = {"link_capacity": "reference_link_capacity", "link_over": "reference_link_over"}


def _rows(rows: list[Row]) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in row) for row in rows)


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_per_model_capacities_give_the_rows_of_the_direct_form(path: Path) -> None:
    wanted = {*PAIRS, *PAIRS.values()}
    program = program_for(load_rules(shipped_first([REFERENCE])), wanted)
    with open_evaluation([path], program, authorize=False, also_read=sorted(wanted)) as model:
        for relation, reference in PAIRS.items():
            assert _rows(model.engine.query(relation)) == _rows(model.engine.query(reference)), relation


def test_the_failing_fixture_has_rows_to_compare() -> None:
    """Not a comparison of two empty relations: LINK001's failing fixture has ends over their limit."""
    path = ROOT / "tests" / "rules" / "fixtures" / "LINK001" / "fail.yaml"
    program = program_for(load_rules(shipped_first([REFERENCE])), {"reference_link_over"})
    with open_evaluation([path], program, authorize=False, also_read=["reference_link_over"]) as model:
        assert model.engine.query("reference_link_over")
