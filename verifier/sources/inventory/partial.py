"""An inventory made only where one question looks, checked whole: `partial_inventory(files, wanted)`.

`authorize` asks about one principal and one resource, yet the loader stamps every node of a
fleet (verifier/sources/inventory/loader.py). Here a top-level entry with a `count` (a fleet's
scalable units) is expanded by the loader's own Expander only for the instances a question may
look at: those whose name appears in `wanted` (the request's names, the uids the policies name)
or in an override key, and two more, the representatives. Every other instance is *plain*: by
the two representatives' comparison its objects are theirs with the instance's name written in
(see `_uniform`), so it holds what they hold and passes what they pass: only its ids outside
stamped nodes are written out (`_plain_ids`), so that every id is seen once (duplicates, the
ends of top-level links); what a stamped node holds is its template's plan, checked once
(Expander.sound_nodes). Top-level links (a fleet's leaf-to-spine cabling) are checked per end
over that end's own `foreach` variables (`_cables_hold`; an end inside a plain stamped node
against its plan's names), not made: the partial inventory's links are the expanded instances'
only (a request reads objects; NVLink domains are found from the whole inventory,
verifier.authorization.setup).

Fail closed: anything this module does not cover (`{seq}`, `parent:`, `serves`, an entry's
`{i}` written otherwise than in its name (`_index_in_name_only`), an instance whose objects
differ from the representatives' other than by its name, an id that a longer name would take
past the length limit, a link from a representative into another instance or a scale-up link
to a shared object, a label holding an instance's name, any problem at all) answers None, and
the caller loads the whole inventory, which reports what is wrong in its own words.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet

from verifier.core.errors import TopologError
from verifier.core.gc_pause import collector_paused
from verifier.core.limits import current_limits
from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.loader import read_header_and_catalog
from verifier.sources.inventory.lookalike_names import check_look_alike_names, plain_text
from verifier.sources.inventory.model import FABRIC_LINK_KINDS, Inventory
from verifier.sources.inventory.patterns import MissingVariable, Pattern, PatternError
from verifier.sources.inventory.raw_files import ReadFile
from verifier.sources.inventory.specs import LinkSpec, ObjSpec, TemplateDef, read_link, read_object, read_templates
from verifier.sources.inventory.templates import Expander, Sink, check_expansion, made_links, resolve
from verifier.sources.inventory.validate import Problems, check_inventory, documents_of, name_problem
from verifier.sources.inventory.yaml_source import YMap

HOLE = "\x00"
"""Stands for an instance's name in what a representative made (no name can hold it)."""
UNSUPPORTED = (b"seq", b"parent", b"serves")
"""Text that may mean `{seq}` (numbered across instances), `parent:` or `serves:`: whole load."""
MIN_COUNT = 4
"""Below this many instances an entry is expanded whole: nothing to gain."""

Instance = tuple[int, str]
"""One instance of a counted entry: its index `{i}` and its name."""


@dataclasses.dataclass
class Partial:
    """The inventory the question reads, and what it was checked with."""

    inventory: Inventory
    """Every object but the plain instances': these objects are exactly the whole load's."""
    plain_ids: frozenset[str]
    """The ids of the plain instances' objects outside stamped nodes (their nodes' contents are
    their template's plan): each is a representative's id with the instance's name written in."""


def partial_inventory(files: Sequence[ReadFile], wanted: Iterable[str]) -> Partial | None:
    """The inventory of `files` with plain instances left out, or None: load it whole."""
    for _, data in files:
        if isinstance(data, TopologError) or any(word in data for word in UNSUPPORTED):
            return None
    problems = Problems()
    docs = documents_of(files, problems)
    # Look-alike names, or a name that may look like a made id: the whole load reports them.
    if problems or (not plain_text(files) and (check_look_alike_names(docs, problems) or problems)):
        return None
    with collector_paused():
        return _partial(docs, [name for name, _ in files], problems, "\n".join(wanted))


def _partial(docs: list[YMap], files: list[str], problems: Problems, wanted: str) -> Partial | None:
    inv = Inventory(files=tuple(files))
    for m in builtin_models():
        inv.models[m.name] = m
    templates: dict[str, TemplateDef] = {}
    entries: list[list[ObjSpec]] = []
    for doc in docs:  # as loader._build_inventory reads them; any problem: the loader reports it
        read_header_and_catalog(doc, problems, inv)
        for t in read_templates(problems, doc, "templates"):
            if t.name in templates:
                return None
            templates[t.name] = t
            inv.templates[t.name] = t.loc
        objs = problems.seq(doc, "objects", "the inventory")
        specs = [read_object(item, problems) for item in objs or () if isinstance(item, YMap)]
        if objs is not None and len(specs) != len(objs):
            return None
        entries.append(specs)
    if problems or not check_expansion(entries, templates, problems):
        return None
    keys = "\n".join(_override_keys([*(s for specs in entries for s in specs), *(t.body for t in templates.values())]))
    sink = Sink(
        inv.objects, inv.links, inv.software, inv.promises, stamped=inv.stamped, overridden=inv.overridden, deferred={}
    )
    expander = Expander(problems, templates, sink)
    copies: list[list[int]] = []  # ids of the copies of one entry (its overrides are used across them)
    plain: list[tuple[list[Instance], tuple[_Made, _Made]]] = []  # (plain instances, representatives)
    for specs in entries:
        for spec in specs:
            chosen = _choose(spec, wanted, keys) if _index_in_name_only(spec, templates) else None
            if chosen is None:
                expander.expand_entry(spec, None, None, {})
                continue
            picked, rest, reps = chosen
            made: dict[int, _Made] = {}
            ids = []
            for k, _name in picked:
                one = dataclasses.replace(spec, start=k, count=1)
                ids.append(id(one))
                before = _Made.now(sink)
                expander.expand_entry(one, None, None, {})
                made[k] = before.since(sink)
            copies.append(ids)
            plain.append((rest, (made[reps[0][0]].named(reps[0][1]), made[reps[1][0]].named(reps[1][1]))))
    cables: list[LinkSpec] = []  # the top-level links: checked per axis below, not made
    for doc in docs:
        for item in problems.seq(doc, "links", "the inventory") or ():
            spec_link = read_link(problems, item) if isinstance(item, YMap) else None
            if spec_link is None:
                return None
            cables.append(spec_link)
    _merge_overrides(expander, copies)
    expander.finish()
    if not plain or problems or sink.failed or sink.removed or sink.put_back or sink.serves or sink.explicit_parents:
        return None  # nothing left out (the loader's own way is the one to take), or a problem to report
    known = set(sink.objects)
    heads: dict[str, frozenset[str]] = {}
    outside: set[str] = set()
    # What each template's plan puts in a node, by relative name ("/nic0").
    contents = {
        name: frozenset(plan.names[slot - 1] for slot, _parent, _obj in plan.objects if slot > 0)
        for name, plan in expander.plans.items()
        if plan is not None
    }
    for rest, (first, second) in plain:
        if not _uniform(first, second, sink, outside) or not _fits_longer(first, rest, sink, expander.rooms):
            return None
        if not _plain_ids(first, rest, sink, known, heads, contents):
            return None
    if not outside <= known:  # a plain instance's cable to a missing switch: the loader names it
        return None
    # What a plain stamped node holds is never made: no made id may be one of its objects.
    if any(oid.partition("/")[0] in heads for oid in sink.objects if "/" in oid):
        return None
    if not all(_cables_hold(spec, known, heads) for spec in cables):
        return None
    if sink.deferred:
        deferred = sink.deferred
        inv.defer_links(lambda so_far: made_links(so_far, deferred), deferred)
    check_inventory(inv, problems, (), {}, ids_checked=True, sound=expander.sound_nodes(inv))
    if problems:
        return None
    return Partial(inv, frozenset(known.difference(sink.objects)))


def _override_keys(specs: Iterable[ObjSpec]) -> Iterable[str]:
    """Every override key written in `specs` and their children: an instance it names is expanded."""
    for spec in specs:
        yield from spec.overrides
        yield from _override_keys(spec.children)


def _index_in_name_only(spec: ObjSpec, templates: Mapping[str, TemplateDef]) -> bool:
    """Whether the instance index `{i}` of a counted entry is written, wherever it reaches (the
    entry, its uncounted children and their templates, links without their own `i`), only as in
    the entry's name: plain instances are their representatives with the name written in, which
    `{i:03d}` beside a name `{i}` breaks from 100 on ("096" holds "96", "100" is not "0100") and
    `{i:X}` beside `{i:x}` from 10 to 15 (and again from 26), so no comparison of a few instances
    can stand in for it. A counted child's `{i}` is its own.
    """
    assert spec.name is not None
    own = set(_index_specs(spec.name))
    if len(own) != 1:
        return False
    return set(_reached_specs(spec, templates, 0, top=True)) <= own


def _index_specs(pattern: Pattern | None) -> Iterator[str]:
    """The format spec of each `{i}` field of `pattern`."""
    for part in pattern.parts if pattern is not None else ():
        if not isinstance(part, str) and part[0] == "i":
            yield part[1]


def _reached_specs(spec: ObjSpec, templates: Mapping[str, TemplateDef], depth: int, *, top: bool) -> Iterator[str]:
    """The format spec of every `{i}` that `spec`'s index reaches: in its labels, software,
    parent, serves and links without their own `i`, in its uncounted children (names too) and its
    template's body; the `top` entry's own name is not counted. `depth`: templates entered.
    """
    if depth > len(templates) + 1:  # a template that includes itself: the loader reports it
        yield "\x00"  # a spec no name is written with: the entry is expanded whole
        return
    patterns: list[Pattern | None] = [p for _, p in (*spec.labels.patterns, *spec.software.patterns)]
    patterns += [spec.parent, *spec.serves] + ([] if top else [spec.name])
    for link in spec.links:
        if all(name != "i" for name, _ in link.foreach):
            patterns += [link.a, link.b, link.id, *(p for _, p in link.labels.patterns)]
    for pattern in patterns:
        yield from _index_specs(pattern)
    for child in spec.children:
        if child.count is None:
            yield from _reached_specs(child, templates, depth, top=False)
    body = templates.get(spec.template) if spec.template is not None else None
    if body is not None:
        yield from _reached_specs(body.body, templates, depth + 1, top=False)


def _choose(
    spec: ObjSpec, wanted: str, keys: str
) -> tuple[list[Instance], list[Instance], tuple[Instance, Instance]] | None:
    """(instances to expand, plain instances, the two representatives), or None: expand it whole.
    An instance is asked for when its name is in `wanted` or in an override key (`keys`).
    """
    if spec.count is None or spec.count < MIN_COUNT or spec.name is None or spec.broken is not None:
        return None
    names: list[Instance] = []
    for k in range(spec.start, spec.start + spec.count):
        try:
            name = spec.name.render({"i": k})
        except (MissingVariable, PatternError):
            return None
        if name_problem(name) is not None or HOLE in name:
            return None
        names.append((k, name))
    asked = [(k, n) for k, n in names if n in wanted or n in keys]
    others = [(k, n) for k, n in names if not (n in wanted or n in keys)]
    if len(others) < 3:
        return None
    reps = (others[0], others[1])
    picked = sorted([*asked, *reps])
    return picked, others[2:], reps


@dataclasses.dataclass
class _Made:
    """What one instance's expansion added to the sink (ids in order), and the instance's name."""

    objects: list[str]
    links: list[str]
    software: list[str]
    promises: list[str]
    name: str = ""

    @classmethod
    def now(cls, sink: Sink) -> _Made:
        return cls([*sink.objects], [*sink.links], [*sink.software], [*sink.promises])

    def since(self, sink: Sink) -> _Made:
        return _Made(
            [*sink.objects][len(self.objects) :],
            [*sink.links][len(self.links) :],
            [*sink.software][len(self.software) :],
            [*sink.promises][len(self.promises) :],
        )

    def named(self, name: str) -> _Made:
        return dataclasses.replace(self, name=name)


def _merge_overrides(expander: Expander, copies: list[list[int]]) -> None:
    """One entry's copies share its overrides: an override is used if any copy used it."""
    used = expander.override_used
    for ids in copies:
        present = [i for i in ids if i in used]
        if len(present) < 2:
            continue
        keep = used[present[0]][1]
        for i in present[1:]:
            keep |= used.pop(i)[1]


def _sub(text: str | None, name: str) -> str | None:
    """`text` with the instance's `name` cut out (HOLE in its place)."""
    return text.replace(name, HOLE) if text is not None else None


def _shape(made: _Made, sink: Sink, outside: set[str]) -> tuple[object, ...] | None:
    """What an instance made with its name cut out; None if a link of it leaves it for another
    instance. The ends of its cables to objects outside it are added to `outside`.
    """
    n = made.name
    ids = {t for t in (_sub(o, n) for o in made.objects) if t is not None}
    objects = []
    for oid in made.objects:
        o = sink.objects[oid]
        objects.append(
            (
                _sub(o.id, n),
                o.kind,
                _sub(o.parent, n),
                o.model,
                tuple((_sub(k, n), _sub(v, n)) for k, v in o.labels.items()),
                tuple(o.quantities.items()),
                o.state,
                o.template,
                None if oid == n else o.index,
                _sub(o.origin, n),
                oid in sink.stamped,
            )
        )
    links = []
    for lid in made.links:
        lk = sink.links[lid]
        a, b, tid = _sub(lk.a, n), _sub(lk.b, n), _sub(lid, n)
        if tid is None or HOLE not in tid:  # the same link in every instance: the whole load says what it makes of it
            return None
        for end in (a, b) if lk.origin is None else ():  # a stamped node's: its plan's, checked once
            if end is None:
                return None
            if HOLE not in end and lk.kind in FABRIC_LINK_KINDS:
                outside.add(end)  # a cable to a shared switch (a spine): it must exist, checked after
            # Else within the instance only: a link to another instance, or a scale-up link to a
            # shared object (joining every instance's NVLink domains), is the loader's to make.
            elif HOLE not in end or end not in ids:
                return None
        links.append(
            (
                tid,
                a,
                b,
                lk.kind,
                lk.mbps,
                tuple(lk.attrs.items()),
                tuple((_sub(k, n), _sub(v, n)) for k, v in lk.labels.items()),
                lk.state,
                _sub(lk.origin, n),
            )
        )
    software = [(_sub(k, n), tuple((a, _sub(v, n)) for a, v in sink.software[k].items())) for k in made.software]
    promises = [(_sub(k, n), sink.promises[k]) for k in made.promises]
    return (tuple(objects), tuple(links), tuple(software), tuple(promises))


def _uniform(first: _Made, second: _Made, sink: Sink, outside: set[str]) -> bool:
    """Whether the representatives made the same with their names cut out, and nothing an
    override changed: then every plain instance makes that with its own name written in.
    """
    if any(oid in sink.overridden for oid in (*first.objects, *second.objects)):
        return False
    one = _shape(first, sink, outside)
    return one is not None and one == _shape(second, sink, outside)


def _fits_longer(first: _Made, rest: list[Instance], sink: Sink, rooms: Mapping[str, int]) -> bool:
    """Whether the longest plain instance name keeps every id the id length limit holds within it
    (the loader's Expander holds the representatives' own): the first representative's objects
    and links written with `id:`, its name written in, and what a whole stamped node's plan makes
    under the longer node id (Expander.rooms). False: the whole load reports the id.
    """
    n = first.name
    grow = max(len(name) for _, name in rest) - len(n)
    if grow <= 0:
        return True
    limit = current_limits().id_length
    held = list(first.objects)
    for lid in first.links:
        lk = sink.links.get(lid)
        ends = f"{lk.a}<->{lk.b}" if lk is not None else ""
        if lk is not None and not lid.startswith(HOLE) and lid != ends and not lid.startswith(ends + "#"):
            held.append(lid)  # an id made `a<->b` from its ends is not held: each end is
    if max(len(i) + i.count(n) * grow for i in held) > limit:
        return False
    stamped = sink.stamped
    return all(len(oid) + oid.count(n) * grow <= rooms.get(stamped[oid], -1) for oid in first.objects if oid in stamped)


def _plain_ids(
    first: _Made,
    rest: list[Instance],
    sink: Sink,
    ids: set[str],
    heads: dict[str, frozenset[str]],
    contents: Mapping[str, frozenset[str]],
) -> bool:
    """Add the plain instances' ids outside stamped nodes to `ids` (their stamped nodes' to
    `heads`, with what their plan holds: `contents`), each the first representative's with the
    instance's name written in; False where one is taken (the whole load reports the duplicate)
    or a label holds the name (the labels of a plain instance must be the representative's,
    which the label check reads).
    """
    n = first.name
    objects = [sink.objects[oid] for oid in first.objects]
    if any(n in k or n in v for o in objects for k, v in o.labels.items()):
        return False
    if any("\n" in o.id for o in objects):
        return False
    # One replace and one split per instance: a fleet has thousands of plain instances.
    own = "\n".join(o.id for o in objects if o.origin is None)
    stamped = [o.id for o in objects if o.id in sink.stamped]
    if any(sink.stamped[oid] not in contents for oid in stamped):
        return False
    nodes = "\n".join(stamped)
    held = [contents[sink.stamped[oid]] for oid in stamped]
    for _k, name in rest:
        made = own.replace(n, name).split("\n")
        before = len(ids)
        ids.update(made)
        if len(ids) - before != len(made):  # an id taken, by another object or within the instance
            return False
        if nodes:
            heads.update(zip(nodes.replace(n, name).split("\n"), held, strict=True))
    return True


def _cables_hold(spec: LinkSpec, ids: AbstractSet[str], heads: Mapping[str, frozenset[str]]) -> bool:
    """Whether every link a top-level `links` entry makes joins two different objects of `ids`
    or of plain stamped nodes (`heads`: what each holds), checked per end over that end's own
    `foreach` variables (a fleet's leaf-to-spine cabling: 4,096 and 16 names instead of 65,536
    pairs); False where the loader must say what it makes of the entry (an id or label pattern,
    a variable nothing sets, a name that may be both ends).
    """
    if spec.id is not None or spec.labels.patterns or spec.kind not in FABRIC_LINK_KINDS:
        return False  # (a scale-up link between instances would join their NVLink domains)
    values = dict(spec.foreach)
    if any(not v for v in values.values()):
        return True  # an empty range: no link at all
    ends: list[set[str]] = []
    for pattern in (spec.a, spec.b):
        names = sorted(pattern.variables)
        if any(v not in values for v in names):
            return False
        rendered: set[str] = set()
        for combo in itertools.product(*(values[v] for v in names)):
            try:
                rendered.add(resolve(pattern.render(dict(zip(names, combo, strict=True))), None))
            except (MissingVariable, PatternError):
                return False
        for end in rendered.difference(ids):
            node, _, inside = end.partition("/")
            if node not in heads or "/" + inside not in heads[node]:
                return False
        ends.append(rendered)
    return ends[0].isdisjoint(ends[1])  # no link from an object to itself
