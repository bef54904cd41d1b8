"""Facts: every relation emitted is declared in rules/schema.dl, with the right arity and types."""

from __future__ import annotations

from pathlib import Path

from verifier.engine.parser import parse_program
from verifier.facts.inventory import RELATIONS, inventory_facts
from verifier.sources.inventory import load_inventory

ROOT = Path(__file__).resolve().parents[3]


def _schema() -> dict[str, tuple[str, ...]]:
    path = ROOT / "rules" / "schema.dl"
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    return {d.name: tuple(c.type for c in d.columns) for d in program.declarations if d.is_input}


def test_schema_is_documented() -> None:
    path = ROOT / "rules" / "schema.dl"
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    for decl in program.declarations:
        assert decl.doc, decl.name
        for col in decl.columns:
            assert col.doc, (decl.name, col.name)


def test_facts_match_schema() -> None:
    schema = _schema()
    inv = load_inventory(sorted((ROOT / "inventories").glob("*.yaml")))
    facts = inventory_facts(inv)
    assert set(facts) == set(RELATIONS)
    for name, rows in facts.items():
        assert name in schema, f"{name} is not declared in rules/schema.dl"
        types = schema[name]
        for row in rows:
            assert len(row) == len(types), (name, row)
            for value, typ in zip(row, types, strict=True):
                assert isinstance(value, int if typ == "number" else str), (name, row)
                assert not isinstance(value, bool)
    required = {
        "object",
        "parent",
        "model",
        "model_info",
        "spec",
        "feature",
        "link",
        "link_attr",
        "label",
        "quantity",
        "node_type",
        "promise",
        "software",
    }
    assert required <= set(schema)


def test_facts_are_deterministic_and_specific() -> None:
    paths = [ROOT / "inventories" / "dgx-h100-pod.yaml"]
    a = inventory_facts(load_inventory(paths))
    b = inventory_facts(load_inventory(paths))
    assert a == b
    assert ("dgx00/gpu0", "gpu") in a["object"]
    assert ("H100-SXM5-80GB", "hbm_mbps", 3_350_000) in a["spec"]
    assert ("H100-SXM5-80GB", "mig") in a["feature"]
    assert ("dgx03/gpu2<->dgx03/nvsw1", "degraded") in a["state"]
    assert ("dgx00/gpu5", "index", 5) in a["quantity"]
    assert ("dgx00", "dgx-h100") in a["node_type"]
    assert ("dgx00", "nccl", "2.18.5") in a["software"]
