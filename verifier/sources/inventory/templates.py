"""Expanding object entries and templates into objects and links.

A node type (template of kind `node`) is expanded once into a *plan*: its objects and
links with ids relative to the node. Each instance then only stamps the plan with its
node id (string concatenation, no YAML walking, no pattern rendering), which is what
makes a 16,384-node fleet load in seconds. A template whose body depends on the instance
(uses `{seq}`, `{node}`, `{rack}` or the instance's `{i}`) cannot be planned and is
expanded per instance instead: slower, same result.

Overrides (`overrides: {dgx03: {...}}`) are applied to the instance after it is stamped.

An entry whose definition failed (unknown template, misspelt or missing name, kind or
count: the mistake is reported where it is read) records what it would have made in
`Sink.failed`; links, parents and overrides naming those ids are then not reported
missing one by one, only counted against the mistake that explains them.
"""

from __future__ import annotations

import itertools
import operator
import string
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from types import MappingProxyType

from verifier.core.errors import SourceLocation
from verifier.core.frozen import Record
from verifier.core.limits import INT64_MAX, current_limits, exceeded
from verifier.core.stamped_rows import names_at
from verifier.sources.inventory.model import (
    CABLES_UNMADE,
    EMPTY_INT,
    EMPTY_STR,
    FABRIC_LINK_KINDS,
    CableColumns,
    Inventory,
    Link,
    Obj,
    ObjectRow,
    Unmade,
    links_of,
    made_cables,
    made_objects,
    unmade_of,
)
from verifier.sources.inventory.patterns import MissingVariable, Pattern, PatternError
from verifier.sources.inventory.software import release_shape_problem
from verifier.sources.inventory.specs import (
    DeviceOverride,
    LinkSpec,
    ObjSpec,
    Override,
    TemplateDef,
    TextMap,
    derived_mbps,
    link_id_problem,
)
from verifier.sources.inventory.validate import (
    CableRun,
    Problems,
    did_you_mean,
    failure_cause,
    may_nest,
    model_problem,
)

_HOLE = "\x00"  # stands for the node id while a plan is built
_SEP = "\n"  # between the names of a plan's instance while they are made (ids are printable)


_Shared = tuple[TextMap, Mapping[str, int], Mapping[str, str], TextMap, tuple[str, ...]]
"""What every instance of one entry shares (Expander._shared): labels and software to render, the
quantities and typed labels of its figures, its promises."""


class _WholeNode:
    """What every instance of an entry stamped whole from its template's plan shares (Expander._whole).

    A plain class: a frozen dataclass has its methods compiled when the module is imported, which
    every run would pay for, a fleet or not (5.5 million instructions, over 1 ms).
    """

    __slots__ = ("labels", "model", "plan", "promises", "quantities", "room", "software", "state", "template", "typed")

    def __init__(
        self,
        plan: _Plan,
        template: str,
        room: int,
        model: str | None,
        state: str | None,
        labels: Mapping[str, str],
        typed: Mapping[str, str],
        quantities: Mapping[str, int],
        software: Mapping[str, str],
        promises: tuple[str, ...],
    ) -> None:
        self.plan = plan
        self.template = template
        self.room = room
        """The longest node id the plan can be stamped under (_Plan.room), within the id length limit."""
        self.model = model
        self.state = state
        self.labels = labels
        self.typed = typed
        self.quantities = quantities
        self.software = software
        self.promises = promises


class _Dependent(Exception):
    """A template body that needs instance variables: expand it per instance."""


def cable_index(runs: Mapping[str, CableColumns], into: dict[str, str] | None = None, start: int = 0) -> dict[str, str]:
    """Each cable id of `runs` (from the `start`-th run on) -> the id of its run's placeholder,
    added to `into` (a new table where None).
    """
    out: dict[str, str] = {} if into is None else into
    for key, run in itertools.islice(runs.items(), start, None):
        out.update(dict.fromkeys(run[0], key))
    return out


class CableIndex(Mapping[str, str]):
    """cable_index(runs), made when first read (Inventory.defer_links' `cable_ids`): a fleet's
    question that names no cable by its id never makes the table of its 196,608 ids.
    """

    __slots__ = ("_ids", "_runs")

    def __init__(self, runs: Mapping[str, CableColumns], ids: dict[str, str] | None = None) -> None:
        self._runs = runs
        self._ids = ids  # made already (every run in it), or None

    def _index(self) -> dict[str, str]:
        if self._ids is None:
            self._ids = cable_index(self._runs)
        return self._ids

    def __bool__(self) -> bool:
        return bool(self._runs)  # every run has a cable (Expander._defer_cables)

    def __getitem__(self, lid: str) -> str:
        return self._index()[lid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._index())

    def __len__(self) -> int:
        return len(self._index())


@dataclass(repr=False, eq=False)
class Sink(Record):
    """Where expansion writes: the inventory's tables, or a plan's."""

    objects: dict[str, Obj] = field(default_factory=dict)
    links: dict[str, Link] = field(default_factory=dict)
    software: dict[str, Mapping[str, str]] = field(default_factory=dict)
    promises: dict[str, tuple[str, ...]] = field(default_factory=dict)
    serves: list[tuple[str, str, SourceLocation]] = field(default_factory=list)
    removed: set[str] = field(default_factory=set)
    put_back: bool = False  # an id made again after an override removed it (Expander._put_back)
    explicit_parents: list[str] = field(default_factory=list)  # objects placed with `parent:`
    journal: list[str] | None = None  # ids of objects and links added, while an override waits
    stamped: dict[str, str] = field(default_factory=dict)  # node id -> template (Inventory.stamped)
    overridden: dict[str, tuple[SourceLocation, frozenset[str]]] = field(default_factory=dict)  # Inventory.overridden
    failed: dict[str | None, SourceLocation] = field(default_factory=dict)
    """What entries whose definition failed would have made: an id (standing for itself and
    every id below it) or None (any id), with the place of the error that explains it."""
    deferred: dict[str, Unmade] | None = None
    """Stamped nodes whose links are not made yet: node id -> (plan, the instance's names). Each holds
    its place in `links` with a placeholder (see Expander._stamp). None: every link is made at once."""
    heads: set[str] = field(default_factory=set)
    """While links are deferred: the heads (up to the first `/`) of every link id made or asked for."""
    cabled: list[CableRun] = field(default_factory=list)
    """Cables a `foreach` made in one pass with every end an object and none a loop (check_inventory)."""
    cables: dict[str, CableColumns] | None = None
    """While links are deferred: runs of cables not made yet (Inventory.unmade_cables), by the id of
    the placeholder (loc CABLES_UNMADE) holding each one's place in `links`. None: made at once."""
    cable_ids: dict[str, str] = field(default_factory=dict)
    """The id of every cable of `cables` -> its run's placeholder id, for the runs up to
    `cables_indexed`; the later ones are added when an id is looked up (Expander._cable_ids)."""
    cables_indexed: int = 0
    """How many runs of `cables` (in order) `cable_ids` holds. A cable's id has a head (up to its
    first `/`) in `heads`, so an id whose head is not there is none of them, and a fleet whose
    cables no later id could be is never indexed here (196,608 ids at 131,072 GPUs)."""
    unmade_objects: dict[str, Unmade] | None = None
    """Stamped nodes whose objects are not made yet (Inventory.defer_objects): node id -> (plan, the
    instance's names), the nodes whose links are deferred too. None: every object is made at once."""


_LinkRow = tuple[int, int, str, int, SourceLocation, Mapping[str, int], Mapping[str, str], str | None]


@dataclass(repr=False, eq=False)
class _Plan(Record):
    """A node type's contents with ids relative to the node, ready to stamp.

    Every relative name the plan uses (object ids and parents, link ends, software and promise
    keys) is made once per instance: `names` are those names with the hole cut off, and a
    plan row refers to a name by its slot. Slot 0 is the node itself; after the relative names
    come the names written absolute (`/spine0`), the same for every instance.
    """

    sink: Sink
    names: list[str]
    """Relative names after the hole ("/gpu0"), for slots 1 and on."""
    absolute: list[str]
    """Names outside the node, for the slots after the relative ones."""
    objects: list[tuple[int, int, Obj]]
    """(slot of the id, slot of the parent, template object), in expansion order."""
    links: list[tuple[list[str], int, int, Link]]
    """(id split at the holes, slot of a, slot of b, template link), in expansion order."""
    keyed: list[tuple[int, str]]
    """(slot of the name, the name as the plan holds it) of software and promise keys."""
    self_contained: bool
    """Whether every link but fabric cables joins two objects of the node itself."""
    object_rows: list[ObjectRow] = field(default_factory=list)
    """`objects` unpacked: (slot, parent slot, kind, loc, model, labels, quantities, state, template, index)."""
    object_slots: list[int] = field(default_factory=list)
    """The slot of each object's id, in `object_rows` order."""
    object_slots_by_name: dict[str, int] = field(default_factory=dict)
    """The slot of each object's id by its name relative to the node ("/gpu0")."""
    object_ids: Callable[[Sequence[str]], Sequence[str]] = field(default=lambda names: ())
    """An instance's names at `object_slots` (its objects' ids), in one C call."""
    object_parents: Callable[[Sequence[str]], Sequence[str]] = field(default=lambda names: ())
    """An instance's names at its objects' parents' slots, in `object_rows` order."""
    object_columns: tuple[tuple[object, ...], ...] = ()
    """`object_rows`' kind, loc, model, labels, quantities, state, template and index, a column each:
    with the ids, the parents and the node, Obj's arguments, so that a stamp makes its objects in
    one `map` rather than unpacking each row in a loop."""
    link_ids: list[list[str]] = field(default_factory=list)
    """Each link's id split at the holes."""
    link_rows: list[_LinkRow] = field(default_factory=list)
    """`links` unpacked: (slot of a, slot of b, kind, mbps, loc, attrs, labels, state)."""
    joined: str | None = None
    """The names of slots 0 to len(names), with holes, in one string separated by _SEP: an
    instance's are `joined.replace(_HOLE, node_id).split(_SEP)`, two calls instead of a
    concatenation per name. None where a name holds _SEP or a relative name holds another hole."""
    joined_ids: str | None = None
    """The link ids the same way (None where one holds _SEP, or there are none)."""
    deferrable: bool = False
    """Whether an instance's links may be made later (Sink.deferred): every link id starts with
    the node's id and a `/`, so only an id with the node's head can be one of them."""
    shapes: dict[tuple[int, int], list[str]] = field(default_factory=dict)
    """Link ids with holes by (holes, length without them), to tell whether an id is an instance's (makes)."""
    hole_counts: tuple[int, ...] = ()
    tails: frozenset[str] = frozenset()
    """The text after the last hole of each link id: every id `ids_for` gives ends with one of them."""
    written_ids: list[str] = field(default_factory=list)
    """The link ids written with `id:`, with holes: the id length limit holds them as it holds
    every relative name (ids made `a<->b` from their ends are not held: each end is)."""
    grown: tuple[tuple[int, int], ...] = ()
    """(holes, longest length without them) of the ids a stamp makes that the limit holds: the
    relative names (one hole: the node id) and `written_ids` by their count of holes."""
    rest: bool = True
    """Whether a stamp makes anything besides objects and links (_stamp_rest): software, promises,
    failures or serves of the plan's objects."""

    def __post_init__(self) -> None:
        # Stamping reads these once per instance: unpacked here, once per plan.
        self.object_rows = [
            (i, p, o.kind, o.loc, o.model, o.labels, o.quantities, o.state, o.template, o.index)
            for i, p, o in self.objects
        ]
        self.object_slots = [i for i, _p, _o in self.objects]
        self.object_slots_by_name = {self.names[i - 1]: i for i in self.object_slots}
        self.object_ids = names_at(self.object_slots)
        self.object_parents = names_at([p for _i, p, _o in self.objects])
        self.object_columns = tuple(tuple(row[c] for row in self.object_rows) for c in range(2, 10))
        self.link_ids = [parts for parts, _a, _b, _lk in self.links]
        self.link_rows = [
            (a, b, lk.kind, lk.mbps, lk.loc, lk.attrs, lk.labels, lk.state) for _parts, a, b, lk in self.links
        ]
        items = [_HOLE, *(_HOLE + name for name in self.names)]
        if not any(_SEP in item for item in items) and not any(_HOLE in name for name in self.names):
            self.joined = _SEP.join(items)
        ids = [_HOLE.join(parts) for parts in self.link_ids]
        if ids and not any(_SEP in lid for lid in ids):
            self.joined_ids = _SEP.join(ids)
        for lid in ids:
            holes = lid.count(_HOLE)
            self.shapes.setdefault((holes, len(lid) - holes), []).append(lid)
        self.hole_counts = tuple(sorted({holes for holes, _ in self.shapes}))
        self.tails = frozenset(parts[-1] for parts in self.link_ids)
        for lid, (_parts, _a, _b, lk) in zip(ids, self.links, strict=True):
            ends = f"{lk.a}<->{lk.b}"
            if lid != ends and not lid.startswith(ends + "#"):
                self.written_ids.append(lid)
        grown = {1: max(map(len, self.names), default=0)}
        for lid in self.written_ids:
            holes = lid.count(_HOLE)
            grown[holes] = max(grown.get(holes, 0), len(lid) - holes)
        self.grown = tuple(grown.items())
        self.rest = bool(self.keyed or self.sink.failed or self.sink.serves)
        self.deferrable = (
            self.joined is not None
            and self.joined_ids is not None
            and bool(ids)
            and all(parts[0] == "" and parts[1].startswith("/") for parts in self.link_ids)
        )

    def room(self, limit: int) -> int:
        """The longest node id this plan can be stamped under with every id it makes (`grown`)
        within `limit` characters: one comparison per instance instead of one per object.
        """
        out = limit
        for holes, fixed in self.grown:
            if holes:
                out = min(out, (limit - fixed) // holes)
            elif fixed > limit:  # no hole: the same id for every node
                return -1
        return out

    def longest_made(self, node: str) -> str:
        """The longest id, of those the limit holds, that stamping under `node` makes (for its error)."""
        made = [node + name for name in self.names]
        return max([*made, *(lid.replace(_HOLE, node) for lid in self.written_ids)], key=len)

    def objects_for(self, node: str, names: Sequence[str]) -> list[Obj]:
        """The objects of `node` (Sink.unmade_objects), whose names by slot are `names`, as _stamp makes them."""
        return list(
            map(
                Obj,
                self.object_ids(names),
                self.object_columns[0],
                self.object_parents(names),
                *self.object_columns[1:],
                repeat(node),
            )
        )

    def ids_for(self, node: str) -> list[str]:
        """The ids of the links `link_rows` give `node` (a deferrable plan's, see Sink.deferred)."""
        return (self.joined_ids or "").replace(_HOLE, node).split(_SEP)

    def makes(self, lid: str, node_id: str) -> bool:
        """Whether `lid` is the id of one of this plan's links stamped for `node_id`."""
        for holes in self.hole_counts:
            for pid in self.shapes.get((holes, len(lid) - holes * len(node_id)), ()):
                if pid.replace(_HOLE, node_id) == lid:
                    return True
        return False

    @classmethod
    def of(cls, sink: Sink) -> _Plan:
        slots: dict[str, int] = {_HOLE: 0}
        names: list[str] = []
        absolute: dict[str, None] = {}

        def relative(name: str) -> int:
            slot = slots.get(name)
            if slot is None:
                slot = slots[name] = len(names) + 1
                names.append(name[len(_HOLE) :])
            return slot

        def end(name: str) -> int | str:
            if name.startswith(_HOLE):
                return relative(name)
            absolute[name] = None
            return name

        # An object's parent is the hole or another object of the plan (nested, as children are);
        # a parent written absolute would have been refused as a second parent.
        objs = [(relative(oid), relative(o.parent or _HOLE), o) for oid, o in sink.objects.items()]
        ends = [(lid, end(lk.a), end(lk.b), lk) for lid, lk in sink.links.items()]
        # Keys of software and promises are object ids of the plan, so they start with the hole.
        keyed = [(relative(k), k) for k in (*sink.software, *sink.promises)]
        first_absolute = len(names) + 1
        where = {name: first_absolute + i for i, name in enumerate(absolute)}
        links = [
            (
                lid.split(_HOLE),
                a if isinstance(a, int) else where[a],
                b if isinstance(b, int) else where[b],
                lk,
            )
            for lid, a, b, lk in ends
        ]
        contained = all(
            (lk.a.startswith(_HOLE) and lk.b.startswith(_HOLE)) or lk.kind in FABRIC_LINK_KINDS
            for lk in sink.links.values()
        )
        return cls(sink, names, list(absolute), objs, links, keyed, contained)


class Expander:
    def __init__(self, problems: Problems, templates: dict[str, TemplateDef], sink: Sink) -> None:
        self.problems = problems
        self.templates = templates
        self.sink = sink
        self.plans: dict[str, _Plan | None] = {}
        self.active: list[str] = []
        self.seq: dict[int, int] = {}
        self.planning = False
        self.override_used: dict[int, tuple[ObjSpec, set[str]]] = {}
        # What is written is held to the id length limit where it is read (specs.py); what is
        # made of it (a scope and a name joined, a number rendered, a plan stamped under a node)
        # is held here, where it is made.
        self.id_length = current_limits().id_length
        self.rooms: dict[str, int] = {}  # template -> the longest node id its plan fits under (_Plan.room)
        # id(spec) -> the spec and what its instances share (_shared). The spec is held: a spec made for
        # a while (partial.py's one instance of an entry) must not leave its id to the next one.
        self.shared: dict[int, tuple[ObjSpec, _Shared]] = {}
        self.wholes: dict[int, tuple[ObjSpec, _WholeNode]] = {}  # id(spec) -> what _whole found, the same way
        # The ends (_Plan.tails) of every deferred link id, of the plans (by id) of nodes deferred so far.
        self.tails: tuple[str, ...] = ()
        self.tailed: set[int] = set()
        self.positions: _Positions = {}  # _each_end's, by shape
        self.slashed: _Slashed = {}  # _unmade_ends', by a foreach variable's values and format
        # The heads (up to the first "/") of every object id with a "/" in the table: every id a stamp
        # makes is its node's id, a "/" and more, so with the node's head not among these none of them
        # can be taken (_stamp), and the stamp needs no look-up per object to know it.
        self.object_heads = {oid.partition("/")[0] for oid in sink.objects if "/" in oid}

    def sound_nodes(self, inv: Inventory) -> set[str]:
        """Stamped nodes whose template's plan passes the whole-inventory checks as a whole
        (validate.check_inventory's `sound`). Only meaningful while nothing went wrong.
        """
        nodes: dict[str, list[str]] = {}
        for node, template in inv.stamped.items():
            nodes.setdefault(template, []).append(node)
        good = {
            name
            for name, plan in self.plans.items()
            if plan is not None and name in nodes and _sound(plan, nodes[name], inv.found, inv)
        }
        return {n for n, t in inv.stamped.items() if t in good}

    # --- errors --------------------------------------------------------------------
    def _too_long(self, loc: SourceLocation, made: str, template: str = "", what: str = "id") -> None:
        """An id made at `loc` (by `template`'s plan, stamped there) past the id length limit:
        once per place, the entry's other instances counted as copies.
        """
        by = f" (made by template {template!r})" if template else ""
        found = exceeded("id_length", f"is {len(made):,} characters long")
        self.problems.add(loc, f"{what} {made!r}{by} {found}", same="id-length")

    def _render(self, pattern: Pattern, ns: Mapping[str, int | str], loc: SourceLocation, what: str) -> str | None:
        try:
            return pattern.render(ns)
        except MissingVariable as err:
            if self.planning:
                raise _Dependent from None
            defined = ", ".join(sorted(k for k in ns if k != "parent")) or "none"
            self.problems.add(
                loc,
                f"{what} {pattern.text!r} uses {{{err.name}}}, which is not defined here (defined: {defined})",
            )
        except PatternError as err:
            if self.planning:
                raise _Dependent from None
            self.problems.add(loc, f"{what} {pattern.text!r}: {err}")
        return None

    def _render_map(self, tm: TextMap, ns: Mapping[str, int | str], loc: SourceLocation) -> Mapping[str, str]:
        if not tm.patterns:
            return tm.const
        try:
            return tm.render(ns)
        except MissingVariable as err:
            if self.planning:
                raise _Dependent from None
            self.problems.add(loc, f"a label or software value uses {{{err.name}}}, which is not defined here")
        except PatternError as err:
            if self.planning:
                raise _Dependent from None
            self.problems.add(loc, str(err))
        return tm.const

    def _judged_software(
        self, tm: TextMap, software: Mapping[str, str], oid: str, loc: SourceLocation
    ) -> Mapping[str, str]:
        """`software` less the values its patterns made that cannot be a release of their component, each
        refused at its pattern's line as a written value is (validate.str_map judged the pattern's text
        only: `cuda: "{v}"` made "122", which passed every minimum).
        """
        bad: list[str] = []
        for k, _ in tm.patterns:
            v = software.get(k)
            if v is not None and (problem := release_shape_problem(k, v)) is not None:
                # One pattern is one mistake however many objects it makes a bad value for: the first object's
                # error stands with a count of the others (3,000 nodes of one template were 1,000 errors, the
                # cap of a report, and an error found after them was dropped).
                self.problems.add(
                    tm.pattern_locs.get(k, loc),
                    f"{k!r} in software of {oid}: {problem} (made by its pattern)",
                    same=f"software-pattern {k}",
                )
                bad.append(k)
        return {k: v for k, v in software.items() if k not in bad} if bad else software

    # --- objects ---------------------------------------------------------------------
    def expand(self, specs: list[ObjSpec], parent: str | None, scope: str | None, ns: dict[str, int | str]) -> None:
        for spec in specs:
            self.expand_entry(spec, parent, scope, ns)

    def expand_entry(self, spec: ObjSpec, parent: str | None, scope: str | None, ns: dict[str, int | str]) -> None:
        if spec.count is None:
            self._instantiate(spec, parent, scope, ns, None)
            return
        if spec.count == 0:  # its count was refused where it was read
            self._fail(scope, spec.broken or spec.loc)
            return
        key = id(spec)
        used = self.override_used.setdefault(key, (spec, set()))[1] if spec.overrides else set()
        whole = self._whole(spec, scope) if not self.planning else None
        for k in range(spec.start, spec.start + spec.count):
            ns2 = dict(ns)
            ns2["i"] = k
            if not self.planning:
                seq = self.seq.get(key, 0)
                self.seq[key] = seq + 1
                ns2["seq"] = seq
            if whole is not None:
                name = self._stamp_whole(spec, parent, ns2, k, whole)
            else:
                name = self._instantiate(spec, parent, scope, ns2, k)
                if k == spec.start and not self.planning:  # the first instance made the plan
                    whole = self._whole(spec, scope)
            if name is not None and name in spec.overrides:
                used.add(name)

    def finish(self) -> None:
        """Report overrides that matched no instance (an entry may be expanded many times)."""
        for spec, used in self.override_used.values():
            for name, ov in spec.overrides.items():
                if name in used:
                    continue
                if spec.broken is not None:  # the entry's own mistake is why nothing matched
                    self.problems.hide(spec.broken)
                else:
                    self.problems.add(ov.loc, f"override {name!r} matches no instance of this entry")

    def _fail(self, base: str | None, cause: SourceLocation) -> None:
        self.sink.failed.setdefault(base, cause)

    def _explained(self, oid: str) -> bool:
        """Whether `oid` is missing because of a failed definition (and count it as hidden)."""
        cause = failure_cause(oid, self.sink.failed)
        if cause is not None:
            self.problems.hide(cause)
        return cause is not None

    def _instantiate(
        self,
        spec: ObjSpec,
        parent: str | None,
        scope: str | None,
        ns: dict[str, int | str],
        index: int | None,
    ) -> str | None:
        p = self.problems
        tmpl: TemplateDef | None = None
        if spec.template is not None:
            tmpl = self.templates.get(spec.template)
            tloc = spec.template_loc or spec.loc
            problem = None
            if tmpl is None:
                problem = f"unknown template {spec.template!r}{did_you_mean(spec.template, self.templates)}"
            elif spec.template in self.active:
                problem = f"template {spec.template!r} includes itself: {' -> '.join([*self.active, spec.template])}"
            if problem is not None:
                # Reported once per place it is written, however many instances it has;
                # what the instances would have held is not reported missing.
                p.add(tloc, problem)
                name = self._render(spec.name, ns, spec.loc, "name") if spec.name is not None else None
                if name is None:
                    self._fail(scope, tloc)
                else:
                    self._fail(f"{scope}/{name}" if scope else name, tloc)
                return name  # the instance was asked for: an override of it is not "unused"
        body = tmpl.body if tmpl else None
        if spec.name is None:
            self._fail(scope, spec.broken or spec.loc)
            return None
        name = self._render(spec.name, ns, spec.loc, "name")
        if name is None:
            self._fail(scope, spec.loc)
            return None
        oid = f"{scope}/{name}" if scope else name
        size = len(oid)
        if size > self.id_length and not self.planning:  # a plan's ids are held where it is stamped
            self._too_long(spec.loc, oid)
        kind = spec.kind or (body.kind if body else None)
        if body is not None and spec.kind and body.kind and spec.kind != body.kind:
            p.add(
                spec.loc,
                f"{oid!r} is a {spec.kind} but template {tmpl.name if tmpl else ''!r} makes a {body.kind}",
                same="kind-mismatch",
            )
        if kind is None:
            self._fail(scope, spec.broken or (body.broken if body else None) or spec.loc)
            return None
        if spec.parent is not None:
            explicit = self._render(spec.parent, ns, spec.loc, "parent")
            if explicit is not None:
                if parent is not None and explicit != parent:
                    p.add(
                        spec.loc,
                        f"{oid!r} is in two parents: {parent!r} (where it is nested) and {explicit!r} ('parent:')",
                        same="two-parents",
                    )
                elif parent is None:
                    parent = explicit
                    self.sink.explicit_parents.append(oid)
        if spec.overrides and self.planning:
            # An override in a template's body (gpu2 of every node down, or removed) changes what each
            # instance holds after it is stamped, which a plan does not do: expanded per instance.
            raise _Dependent
        override = spec.overrides.get(name) if spec.overrides else None
        held = self.shared.get(id(spec))
        if held is None or held[0] is not spec:
            held = self.shared[id(spec)] = (spec, self._shared(spec, body, kind))
        shared = held[1]
        labels_tm, quantities, typed, software_tm, promises = shared
        labels = self._render_map(labels_tm, ns, spec.loc)
        if typed:
            labels = MappingProxyType({**typed, **labels})
        obj = Obj(
            oid,
            kind,
            parent,
            spec.loc,
            spec.model or (body.model if body else None),
            labels,
            quantities,
            _overridden_state(spec.state, body.state if body else None),
            spec.template,
            index,
        )
        if not self._add_object(obj):
            return name
        outer_journal = self.sink.journal
        cabled_from = 0  # with an override: where the cable runs made under this object start
        if override is not None:
            self.sink.journal = []
            cabled_from = len(self.sink.cabled)
        software = self._render_map(software_tm, ns, spec.loc)
        if software_tm.patterns:
            software = self._judged_software(software_tm, software, oid, spec.loc)
        if software:
            self.sink.software[oid] = software
        if promises:
            self.sink.promises[oid] = promises
        inner_scope = scope
        if kind == "node":
            if scope is not None:
                p.add(spec.loc, f"node {oid!r} is inside node {scope!r}; nodes cannot nest", same="nested-node")
            inner_scope = oid
        for part in (spec, body):
            if part is not None and part.broken is not None:
                # Made, but without some of what it should hold (or beside siblings it
                # should have had): its surroundings are not complete.
                self._fail(inner_scope if part.lost <= {"children"} else scope, part.broken)
        ns2 = dict(ns)
        ns2[kind] = oid
        ns2["parent"] = oid
        if tmpl is not None and body is not None:
            self.active.append(tmpl.name)
            plan = self._plan(tmpl) if kind == "node" and scope is None and not self.planning else None
            if plan is not None:
                if size > self.rooms[tmpl.name] and size <= self.id_length:  # (a node id past it: reported above)
                    self._too_long(spec.loc, plan.longest_made(oid), tmpl.name)
                whole = override is None and not spec.children and not spec.links and plan.self_contained
                self._stamp(plan, oid, whole)
                if whole:
                    self.sink.stamped[oid] = tmpl.name
            else:
                self.expand(body.children, oid, inner_scope, ns2)
                self._links(body.links, inner_scope, ns2)
                self._serves(body.serves, inner_scope, ns2, body.loc)
            self.active.pop()
        # Most instances (a fleet's nodes stamped from a plan) hold nothing of their own.
        if spec.children:
            self.expand(spec.children, oid, inner_scope, ns2)
        if spec.links:
            self._links(spec.links, inner_scope, ns2)
        if spec.serves:
            self._serves(spec.serves, inner_scope, ns2, spec.loc)
        if override is not None:
            created = self.sink.journal or []
            self.sink.journal = outer_journal
            if outer_journal is not None:
                outer_journal.extend(created)
            if self._apply_override(override, obj, inner_scope, created):
                # A cable it took out may be written again later under the same id, with any ends:
                # the runs made under this object are no longer what was checked when they were made.
                del self.sink.cabled[cabled_from:]
        return name

    def _whole(self, spec: ObjSpec, scope: str | None) -> _WholeNode | None:
        """What every instance of `spec` that _instantiate would stamp whole from its template's plan
        (Inventory.stamped) shares, once its first instance has made the plan and worked out what the
        instances share (_shared); None where an instance of `spec` may be anything else, or may have
        something to report (a broken entry, a kind that is not its template's, labels or software
        with patterns to render): those go through _instantiate, instance by instance.
        """
        if spec.template is None or scope is not None or spec.template in self.active:
            return None
        held_whole = self.wholes.get(id(spec))
        if held_whole is not None and held_whole[0] is spec:
            return held_whole[1]
        if spec.name is None or spec.parent is not None:
            return None
        if spec.children or spec.links or spec.serves or spec.broken is not None:
            return None
        tmpl = self.templates.get(spec.template)
        plan = self.plans.get(spec.template)
        held = self.shared.get(id(spec))
        if tmpl is None or plan is None or held is None or held[0] is not spec:
            return None
        body = tmpl.body
        kind = spec.kind or body.kind
        if kind != "node" or body.kind not in (None, kind) or body.broken is not None or not plan.self_contained:
            return None
        labels_tm, quantities, typed, software_tm, promises = held[1]
        if labels_tm.patterns or software_tm.patterns:
            return None
        whole = _WholeNode(
            plan,
            spec.template,
            min(self.rooms[spec.template], self.id_length),
            spec.model or body.model,
            _overridden_state(spec.state, body.state),
            labels_tm.const,
            typed,
            quantities,
            software_tm.const,
            promises,
        )
        self.wholes[id(spec)] = (spec, whole)  # (the spec held, as in `shared`)
        return whole

    def _stamp_whole(
        self, spec: ObjSpec, parent: str | None, ns: dict[str, int | str], index: int, whole: _WholeNode
    ) -> str | None:
        """One instance of `spec` (see _whole) made as _instantiate makes it, with what every instance
        shares worked out once: a fleet's 16,384 nodes are each a name, an object and a stamp. An
        instance with an override, a name past its plan's room or an id taken goes to _instantiate,
        which reports what is wrong with it.
        """
        name_pattern = spec.name
        assert name_pattern is not None  # (_whole)
        try:
            name = name_pattern.render(ns)
        except (MissingVariable, PatternError):
            return self._instantiate(spec, parent, None, ns, index)
        objects = self.sink.objects
        if (spec.overrides and name in spec.overrides) or len(name) > whole.room or name in objects:
            return self._instantiate(spec, parent, None, ns, index)
        if self.sink.removed and name in self.sink.removed:  # put back where one was removed: _add_object
            return self._instantiate(spec, parent, None, ns, index)
        if self.sink.unmade_objects and "/" in name and unmade_of(self.sink.unmade_objects, name) is not None:
            return self._instantiate(spec, parent, None, ns, index)
        labels = whole.labels
        if whole.typed:
            labels = MappingProxyType({**whole.typed, **labels})
        sink = self.sink
        # _add_object, whose look-ups are done above: the id is not taken.
        objects[name] = Obj(
            name, "node", parent, spec.loc, whole.model, labels, whole.quantities, whole.state, whole.template, index
        )
        if "/" in name:
            self.object_heads.add(name.partition("/")[0])
        if sink.journal is not None:
            sink.journal.append(name)
        if whole.software:
            sink.software[name] = whole.software
        if whole.promises:
            sink.promises[name] = whole.promises
        if not self._stamp_unmade(whole.plan, name):
            self._stamp(whole.plan, name, True)
        sink.stamped[name] = whole.template
        return name

    def _stamp_unmade(self, plan: _Plan, node_id: str) -> bool:
        """_stamp(plan, node_id, True) where it leaves both the node's objects and its links to be made
        when read (Sink.unmade_objects, Sink.deferred), the same steps with the conditions asked first
        (and its head the node id itself: it has no "/"); False, having done nothing, anywhere else.
        """
        sink = self.sink
        deferred, unmade, joined = sink.deferred, sink.unmade_objects, plan.joined
        if (
            deferred is None
            or unmade is None
            or joined is None
            or sink.journal is not None
            or not plan.deferrable
            or id(plan) not in self.tailed
            or "/" in node_id
            or _SEP in node_id
            or node_id in sink.heads
            or node_id in self.object_heads
        ):
            return False
        names = joined.replace(_HOLE, node_id).split(_SEP)
        names[0] = node_id
        if plan.absolute:
            names += plan.absolute
        made = (plan, names)
        unmade[node_id] = made
        self.object_heads.add(node_id)
        key = _HOLE + node_id
        sink.links[key] = Link(key, "", "", "", 0, _DEFERRED, EMPTY_INT, EMPTY_STR, None, node_id)
        deferred[node_id] = made
        if plan.rest:
            self._stamp_rest(plan, node_id, names)
        return True

    def _shared(self, spec: ObjSpec, body: ObjSpec | None, kind: str) -> _Shared:
        """What every instance of `spec` (made from `body`) shares, worked out at its first instance:
        its label and software maps (patterns still to render), figures and promises. A mistake in
        its figures is reported then, where it is written, as it would be at every instance.
        """
        labels_tm = body.labels.merged(spec.labels) if body else spec.labels
        figures = body.figures.merged(spec.figures) if body else spec.figures
        quantities, typed = figures.for_kind(kind, self.problems) if not figures.empty else (EMPTY_INT, EMPTY_STR)
        software_tm = body.software.merged(spec.software) if body else spec.software
        promises = (body.promises if body else ()) + spec.promises
        return labels_tm, quantities, typed, software_tm, tuple(dict.fromkeys(promises)) if promises else ()

    def _add_object(self, obj: Obj) -> bool:
        objects = self.sink.objects
        old = objects.get(obj.id)
        unmade = self.sink.unmade_objects
        if old is None and unmade and "/" in obj.id and unmade_of(unmade, obj.id) is not None:
            self.make_objects()  # that object is taken: made, with every other, in its place
            old = objects.get(obj.id)
        if old is not None:
            if old.parent != obj.parent:
                self.problems.add(
                    obj.loc,
                    f"{obj.id!r} is in two parents: {old.parent!r} (at {old.loc}) and {obj.parent!r}",
                    same="two-parents",
                )
            else:
                self.problems.add(obj.loc, f"duplicate id {obj.id!r} (first written at {old.loc})", same="duplicate-id")
            return False
        oid = obj.id
        objects[oid] = obj
        if self.sink.removed and oid in self.sink.removed:
            self._put_back(oid)
        if "/" in oid:
            self.object_heads.add(oid.partition("/")[0])
        if self.sink.journal is not None:
            self.sink.journal.append(obj.id)
        return True

    # --- objects not made yet ------------------------------------------------------------
    def _ids_of(self, made: Sequence[str], found: Sequence[Obj | None]) -> tuple[list[str], bool]:
        """Each of `made` as the id string of its object (`found`, or one not made yet), else as
        itself; and whether every one is an object.
        """
        unmade = self.sink.unmade_objects or {}
        if unmade and not any(found):
            # A fleet's cables end on 131,072 NICs of nodes whose objects are not made: when none of
            # these ends is made, each is found in its node's plan in C calls (a TypeError or KeyError
            # where one is not there: then one by one, below).
            parts = list(map(str.partition, made, repeat("/")))
            try:
                plans = list(map(unmade.__getitem__, map(_FIRST, parts)))
                suffixes = map(operator.add, map(_SECOND, parts), map(_THIRD, parts))  # "/" and the rest
                slots = map(dict.__getitem__, map(_SLOTS, map(_FIRST, plans)), suffixes)
                return list(map(list.__getitem__, map(_SECOND, plans), slots)), True
            except (KeyError, TypeError):
                pass
        out: list[str] = []
        add = out.append
        known = True
        # unmade_of inlined (model.py), with the slot.
        for text, obj in zip(made, found, strict=True):
            if obj is not None:
                add(obj.id)
                continue
            node, slash, rest = text.partition("/")
            plan = unmade.get(node) if slash else None
            slot = plan[0].object_slots_by_name.get(slash + rest) if plan is not None else None
            if slot is None or plan is None:
                known = False
                add(text)
            else:
                add(plan[1][slot])
        return out, known

    def _ends(self, form: str, loop: Sequence[Sequence[int | str]]) -> tuple[list[str], bool, list[str] | None]:
        """_each_end of `form` over `loop`, each end as its object's own id string where it is one;
        and, where every end is an object of a node not made yet, those nodes (the ends' heads).
        """
        unmade = self.sink.unmade_objects
        if unmade:
            found = _unmade_ends(form, loop, unmade, self.positions, self.slashed)
            if found is not None:
                return found[0], True, found[1]
        return *_each_end(form, loop, self.sink.objects.get, self.positions, self._ids_of), None

    def _object(self, oid: str) -> Obj | None:
        """The object `oid`, made now (with every other not made yet) if it was not yet."""
        obj = self.sink.objects.get(oid)
        unmade = self.sink.unmade_objects
        if obj is None and unmade and unmade_of(unmade, oid) is not None:
            self.make_objects()
            obj = self.sink.objects.get(oid)
        return obj

    def make_objects(self) -> None:
        """Make every object not made yet, each in its place; objects are made at once from then on."""
        sink = self.sink
        if sink.unmade_objects:
            made = made_objects(sink.objects, sink.unmade_objects, {})
            sink.objects.clear()  # the same dict: the inventory and the loops making objects hold it
            sink.objects.update(made)
        sink.unmade_objects = None

    # --- plans -------------------------------------------------------------------------
    def _plan(self, tmpl: TemplateDef) -> _Plan | None:
        if tmpl.name in self.plans:
            return self.plans[tmpl.name]
        sub = Expander(Problems(), self.templates, Sink())
        sub.planning = True
        sub.active = list(self.active)
        ns: dict[str, int | str] = {"node": _HOLE, "parent": _HOLE}
        plan: _Plan | None
        try:
            sub.expand(tmpl.body.children, _HOLE, _HOLE, ns)
            sub._links(tmpl.body.links, _HOLE, ns)
            sub._serves(tmpl.body.serves, _HOLE, ns, tmpl.body.loc)
            plan = _Plan.of(sub.sink)
            if _mentions_hole(sub.sink):
                plan = None
        except _Dependent:
            plan = None
        if plan is not None:
            named = f"<{tmpl.name}>"
            for d in sub.problems.diagnostics():  # the template's own mistakes, named by template
                # Ids are quoted with !r, which writes the hole as the four characters \x00.
                message = d.message.replace(_HOLE, named).replace(repr(_HOLE)[1:-1], named)
                self.problems.add(d.location, message)
            self.rooms[tmpl.name] = plan.room(self.id_length)
        self.plans[tmpl.name] = plan
        return plan

    def _stamp(self, plan: _Plan, node_id: str, whole: bool = False) -> None:
        """Copy a plan's objects and links under `node_id`: ids are plan ids with the hole filled.

        The hot loop of a large fleet: each name of the instance is made once (one replace and one
        split for them all, see _Plan.joined) and shared by the object it names, its children's
        parent, the links that end on it and the ids of those links; one constructor per object
        and link; duplicate ids are detected in bulk (set operations) rather than per object.

        The links of a node that is `whole` (its template's plan alone, Inventory.stamped) are only
        made when something reads them (Sink.deferred), where nothing can have taken their ids; so
        are its objects (Sink.unmade_objects), where no object in the table has the node's head.
        """
        sink = self.sink
        objects = sink.objects
        joined = plan.joined
        if joined is not None and _SEP not in node_id:
            names = joined.replace(_HOLE, node_id).split(_SEP)
            names[0] = node_id  # the node's own id object, which its children's parents share
        else:
            names = [node_id]
            names += [node_id + suffix for suffix in plan.names]
        names += plan.absolute
        head = node_id.partition("/")[0]
        defer = (
            whole
            and sink.deferred is not None
            and sink.journal is None
            and plan.deferrable
            and _SEP not in node_id
            and "/" not in node_id
            and node_id not in sink.heads
        )
        unmade = sink.unmade_objects
        fresh: Sequence[str] = ()
        if defer and unmade is not None and head not in self.object_heads:
            # No object in the table has the node's head, so none of its plan's ids is taken: they
            # are made when something reads Inventory.objects (made_objects puts them after the node).
            unmade[node_id] = (plan, names)
            self.object_heads.add(head)
        else:
            # The objects' ids are names of the instance (a plan's object ids are distinct), each the
            # node's id, a "/" and more (a plan's names are relative, see _Plan.names): while no object
            # in the table has the node's head (Expander.object_heads), none of them is taken, and the
            # objects go straight into the table; else each id is looked up, and each taken one reported.
            fresh = plan.object_ids(names)
            objs = plan.objects_for(node_id, names)
            if head not in self.object_heads or objects.keys().isdisjoint(fresh):
                objects.update(zip(fresh, objs, strict=True))
                self.object_heads.add(head)
            else:
                for obj in objs:
                    self._add_object(obj)  # reports each duplicate, adds the rest (and their heads)
        links = sink.links
        if defer and sink.deferred is not None:  # (`defer` says it is not None)
            # Every id of these links is the node's id, a "/" and more: no link made so far has
            # that head (Sink.heads), and one made later that would is caught by _note.
            key = _HOLE + node_id
            links[key] = Link(key, "", "", "", 0, _DEFERRED, EMPTY_INT, EMPTY_STR, None, node_id)
            sink.deferred[node_id] = (plan, names)
            if id(plan) not in self.tailed:
                self.tailed.add(id(plan))
                self.tails = tuple({*self.tails, *plan.tails})
            if plan.rest:
                self._stamp_rest(plan, node_id, names)
            return
        if plan.joined_ids is not None and _SEP not in node_id:
            ids = plan.joined_ids.replace(_HOLE, node_id).split(_SEP)
        else:
            ids = [node_id.join(parts) for parts in plan.link_ids]
        if sink.deferred is not None:
            for lid in ids:
                self._note(lid)
        made: Iterable[str] = ids
        if links.keys().isdisjoint(ids):
            links.update(
                zip(
                    ids,
                    [
                        Link(lid, names[a], names[b], kind, mbps, loc, attrs, labels, state, node_id)
                        for lid, (a, b, kind, mbps, loc, attrs, labels, state) in zip(ids, plan.link_rows, strict=True)
                    ],
                    strict=True,
                )
            )
        else:
            new_links: dict[str, Link] = {}
            for new_id, (a, b, kind, mbps, loc, attrs, labels, state) in zip(ids, plan.link_rows, strict=True):
                if new_id in links:
                    new_id = self._free_id(new_id)
                new_links[new_id] = Link(
                    new_id, names[a], names[b], kind, mbps, loc, attrs, labels, state, node_id, EMPTY_INT
                )
            links.update(new_links)
            made = new_links
        if sink.journal is not None:
            sink.journal.extend(fresh)
            sink.journal.extend(dict.fromkeys(made))  # each id once, as the links dict holds them
        self._stamp_rest(plan, node_id, names)

    def _stamp_rest(self, plan: _Plan, node_id: str, names: list[str]) -> None:
        """What a stamp makes besides objects and links: software, promises, failures, serves."""
        sink = self.sink
        src = plan.sink
        if plan.keyed:
            key_of = {k: names[i] for i, k in plan.keyed}
            for k, v in src.software.items():
                sink.software[key_of[k]] = v
            for k, pr in src.promises.items():
                sink.promises[key_of[k]] = pr
        n = len(_HOLE)
        for base, cause in src.failed.items():
            if base is not None and base.startswith(_HOLE):
                base = node_id + base[n:]
            sink.failed.setdefault(base, cause)
        for mem, dev, loc in src.serves:
            sink.serves.append(
                (
                    node_id + mem[n:] if mem.startswith(_HOLE) else mem,
                    node_id + dev[n:] if dev.startswith(_HOLE) else dev,
                    loc,
                )
            )

    # --- deferred links ------------------------------------------------------------------
    def _note(self, lid: str) -> dict[str, Unmade] | None:
        """Before a link `lid` is made or its id tried: keep its head (a node with that head may not
        defer its links, see _stamp), and should a deferred link have that very id, make every
        deferred link now, so that `lid in links` sees it. Returns what is still deferred.
        """
        sink = self.sink
        deferred = sink.deferred
        if deferred is None:
            return None
        cut = lid.find("/")
        head = lid if cut < 0 else lid[:cut]
        # A cable's head is in `heads` (_note_all keeps it before the cable is kept): one whose head
        # is not there is no cable, and the cables' ids need not be looked at.
        if sink.cables and head in sink.heads and lid in self._cable_ids():
            self.make_deferred()
            return None
        sink.heads.add(head)
        found = deferred.get(head)
        if found is not None and found[0].makes(lid, head):
            self.make_deferred()
            return None
        return deferred

    def _note_all(self, lids: list[str], heads: Collection[str] | None = None) -> bool:
        """`_note` for each of `lids` in turn, before any of them is made (a foreach's cables): the
        same heads kept, and the deferred links made at once if any of them has one of these ids.
        Making them before the first cable rather than before the one that collides leaves the links
        in the same order (each deferred link takes its placeholder's place), in a few C-level passes
        instead of a call per cable. `heads`: those of `lids` (up to the first "/"), where known.

        True where links are still deferred and no head of `lids` was a head before: then no link
        made so far has one of these ids. While links are deferred every link made is noted first
        (its head kept) and every other entry of Sink.links is a placeholder, whose id holds the
        hole, which no id does.
        """
        sink = self.sink
        deferred = sink.deferred
        if deferred is None:
            return False
        if heads is None:
            heads = list(map(_FIRST, map(str.partition, lids, repeat("/"))))
        # As in _note: none of `lids` is a cable's id unless one of their heads is a cable's. A pod's
        # 256 cables have its 32 nodes as heads, which no cable made before has: 32 look-ups, not
        # 256 in a table that grows to every cable of the fleet.
        fresh = sink.heads.isdisjoint(heads)
        if sink.cables and not fresh and not self._cable_ids().keys().isdisjoint(lids):
            self.make_deferred()  # a cable not made yet has one of these ids
            return False
        sink.heads.update(heads)
        if deferred.keys().isdisjoint(heads):
            return fresh
        # A pod's cables start with its nodes' ids, yet end with a switch's name: an id that does not
        # end as some deferred link's id does (its text after the last hole) is none of them. The
        # test runs in C over every id; only those that pass it are looked at one by one.
        ending = map(str.endswith, lids, repeat(self.tails))
        for lid in itertools.compress(lids, ending):
            head = lid.partition("/")[0]
            found = deferred.get(head)
            if found is not None and found[0].makes(lid, head):
                self.make_deferred()
                return False
        return fresh

    def _cable_ids(self) -> dict[str, str]:
        """Sink.cable_ids with every run of cables not made yet in it (those kept since the last
        call added now): cable id -> its run's placeholder id.
        """
        sink = self.sink
        runs = sink.cables or {}
        if sink.cables_indexed < len(runs):
            cable_index(runs, sink.cable_ids, sink.cables_indexed)
            sink.cables_indexed = len(runs)
        return sink.cable_ids

    def _taken(self, lid: str) -> bool:
        """Whether a link with id `lid` exists, made or deferred."""
        self._note(lid)
        return lid in self.sink.links

    def _free_id(self, base: str) -> str:
        k = 2
        while self._taken(f"{base}#{k}"):
            k += 1
        return f"{base}#{k}"

    def make_deferred(self) -> None:
        """Make every deferred link, each in its place; links are made at once from then on."""
        sink = self.sink
        if sink.cables:
            made = made_cables(sink.links, sink.cables)
            sink.links.clear()  # the same dict: the inventory and the loops making links hold it
            sink.links.update(made)
        sink.cables = None
        sink.cable_ids = {}
        sink.cables_indexed = 0
        if sink.deferred:
            made = made_links(sink.links, sink.deferred)
            sink.links.clear()
            sink.links.update(made)
        sink.deferred = None

    # --- links -------------------------------------------------------------------------
    def _links(self, specs: list[LinkSpec], scope: str | None, ns: dict[str, int | str]) -> None:
        for spec in specs:
            self.expand_link(spec, scope, ns)

    def expand_link(self, spec: LinkSpec, scope: str | None, ns: dict[str, int | str]) -> None:
        if not spec.foreach:
            self._one_link(spec, scope, ns)
            return
        names = [v for v, _ in spec.foreach]
        ns2 = dict(ns)  # one namespace for every combination: nothing keeps it, and each sets every name
        one_link = self._one_link
        combos = itertools.product(*(values for _, values in spec.foreach))
        if spec.id is not None or spec.labels.patterns:
            for combo in combos:
                ns2.update(zip(names, combo, strict=True))
                one_link(spec, scope, ns2)
            return
        # A fleet's cabling (every NIC to its leaf, every leaf to every spine): _one_link inlined
        # for links that are named by their ends and have constant labels, the same steps in the
        # same order. A pattern that fails goes to _one_link, which reports it where it is written.
        links, removed, journal = self.sink.links, self.sink.removed, self.sink.journal
        render_a, render_b = spec.a.render, spec.b.render
        kind, mbps, loc, attrs, labels, state = (
            spec.kind,
            spec.mbps,
            spec.loc,
            spec.attrs,
            spec.labels.const,
            spec.state,
        )
        loop = [values for _, values in spec.foreach]
        form_a = _positional(spec.a, names, loop, ns, scope)
        form_b = _positional(spec.b, names, loop, ns, scope) if form_a is not None else None
        if form_a is not None and form_b is not None:
            # Every combination renders and resolves (checked above, once): each end is one
            # str.format of the combination, with the outer variables and the scope written in.
            # Each end as its object's own id string where the object exists already: a fleet's
            # cables name its NICs and switches hundreds of thousands of times, each a fresh copy of
            # the text otherwise (17 MiB at 131,072 GPUs, kept as long as the inventory).
            (ends_a, known_a, heads), (ends_b, known_b, _) = self._ends(form_a, loop), self._ends(form_b, loop)
            if removed:
                kept = [(a, b) for a, b in zip(ends_a, ends_b, strict=True) if a not in removed and b not in removed]
                ends_a, ends_b = [a for a, _ in kept], [b for _, b in kept]
                heads = None  # (some cables may be left out)
            lids = [f"{a}<->{b}" for a, b in zip(ends_a, ends_b, strict=True)]
            fresh = False  # (no link made so far has one of these ids: _note_all)
            if self.sink.deferred is not None:
                if heads is None and "/" not in form_a + form_b and not any(_slashed(values) for values in loop):
                    # No "/" in either end (a fleet's 65,536 leaf-to-spine cables): each id is its own head.
                    heads = lids
                fresh = self._note_all(lids, heads)
            if fresh or links.keys().isdisjoint(lids):
                if self._defer_cables(lids, ends_a, ends_b, known_a and known_b, spec):
                    return
                # No cable takes an id made before (the usual case): all are made in one pass. Should
                # two of them share an id, the table grows by fewer: they are taken out again (they are
                # its last entries) and made one by one below, in the same order.
                before = len(links)
                # One map over the columns (the rest the same for every cable): no loop unpacking each.
                made = map(Link, lids, ends_a, ends_b, *(repeat(v) for v in (kind, mbps, loc, attrs, labels, state)))
                links.update(zip(lids, made, strict=True))
                if len(links) == before + len(lids):
                    if journal is not None:
                        journal.extend(lids)
                    if lids and known_a and known_b and not any(map(operator.eq, ends_a, ends_b)):
                        self.sink.cabled.append((lids[0], lids[-1], len(lids), ends_a, ends_b))
                    return
                for lid in dict.fromkeys(lids):
                    del links[lid]
            for lid, a, b in zip(lids, ends_a, ends_b, strict=True):
                link = Link(lid, a, b, kind, mbps, loc, attrs, labels, state)
                if links.setdefault(lid, link) is not link:  # one lookup where a cable is new
                    lid = self._free_id(lid)
                    links[lid] = Link(lid, a, b, kind, mbps, loc, attrs, labels, state)
                if journal is not None:
                    journal.append(lid)
            return
        for combo in combos:
            ns2.update(zip(names, combo, strict=True))
            try:
                a, b = render_a(ns2), render_b(ns2)
            except (MissingVariable, PatternError):
                one_link(spec, scope, ns2)
                continue
            if a.startswith("/"):  # resolve(), inlined
                a = a[1:]
            elif scope:
                a = f"{scope}/{a}"
            if b.startswith("/"):
                b = b[1:]
            elif scope:
                b = f"{scope}/{b}"
            if removed and (a in removed or b in removed):
                continue
            lid = f"{a}<->{b}"
            if self._taken(lid):
                lid = self._free_id(lid)
            links[lid] = Link(lid, a, b, kind, mbps, loc, attrs, labels, state, None, EMPTY_INT)
            if journal is not None:
                journal.append(lid)

    def _defer_cables(self, lids: list[str], ends_a: list[str], ends_b: list[str], known: bool, spec: LinkSpec) -> bool:
        """Keep a foreach's cables (`lids`, none taken: _note_all has seen them) as one run of columns
        in Sink.cables, one placeholder in its place in `links`, when links are deferred and nothing
        waits on them (no override's journal), every end is an object (`known`), none a loop and no
        two ids alike: what check_inventory passes over whole (Sink.cabled). False, having done
        nothing, anywhere else: they are made at once.
        """
        sink = self.sink
        cables = sink.cables
        if (
            cables is None
            or sink.deferred is None
            or sink.journal is not None
            or not lids
            or not known
            or any(map(operator.eq, ends_a, ends_b))
        ):
            return False
        if len(set(lids)) != len(lids):
            return False
        # Each id is then that of a cable kept here: Sink.cable_ids, indexed when one is looked up.
        key = f"{_HOLE}{_SEP}{len(cables)}"  # no id holds either character
        cables[key] = (lids, ends_a, ends_b, spec.kind, spec.mbps, spec.loc, spec.attrs, spec.labels.const, spec.state)
        sink.links[key] = Link(key, "", "", spec.kind, 0, CABLES_UNMADE)
        return True

    def _one_link(self, spec: LinkSpec, scope: str | None, ns: Mapping[str, int | str]) -> None:
        a = self._render(spec.a, ns, spec.loc, "endpoint")
        b = self._render(spec.b, ns, spec.loc, "endpoint")
        if a is None or b is None:
            return
        a, b = resolve(a, scope), resolve(b, scope)
        if a in self.sink.removed or b in self.sink.removed:
            # A device an override removed takes every link touching it along, also the links
            # written outside its node (a rack's foreach cabling every tray's GPUs). A link of the
            # top-level `links:` written on its own (no foreach) names the removed end by hand: a
            # cable left in the file for a node that is gone, which was dropped without a word. It
            # is refused, as a `parent:` naming the removed node is. (One in a template's body is
            # written for every instance, so it goes with the one removed, as a foreach's does.)
            if scope is None and not spec.foreach:
                for end in dict.fromkeys(e for e in (a, b) if e in self.sink.removed):
                    self.problems.add(
                        spec.loc,
                        f"link endpoint {end!r} does not exist; an override removed it ('remove: true'): "
                        "expected nothing to name it",
                        same="no-endpoint",
                    )
            return
        labels = self._render_map(spec.labels, ns, spec.loc)
        links = self.sink.links
        if spec.id is not None:
            raw = self._render(spec.id, ns, spec.loc, "link id")
            if raw is None:
                return
            if not spec.id.is_const and (bad := self._rendered_id_problem(spec.id, raw, ns)) is not None:
                # As written the id was whole (specs.link_id_problem); a value it holds made a part
                # empty (`x/{s}` with s: ""): an id that names no link any object holds.
                if self.planning:
                    raise _Dependent
                self.problems.add(spec.loc, f"link id {raw!r} (from {spec.id.text!r}) {bad}", same="empty-link-id")
                return
            lid = resolve(raw, scope)
            if len(lid) > self.id_length and not self.planning:  # a plan's: held where it is stamped
                self._too_long(spec.loc, lid, what="link id")
                return
            if self._taken(lid):
                self.problems.add(
                    spec.loc, f"duplicate link id {lid!r} (first written at {links[lid].loc})", same="duplicate-link"
                )
                return
        else:
            lid = f"{a}<->{b}"
            if self._taken(lid):
                lid = self._free_id(lid)
        links[lid] = Link(lid, a, b, spec.kind, spec.mbps, spec.loc, spec.attrs, labels, spec.state, None, EMPTY_INT)
        if self.sink.journal is not None:
            self.sink.journal.append(lid)

    @staticmethod
    def _rendered_id_problem(pattern: Pattern, raw: str, ns: Mapping[str, int | str]) -> str | None:
        """specs.link_id_problem of a rendered link id. A leading `/` written after values that are
        all empty (`{s}/x` with s: "") is an empty first part, not the absolute id a written `/`
        makes; a leading `/` that is a value's own (`{a}{b}` with a: "", b: "/abs") is absolute, as
        that value alone would be.
        """
        if raw.startswith("/"):
            emptied = False
            for part in pattern.parts:
                if isinstance(part, str):
                    if part:  # the written text that opens the id
                        if emptied:
                            raw = "/" + raw  # the empty part kept: link_id_problem drops one leading `/` only
                        break
                elif ns.get(part[0]) == "":
                    emptied = True
                else:
                    break  # a value opens the id: its `/` is its own
        return link_id_problem(raw)

    def _serves(self, pats: list[Pattern], scope: str | None, ns: dict[str, int | str], loc: SourceLocation) -> None:
        if not pats:
            return
        mem = str(ns.get("parent", ""))
        for pat in pats:
            dev = self._render(pat, ns, loc, "serves")
            if dev is not None:
                self.sink.serves.append((mem, resolve(dev, scope), loc))

    # --- overrides ---------------------------------------------------------------------
    def _note_override(self, obj: Obj, parts: frozenset[str]) -> None:
        """Keep where `obj` was made (before any override moved it) and every part changed (Inventory.overridden)."""
        made_at, before = self.sink.overridden.get(obj.id, (obj.loc, frozenset()))
        self.sink.overridden[obj.id] = (made_at, before | parts)

    def _apply_override(self, ov: Override, root: Obj, scope: str | None, created: list[str]) -> bool:
        """Apply `ov` to `root` and what was `created` under it; whether a link was taken out."""
        for made in created:  # a node under an override is no longer its template's plan alone
            self.sink.stamped.pop(made, None)
        if ov.root.remove:
            return self._decommission(root, created)
        p = self.problems
        objects = self.sink.objects
        self._note_override(root, _override_parts(ov))
        _change(root, ov.root, ov.loc, p)
        if ov.software:
            self.sink.software[root.id] = MappingProxyType({**self.sink.software.get(root.id, {}), **ov.software})
        removed: set[str] = set()
        for name, dov in ov.devices.items():
            target = resolve(name, scope)
            obj = self._object(target)
            if obj is None or target not in created:
                if obj is None and self._explained(target):
                    continue
                local = [c.rsplit("/", 1)[-1] for c in created if c in objects]
                p.add(
                    dov.loc,
                    f"override names device {name!r}, which {root.id!r} does not have{did_you_mean(name, local)}",
                )
                continue
            if dov.remove:
                removed.add(target)
                continue
            self._note_override(obj, _device_parts(dov))
            _change(obj, dov, dov.loc, p)
        if removed:
            # Everything inside a removed device goes with it, and every link touching it.
            for oid in created:
                o = objects.get(oid)
                cur = o.parent if o is not None else None
                while cur is not None and cur not in removed and cur != root.id:
                    po = objects.get(cur)
                    cur = po.parent if po is not None else None
                if cur in removed and o is not None:
                    removed.add(oid)
            for oid in removed:
                objects.pop(oid, None)
            self.sink.removed |= removed
        links = self.sink.links
        mine = [lid for lid in created if lid in links]
        count = len(links)
        for lid in mine:
            lk = links[lid]
            if lk.a in removed or lk.b in removed:
                del links[lid]
        for lov in ov.links:
            ends = {resolve(lov.a, scope), resolve(lov.b, scope)}
            hits = [lid for lid in mine if lid in links and {links[lid].a, links[lid].b} == ends]
            if not hits:
                if not any(self._object(e) is None and self._explained(e) for e in ends):
                    p.add(lov.loc, f"override names a link {lov.a} - {lov.b}, which {root.id!r} does not have")
                continue
            for lid in hits:
                lk = links[lid]
                if lov.remove:
                    del links[lid]
                    continue
                attrs = dict(lk.attrs)
                attrs.update(lov.attrs)
                mbps = lk.mbps
                if lov.count is not None:
                    old = lk.attrs.get("count", 1)
                    attrs["count"] = lov.count
                    mbps = lk.mbps // old * lov.count
                if lov.generation is not None or lov.lanes is not None:
                    retrained = _retrained_mbps(lk, attrs, lov.generation, lov.lanes, mbps)
                    if retrained is None and lov.mbps is None:
                        p.add(
                            lov.loc,
                            f"override of link {lid!r}: {_retraining(lov.generation, lov.lanes)} gives a {lk.kind} "
                            f"link no bandwidth topolog knows; expected 'bandwidth:' (per direction) written with it",
                        )
                        continue
                    if retrained is not None:
                        mbps = retrained
                if lov.mbps is not None:
                    mbps = lov.mbps
                if mbps > INT64_MAX:
                    p.add(
                        lov.loc,
                        f"override of link {lid!r}: 'count: {lov.count}' gives {mbps} MB/s, which does not fit "
                        f"in 64 bits; expected a count whose bandwidth is at most {INT64_MAX} MB/s",
                    )
                    continue
                if mbps <= 0:
                    p.add(
                        lov.loc,
                        f"link {lid!r} would have no bandwidth left; use 'state: down' or 'remove: true'",
                        same="no-bandwidth",
                    )
                    continue
                links[lid] = Link(
                    lid,
                    lk.a,
                    lk.b,
                    lk.kind,
                    mbps,
                    lov.loc,
                    MappingProxyType(attrs),
                    MappingProxyType({**lk.labels, **lov.labels}) if lov.labels else lk.labels,
                    _overridden_state(lov.state, lk.state),
                    plan=_plan(lk),
                )
        return len(links) < count  # links are only taken out here, none added

    def _put_back(self, oid: str) -> None:
        """`oid` is made again after an override removed it (dgx05 sent back, its replacement racked
        under the same name by an entry of its own): it and what it will hold are no longer removed,
        so the links written to them from here on (the leaf cabling) are made, not left out.
        """
        removed = self.sink.removed
        under = oid + "/"
        removed.difference_update([r for r in removed if r == oid or r.startswith(under)])
        self.sink.put_back = True

    def _decommission(self, root: Obj, created: list[str]) -> bool:
        """Take `root` (an instance an override removes: `dgx17: {remove: true}`) out with everything
        made under it and every link touching any of it; whether a link was taken out. Its ids go
        into Sink.removed, so links written later that end on them (the leaf cabling every node's
        NICs) are left out as a removed device's are, and its parent (a rack) no longer holds it.
        """
        sink = self.sink
        objects = sink.objects
        gone = {root.id}
        for oid in created:  # an object is made before what it holds: one pass finds every descendant
            obj = objects.get(oid)
            if obj is not None and obj.parent in gone:
                gone.add(oid)
        for oid in gone:
            del objects[oid]
            for table in (sink.software, sink.promises, sink.stamped, sink.overridden):
                table.pop(oid, None)
        sink.removed |= gone
        links = sink.links
        count = len(links)
        for lid in created:
            lk = links.get(lid)
            if lk is not None and (lk.a in gone or lk.b in gone):
                del links[lid]
        return len(links) < count


def _sound(plan: _Plan, nodes: list[str], objects: Mapping[str, Obj], inv: Inventory) -> bool:
    """Whether every copy of `plan` stamped for `nodes` passes validate.check_inventory's checks.

    A copy's objects have the plan's kinds, models and parents (the node or another object of
    the plan), and its links the plan's ends; only a name written absolute (`/spine0`) is the
    same in every copy, and a link from a plan object to it is a loop in the one node whose
    copy of that object has that very name.
    """
    kind_at = {i: o.kind for i, _p, o in plan.objects}
    kind_at[0] = "node"
    for _i, p, o in plan.objects:
        parent = kind_at.get(p)
        if parent is None or not may_nest(o.kind, parent):
            return False
        if o.model is not None and model_problem(inv, o.kind, o.model) is not None:
            return False
    first_absolute = len(plan.names) + 1
    looped: set[str] = set()  # nodes in which an absolute end is the same object as the other end
    for _parts, a, b, _lk in plan.links:
        if a == b:
            return False
        for end, other in ((a, b), (b, a)):
            if end < first_absolute:
                if end not in kind_at:
                    return False
                continue
            name = plan.absolute[end - first_absolute]
            if name not in objects:
                return False
            if other == 0:  # the node itself (slot 0) at the other end
                looped.add(name)
            elif other < first_absolute:
                suffix = plan.names[other - 1]
                if name.endswith(suffix):
                    looped.add(name[: -len(suffix)])
    return not looped.intersection(nodes)


def _retrained_mbps(
    lk: Link, attrs: dict[str, int], generation: int | None, lanes: int | None, mbps: int
) -> int | None:
    """A link an override gives another generation or width: its bandwidth scales as the one
    derived from its attributes does (a written figure keeps its rounding), else with its lanes.
    None when neither tells: a generation with no known figure for the link's kind (xGMI 3), or a
    new generation of a link whose bandwidth was written rather than derived (`attrs` is updated
    either way).
    """
    g = lk.attrs.get
    new_generation = generation is not None and generation != g("generation")
    if generation is not None:
        attrs["generation"] = generation
    if lanes is not None:
        attrs["lanes"] = lanes
    before = derived_mbps(lk.kind, g("generation"), attrs.get("count"), g("lanes"))
    after = derived_mbps(lk.kind, attrs.get("generation"), attrs.get("count"), attrs.get("lanes"))
    if before and after:
        return mbps * after // before
    if new_generation:
        return None
    if lanes is not None and g("lanes"):
        return mbps * lanes // g("lanes", 1)
    return mbps if lanes is None or lanes == g("lanes") else None


def _retraining(generation: int | None, lanes: int | None) -> str:
    """How an override retrains a link, as its error names it ("'generation: 3'", "'lanes: 8'")."""
    said = [f"'{key}: {value}'" for key, value in (("generation", generation), ("lanes", lanes)) if value is not None]
    return " with ".join(said)


def _plan(lk: Link) -> Mapping[str, int]:
    """What the template planned for a link an override changes: its generation and lanes as first stamped."""
    if lk.plan:
        return lk.plan
    return MappingProxyType({k: v for k, v in lk.attrs.items() if k in ("generation", "lanes")})


def _overridden_state(written: str | None, was: str | None) -> str | None:
    """A state written over the template's (by an override, or by the object using the template): not
    written keeps it, `ok` clears it.
    """
    if written is None:
        return was
    return None if written == "ok" else written


def _device_parts(dov: DeviceOverride) -> frozenset[str]:
    """The parts of a device (or of a node itself) that `dov` changes in place (Inventory.overridden)."""
    wrote = {"labels": bool(dov.labels), "state": dov.state is not None, "model": dov.model is not None}
    wrote["figures"] = not dov.figures.empty
    return frozenset(part for part, did in wrote.items() if did)


def _override_parts(ov: Override) -> frozenset[str]:
    """The parts of a node that `ov` changes: its own fields and those of devices changed in place,
    its software, whether it removes devices (which changes what the node holds), its links.
    """
    in_place = [_device_parts(d) for d in (ov.root, *ov.devices.values()) if not d.remove]
    wrote = {
        "software": bool(ov.software),
        "devices": any(d.remove for d in ov.devices.values()),
        "links": bool(ov.links),
    }
    return frozenset().union(*in_place, (part for part, did in wrote.items() if did))


def _change(obj: Obj, dov: DeviceOverride, loc: SourceLocation, problems: Problems) -> None:
    obj.loc = loc
    if dov.labels:
        obj.labels = MappingProxyType({**obj.labels, **dov.labels})
    obj.state = _overridden_state(dov.state, obj.state)
    if dov.model is not None:
        obj.model = dov.model
    if not dov.figures.empty:
        q, typed = dov.figures.for_kind(obj.kind, problems)
        obj.quantities = MappingProxyType({**obj.quantities, **q})
        if typed:
            obj.labels = MappingProxyType({**obj.labels, **typed})


def _positional(
    pattern: Pattern,
    names: list[str],
    loop: list[tuple[int | str, ...]],
    ns: Mapping[str, int | str],
    scope: str | None,
) -> str | None:
    """`pattern`, resolved in `scope`, as a `str.format` template of one `foreach` combination
    (field j is the combination's j-th value): what `resolve(pattern.render(ns2), scope)` gives
    for every combination, where ns2 is `ns` updated with it.

    None where that is not certain before the loop: a variable that is missing or text under a
    number format (render reports those), a name given twice, or a rendered name whose first
    character (is it `/`?) depends on the combination.
    """
    if len(set(names)) != len(names):
        return None
    pieces: list[tuple[bool, str]] = []  # (a field of the combination, text or field)
    for part in pattern.parts:
        if isinstance(part, str):
            pieces.append((False, part))
            continue
        name, spec = part
        if name in names:
            j = names.index(name)
            if spec and any(isinstance(v, str) for v in loop[j]):
                return None
            pieces.append((True, _field(j, spec)))
            continue
        if name not in ns:
            return None
        value = ns[name]
        if spec and isinstance(value, str):
            return None
        pieces.append((False, format(value, spec)))
    lead = ""
    for field_, text in pieces:
        if field_:
            break
        lead += text
    if not lead and any(field_ for field_, _ in pieces):
        return None
    prefix = ""
    if lead.startswith("/"):
        first = next(i for i, (field_, text) in enumerate(pieces) if text)  # the literal holding the "/"
        pieces[first] = (False, pieces[first][1][1:])
    elif scope:
        prefix = f"{scope}/"
    out = [_brace(prefix)]
    out += [text if field_ else _brace(text) for field_, text in pieces]
    return "".join(out)


_Positions = dict[tuple[tuple[int, ...], frozenset[int]], list[int]]
"""_each_end's positions by the loop's sizes and the variables used: one pod's cabling has the shape
of every other's, so each shape's positions are worked out once per load."""


def _each_end(
    form: str,
    loop: Sequence[Sequence[int | str]],
    get: Callable[[str], Obj | None],
    positions: _Positions,
    ids_of: Callable[[Sequence[str], Sequence[Obj | None]], tuple[list[str], bool]] | None = None,
) -> tuple[list[str], bool]:
    """One end of every combination of `loop` (in `itertools.product` order), `form` being its
    `str.format` template over a combination (_positional); as its object's own id string where
    the object exists (`get`). And whether every end is an object now.

    Each distinct end is made once: a leaf's name in a leaf-to-spine `foreach` depends on the pod
    and the rail, not on the spine, so 65,536 cables need 4,096 leaf names, each then repeated.
    """
    used = frozenset(int(name) for _text, name, _spec, _conv in string.Formatter().parse(form) if name is not None)
    # Unused variables hold one value: the product runs over the used ones alone, in the same order.
    sub = [values if j in used else values[:1] for j, values in enumerate(loop)]
    made = _formatted(form, sub)
    found = list(map(get, made))
    try:  # every end an object (the usual case): their ids in one C pass
        distinct = list(map(_ID, found))
        known = True
    except AttributeError:  # an end not in the table (None has no id): an object not made yet
        # (`ids_of`: Expander._ids_of), or no object (its text, reported later)
        distinct, known = (ids_of or _texts)(made, found)
    if len(used) == len(loop):
        return distinct, known
    return list(map(distinct.__getitem__, _at(loop, used, positions))), known


def _at(loop: Sequence[Sequence[int | str]], used: frozenset[int], positions: _Positions) -> list[int]:
    """Where each combination of `loop` (in `itertools.product` order) finds its text among the
    distinct texts of a form that uses the variables `used`: its used values' positions, read as digits.
    """
    sizes = tuple(map(len, loop))
    at = positions.get((sizes, used))
    if at is None:
        at = [0]
        for j, n in enumerate(sizes):
            at = [x * n + t for x in at for t in range(n)] if j in used else [x for x in at for _ in range(n)]
        positions[(sizes, used)] = at
    return at


def _unmade_ends(
    form: str,
    loop: Sequence[Sequence[int | str]],
    unmade: Mapping[str, Unmade],
    positions: _Positions,
    slashed: _Slashed | None = None,
) -> tuple[list[str], list[str]] | None:
    """_each_end's ends where every one is an object of a node whose objects are not made yet
    (Sink.unmade_objects), all of one plan: its names, read from the node's names by slot; and
    those nodes, each once. None where that is not so, or not certain from `form` (then _each_end,
    end by end).

    A fleet's 131,072 NIC ends (`{pod}-r{r}-n{n}/nic{l}`) are then 16,384 node names and 8 NIC
    names, each looked up once, rather than 131,072 texts made, split at their "/" and looked up.
    An end's node is the text before its first "/": here the text before the first "/" written in
    `form`, where no value rendered before it holds one.
    """
    parts = list(string.Formatter().parse(form))
    node_form = ""
    cut = None
    for k, (text, name, spec, conv) in enumerate(parts):
        if "/" in text:
            cut = k
            break
        if name is None or conv is not None:
            return None
        values = loop[int(name)]
        if _formats_slash(values, spec or "", {} if slashed is None else slashed):
            return None
        node_form += _brace(text) + _field(name, spec)
    if cut is None:
        return None
    text, name, spec, conv = parts[cut]
    before, _slash, after = text.partition("/")
    node_form += _brace(before)
    rest_form = "/" + _brace(after) + _field(name, spec)
    for text, name, spec, conv in parts[cut + 1 :]:
        if conv is not None:
            return None
        rest_form += _brace(text) + _field(name, spec)
    nodes, node_at = _distinct(node_form, loop, positions)
    rests, rest_at = _distinct(rest_form, loop, positions)
    if not nodes or not rests:  # a variable with no values: no ends at all, as _each_end finds
        return None
    try:
        found = list(map(unmade.__getitem__, nodes))
    except KeyError:
        return None
    plan = found[0][0]
    if any(f[0] is not plan for f in found):
        return None
    try:
        slots = list(map(plan.object_slots_by_name.__getitem__, rests))
    except KeyError:
        return None
    names = list(map(_SECOND, found))
    return list(map(list.__getitem__, map(names.__getitem__, node_at), map(slots.__getitem__, rest_at))), nodes


_Slashed = dict[tuple[Sequence[int | str], str], bool]
"""_formats_slash's answers by values and format: every pod's cabling loops over the same values."""


def _formats_slash(values: Sequence[int | str], spec: str, slashed: _Slashed) -> bool:
    """Whether one of `values` formatted with `spec` holds a "/" (asked once per values and format)."""
    key = (values, spec)
    found = slashed.get(key)
    if found is None:
        found = slashed[key] = any("/" in format(v, spec) for v in values)
    return found


def _distinct(form: str, loop: Sequence[Sequence[int | str]], positions: _Positions) -> tuple[list[str], list[int]]:
    """`form`'s distinct texts over `loop` (as _each_end makes them) and, for every combination of
    `loop` in `itertools.product` order, the position of its text among them.
    """
    used = frozenset(int(name) for _text, name, _spec, _conv in string.Formatter().parse(form) if name is not None)
    made = _formatted(form, [values if j in used else values[:1] for j, values in enumerate(loop)])
    return made, _at(loop, used, positions)


def _texts(made: Sequence[str], found: Sequence[Obj | None]) -> tuple[list[str], bool]:
    """Each of `made` as its object's id string (`found`), else as itself; and False (some is no object)."""
    return [x if o is None else o.id for x, o in zip(made, found, strict=True)], False


def _formatted(form: str, sub: Sequence[Sequence[int | str]]) -> list[str]:
    """`form.format(*combination)` for every combination of `sub`, in `itertools.product` order,
    where every variable that no field of `form` names holds one value (as _each_end passes them):
    such a variable is not looked at when the texts are grown.

    Where `form`'s fields name the variables in their order, each once, and every variable has a
    value, the texts are grown field by field, each value formatted once per field: a pod's
    256 NIC ends are then 256 concatenations, not 256 calls formatting three numbers each. Any
    other form (a variable twice or out of order) is formatted combination by combination.
    """
    parts = list(string.Formatter().parse(form))
    fields = [int(name) for _text, name, _spec, _conv in parts if name is not None]
    plain = all(conv is None for _text, _name, _spec, conv in parts)
    if not plain or fields != sorted(set(fields)) or not all(sub):
        return list(itertools.starmap(form.format, itertools.product(*sub)))
    out = [""]
    for text, name, spec, _conv in parts:
        if name is None:  # the text after the last field
            out = [o + text for o in out]
            continue
        values = [text + format(v, spec or "") for v in sub[int(name)]]
        out = [o + v for o in out for v in values]
    return out


_ID = operator.attrgetter("id")
_FIRST = operator.itemgetter(0)
_SECOND = operator.itemgetter(1)
_THIRD = operator.itemgetter(2)
_SLOTS = operator.attrgetter("object_slots_by_name")


def _slashed(values: Sequence[int | str]) -> bool:
    """Whether a `foreach` variable has a word with a "/" among its values."""
    return any(isinstance(v, str) and "/" in v for v in values)


def _brace(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def _field(name: str | int | None, spec: str | None) -> str:
    """A replacement field of a str.format form, `{name}` or `{name:spec}`; none ("") for no name."""
    if name is None:
        return ""
    return f"{{{name}:{spec}}}" if spec else f"{{{name}}}"


def resolve(name: str, scope: str | None) -> str:
    """A name written inside a node is relative to it; a leading `/` makes it absolute."""
    if name.startswith("/"):
        return name[1:]
    return f"{scope}/{name}" if scope else name


_DEFERRED = SourceLocation("<deferred>")
"""The location of the placeholders that hold deferred links' places (Sink.deferred)."""


def made_links(links: Mapping[str, Link], deferred: Mapping[str, Unmade]) -> dict[str, Link]:
    """`links` with each placeholder replaced by its node's links, as _stamp would have made them."""
    out: dict[str, Link] = {}
    for lid, lk in links.items():
        if lk.loc is not _DEFERRED:
            out[lid] = lk
            continue
        node = lk.origin or ""
        made = links_of(node, deferred[node])
        out.update(zip([k.id for k in made], made, strict=True))
    return out


def _mentions_hole(sink: Sink) -> bool:
    """Whether an instance-dependent value ({node}, {parent}) ended up in a plan's contents."""
    for o in sink.objects.values():
        if _HOLE in o.id[1:] or any(_HOLE in v for v in o.labels.values()):
            return True
    for lk in sink.links.values():
        if _HOLE in lk.a[1:] or _HOLE in lk.b[1:] or any(_HOLE in v for v in lk.labels.values()):
            return True
    return any(_HOLE in v for m in sink.software.values() for v in m.values())


def check_expansion(entries: list[list[ObjSpec]], templates: Mapping[str, TemplateDef], problems: Problems) -> bool:
    """Refuse, before anything is expanded, entries that would make more than the limits allow.

    Counts what every entry would make (objects and links, templates and `count` and
    `foreach` multiplied out) from the specs alone, so `count: 2**70` or a node template
    counted 10^7 times is refused at once with the number it would produce, instead of
    running until the machine kills it. False when something was refused.
    """
    limits = current_limits()
    memo: dict[str, int] = {}
    ok = True

    def made(spec: ObjSpec, active: frozenset[str]) -> int:
        nonlocal ok
        per = 1 + sum(made(c, active) for c in spec.children) + sum(_links_made(lk) for lk in spec.links)
        tmpl = templates.get(spec.template) if spec.template is not None else None
        if tmpl is not None and tmpl.name not in active:  # a cycle is reported by the expander
            if tmpl.name not in memo:
                memo[tmpl.name] = made(tmpl.body, active | {tmpl.name})
            per += memo[tmpl.name] - 1  # the template's body is this instance itself
        if spec.count is None:
            return per
        loc = spec.template_loc or spec.loc
        if spec.count > limits.template_count:
            problems.add(
                spec.loc,
                exceeded(
                    "template_count",
                    f"'count: {spec.count:,}' asks for {spec.count:,} instances "
                    f"({spec.count * per:,} objects and links)",
                ),
            )
            ok = False
            return 0
        last = spec.start + spec.count - 1
        if last > INT64_MAX:
            problems.add(loc, f"'start: {spec.start}' with 'count: {spec.count}' numbers instances past 64 bits")
            ok = False
            return 0
        return per * spec.count

    total = 0
    biggest: tuple[int, ObjSpec] | None = None
    for specs in entries:
        for spec in specs:
            n = made(spec, frozenset())
            total += n
            if biggest is None or n > biggest[0]:
                biggest = (n, spec)
    if ok and total > limits.expanded_objects and biggest is not None:
        n, spec = biggest
        problems.add(
            spec.loc,
            exceeded(
                "expanded_objects",
                f"the inventory would expand to {total:,} objects and links ({n:,} of them from this entry)",
            ),
        )
        ok = False
    return ok


def _links_made(spec: LinkSpec) -> int:
    n = 1
    for _var, values in spec.foreach:
        n *= max(1, len(values))
    return n
