"""LINK001 and LINK002 compare declared figures with each model's limits first, and read links
only where a figure is over some model's limit; rules/links/lib/endpoints.dl's link_capacity joins
the per-model figures back to links. Each must give exactly what the direct form, a row per link end,
gives: link_checks_reference.dl keeps those forms, and every shipped inventory and rule fixture
(LINK001's and LINK002's failing ones among them) is evaluated with both. (The rule fixtures run
every engine on both checks.)
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from verifier.engine.ast import Program, Row
from verifier.engine.queries import program_for
from verifier.engine.rule_pack import shipped_first
from verifier.session.session import load_rules, open_evaluation

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = Path(__file__).with_name("link_checks_reference.dl")
INVENTORIES = sorted(
    p
    for p in [*(ROOT / "inventories").glob("*.yaml"), *(ROOT / "tests" / "rules" / "fixtures").glob("*/*.yaml")]
    if p.name != "jobs.yaml"
)
PAIRS = {
    "link_capacity": "reference_link_capacity",
    "link_over": "reference_link_over",
    "link_attr_above": "reference_link_attr_above",
}


def _rows(rows: list[Row]) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in row) for row in rows)


@functools.cache
def _program(*relations: str) -> Program:
    """The shipped pack with the reference rules, sliced to `relations`: the same for every inventory.

    Built once per worker, not per inventory: each load_rules reads and hashes every shipped rule
    file and program_for slices it (some 17 ms of CPU together, a third of a small inventory's test),
    and a Program is frozen, so sharing it changes nothing.
    """
    return program_for(load_rules(shipped_first([REFERENCE])), relations)


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_per_model_capacities_give_the_rows_of_the_direct_form(path: Path) -> None:
    wanted = sorted({*PAIRS, *PAIRS.values()})
    program = _program(*wanted)
    with open_evaluation([path], program, authorize=False, also_read=sorted(wanted)) as model:
        for relation, reference in PAIRS.items():
            assert _rows(model.engine.query(relation)) == _rows(model.engine.query(reference)), relation


@pytest.mark.parametrize(
    ("check", "relation"), [("LINK001", "reference_link_over"), ("LINK002", "reference_link_attr_above")]
)
def test_the_failing_fixtures_have_rows_to_compare(check: str, relation: str) -> None:
    """Not a comparison of two empty relations: the checks' failing fixtures have ends over their limits."""
    path = ROOT / "tests" / "rules" / "fixtures" / check / "fail.yaml"
    program = _program(relation)
    with open_evaluation([path], program, authorize=False, also_read=[relation]) as model:
        assert model.engine.query(relation)
