"""Authorization facts for some principals only (`place`: its jobs'): each one's rows are its rows
among every principal's.

`AuthzSetup.deciding_for` makes Cedar decide the classes of those principals only; a principal's
decisions are its class's, and its class among a few principals decides as among all of them
(the same attributes, teams and named ancestors), so its `permitted` and `permitted_by` rows are
the ones the facts of every principal give it. Held here on every shipped inventory, for each
principal of the shipped principals file alone and for a team with a user of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from verifier.authorization.facts import _facts
from verifier.authorization.setup import build_setup
from verifier.engine.ast import Row
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
INVENTORIES = sorted((ROOT / "inventories").glob("*.yaml"))
PRINCIPALS = load_principals(ROOT / "inventories" / "principals.yml")


def _of(rows: Sequence[Row], principals: set[str]) -> set[Row]:
    return {r for r in rows if r[0] in principals}


@pytest.mark.parametrize("path", INVENTORIES, ids=[p.name for p in INVENTORIES])
def test_each_principals_rows_are_its_rows_among_all(path: Path) -> None:
    inv = load_inventory([path])
    setup = build_setup(inv, [path], ROOT / "policies", PRINCIPALS)
    every = _facts(setup)
    asked_sets = [{p} for p in sorted(PRINCIPALS.principals)] + [{"research", "dan"}, {"hpc", "carol", "bob"}]
    for asked in asked_sets:
        some = _facts(replace(setup, deciding_for=frozenset(asked)))
        for relation in ("permitted", "permitted_by"):
            assert set(some[relation]) == _of(every[relation], asked), (asked, relation)
        # What the rules read of every GPU and every principal does not depend on whom they ask about.
        for relation in ("authz_class", "authz_principal", "member_of"):
            assert some[relation] == every[relation], (asked, relation)


def test_a_tenant_of_another_rack_is_permitted_nothing_on_the_pod() -> None:
    # By hand: every GPU of dgx-h100-pod has tenant research (the pod's label); bob's tenant is
    # team-vision (his first team) and he is not in hpc (the one permit across tenants, fp64.cedar):
    # no class is permitted to him. dan (team research) is asked about alone: rows for him only.
    path = ROOT / "inventories" / "dgx-h100-pod.yaml"
    setup = build_setup(load_inventory([path]), [path], ROOT / "policies", PRINCIPALS)
    assert _facts(replace(setup, deciding_for=frozenset({"bob"})))["permitted"] == []
    dan = _facts(replace(setup, deciding_for=frozenset({"dan"})))["permitted"]
    assert dan and {r[0] for r in dan} == {"dan"}
