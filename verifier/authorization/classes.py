"""Equivalence classes: entities that no policy can tell apart get one Cedar request.

A Cedar policy sees an entity only through its type, the attributes it reads, and `in` /
`==` tests against entities it names. So two entities of the same type, with the same
values of every attribute any policy reads, that equal the same named entities and have the
same named entities among their ancestors, get the same decision in every request: asking
for one representative per class is exact, not an estimate.

That argument needs attribute values that are not entity references (topolog builds
entities with strings, booleans, numbers and string sets only) and policies that do not
compare principal and resource with each other as entities (`principal in resource`); when
a policy does, grouping is switched off and every entity is its own class.

The context values to enumerate come from the policies too: every context attribute they
read, with the literals they compare it against (booleans: both values; and "absent", when
a policy tests `context has x`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter
from typing import TypeVar

from verifier.authorization.entities import PRINCIPAL_TYPES, RESOURCE_TYPES, AttrValue, EntityGraph, uid
from verifier.authorization.observed import CEDAR_LONG, Observed
from verifier.authorization.policies import PolicyBundle
from verifier.core.frozen import Frozen
from verifier.core.stamped_rows import Row, StampBlock, with_blocks

_GPU_UID = 'Gpu::"'
"""How every Gpu uid begins (entities.uid): the type read without splitting the uid."""

MAX_CONTEXTS = 256
"""Enumerated context combinations are capped; beyond this the audit says so."""


@dataclass(frozen=True, repr=False, eq=False)
class PolicyReads(Frozen):
    """What a policy set can observe of principals, resources and the context."""

    attributes: frozenset[str]
    named: frozenset[str]  # entity uids named anywhere (scopes, `in`, `==`, literals)
    context_values: dict[str, tuple[object, ...]] = field(default_factory=dict)  # absent is `ABSENT`
    groupable: bool = True


class _Absent:
    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()


def policy_reads(*bundles: PolicyBundle) -> PolicyReads:
    """The union over bundles, so a diff's classes separate whatever either policy set sees."""
    seen = Observed.union(b.observed for b in bundles)
    values: dict[str, tuple[object, ...]] = {}
    for name, literals in seen.context:
        vals = set(literals)
        if not vals or any(isinstance(v, bool) for v in vals):
            vals |= {False, True}  # read as a condition, or compared with a boolean
        ordered: list[object] = [b for b in (False, True) if b in vals and any(v is b for v in vals)]
        ordered += sorted(v for v in vals if isinstance(v, int) and not isinstance(v, bool))
        ordered += sorted(v for v in vals if isinstance(v, str))
        if name in seen.context_tested:
            ordered.insert(0, ABSENT)
        values[name] = tuple(ordered)
    return PolicyReads(seen.attributes, seen.named, values, seen.groupable)


OTHER_TEXT = "topolog-none-of-the-literals"
"""A context string equal to no literal a policy compares with (the literals are in the policies)."""


def values_to_ask(literals: Sequence[object]) -> tuple[object, ...]:
    """The values of one context attribute that show every outcome of the comparisons the policies make
    with it: absent and both booleans as enumerated, each whole number with its neighbours inside
    Cedar's Long (`context.n > 5`: 4, 5 and 6), each text and one text equal to none of them
    (`context.site != "lab"` holds only for the latter). Complete only for reads compared with a
    literal or used as a condition (analysis/context_reads.py refuses the others where it matters).
    """
    out: list[object] = [v for v in literals if v is ABSENT or isinstance(v, bool)]
    numbers = {v for v in literals if isinstance(v, int) and not isinstance(v, bool)}
    out += sorted(n for n in numbers | {n + d for n in numbers for d in (-1, 1)} if n in CEDAR_LONG)
    texts = sorted(v for v in literals if isinstance(v, str))
    if texts:
        out += [*texts, OTHER_TEXT]
    return tuple(out)


def context_combinations(reads: PolicyReads) -> int:
    """How many contexts `contexts` would ask, before its cap."""
    total = 1
    for literals in reads.context_values.values():
        total *= len(values_to_ask(literals))
    return total


def contexts(reads: PolicyReads) -> list[dict[str, object]]:
    """Every combination of the context values worth asking (values_to_ask; absent attributes left out),
    capped at MAX_CONTEXTS (the audit says so; the policy analyses refuse past it instead).
    """
    names = sorted(reads.context_values)
    out: list[dict[str, object]] = []
    for combo in itertools.product(*(values_to_ask(reads.context_values[n]) for n in names)):
        out.append({n: v for n, v in zip(names, combo, strict=True) if v is not ABSENT})
        if len(out) >= MAX_CONTEXTS:
            break
    return out


@dataclass(frozen=True, repr=False, eq=False)
class EntityClass(Frozen):
    id: str  # the uid of its representative: the smallest member uid
    members: tuple[str, ...]  # uids, sorted

    @property
    def representative(self) -> str:
        return self.members[0]


def class_keys(graph: EntityGraph, reads: PolicyReads) -> Callable[[list[str]], list[tuple[object, ...]]]:
    """The class keys of entity uids: equal keys, same decision in every request."""
    if not reads.groupable:
        return lambda uids: [(u,) for u in uids]
    return _Keys(graph, reads).keys


class _Keys:
    """Class keys of many entities of one graph, with what every key reads worked out once."""

    def __init__(self, graph: EntityGraph, reads: PolicyReads) -> None:
        self.graph = graph
        self.reads = reads
        self.read = sorted(reads.attributes)
        # Named entities a hardware entity can have as ancestors; none (the shipped policies
        # name only principals) spares working out any hardware ancestor.
        self.named_hardware = frozenset(u for u in reads.named if u.split("::", 1)[0] in RESOURCE_TYPES)
        # GPUs that look alike share one attribute mapping (kept alive by the graph): read it once.
        self.values: dict[int, tuple[tuple[str, object], ...]] = {}

    def values_of(self, attrs: Mapping[str, AttrValue]) -> tuple[tuple[str, object], ...]:
        """The values of the attributes the policies read, of one (shared) attribute mapping."""
        values = self.values.get(id(attrs))
        if values is None:
            values = self.values[id(attrs)] = tuple((a, _hashable(attrs.get(a))) for a in self.read if a in attrs)
        return values

    def keys(self, uids: list[str]) -> list[tuple[object, ...]]:
        return self.keys_of(uids, self.graph.attrs_many(uids))

    def keys_of(self, uids: list[str], attrs_of: list[Mapping[str, AttrValue]]) -> list[tuple[object, ...]]:
        """`keys`, the attributes of each uid given (EntityGraph.gpu_rows reads them in bulk)."""
        graph, reads, memo = self.graph, self.reads, self.values
        named_all = reads.named
        # A GPU that no policy names, when no policy names any hardware, has the key
        # ("Gpu", its values, None, ()): one per shared attribute mapping, made once for them all.
        plain_gpus: dict[int, tuple[object, ...]] | None = None if self.named_hardware else {}
        out: list[tuple[object, ...]] = []
        for u, attrs in zip(uids, attrs_of, strict=True):
            if plain_gpus is not None and u.startswith(_GPU_UID) and u not in named_all:
                key = plain_gpus.get(id(attrs))
                if key is None:
                    values = memo.get(id(attrs))
                    if values is None:
                        values = memo[id(attrs)] = tuple((a, _hashable(attrs.get(a))) for a in self.read if a in attrs)
                    key = plain_gpus[id(attrs)] = ("Gpu", values, None, ())
                out.append(key)
                continue
            etype = u.split("::", 1)[0]  # an entity's (attrs_many raised otherwise): never namespaced
            values = memo.get(id(attrs))
            if values is None:
                values = memo[id(attrs)] = tuple((a, _hashable(attrs.get(a))) for a in self.read if a in attrs)
            is_named = u if u in reads.named else None
            named = reads.named if etype in PRINCIPAL_TYPES else self.named_hardware
            named_ancestors = tuple(sorted(graph.named_ancestors(u, named))) if named else ()
            out.append((etype, values, is_named, named_ancestors))
        return out


def _hashable(v: object) -> object:
    return tuple(v) if isinstance(v, list) else v


def partition_rows(
    uids: list[str], attrs: list[Mapping[str, AttrValue]], graph: EntityGraph, reads: PolicyReads
) -> list[tuple[EntityClass, list[int]]]:
    """`partition` of `uids` whose attributes are given (`attrs[i]` is uid i's), each class with
    the positions of its members in `uids`, in the order of its (sorted) members.
    """
    keys = _Keys(graph, reads).keys_of(uids, attrs) if reads.groupable else [(u,) for u in uids]
    # Alike GPUs share one key object; keys made apart, as principals' are, may still be equal.
    out: list[tuple[EntityClass, list[int]]] = []
    for at in _grouped(keys, lambda key: key):
        listed = [uids[i] for i in at]
        members = sorted(listed)
        if members != listed:  # uids not given sorted: positions follow the sorted members
            at = sorted(at, key=uids.__getitem__)
        out.append((EntityClass(members[0], tuple(members)), at))
    return sorted(out, key=lambda c: c[0].id)


_Item = TypeVar("_Item")


def _grouped(items: Sequence[_Item], key_of: Callable[[_Item], Hashable]) -> list[list[int]]:
    """The positions of `items` grouped by `key_of(item)`, each group in order.

    Items that are one object (GPUs sharing an attribute mapping or a key) are grouped by their
    id first, so that `key_of` runs once per object, not once per GPU; `items` keeps every one of
    them alive, so no id is reused while this runs.
    """
    by_object: dict[int, list[int]] = {}
    for i, item in enumerate(items):
        at = by_object.get(id(item))
        if at is None:
            by_object[id(item)] = [i]
        else:
            at.append(i)
    groups: dict[Hashable, list[int]] = {}
    joined: set[Hashable] = set()
    for at in by_object.values():
        key = key_of(items[at[0]])
        group = groups.get(key)
        if group is None:
            groups[key] = list(at)
        else:
            group.extend(at)
            joined.add(key)
    for key in joined:
        # Positions in order, as one pass over `items` would list them: sorted once per group, not
        # at every object joined to it (131,072 GPUs with equal keys made apart, as a policy naming
        # one GPU makes them, re-sorted a growing list 131,072 times: over a minute of verify).
        groups[key].sort()
    return list(groups.values())


_UID_ORDER_DIFFERS = re.compile(r"[\x00-\x22\\]")
"""A character that makes the order of ids and of their uids (Gpu::"<id escaped>") differ: one
that uid() escapes, or one sorting before the closing quote (`a b` < `a` as uids, not as ids)."""


def partition_gpus(graph: EntityGraph, reads: PolicyReads) -> tuple[list[str], list[tuple[str, str, list[int]]]]:
    """`partition_rows` of every GPU (EntityGraph.gpu_rows), as the authorization facts read it: the
    GPUs' ids, sorted, and per class its representative's uid and id and its members' positions
    in those ids, classes sorted by representative.

    Without a uid per GPU: when no policy names hardware or compares entities with each other,
    a GPU no policy names has the key ("Gpu", its values, None, ()) (`_Keys.keys_of`), one per
    shared attribute mapping, so the GPUs are grouped by that mapping. Their ids sort as their
    uids do unless one holds a character that changes it (_UID_ORDER_DIFFERS): then, and in every
    other case, the classes are worked out from the uids (`partition_rows`).
    """
    ids, attrs = graph.gpu_ids_attrs()
    keys = _Keys(graph, reads)
    if not reads.groupable or keys.named_hardware or _UID_ORDER_DIFFERS.search("".join(ids)):
        uids = [uid("Gpu", i) for i in ids]
        return ids, [(c.id, ids[at[0]], at) for c, at in partition_rows(uids, attrs, graph, reads)]
    # No policy names a GPU here (a named GPU is named hardware, above): every class is a shared mapping's.
    groups = _grouped(attrs, lambda a: ("Gpu", keys.values_of(a), None, ()))
    out = [(uid("Gpu", ids[at[0]]), ids[at[0]], at) for at in groups]
    return ids, sorted(out, key=lambda c: c[0])


def gpu_classes(graph: EntityGraph, reads: PolicyReads) -> tuple[list[tuple[str, str]], Sequence[Row]] | None:
    """`partition_gpus` read by node groups (EntityGraph.gpu_blocks): the classes, sorted by
    representative, each as its representative's uid and id, and the `authz_class(gpu, class)` rows
    of every GPU, those of a block as one StampBlock (its plan's GPU slots and each one's class;
    a fleet's 131,072 GPUs: no row, uid or sort per GPU). None where `partition_gpus` works from
    uids instead (a policy names hardware or compares entities, or an id holds a character that
    orders ids and uids apart): the caller asks it then.
    """
    keys = _Keys(graph, reads)
    if not reads.groupable or keys.named_hardware:
        return None
    ids, attrs, blocks = graph.gpu_blocks()
    # A block's GPU ids are its nodes' ids followed by its suffixes: no other character is in them.
    texts = [*ids, *(names[0] for block in blocks for names in block.names), *(s for b in blocks for s in b.suffixes)]
    if _UID_ORDER_DIFFERS.search("".join(texts)):
        return None
    # Class key -> its smallest GPU id so far and where its GPUs are: (block, position) or a loose id.
    members: dict[Hashable, tuple[list[str], list[tuple[int, int]], list[int]]] = {}

    def add(mapping: Mapping[str, AttrValue]) -> tuple[list[str], list[tuple[int, int]], list[int]]:
        return members.setdefault(("Gpu", keys.values_of(mapping), None, ()), ([], [], []))

    for b, block in enumerate(blocks):
        nodes = list(map(itemgetter(0), block.names))
        # Ids of one length: none is the start of another, so ids and the ids followed by any text
        # sort alike (the smallest GPU at a slot is the smallest node's): one look per node.
        lowest = min(nodes) if len(set(map(len, nodes))) == 1 else None
        for j, (slot, mapping) in enumerate(zip(block.slots, block.attrs, strict=True)):
            found = add(mapping)
            low = lowest + block.suffixes[j] if lowest is not None else min(map(itemgetter(slot), block.names))
            found[0].append(low)
            found[1].append((b, j))
    for at in _grouped(attrs, id):  # one list per mapping object (ids kept: `attrs` holds them)
        found = add(attrs[at[0]])
        found[0].append(ids[at[0]])  # positions in sorted ids: the first is the smallest
        found[2].extend(at)
    classes = sorted((uid("Gpu", min(low)), min(low), spots, loose) for low, spots, loose in members.values())
    of_block: list[list[str]] = [[""] * len(block.slots) for block in blocks]
    plain: list[Row] = []
    for _uid, name, spots, loose in classes:
        for b, j in spots:
            of_block[b][j] = name
        plain += [(ids[i], name) for i in loose]
    rows = with_blocks(
        plain,
        [StampBlock((block.slots, None), (None, tuple(of_block[b])), block.names) for b, block in enumerate(blocks)],
    )
    return [(u, name) for u, name, _spots, _loose in classes], rows


def partition(uids: Iterable[str], graph: EntityGraph, reads: PolicyReads) -> list[EntityClass]:
    """Classes sorted by representative; members sorted. Deterministic for the same inputs."""
    groups: dict[tuple[object, ...], list[str]] = {}
    members = list(uids)
    for u, key in zip(members, class_keys(graph, reads)(members), strict=True):
        groups.setdefault(key, []).append(u)
    classes = [EntityClass(min(m), tuple(sorted(m))) for m in groups.values()]
    return sorted(classes, key=lambda c: c.id)
