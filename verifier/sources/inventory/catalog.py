"""The hardware catalogue: models with published figures, so an inventory says
`model: H100-SXM5-80GB` instead of repeating numbers.

The built-in catalogue is package data (`catalog.yaml`, each model with its `source:`);
an inventory's `catalog: models:` section adds models in the same format.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from verifier.core.cache import code_digest, entry_key, read_pickled, write_pickled
from verifier.core.cache import enabled as cache_enabled
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.limits import Limits, use_limits
from verifier.core.resources import package_dir, package_file
from verifier.sources.inventory import units
from verifier.sources.inventory.model import LINK_KINDS, MODEL_KINDS, CatalogModel
from verifier.sources.inventory.validate import Problems
from verifier.sources.inventory.yaml_source import YList, YMap, load_yaml_text

BUILTIN_FILE = "<builtin>/catalog.yaml"

MODEL_KEYS = (
    "mig",
    "name",
    "vendor",
    "kind",
    "source",
    "memory",
    "fp64",
    "tensor",
    "scaleup",
    "ports",
    "pcie",
    "cores",
    "power",
    "features",
    "specs",
)
FEATURES = (
    "mig",
    "partitioning",
    "fp64",
    "ecc",
    "nvlink",
    "nvlink_c2c",
    "nvswitch",
    "xgmi",
    "roce",
    "infiniband",
    "hbm",
    "unified_memory",
)


def parse_models(items: YList, problems: Problems) -> list[CatalogModel]:
    """Read a `models:` list; problems are collected, bad models are left out."""
    out: list[CatalogModel] = []
    for i, item in enumerate(items):
        if not isinstance(item, YMap):
            problems.add(items.item_loc(i), "a catalogue model must be a mapping with name, vendor and kind")
            continue
        model = _parse_model(item, problems)
        if model is not None:
            out.append(model)
    return out


def _parse_model(m: YMap, problems: Problems) -> CatalogModel | None:
    name = problems.text(m, "name", "a catalogue model")
    what = f"model {name!r}" if name else "a catalogue model"
    problems.keys(m, MODEL_KEYS, what, required=("name", "vendor", "kind", "source"))
    vendor = problems.text(m, "vendor", what)
    kind = problems.choice(m, "kind", what, MODEL_KINDS)
    source = problems.text(m, "source", what)
    specs: dict[str, int] = {}
    features: set[str] = set()

    def put(key: str, value: int | None) -> None:
        if value is not None:
            specs[key] = value

    mem = problems.mapping(m, "memory", what)
    mtype: str | None = None
    if mem is not None:
        problems.keys(mem, ("type", "size", "bandwidth"), f"memory of {what}")
        mtype = problems.text(mem, "type", f"memory of {what}")
        size = problems.unit(mem, "size", f"memory of {what}", units.size_mb)
        bw = problems.unit(mem, "bandwidth", f"memory of {what}", units.bandwidth_mbps)
        put("mem_mb", size)
        put("mem_mbps", bw)
        if mtype is not None and mtype.upper().startswith("HBM"):
            put("hbm_mb", size)
            put("hbm_mbps", bw)
            features.add("hbm")
    put("fp64_gflops", problems.unit(m, "fp64", what, units.flops_gflops))
    put("tensor_gflops", problems.unit(m, "tensor", what, units.flops_gflops))
    up = problems.mapping(m, "scaleup", what)
    if up is not None:
        w = f"scaleup of {what}"
        problems.keys(up, ("kind", "generation", "links", "bandwidth"), w, required=("links", "bandwidth"))
        lkind = problems.choice(up, "kind", w, LINK_KINDS)
        gen = problems.unit(up, "generation", w, lambda v: units.integer(v, "generation", minimum=1))
        links = problems.unit(up, "links", w, lambda v: units.integer(v, "links", minimum=1))
        bw = problems.unit(up, "bandwidth", w, units.bandwidth_mbps)
        put("scaleup_generation", gen)
        put("scaleup_links", links)
        put("scaleup_mbps", bw)
        if links and bw:
            put("scaleup_link_mbps", bw // links)
        if lkind in ("nvlink", "xgmi"):
            features.add(lkind)
    ports = problems.mapping(m, "ports", what)
    if ports is not None:
        w = f"ports of {what}"
        problems.keys(ports, ("count", "speed"), w, required=("count", "speed"))
        put("ports", problems.unit(ports, "count", w, lambda v: units.integer(v, "count", minimum=1)))
        put("port_mbps", problems.unit(ports, "speed", w, units.bandwidth_mbps))
    pcie = problems.mapping(m, "pcie", what)
    if pcie is not None:
        w = f"pcie of {what}"
        problems.keys(pcie, ("generation", "lanes"), w)
        put(
            "pcie_generation",
            problems.unit(pcie, "generation", w, lambda v: units.integer(v, "generation", minimum=1)),
        )
        put("pcie_lanes", problems.unit(pcie, "lanes", w, lambda v: units.integer(v, "lanes", minimum=1)))
    put("cores", problems.unit(m, "cores", what, lambda v: units.integer(v, "cores", minimum=1)))
    put("tdp_w", problems.unit(m, "power", what, units.power_w))
    features.update(problems.known_words(m, "features", what, FEATURES, "feature"))
    raw = problems.int_map(m, "specs", what)
    if raw:
        specs.update(raw)
    mig = _mig_profiles(m, problems, what)
    if mig:
        features.update(("mig", "partitioning"))
    if name is None or vendor is None or kind is None or source is None:
        return None
    return CatalogModel(name, vendor.lower(), kind, specs, frozenset(features), source, m.loc, mig, mtype)


MIG_PROFILE = re.compile(r"([1-7])g\.([1-9][0-9]{0,8})gb(?:\+me(?:\.all)?|\+gfx|-me)?")
"""A MIG profile name: compute slices (of 7) and memory in GB, as nvidia-smi writes it ("3g.40gb"), with
the media or graphics extension NVIDIA's MIG user guide names after a `+` or `-` ("1g.10gb+me": the
slice that holds the GPU's media engines, one per GPU): a profile of its own, with its own count."""


def mig_memory_mb(profile: str) -> int | None:
    """The memory of a MIG instance, read from its profile name (MB); None when the name is not a profile."""
    found = MIG_PROFILE.fullmatch(profile)
    return int(found.group(2)) * 1000 if found else None


def _mig_profiles(m: YMap, problems: Problems, what: str) -> tuple[tuple[str, int], ...]:
    raw = problems.int_map(m, "mig", what)
    if not raw:
        return ()
    sub = m.get("mig")
    out: list[tuple[str, int]] = []
    for profile, count in sorted(raw.items()):
        where = sub.key_loc(profile) if isinstance(sub, YMap) else m.key_loc("mig")
        found = MIG_PROFILE.fullmatch(profile)
        if found is None:
            problems.add(where, f"MIG profile {profile!r} of {what} is not a profile name; expected e.g. '3g.40gb'")
        elif not 1 <= count <= 7 or int(found.group(1)) * count > 7:
            problems.add(
                where,
                f"MIG profile {profile!r} of {what}: {count} instances of {found.group(1)} compute "
                f"slices do not fit the 7 of a GPU (expected 1 to {7 // int(found.group(1))})",
            )
        else:
            out.append((profile, count))
    return tuple(out)


KIND = "catalog"
"""The cache entry kind of the parsed built-in catalogue (verifier.core.cache)."""


@cache
def builtin_models() -> tuple[CatalogModel, ...]:
    """The shipped catalogue, parsed once per process. A broken one is a bug, not bad input.

    Read under the default limits: `--input-limit id_length=8` bounds what the user gives,
    not the names topolog ships (a lowered limit made this an internal error). Parsing it
    with locations costs more (10-15 ms) than most of a small `authorize`, so the parsed
    models are kept in the cache, named by the file's bytes and the code that reads it.
    """
    data = _catalogue_bytes()
    key = entry_key(code_digest(_PACKAGE, _CODE), [data]) if cache_enabled() else None
    kept = read_pickled(KIND, key) if key is not None else None
    if isinstance(kept, tuple) and all(isinstance(m, CatalogModel) for m in kept):
        return kept
    models = _compiled_models(data)
    if models is None:
        with use_limits(Limits()):
            models = _parse_builtin_models(data.decode("utf-8"))
    if key is not None:
        write_pickled(KIND, key, models)
    return models


_PACKAGE = "verifier.sources.inventory"
_CODE = ("catalog.py", "model.py", "units.py", "validate.py", "yaml_source.py")
"""The modules whose change can change the models the catalogue's text parses to."""
COMPILED = "catalog_compiled.json"
"""The built-in catalogue parsed ahead of time (python -m verifier.sources.inventory.compile_catalog):
reading it is a JSON decode, where parsing the YAML with locations and every unit is about 3 % of a
shipped example's cold `verify` (66 M instructions). Used only where its digest is that of the
catalogue and of the code that parses it (`source_digest`); otherwise the YAML is parsed as before.
"""


def source_digest(data: bytes) -> str:
    """What the compiled catalogue was made from: the catalogue's bytes and the code that parses them."""
    folder = package_dir(_PACKAGE)
    digest = hashlib.sha256(data)
    for name in _CODE:
        digest.update(b"\0" + name.encode() + b"\0" + folder.joinpath(name).read_bytes())
    return digest.hexdigest()


def models_to_json(models: Sequence[CatalogModel]) -> list[dict[str, object]]:
    """The models as the compiled catalogue holds them, every field kept (specs in their order)."""
    return [
        {
            "name": m.name,
            "vendor": m.vendor,
            "kind": m.kind,
            "specs": dict(m.specs),
            "features": sorted(m.features),
            "source": m.source,
            "loc": [m.loc.file, m.loc.line, m.loc.col],
            "mig": [[profile, count] for profile, count in m.mig],
            "memory_type": m.memory_type,
        }
        for m in models
    ]


def models_from_json(rows: Sequence[Any]) -> tuple[CatalogModel, ...]:
    """The models `models_to_json` wrote."""
    return tuple(
        CatalogModel(
            r["name"],
            r["vendor"],
            r["kind"],
            r["specs"],
            frozenset(r["features"]),
            r["source"],
            SourceLocation(*r["loc"]),
            tuple((profile, count) for profile, count in r["mig"]),
            r["memory_type"],
        )
        for r in rows
    )


def _compiled_models(data: bytes) -> tuple[CatalogModel, ...] | None:
    """The compiled catalogue's models when it was made from `data` and this code; None otherwise."""
    path = package_file(_PACKAGE, COMPILED)
    try:
        doc = json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("digest") != source_digest(data):
        return None
    return models_from_json(doc["models"])


def _catalogue_bytes() -> bytes:
    return package_file(_PACKAGE, "catalog.yaml").read_bytes()


def _parse_builtin_models(text: str) -> tuple[CatalogModel, ...]:
    doc = load_yaml_text(text, BUILTIN_FILE)
    problems = Problems()
    items = problems.seq(doc, "models", "the built-in catalogue")
    models = parse_models(items, problems) if items is not None else []
    if problems:  # pragma: no cover - guarded by tests
        raise AssertionError(str(TopologError(problems.items)))
    return tuple(models)
