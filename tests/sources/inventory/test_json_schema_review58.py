"""The inventory JSON Schema refuses what the loader has refused since 331c048 (R-HI review).

An empty `foreach` list, a `foreach` count of 0 and `remove: true` on an instance's own override
are refused by the loader at their line; the schema an editor checks as the file is typed still
took all three (its `remove` even read "Remove this instance."), so the editor showed no error on
a line `topolog verify` stops at. Each case is written by hand from docs/inventory-format.md, and
each refused one has a corrected twin both accept, so it fails for its mistake only.
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
INSTANCES = "objects:\n  - {name: 'n{i}', kind: node, count: 2, overrides: {n1: {remove: %s}}}\n"

# (refused by both, its corrected twin accepted by both)
CASES = {
    # [] gives no value of g, so the line makes no link at all.
    "foreach over an empty list": (HEAD + NODE + LINK % "[]", HEAD + NODE + LINK % "[0]"),
    # A count n gives 0..n-1: a count of 0 gives none (a count of 1 gives g0 alone).
    "foreach count of zero": (HEAD + NODE + LINK % "0", HEAD + NODE + LINK % "1"),
    # n1 itself cannot be removed by its override; `remove: false` changes nothing and is read.
    "instance's own remove: true": (HEAD + INSTANCES % "true", HEAD + INSTANCES % "false"),
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
