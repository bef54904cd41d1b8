"""The Cedar schema as plain data, for the schema-wide analysis: entity types, attributes, actions.

cedarpy parses and validates the schema but hands back only an opaque handle; what it prints
(`str(schema)`, kept as `PolicyBundle.schema_shown`) is one canonical form of the schema: every
declaration on its own, names as declared in their namespace, `appliesTo` with its principal
and resource lists and context record spelled out. This module reads that printed form, which
cedarpy has already checked, so it needs no error recovery: anything it does not expect is a
TopologError naming the schema, never a guess.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from verifier.core.errors import SourceLocation, TopologError

ACTION = "Action"


@dataclass(frozen=True)
class Type:
    """A Cedar type: `Long`, `String`, `Bool`, `Set` (with `element`), `Entity` (with `name`),
    `Record` (with `attrs`) or `Extension` (with `name`: ipaddr, decimal, datetime, duration).
    """

    kind: str
    name: str = ""
    element: Type | None = None
    attrs: tuple[tuple[str, Attr], ...] = ()

    def __str__(self) -> str:
        if self.kind == "Set":
            return f"Set<{self.element}>"
        if self.kind in ("Entity", "Extension"):
            return self.name
        if self.kind == "Record":
            return "{" + ", ".join(f"{n}{'' if a.required else '?'}: {a.type}" for n, a in self.attrs) + "}"
        return self.kind


@dataclass(frozen=True)
class Attr:
    type: Type
    required: bool


@dataclass(frozen=True)
class EntityType:
    name: str
    """Fully qualified (`App::User`)."""
    parents: tuple[str, ...]
    """The types its entities may be `in` directly (memberOf), qualified."""
    attrs: dict[str, Attr] = field(default_factory=dict)
    enum: tuple[str, ...] | None = None
    """The only ids an enumerated entity type allows, else None."""
    tags: bool = False


@dataclass(frozen=True)
class Action:
    uid: str
    """`Action::"read"` (`App::Action::"read"` in a namespace)."""
    groups: tuple[str, ...]
    """Uids of the action groups it is directly `in`."""
    principals: tuple[str, ...]
    resources: tuple[str, ...]
    context: dict[str, Attr]


@dataclass(frozen=True)
class Schema:
    entities: dict[str, EntityType]
    actions: dict[str, Action]

    def ancestor_types(self, name: str) -> frozenset[str]:
        """Types an entity of type `name` may be a (transitive) descendant of."""
        seen: set[str] = set()
        todo = list(self.entities[name].parents) if name in self.entities else []
        while todo:
            t = todo.pop()
            if t not in seen:
                seen.add(t)
                todo.extend(self.entities[t].parents if t in self.entities else ())
        return frozenset(seen)

    def action_ancestors(self, uid: str) -> frozenset[str]:
        """The action itself and every group it is transitively in."""
        seen: set[str] = set()
        todo = [uid]
        while todo:
            a = todo.pop()
            if a not in seen:
                seen.add(a)
                todo.extend(self.actions[a].groups if a in self.actions else ())
        return frozenset(seen)

    def requests(self) -> Iterator[tuple[Action, str, str]]:
        """Every (action, principal type, resource type) a request may have, sorted."""
        for uid in sorted(self.actions):
            action = self.actions[uid]
            for p in sorted(action.principals):
                for r in sorted(action.resources):
                    yield action, p, r


# A string as runs of plain characters between escapes: one alternation per character kept a
# regex frame per character (about 146 bytes each), for a long string in a schema. Possessive
# (`*+`): a greedy `*` still kept one per escape (nothing to go back to: see policies._BRACKETS).
_TOKEN = re.compile(
    r'\s+|//[^\n]*|"[^"\\]*+(?:\\.[^"\\]*+)*+"|[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:::)?|.'
)
Raw = tuple[str, Any]
"""A type as read, before names are resolved: (Set, inner) | (Record, attrs) | (Ref, name)."""
_PRIMITIVE = {"Long": "Long", "String": "String", "Bool": "Bool", "Boolean": "Bool"}
_EXTENSION = ("ipaddr", "decimal", "datetime", "duration")


def read_schema(shown: str, where: str) -> Schema:
    """The schema cedarpy printed as `shown` (`where` names the schema file in errors)."""
    return _Reader(shown, where).schema()


class _Reader:
    def __init__(self, text: str, where: str) -> None:
        self.where = where
        self.tokens = [m.group(0) for m in _TOKEN.finditer(text) if not m.group(0).isspace()]
        self.tokens = [t for t in self.tokens if not t.startswith("//")]
        self.pos = 0
        self.common: dict[str, tuple[str, Raw]] = {}
        self.raw_entities: list[
            tuple[str, str, list[str], dict[str, tuple[Raw, bool]], tuple[str, ...] | None, bool]
        ] = []
        self.raw_actions: list[tuple[str, str, list[str], list[str] | None, list[str] | None, Raw]] = []

    # -- tokens
    def fail(self, what: str) -> TopologError:
        near = " ".join(self.tokens[self.pos : self.pos + 6])
        return TopologError.at(
            SourceLocation(self.where), f"cannot read the schema for the analysis: {what} near {near!r}"
        )

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        if not tok or (expected is not None and tok != expected):
            raise self.fail(f"expected {expected or 'more'}")
        self.pos += 1
        return tok

    def name(self) -> str:
        tok = self.take()
        if tok.startswith('"'):
            return str(_unquote(tok))
        if not (tok[0].isalpha() or tok[0] == "_"):
            raise self.fail("expected a name")
        return tok

    # -- declarations
    def schema(self) -> Schema:
        while self.peek():
            if self.peek() == "namespace":
                self.take()
                ns = self.take()
                self.take("{")
                while self.peek() != "}":
                    self.declaration(ns)
                self.take("}")
            else:
                self.declaration("")
        return self._resolve()

    def annotations(self) -> None:
        while self.peek() == "@":
            self.take()
            self.take()
            if self.peek() == "(":
                self.take("(")
                self.take()
                self.take(")")

    def declaration(self, ns: str) -> None:
        self.annotations()
        kind = self.take()
        names = [self.name()]
        while self.peek() == ",":
            self.take()
            names.append(self.name())
        if kind == "type":
            self.take("=")
            t = self.type()
            self.take(";")
            for n in names:
                self.common[_qualify(ns, n)] = (ns, t)
        elif kind == "entity":
            self.entity(ns, names)
        elif kind == "action":
            self.action(ns, names)
        else:
            raise self.fail(f"unexpected declaration {kind!r}")

    def entity(self, ns: str, names: list[str]) -> None:
        parents: list[str] = []
        attrs: dict[str, tuple[Raw, bool]] = {}
        enum: tuple[str, ...] | None = None
        tags = False
        if self.peek() == "enum":
            self.take()
            enum = tuple(str(_unquote(s)) for s in self.list_of_names())
        if self.peek() == "in":
            self.take()
            parents = self.list_of_names() if self.peek() == "[" else [self.name()]
        if self.peek() == "=":
            self.take()
        if self.peek() == "{":
            attrs = self.record()
        if self.peek() == "tags":
            self.take()
            self.type()
            tags = True
        self.take(";")
        for n in names:
            self.raw_entities.append((ns, n, parents, attrs, enum, tags))

    def action(self, ns: str, names: list[str]) -> None:
        groups: list[str] = []
        principals: list[str] | None = None
        resources: list[str] | None = None
        context: Raw = ("Record", {})
        if self.peek() == "in":
            self.take()
            groups = self.list_of_names() if self.peek() == "[" else [self.name()]
        if self.peek() == "appliesTo":
            self.take()
            self.take("{")
            while self.peek() != "}":
                key = self.take()
                self.take(":")
                if key in ("principal", "resource"):
                    found = self.list_of_names() if self.peek() == "[" else [self.name()]
                    if key == "principal":
                        principals = found
                    else:
                        resources = found
                elif key == "context":
                    context = self.type()
                else:
                    raise self.fail(f"unexpected appliesTo key {key!r}")
                if self.peek() == ",":
                    self.take()
            self.take("}")
        if self.peek() == "attributes":
            raise self.fail("action attributes are not supported")
        self.take(";")
        for n in names:
            self.raw_actions.append((ns, n, groups, principals, resources, context))

    def list_of_names(self) -> list[str]:
        self.take("[")
        out: list[str] = []
        while self.peek() != "]":
            tok = self.take()
            if tok.endswith("::") and self.peek().startswith('"'):
                tok += self.take()  # Action::"name"
            out.append(tok)
            if self.peek() == ",":
                self.take()
        self.take("]")
        return out

    def record(self) -> dict[str, tuple[Raw, bool]]:
        self.take("{")
        attrs: dict[str, tuple[Raw, bool]] = {}
        while self.peek() != "}":
            self.annotations()
            n = self.name()
            required = True
            if self.peek() == "?":
                self.take()
                required = False
            self.take(":")
            attrs[n] = (self.type(), required)
            if self.peek() == ",":
                self.take()
        self.take("}")
        return attrs

    def type(self) -> Raw:
        if self.peek() == "{":
            return ("Record", self.record())
        tok = self.take()
        if tok in ("Set", "__cedar::Set"):
            self.take("<")
            inner = self.type()
            self.take(">")
            return ("Set", inner)
        return ("Ref", tok)

    # -- names resolved once everything is read
    def _resolve(self) -> Schema:
        entity_names = {_qualify(ns, n) for ns, n, *_ in self.raw_entities}

        def ref(ns: str, name: str, depth: int = 0) -> Type:
            bare = name.removeprefix("__cedar::")
            for candidate in (_qualify(ns, name), name):
                if candidate in self.common:
                    if depth > 50:
                        raise self.fail(f"common type {name!r} refers to itself")
                    cns, raw = self.common[candidate]
                    return conv(cns, raw, depth + 1)
                if candidate in entity_names:
                    return Type("Entity", candidate)
            if bare in _PRIMITIVE:
                return Type(_PRIMITIVE[bare])
            if bare in _EXTENSION:
                return Type("Extension", bare)
            raise TopologError.at(SourceLocation(self.where), f"cannot read the schema: unknown type {name!r}")

        def conv(ns: str, raw: Raw, depth: int = 0) -> Type:
            kind, body = raw
            if kind == "Set":
                return Type("Set", element=conv(ns, body, depth))
            if kind == "Record":
                return Type(
                    "Record", attrs=tuple((n, Attr(conv(ns, t, depth), r)) for n, (t, r) in sorted(body.items()))
                )
            return ref(ns, str(body), depth)

        def entity_ref(ns: str, name: str) -> str:
            t = ref(ns, name)
            if t.kind != "Entity":
                raise TopologError.at(
                    SourceLocation(self.where), f"cannot read the schema: {name!r} is not an entity type"
                )
            return t.name

        entities = {
            _qualify(ns, n): EntityType(
                _qualify(ns, n),
                tuple(sorted(entity_ref(ns, p) for p in parents)),
                {a: Attr(conv(ns, t), req) for a, (t, req) in attrs.items()},
                enum,
                tags,
            )
            for ns, n, parents, attrs, enum, tags in self.raw_entities
        }
        actions: dict[str, Action] = {}
        for ns, n, groups, principals, resources, context in self.raw_actions:
            ctx = conv(ns, context)
            if ctx.kind != "Record":
                raise TopologError.at(
                    SourceLocation(self.where), f"cannot read the schema: context of action {n!r} is not a record"
                )
            uid = _action_uid(ns, n)
            actions[uid] = Action(
                uid,
                tuple(sorted(_action_group(ns, g) for g in groups)),
                tuple(sorted(entity_ref(ns, p) for p in principals or ())),
                tuple(sorted(entity_ref(ns, r) for r in resources or ())),
                dict(ctx.attrs),
            )
        return Schema(entities, actions)


def _qualify(ns: str, name: str) -> str:
    return f"{ns}::{name}" if ns and "::" not in name else name


def _action_uid(ns: str, name: str) -> str:
    return f'{_qualify(ns, ACTION)}::"{name}"'  # as cedarpy.pst.EntityUid prints it


def _action_group(ns: str, ref: str) -> str:
    """`"all"` or `Action::"all"` (`App::Action::"all"`) as a qualified action uid."""
    if ref.startswith('"'):
        return _action_uid(ns, str(_unquote(ref)))
    head, _, quoted = ref.rpartition("::")
    if head == ACTION or head.endswith("::" + ACTION):
        return f"{_qualify(ns, head)}::{quoted}" if head == ACTION else ref
    return _action_uid(ns, ref)


def _unquote(tok: str) -> str:
    import json

    return str(json.loads(tok)) if tok.startswith('"') else tok
