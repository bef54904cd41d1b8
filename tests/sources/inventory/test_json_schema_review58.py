"""The inventory JSON Schema refuses what the loader has refused since 331c048 (R-HI review).

An empty `foreach` list and a `foreach` count of 0 are refused by the loader at their line; the
schema an editor checks as the file is typed took both, so the editor showed no error on a line
`topolog verify` stops at. An instance's own `remove: true` decommissions it (round 13): written
with any change beside it (which would change what is gone), both refuse it. Each case is
written by hand from docs/inventory-format.md, and each refused one has a corrected twin both
accept, so it fails for its mistake only.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
import yaml

from verifier.cli.schema_command import inventory_schema_text
from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory_text

SCHEMA: dict[str, Any] = json.loads(inventory_schema_text())
HEAD = "apiVersion: topolog.dev/v1\n"
NODE = "objects:\n  - name: n0\n    kind: node\n    children: [{name: g0, kind: gpu}, {name: g1, kind: gpu}]\n"
LINK = "links:\n  - {a: 'n0/g{g}', b: n0/g1, kind: nvlink, bandwidth: 1 GB/s, foreach: {g: %s}}\n"
INSTANCES = "objects:\n  - {name: 'n{i}', kind: node, count: 2, overrides: {n1: {remove: true%s}}}\n"

# (refused by both, its corrected twin accepted by both)
CASES = {
    # [] gives no value of g, so the line makes no link at all.
    "foreach over an empty list": (HEAD + NODE + LINK % "[]", HEAD + NODE + LINK % "[0]"),
    # A count n gives 0..n-1: a count of 0 gives none (a count of 1 gives g0 alone).
    "foreach count of zero": (HEAD + NODE + LINK % "0", HEAD + NODE + LINK % "1"),
    # n1 removed has no labels left to change; `remove: true` alone takes n1 out and is read.
    "instance's remove: true with a change": (HEAD + INSTANCES % ", labels: {a: b}", HEAD + INSTANCES % ""),
}


def _schema_errors(text: str) -> list[str]:
    validator = jsonschema.Draft202012Validator(SCHEMA)
    return [e.message for e in validator.iter_errors(yaml.safe_load(text))]


def _draft7_errors(text: str) -> list[str]:
    # yaml-language-server validates with draft-07 semantics whatever `$schema` says.
    validator = jsonschema.Draft7Validator(SCHEMA)
    return [e.message for e in validator.iter_errors(yaml.safe_load(text))]


def _loader_accepts(text: str) -> bool:
    try:
        load_inventory_text(text, "<test>")
    except TopologError:
        return False
    return True


@pytest.mark.parametrize(("broken", "fixed"), CASES.values(), ids=CASES.keys())
def test_refused_by_both_and_its_twin_accepted_by_both(broken: str, fixed: str) -> None:
    assert not _loader_accepts(broken), "the loader accepts it"
    assert _schema_errors(broken), "the schema accepts it"
    assert _draft7_errors(broken), "the schema accepts it under draft-07"
    assert _loader_accepts(fixed), fixed
    assert _schema_errors(fixed) == [], fixed
    assert _draft7_errors(fixed) == [], fixed
