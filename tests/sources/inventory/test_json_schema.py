"""The shipped JSON Schema of inventories agrees with the loader.

Editors check inventories against `verifier/schemas/inventory.schema.json` as they are
typed; `topolog verify` checks them with the loader. Where the two disagree a user sees
an error the tool does not report, or none where it does. So: every inventory the loader
accepts validates; every broken inventory below is refused by both; each closed set and
key list in the schema equals the one in the loader's code; and unit strings match the
schema's patterns exactly when the unit parsers read them.

Documents are read with `yaml.safe_load`, as an editor would (anchors and merge keys
resolved; YAML 1.1 scalars, so `12.10` is a float: the schema accepts numbers wherever the
loader takes text).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.cli.schema_command import inventory_schema_text
from verifier.core.errors import TopologError
from verifier.sources.inventory import units
from verifier.sources.inventory.catalog import FEATURES, MODEL_KEYS, builtin_models
from verifier.sources.inventory.loader import API_VERSION, DOC_KINDS, TOP_KEYS, load_inventory, load_inventory_text
from verifier.sources.inventory.model import LINK_KINDS, MODEL_KINDS, OBJECT_KINDS, PROMISES, STATES
from verifier.sources.inventory.patterns import PatternError, compile_pattern
from verifier.sources.inventory.specs import (
    DEVICE_OVERRIDE_KEYS,
    LINK_KEYS,
    LINK_OVERRIDE_KEYS,
    OBJECT_KEYS,
    OVERRIDE_KEYS,
    TEMPLATE_KEYS,
    derived_mbps,
)

ROOT = Path(__file__).resolve().parents[3]
SCHEMA: dict[str, Any] = json.loads(inventory_schema_text())
DEFS: dict[str, Any] = SCHEMA["$defs"]
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def _def_validator(name: str) -> jsonschema.Draft202012Validator:
    """A validator for one definition, with the others reachable through $ref."""
    return jsonschema.Draft202012Validator({"$schema": SCHEMA["$schema"], "$defs": DEFS, "$ref": f"#/$defs/{name}"})


def _schema_errors(doc: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)]


def _loader_accepts(text: str) -> bool:
    try:
        load_inventory_text(text, "<test>")
    except TopologError:
        return False
    return True


# --- the schema itself -------------------------------------------------------------------


def test_schema_is_valid_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_schema_is_also_valid_draft_07() -> None:
    # yaml-language-server checks every schema against the draft-07 meta-schema and
    # validates with draft-07 semantics, whatever `$schema` says.
    jsonschema.Draft7Validator.check_schema(SCHEMA)


# Keywords with the same meaning in draft-07 and 2020-12 (plus annotations), so the
# editor's draft-07 validator sees the schema the tests check here.
_PORTABLE = {
    "$schema",
    "$defs",
    "$ref",
    "title",
    "description",
    "examples",
    "type",
    "enum",
    "const",
    "properties",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "required",
    "items",
    "anyOf",
    "allOf",
    "if",
    "then",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "minItems",
    "patternErrorMessage",  # yaml-language-server's message for a failed `pattern`
}
_ANNOTATIONS = {"description", "title", "examples"}
_MAPS = {"properties", "patternProperties", "$defs"}


def _schemas(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield node
    for key, value in node.items():
        if key in _MAPS:
            for sub in value.values():
                yield from _schemas(sub)
        elif key in ("anyOf", "allOf"):
            for sub in value:
                yield from _schemas(sub)
        elif isinstance(value, dict) and key not in ("const",):
            yield from _schemas(value)


def test_schema_uses_only_keywords_editors_understand() -> None:
    for node in _schemas(SCHEMA):
        assert set(node) <= _PORTABLE, sorted(set(node) - _PORTABLE)
        if "$ref" in node:
            # Draft-07 ignores a $ref's siblings: only annotations may sit next to one.
            assert set(node) - {"$ref"} <= _ANNOTATIONS, node


def test_schema_is_package_data() -> None:
    path = resources.files("verifier") / "schemas" / "inventory.schema.json"
    assert path.is_file()
    assert json.loads(path.read_text(encoding="utf-8")) == SCHEMA


def test_every_ref_resolves() -> None:
    refs = {n["$ref"] for n in _schemas(SCHEMA) if "$ref" in n}
    assert refs, "the schema has no $ref at all"
    for ref in refs:
        assert ref.startswith("#/$defs/") and ref.removeprefix("#/$defs/") in DEFS, ref


# --- closed sets and key lists equal the loader's ------------------------------------------


@pytest.mark.parametrize(
    ("definition", "python"),
    [
        ("objectKind", OBJECT_KINDS),
        ("linkKind", LINK_KINDS),
        ("modelKind", MODEL_KINDS),
        ("state", STATES),
        ("promise", PROMISES),
        ("feature", FEATURES),
    ],
)
def test_enums_equal_the_loader_sets(definition: str, python: tuple[str, ...]) -> None:
    assert DEFS[definition]["enum"] == list(python)


def test_document_header_equals_the_loader() -> None:
    props = SCHEMA["properties"]
    assert props["apiVersion"]["const"] == API_VERSION
    assert props["kind"]["enum"] == list(DOC_KINDS)
    assert SCHEMA["additionalProperties"] is False


@pytest.mark.parametrize(
    ("definition", "keys"),
    [
        ("object", OBJECT_KEYS),
        ("template", TEMPLATE_KEYS),
        ("link", LINK_KEYS),
        ("override", OVERRIDE_KEYS),
        ("deviceOverride", DEVICE_OVERRIDE_KEYS),
        ("linkOverride", LINK_OVERRIDE_KEYS),
        ("catalogModel", MODEL_KEYS),
    ],
)
def test_keys_equal_the_loader_keys(definition: str, keys: tuple[str, ...]) -> None:
    schema = DEFS[definition]
    assert sorted(schema["properties"]) == sorted(keys)
    assert schema["additionalProperties"] is False


def test_top_level_keys_equal_the_loader() -> None:
    assert sorted(SCHEMA["properties"]) == sorted(TOP_KEYS)


# --- every inventory the loader accepts validates ------------------------------------------


_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _candidates() -> list[Path]:
    """Inventory documents among the shipped and test YAML files, told apart by `kind`
    (jobs, principals, waivers and thresholds files are other formats)."""
    paths = sorted(
        {
            *ROOT.glob("inventories/*.yaml"),
            *ROOT.glob("tests/**/*.yaml"),
            *ROOT.glob("tests/**/*.yml"),
        }
    )
    out = []
    for path in paths:
        if path.name == "billion_laughs.yaml":
            continue  # an alias bomb: the loader refuses it unread; a validator would walk it
        try:
            # libyaml's loader where PyYAML has it: this runs at collection, in every worker, on
            # ~420 files (1.5 s of CPU with the pure-Python loader, 0.2 s with it; same selection).
            doc = yaml.load(path.read_text(encoding="utf-8"), Loader=_LOADER)
        except (yaml.YAMLError, UnicodeDecodeError):
            continue  # the loader's syntax and encoding fixtures
        if isinstance(doc, dict) and "apiVersion" in doc and doc.get("kind") in (None, *DOC_KINDS):
            out.append(path)
    return out


CANDIDATES = _candidates()

# Fixtures of the loader's error messages. The first group is refused by the schema too;
# the second is well-formed file by file and wrong only as a whole, which no JSON Schema
# can see (documented in docs/inventory-format.md).
SCHEMA_REFUSES = {"bad_units.yaml", "many_errors.yaml", "unknown_keys.yaml", "wrong_api.yaml"}
BEYOND_SCHEMA = {"cycle.yaml", "dangling_link.yaml", "duplicate_ids.yaml", "two_parents.yaml", "unknown_template.yaml"}


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_candidates_include_the_shipped_inventories() -> None:
    names = {_rel(p) for p in CANDIDATES}
    for shipped in ("dgx-h100-pod", "edge-soc", "gb200-nvl72", "mixed-fleet"):
        assert f"inventories/{shipped}.yaml" in names
    assert sum(name.startswith("tests/rules/fixtures/") for name in names) >= 30
    assert "inventories/principals.yml" not in names


@pytest.mark.parametrize("path", CANDIDATES, ids=_rel)
def test_schema_agrees_with_the_loader(path: Path) -> None:
    try:
        load_inventory([path])
        accepted = True
    except TopologError:
        accepted = False
    errors = _schema_errors(yaml.safe_load(path.read_text(encoding="utf-8")))
    if accepted:
        assert errors == []
    elif path.name in SCHEMA_REFUSES:
        assert errors
    else:
        assert path.name in BEYOND_SCHEMA, (
            f"{_rel(path)} is refused by the loader; add it to SCHEMA_REFUSES or BEYOND_SCHEMA"
        )
        assert errors == []


def test_builtin_catalogue_models_validate() -> None:
    text = resources.files("verifier.sources.inventory").joinpath("catalog.yaml").read_text(encoding="utf-8")
    models = yaml.safe_load(text)["models"]
    assert len(models) == len(builtin_models())
    check = _def_validator("catalogModel")
    for model in models:
        assert list(check.iter_errors(model)) == [], model["name"]


# --- broken inventories: refused by both ------------------------------------------------------

HEAD = "apiVersion: topolog.dev/v1\n"
NODE = "objects:\n  - name: n0\n    kind: node\n    children: [{name: g0, kind: gpu}, {name: g1, kind: gpu}]\n"

BROKEN = {
    "misspelt object key": HEAD + "objects:\n  - {name: n0, kind: node, lables: {zone: a}}\n",
    "misspelt top-level key": HEAD + "object:\n  - {name: n0, kind: node}\n",
    "misspelt link key": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwith: 450 GB/s}\n",
    "misspelt metadata key": HEAD + "metadata: {nmae: pod}\n",
    "misspelt catalogue key": HEAD + "catalog: {model: []}\n",
    "misspelt model key": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, tensr: 1 TFLOPS}\n",
    "misspelt model memory key": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, memory: {szie: 80 GB}}\n",
    "misspelt scaleup key": HEAD + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s,"
    " scaleup: {links: 1, bandwidth: 1 GB/s, gen: 4}}\n",
    "misspelt ports key": HEAD + "catalog:\n  models:\n    - {name: X, vendor: v, kind: nic, source: s,"
    " ports: {count: 1, speed: 1 GB/s, sped: 2}}\n",
    "misspelt pcie key": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, pcie: {lane: 16}}\n",
    "misspelt device memory key": HEAD + "objects:\n  - {name: g0, kind: gpu, memory: {size: 80 GB, bw: 1 TB/s}}\n",
    "misspelt template key": HEAD + "templates:\n  t: {kind: node, chlidren: []}\n",
    "name in a template": HEAD + "templates:\n  t: {kind: node, name: x}\n",
    "misspelt override key": HEAD
    + "objects:\n  - {name: 'n{i}', kind: node, count: 2, overrides: {n1: {lables: {a: b}}}}\n",
    "misspelt device override key": HEAD
    + "objects:\n  - name: 'n{i}'\n    kind: node\n    count: 2\n    children: [{name: g0, kind: gpu}]\n"
    "    overrides: {n1: {devices: {g0: {stat: down}}}}\n",
    "misspelt link override key": HEAD + "objects:\n  - name: 'n{i}'\n    kind: node\n    count: 2\n"
    "    children: [{name: g0, kind: gpu}, {name: g1, kind: gpu}]\n"
    "    links: [{a: g0, b: g1, kind: nvlink, bandwidth: 1 GB/s}]\n"
    "    overrides: {n1: {links: [{a: g0, b: g1, sate: down}]}}\n",
    "unknown object kind": HEAD + "objects:\n  - {name: g0, kind: gpuu}\n",
    "unknown document kind": HEAD + "kind: Inventroy\n",
    "unknown link kind": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlnk, bandwidth: 1 GB/s}\n",
    "unknown model kind": HEAD + "catalog:\n  models:\n    - {name: X, vendor: v, kind: tpu, source: s}\n",
    "unknown state": HEAD + "objects:\n  - {name: g0, kind: gpu, state: broken}\n",
    # attrs and specs are counts and figures in their units: a negative one is none (cc4b3cb).
    "negative attrs": HEAD + "objects:\n  - {name: g0, kind: gpu, attrs: {slot: -1}}\n",
    "negative specs": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, specs: {fp32_gflops: -3}}\n",
    "unknown promise": HEAD + "objects:\n  - {name: n0, kind: node, promises: [nvlink_domian]}\n",
    "unknown feature": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, features: [nvlinc]}\n",
    "wrong apiVersion": "apiVersion: topolog.dev/v2\nobjects: []\n",
    "no apiVersion": "objects: []\n",
    "bandwidth with a size unit": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwidth: 450 GB}\n",
    "bandwidth with a bare prefix": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwidth: 450 G}\n",
    "bandwidth in words": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwidth: fast}\n",
    "zero bandwidth": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwidth: 0 GB/s}\n",
    "size in bits": HEAD + "objects:\n  - {name: m0, kind: memory, size: 80 Gb}\n",
    "power in joules": HEAD + "objects:\n  - {name: n0, kind: node, power: 700 J}\n",
    "price in euros": HEAD + "objects:\n  - {name: g0, kind: gpu, price: 2.49 EUR}\n",
    "latency in feet": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: pcie, bandwidth: 1 GB/s, latency: 3 ft}\n",
    "no bandwidth and none derivable": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: ethernet}\n",
    "pcie generation without lanes": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: pcie, generation: 5}\n",
    "nvlink generation unknown": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, generation: 9}\n",
    "link without kind": HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, bandwidth: 1 GB/s}\n",
    "object without name": HEAD + "objects:\n  - {kind: gpu}\n",
    "object without kind or template": HEAD + "objects:\n  - {name: g0}\n",
    "template without kind": HEAD + "templates:\n  t: {children: []}\n",
    "model without source": HEAD + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu}\n",
    "scaleup without links": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, scaleup: {bandwidth: 1 GB/s}}\n",
    "link override without b": HEAD + "objects:\n  - name: 'n{i}'\n    kind: node\n    count: 2\n"
    "    children: [{name: g0, kind: gpu}, {name: g1, kind: gpu}]\n"
    "    links: [{a: g0, b: g1, kind: nvlink, bandwidth: 1 GB/s}]\n"
    "    overrides: {n1: {links: [{a: g0, state: down}]}}\n",
    "count without a counter in the name": HEAD + "objects:\n  - {name: gpu, kind: gpu, count: 8}\n",
    "count of zero": HEAD + "objects:\n  - {name: 'g{i}', kind: gpu, count: 0}\n",
    "overrides without count": HEAD + "objects:\n  - {name: n0, kind: node, overrides: {n0: {state: down}}}\n",
    "unbalanced brace in a name": HEAD + "objects:\n  - {name: 'gpu{i', kind: gpu}\n",
    "unsupported format in a name": HEAD + "objects:\n  - {name: 'gpu{i:5.2f}', kind: gpu, count: 2}\n",
    "blank name": HEAD + "objects:\n  - {name: ' ', kind: gpu}\n",
    "attrs value not a whole number": HEAD + "objects:\n  - {name: g0, kind: gpu, attrs: {slot: three}}\n",
    "label value a list": HEAD + "objects:\n  - {name: g0, kind: gpu, labels: {zone: [a, b]}}\n",
    "remove not a boolean": HEAD
    + "objects:\n  - {name: 'n{i}', kind: node, count: 2, overrides: {n1: {remove: 'yes'}}}\n",
    "foreach range in words": HEAD + NODE + "links:\n"
    "  - {a: 'n0/g{g}', b: n0/g1, kind: nvlink, bandwidth: 1 GB/s, foreach: {g: zero to one}}\n",
    "MIG profile name": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, mig: {3g40gb: 2}}\n",
    "MIG profile does not fit": HEAD
    + "catalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, mig: {3g.40gb: 3}}\n",
    "objects not a list": HEAD + "objects: {name: g0, kind: gpu}\n",
    "children not a list": HEAD + "objects:\n  - {name: n0, kind: node, children: {name: g0, kind: gpu}}\n",
}


@pytest.mark.parametrize("text", BROKEN.values(), ids=BROKEN.keys())
def test_broken_inventory_is_refused_by_both(text: str) -> None:
    assert _schema_errors(yaml.safe_load(text)), "the schema accepts it"
    assert not _loader_accepts(text), "the loader accepts it"


def test_fixed_broken_inventories_are_accepted_by_both() -> None:
    # The same shapes, written correctly: the cases above fail for their mistake only.
    good = [
        HEAD + "objects:\n  - {name: n0, kind: node, labels: {zone: a}, promises: [nvlink_domain]}\n",
        HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, bandwidth: 450 GB/s, latency: 1 us}\n",
        HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: pcie, generation: 5, lanes: 16}\n",
        HEAD + NODE + "links:\n  - {a: n0/g0, b: n0/g1, kind: nvlink, generation: 4, count: 18}\n",
        HEAD + NODE + "links:\n  - {a: 'n0/g{g}', b: n0/g1, kind: nvlink, bandwidth: 1 GB/s, foreach: {g: 0..0}}\n",
        HEAD + "objects:\n  - {name: 'g{i}', kind: gpu, count: 8, price: $2.49/h, memory: {size: 80 GB}}\n",
        HEAD + "objects:\n  - {name: m0, kind: memory, size: 80 GiB, bandwidth: 100 GB/s, type: LPDDR5}\n",
        # The loader keeps these scalars as text; an editor (and safe_load) types them as
        # numbers and booleans, which the schema must accept where the loader takes text.
        HEAD + "objects:\n  - {name: 7, kind: node, software: {cuda: 12.10, driver: 550},"
        " labels: {quarantine: true, rail: 3, country: no}, size: 1.5, bandwidth: 2.5e3}\n",
        # Anchors and merge keys: safe_load resolves them as the loader does.
        HEAD + "templates:\n  gpu: &gpu {kind: gpu, model: H100-SXM5-80GB}\n"
        "objects:\n  - {<<: *gpu, name: g0}\n  - name: g1\n    <<: *gpu\n",
        HEAD + "metadata: {name: 2024}\nobjects:\n  - {name: 'n{i}', kind: node, type: 5, count: 2,"
        " overrides: {n1: {labels: {rail: 3, drained: yes}, software: {cuda: 12.4}}}}\n",
        HEAD + "kind: Catalog\ncatalog:\n  models:\n    - {name: X, vendor: v, kind: gpu, source: s, mig: {3g.40gb: 2},"
        " scaleup: {kind: nvlink, generation: 4, links: 18, bandwidth: 450 GB/s}, tensor: 1 TFLOPS, power: 700 W}\n",
        HEAD + "templates:\n  t: {kind: node, children: [{name: 'g{i}', kind: gpu, count: 2}]}\n"
        "objects:\n  - {template: t, name: 'n{i}', count: 2,"
        " overrides: {n1: {state: down, devices: {g0: {remove: true}}}}}\n",
    ]
    for text in good:
        assert _schema_errors(yaml.safe_load(text)) == [], text
        assert _loader_accepts(text), text


def test_misspelt_key_is_reported_where_it_is() -> None:
    errors = list(VALIDATOR.iter_errors(yaml.safe_load(BROKEN["misspelt object key"])))
    assert [list(e.absolute_path) for e in errors] == [["objects", 0]]
    assert "'lables'" in errors[0].message


# --- units and patterns: the schema's patterns read what the parsers read --------------------

# (definition, parser, samples). Figures too small to store ('0.1 MB/s') are left out:
# refusing those would take arithmetic that a pattern cannot do (docs say so).
UNIT_SAMPLES: list[tuple[str, Callable[[object], int], list[object]]] = [
    (
        "bandwidth",
        units.bandwidth_mbps,
        [
            "64 GB/s",
            "400 Gb/s",
            "900GBps",
            "3.35 TB/s",
            "1 GiB/s",
            "100 Mbit/s",
            "25 GB/sec",
            " 64 GB/s ",
            "50 Gbps",
            "2000 kB/s",
            "1e3 MB/s",
            "1_000 MB/s",
            "+5 GB/s",
            "64",
            64,
            3.5,
            ".5 GB/s",
            "64 GB",
            "64 G",
            "64 gb/s",
            "64 GB/h",
            "64 bytes/s",
            "64 XB/s",
            "fast",
            "",
            "  ",
            "-5 GB/s",
            "0 GB/s",
            "0",
            0,
            -1,
            True,
            None,
            [64],
            "1,000 MB/s",
            "3,5 TB/s",
            "64 GB/s/s",
            "1e GB/s",
        ],
    ),
    (
        "size",
        units.size_mb,
        [
            "80 GB",
            "80GiB",
            "512 KiB",
            "16 MiB",
            "80",
            80,
            1.5,
            "1000000 bytes",
            "2000000 byte",
            "4000 kB",
            "1 TB",
            " 8 GB ",
            "80 G",
            "80 Gb",
            "80 bits",
            "80 b",
            "0 GB",
            "-1 GB",
            "80 GB/s",
            "big",
            "80 gB",
            False,
            "1,000 GB",
        ],
    ),
    (
        "flops",
        units.flops_gflops,
        [
            "34 TFLOPS",
            "989.4 TFLOPS",
            "1 PFLOPS",
            "200 TOPS",
            "5 GFLOP/s",
            "34000",
            34000,
            "34 TFlops",
            "34 TB",
            "0 TFLOPS",
            "-1 TFLOPS",
            "fast",
            "34 TFLOPS/s",
        ],
    ),
    (
        "power",
        units.power_w,
        ["700 W", "10.2 kW", "1 MW", "700", 700, 1.5, "700 w", "700 kWh", "700 J", "0 W", "-5 W", "5 GW"],
    ),
    (
        "latency",
        units.latency_ns,
        [
            "90 ns",
            "1.5 us",
            "1.5 \u00b5s",
            "2 ms",
            "1 s",
            "0 ns",
            "90",
            90,
            0,
            2.5,
            "90 sec",
            "90 NS",
            "-5 ns",
            "fast",
            "90 ns ago",
        ],
    ),
    (
        "price",
        units.price_millicents,
        [
            "$2.49/h",
            "2.49 USD",
            "$2.49 per hour",
            "$2.49",
            "2.49",
            2.49,
            3,
            "$0/h",
            "3 USD/hr",
            "$ 2.49 / hour",
            "2.49 EUR",
            "\u20ac2.49",
            "$-1/h",
            "2.49/day",
            "two dollars",
            "2,49 USD",
        ],
    ),
]


def _parser_accepts(parse: Callable[[object], int], value: object) -> bool:
    try:
        parse(value)
    except units.UnitError:
        return False
    return True


@pytest.mark.parametrize(("definition", "parse", "samples"), UNIT_SAMPLES, ids=[u[0] for u in UNIT_SAMPLES])
def test_unit_patterns_agree_with_the_parsers(
    definition: str, parse: Callable[[object], int], samples: list[object]
) -> None:
    check = _def_validator(definition)
    verdicts = {repr(s): (check.is_valid(s), _parser_accepts(parse, s)) for s in samples}
    assert {k: v for k, v in verdicts.items() if v[0] != v[1]} == {}
    # Both kinds of sample are there, so the comparison cannot pass by accepting everything.
    assert {v[1] for v in verdicts.values()} == {True, False}


@pytest.mark.parametrize(
    ("minimum", "schema"),
    [(1, DEFS["object"]["properties"]["count"]), (0, DEFS["object"]["properties"]["start"])],
)
def test_whole_numbers_agree_with_the_parser(minimum: int, schema: dict[str, Any]) -> None:
    check = jsonschema.Draft202012Validator(schema)
    samples: list[object] = [0, 1, 8, -1, "8", " 8 ", "+8", "08", "0", "00", "eight", True, 1.5, "1.5", None, "1,000"]
    for s in samples:
        assert check.is_valid(s) == _parser_accepts(lambda v: units.integer(v, "count", minimum=minimum), s), s


PATTERNS = [
    "gpu{i}",
    "dgx{i:02d}",
    "{rack}-tray{i}",
    "a{{b}}",
    "x",
    "{i:x}",
    "{i:}",
    "n{seq:3d}",
    "}}{{",
    "gpu{",
    "gpu}",
    "{i:5.2f}",
    "{1i}",
    "{i.attr}",
    "{i}}",
    "{{i}",
    "",
    "  ",
    "{}",
]


def test_name_patterns_agree_with_the_pattern_compiler() -> None:
    check = _def_validator("pattern")

    def compiles(text: str) -> bool:
        try:
            compile_pattern(text)
        except PatternError:
            return False
        return bool(text.strip())  # the loader refuses a blank value before compiling it

    assert {p: check.is_valid(p) for p in PATTERNS} == {p: compiles(p) for p in PATTERNS}


def test_derivable_bandwidth_agrees_with_the_loader() -> None:
    # A link may leave out 'bandwidth' exactly when the loader can derive it.
    check = _def_validator("link")
    for kind in LINK_KINDS:
        for gen in (None, 0, 1, 2, 3, 4, 5, 6, 7, "4"):
            for lanes in (None, 16):
                link: dict[str, object] = {"a": "x", "b": "y", "kind": kind}
                if gen is not None:
                    link["generation"] = gen
                if lanes is not None:
                    link["lanes"] = lanes
                number = None if gen is None else units.integer(gen, "generation")
                derivable = number is not None and number >= 1 and derived_mbps(kind, number, None, lanes) is not None
                assert check.is_valid(link) == derivable, link


def test_mig_limits_agree_with_the_loader() -> None:
    check = _def_validator("catalogModel")
    for slices in range(1, 9):
        for count in range(0, 9):
            profile = f"{slices}g.{slices * 10}gb"
            model = {"name": "X", "vendor": "v", "kind": "gpu", "source": "s", "mig": {profile: count}}
            text = HEAD + "catalog:\n  models:\n    - " + json.dumps(model) + "\n"
            assert check.is_valid(model) == _loader_accepts(text), (profile, count)


# --- the command --------------------------------------------------------------------------


def test_schema_command_prints_the_shipped_file() -> None:
    result = CliRunner().invoke(main, ["schema"])
    assert result.exit_code == 0, result.output
    assert result.output == inventory_schema_text()
    assert json.loads(result.output) == SCHEMA


def test_schema_command_writes_a_file(tmp_path: Path) -> None:
    target = tmp_path / ".topolog" / "inventory.schema.json"
    result = CliRunner().invoke(main, ["schema", "-o", str(target)])
    assert result.exit_code == 0, result.output
    assert result.output == ""
    assert target.read_bytes() == inventory_schema_text().encode("utf-8")


def test_schema_command_cannot_write(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    result = CliRunner().invoke(main, ["schema", "-o", str(blocker / "inventory.schema.json")])
    assert result.exit_code == 2
    assert "cannot write the schema" in result.output


def test_schema_command_help_has_an_example() -> None:
    result = CliRunner().invoke(main, ["schema", "--help"])
    assert result.exit_code == 0, result.output
    assert any(line.strip().startswith("topolog schema") for line in result.output.splitlines())
