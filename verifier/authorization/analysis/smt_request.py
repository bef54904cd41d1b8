"""One symbolic request: an action, a principal type and a resource type, everything else a z3 variable.

Cedar's symbolic compiler (SymCC) works the same way: the request environment (action,
principal type, resource type) is concrete, one query each, and what the schema leaves free
is a solver variable: the two entities' ids, each attribute a policy reads (with a presence
Bool when the attribute is optional), each context attribute, and for each literal entity E
a policy tests with `in`, a function from ids of a type T to Bool: "the entity T::id is a
descendant of E" (a function, so one entity reached twice, as principal and as
`resource.owner`, has one answer). The entity store is otherwise arbitrary: any such functions
are some store the schema allows, as long as E's type is one T reaches through `in` (memberOf)
and they are transitive and acyclic over the entities a query holds (`Request.hierarchy`).
An attribute whose type is an entity type holds that entity's id.
Variables are made when a policy first reads them, so a query holds only what it needs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from verifier.authorization.analysis.smt_schema import Action, Attr, Schema, Type
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import z3
else:
    # z3 takes a tenth of a second to import: only an analysis pays for it, never verify/authorize.
    z3 = lazy_module("z3")

LONG_MIN = -(2**63)
LONG_MAX = 2**63 - 1
ENTITY_VARS = ("principal", "resource")


MAX_CHAR = 0x2FFFF
"""The highest character z3's strings hold (its `unicode` encoding); Cedar's go to U+10FFFF."""


def string_val(text: str) -> Any:
    """`text` as a z3 string, character for character.

    z3 reads `\\u{...}` in a literal as an escape, so a Cedar string holding a backslash would
    change; every character outside printable ASCII, and the backslash, is written as that
    escape instead. ValueError for a character z3 cannot hold.
    """
    if any(ord(c) > MAX_CHAR for c in text):
        raise ValueError(f"a string with a character above U+{MAX_CHAR:X}, which the solver's strings cannot hold")
    return z3.StringVal("".join(c if " " <= c <= "~" and c != "\\" else f"\\u{{{ord(c):x}}}" for c in text))


def encodable(t: Type) -> bool:
    """Types whose values the encoding holds: Bool, Long, String, sets of those, entities (by id)."""
    if t.kind == "Set":
        return t.element is not None and t.element.kind in ("Bool", "Long", "String")
    return t.kind in ("Bool", "Long", "String", "Entity")


def sort_of(t: Type) -> Any:
    if t.kind == "Set":
        assert t.element is not None
        return z3.SetSort(sort_of(t.element))
    return {"Bool": z3.BoolSort, "Long": z3.IntSort, "String": z3.StringSort, "Entity": z3.StringSort}[t.kind]()


@dataclass
class Read:
    """A variable the policies read, as an example shows it."""

    var: str  # "principal" | "resource" | "context"
    name: str
    type: Type
    value: Any
    present: Any  # z3 Bool, or True for a required attribute


@dataclass
class Request:
    schema: Schema
    action: Action
    principal: str
    resource: str
    reads: dict[tuple[str, str], Read] = field(default_factory=dict)
    ancestors: dict[tuple[str, str], Any] = field(default_factory=dict)
    ids: dict[str, Any] = field(default_factory=dict)
    targets: dict[str, tuple[str, Any]] = field(default_factory=dict)
    """The literal entities some `in` tests, by uid text: their type and id."""
    literals: set[object] = field(default_factory=set)
    """String and Long literals the policies hold: the candidates an example's sets are shown with."""
    members: list[Any] = field(default_factory=list)
    """Terms a set is asked to hold (`s.contains(x + 1)`, set literals' elements): their values are candidates too."""

    def type_of(self, var: str) -> str:
        return self.principal if var == "principal" else self.resource

    def id(self, var: str) -> Any:
        if var not in self.ids:
            self.ids[var] = z3.String(f"{var}.id")
        return self.ids[var]

    def attr_type(self, var: str, name: str) -> Attr | None:
        """The schema's attribute `name` of the request's `var` (None where its type lacks it)."""
        if var == "context":
            return self.action.context.get(name)
        return self.schema.entities[self.type_of(var)].attrs.get(name)

    def read(self, var: str, name: str) -> Read:
        """The variables of attribute `name` of `var` (its type must be encodable)."""
        key = (var, name)
        if key not in self.reads:
            attr = self.attr_type(var, name)
            assert attr is not None and encodable(attr.type)
            value = z3.Const(f"{var}.{name}", sort_of(attr.type))
            present: Any = True if attr.required else z3.Bool(f"{var} has {name}")
            self.reads[key] = Read(var, name, attr.type, value, present)
        return self.reads[key]

    def descendant(self, type_name: str, entity_id: Any, uid: str, target: tuple[str, Any]) -> Any:
        """The Bool "entity `type_name`::`entity_id` is strictly below entity `uid` in the hierarchy"
        (`target`: that entity's type and id).
        """
        self.targets[uid] = target
        key = (type_name, uid)
        if key not in self.ancestors:
            self.ancestors[key] = z3.Function(f"{type_name} in {uid}", z3.StringSort(), z3.BoolSort())
        return self.ancestors[key](entity_id)

    def constraints(self) -> list[Any]:
        """What the schema says of the variables made so far: Longs are 64-bit, enumerated entity
        types have their listed ids only, and one entity seen as both principal and resource has
        one set of attributes.
        """
        out: list[Any] = []
        if self.principal == self.resource:
            # Read each attribute on both sides so the two can be tied together.
            for var, name in list(self.reads):
                if var in ENTITY_VARS:
                    for other in ENTITY_VARS:
                        self.read(other, name)
            same = self.id("principal") == self.id("resource")
            ties = [
                z3.And(
                    self.reads[("principal", n)].value == self.reads[("resource", n)].value,
                    self.reads[("principal", n)].present == self.reads[("resource", n)].present,
                )
                for v, n in self.reads
                if v == "principal"
            ]
            if ties:
                out.append(z3.Implies(same, z3.And(*ties)))
        out += self.hierarchy()
        ids = [(self.type_of(var), self.id(var)) for var in ENTITY_VARS]
        for read in self.reads.values():
            if read.type.kind == "Long":
                out.append(z3.And(read.value >= LONG_MIN, read.value <= LONG_MAX))
            if read.type.kind == "Entity":
                ids.append((read.type.name, read.value))
        for type_name, entity_id in ids:
            enum = self.schema.entities[type_name].enum
            if enum is not None:
                out.append(z3.Or(*[entity_id == string_val(e) for e in enum]) if enum else z3.BoolVal(False))
        return out

    def hierarchy(self) -> list[Any]:
        """Cedar's entity store is a DAG, read with its transitive closure (cedarpy refuses a
        cycle): no literal entity an `in` tests is below itself, and an entity below L1 where L1
        is below L2 is below L2. Asked of every entity the request holds (principal, resource,
        attribute entities) and of the literals themselves; any such relation is then some
        store's (each pair below, an edge, plus fresh entities between types the schema links
        only through others).
        """
        out: list[Any] = []
        targets = sorted(self.targets.items())
        for uid, (t, i) in targets:
            if t in self.schema.ancestor_types(t):
                out.append(z3.Not(self.descendant(t, i, uid, (t, i))))
        nodes = [(self.type_of(v), self.id(v)) for v in ENTITY_VARS]
        nodes += [(r.type.name, r.value) for _, r in sorted(self.reads.items()) if r.type.kind == "Entity"]
        nodes += [target for _, target in targets]
        for node_type, node_id in nodes:
            above = self.schema.ancestor_types(node_type)
            for u1, (t1, i1) in targets:
                if t1 not in above:
                    continue
                for u2, (t2, i2) in targets:
                    if u2 != u1 and t2 in self.schema.ancestor_types(t1):
                        out.append(
                            z3.Implies(
                                z3.And(
                                    self.descendant(node_type, node_id, u1, (t1, i1)),
                                    self.descendant(t1, i1, u2, (t2, i2)),
                                ),
                                self.descendant(node_type, node_id, u2, (t2, i2)),
                            )
                        )
        return out
