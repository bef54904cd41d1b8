"""`load_inventory(paths)`: read inventory files, merge them, expand templates, validate.

Several files merge into one inventory: catalogue models and templates from any file
can be used by every other file, ids share one namespace. Every problem in every file
is collected and raised together as one TopologError (exit code 2 at the CLI).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.core.gc_pause import collector_paused
from verifier.sources.inventory.catalog import builtin_models, parse_models
from verifier.sources.inventory.lookalike_names import check_look_alike_names, made_look_alikes, plain_text
from verifier.sources.inventory.model import CatalogModel, Inventory
from verifier.sources.inventory.raw_files import ReadFile, read_files
from verifier.sources.inventory.specs import ObjSpec, TemplateDef, read_link, read_object, read_templates
from verifier.sources.inventory.templates import CableIndex, Expander, Sink, check_expansion, made_links
from verifier.sources.inventory.validate import (
    Problems,
    check_inventory,
    did_you_mean,
    documents_of,
    failure_cause,
    read_document_text,
)
from verifier.sources.inventory.yaml_source import YList, YMap

API_VERSION = "topolog.dev/v1"
TOP_KEYS = ("apiVersion", "kind", "metadata", "catalog", "templates", "objects", "links")
DOC_KINDS = ("Inventory", "Catalog")


def load_inventory(paths: Iterable[str | Path]) -> Inventory:
    """Load and merge inventory files. Raises TopologError listing every problem."""
    return load_inventory_read(read_files(paths))


def load_inventory_read(files: Sequence[ReadFile]) -> Inventory:
    """The same from files already read (verifier.sources.inventory.raw_files): a pipe is read once,
    and a caller that keys a cache by the bytes parses exactly the bytes it keyed.
    """
    problems = Problems()
    return _build(documents_of(files, problems), [name for name, _ in files], problems, plain=plain_text(files))


def load_inventory_text(text: str, filename: str = "<inventory>") -> Inventory:
    """The same from a string (tests, importers)."""
    problems = Problems()
    plain = text.isascii() and "\\" not in text
    return _build(read_document_text(text, filename, problems), [filename], problems, plain=plain)


def _build(docs: list[YMap], files: list[str], problems: Problems, *, plain: bool) -> Inventory:
    # An ASCII file can hold no look-alike letter: nothing to read (lookalike_names.py).
    unsure = [] if plain else check_look_alike_names(docs, problems)
    with collector_paused():  # millions of small objects and no reference cycles (see core/gc_pause.py)
        return _build_inventory(docs, files, problems, unsure)


def _build_inventory(
    docs: list[YMap], files: list[str], problems: Problems, unsure: list[tuple[str, SourceLocation]]
) -> Inventory:
    inv = Inventory(files=tuple(files))
    for m in builtin_models():
        inv.models[m.name] = m
    templates: dict[str, TemplateDef] = {}
    entries: list[tuple[list[ObjSpec], YMap]] = []
    for doc in docs:
        read_header_and_catalog(doc, problems, inv)
        for t in read_templates(problems, doc, "templates"):
            if t.name in templates:
                problems.add(t.loc, f"duplicate template {t.name!r} (first written at {templates[t.name].loc})")
            else:
                templates[t.name] = t
                inv.templates[t.name] = t.loc
        specs: list[ObjSpec] = []
        objs = problems.seq(doc, "objects", "the inventory")
        for i, item in enumerate(objs or ()):
            if isinstance(item, YMap):
                specs.append(read_object(item, problems))
            else:
                problems.add(objs.item_loc(i) if objs else doc.loc, "each entry of 'objects' must be a mapping")
        entries.append((specs, doc))
    # Templates first (any file may use any file's), then objects in file order, then the
    # top-level links, which may join objects from different files.
    if not check_expansion([specs for specs, _ in entries], templates, problems):
        problems.raise_if_any()
    # Whole stamped nodes' links wait until something reads them (Inventory.defer_links).
    # So do their objects (Inventory.defer_objects).
    sink = Sink(
        inv.objects,
        inv.links,
        inv.software,
        inv.promises,
        stamped=inv.stamped,
        overridden=inv.overridden,
        deferred={},
        unmade_objects={},
        cables={},
    )
    expander = Expander(problems, templates, sink)
    for specs, _ in entries:
        expander.expand(specs, None, None, {})
    for _, doc in entries:
        links = problems.seq(doc, "links", "the inventory")
        for i, item in enumerate(links or ()):
            if not isinstance(item, YMap):
                problems.add(links.item_loc(i) if links else doc.loc, "each entry of 'links' must be a mapping")
                continue
            spec = read_link(problems, item)
            if spec is not None:
                expander.expand_link(spec, None, {})
    expander.finish()
    deferred = sink.deferred
    if deferred or sink.cables:
        nodes = deferred or {}
        # The cables' ids as the loading indexed them where it did for all (Expander._cable_ids),
        # else indexed when one is first looked up.
        runs = sink.cables or {}
        indexed = sink.cable_ids if sink.cables_indexed == len(runs) else None
        inv.defer_links(lambda so_far: made_links(so_far, nodes), nodes, sink.cables, CableIndex(runs, indexed))
    if sink.unmade_objects:
        inv.defer_objects(sink.unmade_objects)
    _unstamp_filled(inv, sink.explicit_parents)
    inv.serves = [(m, d) for m, d, _ in sink.serves if m not in sink.removed and d not in sink.removed]
    if sink.removed:
        inv.removed = frozenset(sink.removed)
    _serves_locs = {(m, d): loc for m, d, loc in sink.serves}
    found = inv.found
    for mem, dev in inv.serves:
        for end in (mem, dev):
            if end in found:
                continue
            cause = failure_cause(end, sink.failed)
            if cause is not None:
                problems.hide(cause)
            else:
                problems.add(_serves_locs[(mem, dev)], f"'serves' names {end!r}, which does not exist", same="serves")
    inv.serves = [(m, d) for m, d in inv.serves if m in found and d in found]
    # What stamped nodes' plans made is checked once per plan, unless something already went
    # wrong (a duplicate id can leave a copy unlike its plan): then object by object.
    sound = expander.sound_nodes(inv) if not problems and not sink.failed else set()
    check_inventory(
        inv,
        problems,
        sink.explicit_parents,
        sink.failed,
        ids_checked=True,
        sound=sound,
        cabled=sink.cabled,
        removed=sink.removed,
    )
    if sink.failed and not problems:
        # Every failed definition is reported where it is read; should one ever not be,
        # the objects it lacks must still fail the load rather than vanish.
        for cause in sorted(set(sink.failed.values())):
            problems.add(cause, "this entry could not be expanded into objects; expected a name and a kind")
    if unsure:
        made_look_alikes(unsure, inv.found, problems)
    problems.raise_if_any()
    return inv


def _unstamp_filled(inv: Inventory, placed: list[str]) -> None:
    """A stamped node that an entry outside its template put an object into (`parent:`) is no
    longer its template's plan alone (Inventory.stamped): summaries must read it whole.
    """
    found = inv.found
    for oid in placed:
        obj = found.get(oid)
        if obj is None:
            continue
        above, seen = obj.parent, {oid}
        while above is not None and above not in seen:  # a parent cycle is reported by check_inventory
            seen.add(above)
            if above != obj.origin:
                inv.stamped.pop(above, None)
            parent = found.get(above)
            above = parent.parent if parent is not None else None


def read_header_and_catalog(doc: YMap, problems: Problems, inv: Inventory) -> None:
    """A document's top keys, apiVersion, kind and metadata checked, and its catalog's models added
    to `inv` (the loader and authorize's partial path, partial.py, read a document's head alike).
    """
    _header(doc, problems, inv)
    cat = problems.mapping(doc, "catalog", "the inventory")
    if cat is not None:
        problems.keys(cat, ("models",), "catalog")
        items = problems.seq(cat, "models", "catalog")
        _add_models(parse_models(items, problems) if items is not None else [], inv, problems)


def _header(doc: YMap, problems: Problems, inv: Inventory) -> None:
    problems.keys(doc, TOP_KEYS, "the inventory")
    version = doc.get("apiVersion")
    if version is None:
        problems.add(doc.loc, f"no 'apiVersion'; expected 'apiVersion: {API_VERSION}' at the top")
    elif version != API_VERSION:
        problems.add(doc.key_loc("apiVersion"), f"unsupported apiVersion {version!r}; expected {API_VERSION!r}")
    kind = doc.get("kind")
    if kind is not None and kind not in DOC_KINDS:
        problems.add(
            doc.key_loc("kind"),
            f"unknown document kind {kind!r}{did_you_mean(str(kind), DOC_KINDS)}; expected 'Inventory'",
        )
    meta = problems.mapping(doc, "metadata", "the inventory")
    if meta is not None:
        problems.keys(meta, ("name", "description", "owner", "labels"), "metadata")
        name = problems.text(meta, "name", "metadata")
        if name is not None:
            inv.names[doc.loc.file] = name
    for key in ("objects", "links"):
        if key in doc and doc[key] is not None and not isinstance(doc[key], YList):
            problems.add(doc.key_loc(key), f"{key!r} must be a list")


GAINED_LATER = frozenset(
    {
        "L40S",
        "L4",
        "H100-NVL-94GB",
        "MI250X-GCD",
        "EPYC-7742",
        "Xeon-8570",
        "NVSwitch-Gen2",
        "ConnectX-6-HDR",
        "Slingshot-Cassini",
        "QM8700",
        "Slingshot-Rosetta",
        "ConnectX-8",
        "MI300A",
    }
)
"""Built-in models the catalogue gained after inventories had to define them themselves (R-FP59, R-FP60).

An inventory's own definition of one of these is used for that inventory whatever its figures, as
it was before the catalogue had the name: its authors' figures (a switch written without its
breakout count, a CPU with a socket-link spec the catalogue leaves out) describe their parts, and a
catalogue that grows must not refuse a file that loaded. A model added to catalog.yaml later joins
this set. Older built-in names keep the rule: other figures are a variant that needs its own name.
"""


def _same_figures(a: CatalogModel, b: CatalogModel) -> bool:
    """Whether two definitions say the same of a model (their source text and place aside)."""
    return (a.vendor, a.kind, dict(a.specs), a.features, a.mig) == (b.vendor, b.kind, dict(b.specs), b.features, b.mig)


def _earlier_copy(builtin: CatalogModel, own: CatalogModel) -> bool:
    """Whether `own` is the built-in entry as an earlier release shipped it: every figure it writes
    is the catalogue's, and what it lacks is a figure or feature the catalogue gained since (Grace-72C
    copied before `c2c_gpus` existed). Such a copy is no variant; a different figure still is.
    """
    specs = dict(builtin.specs)
    return (
        (own.vendor, own.kind) == (builtin.vendor, builtin.kind)
        and all(key in specs and specs[key] == value for key, value in own.specs.items())
        and own.features <= builtin.features
        and set(own.mig) <= set(builtin.mig)  # a profile added since (1g.10gb+me) is no variant
        and own.memory_type in (None, builtin.memory_type)
    )


def _add_models(models: list[CatalogModel], inv: Inventory, problems: Problems) -> None:
    for m in models:
        old = inv.models.get(m.name)
        if (
            old is not None
            and old.loc.file.startswith("<builtin>")
            and (m.name in GAINED_LATER or _same_figures(old, m) or _earlier_copy(old, m))
        ):
            # An inventory written before the catalogue had this model defined it itself (or writes
            # the catalogue's own figures again): its entry is the one used, so a catalogue that
            # grows does not break it nor change what it reads, and its findings point at the lines
            # the user wrote.
            inv.models[m.name] = m
        elif old is not None:
            where = "the built-in catalogue" if old.loc.file.startswith("<builtin>") else str(old.loc)
            problems.add(m.loc, f"model {m.name!r} is already defined in {where}; give the variant its own name")
        else:
            inv.models[m.name] = m
