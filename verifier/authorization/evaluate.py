"""Evaluate requests with cedarpy, failing closed.

cedarpy 4.12.2 fails open in two ways that topolog closes:
- a `forbid` whose condition errors (an overflow, a missing attribute) is skipped, and a
  permit that matched still yields Allow: here any evaluation error makes the answer Deny,
  with the error kept (and reported as a finding);
- a request naming an entity that is not in the entity set is evaluated anyway (`in` just
  never matches, so a forbid scoped to a team can miss): here such a request is Deny with
  the reason, and callers that take input from users refuse it before asking (exit 2).

The PolicySet and Schema handles are parsed once and reused for every batch. The Entities
handle of a batch holds what its requests can reach: their principals and resources, the
entities the policies name, entities named in a context, and the ancestors of all of these
(verifier/authorization/entities.py, `EntityGraph.closure`). A Cedar policy reads attributes
only of those and tests `in` only through their ancestors, so the decisions are those of the
whole graph, which a 100k-GPU fleet would take seconds to hand to cedarpy. An entity that is
only an ancestor is given the stand-ins' attributes below (once the schema accepted them): no
policy can read them, and its own would count every GPU below it (a pod's, a fleet's).

The whole graph is still validated against the schema, once, without building it: topolog
builds every hardware entity with the same attribute names and value types (strings, booleans,
whole numbers), so one stand-in per entity type and kind of parent, plus one real principal
per type and shape (teams and parents empty or not), meets every check the schema makes of
every real entity. Where that may not hold (a stand-in is refused, the schema has enumerated
entity ids or extension types that parse strings, a catalogue figure does not fit a Long),
every entity is built and validated, as before: the same answer and the same message.

One request at a time (`decide_one`: `authorize`, the service's /v1/authorize) is answered from
a memo of this Authorizer's decisions, which are immutable as its policies and entities are
(a reload builds a new Authorizer), keyed by the principal, the action, the context and the
resource's equivalence class (verifier/authorization/classes.py: resources that no policy can
tell apart get the same decision, by the same policies). Parsing even the few entities of one
request is most of a decision's cost (0.2 of 0.5 ms), and a scheduler asks about thousands of
GPUs that fall into a handful of classes. Only clean decisions are kept (an error's message may
name the entity), and a request whose context names entities is always asked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from verifier.authorization.classes import class_keys, policy_reads
from verifier.authorization.entities import (
    DOMAIN_TYPE,
    HARDWARE_TYPES,
    PARENT_KINDS,
    PRINCIPAL_TYPES,
    AttrValue,
    EntityGraph,
    parse_uid,
    uid,
)
from verifier.authorization.policies import PolicyBundle, short
from verifier.core.cache import code_digest, entry_key, read_pickled, write_pickled
from verifier.core.cache import enabled as cache_enabled
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.exact_json import loads_exact
from verifier.core.frozen import Frozen
from verifier.core.gc_pause import collector_paused
from verifier.core.lazy import lazy_module
from verifier.core.limits import INT64_MAX, INT64_MIN, current_limits

if TYPE_CHECKING:
    import cedarpy
else:
    cedarpy = lazy_module("cedarpy")  # imported by the first question the cache cannot answer

ACTIONS = ("schedule", "reserve", "drain", "administer")
BATCH = 5000
"""Requests per cedarpy batch call: bounds the JSON built at once for a big audit."""
DECISIONS = "decisions"
"""The cache entry kind of one batch's decisions (verifier.core.cache)."""
VALID = "entities-valid"
"""The cache entry kind of entity shapes the schema accepted."""
CACHED_DOCUMENT = 1 << 20
"""Entity documents up to this many characters have their batch's decisions kept (small runs)."""
MEMO = 65_536
"""Decisions `decide_one` keeps per Authorizer; when full it starts over (a bound on memory, never on answers)."""

_POLICY_IN_ERROR = re.compile(r"policy `([^`]*)`")
_VALUE_CHECKED = re.compile(r"\b(?:enum|ipaddr|decimal|datetime|duration)\b")
"""Schema words under which validity may depend on an entity's id or a string's text."""

Context = Mapping[str, object]


@dataclass(frozen=True, repr=False, eq=False)
class Request(Frozen):
    principal: str  # uid, e.g. User::"alice"
    action: str  # schedule, reserve, drain or administer
    resource: str  # uid
    context: Context = field(default_factory=dict)

    def to_cedar(self) -> dict[str, object]:
        return {
            "principal": _structured(self.principal),
            "action": _structured(f'Action::"{self.action}"'),
            "resource": _structured(self.resource),
            "context": dict(self.context),
        }


def _structured(text: str) -> object:
    """A uid as cedarpy takes it without parsing: {"type": .., "id": ..}. cedarpy parses a uid given as
    text with Cedar's whole grammar, a lexer built per uid (three per request: two thirds of the
    instructions of a shipped example's decisions); the same entity given by type and id is not
    parsed as a uid. Only a uid without escapes: its id between the quotes is the id Cedar reads there. Any
    other text (escaped, or no uid as `uid` writes it) goes as written, for Cedar to read or refuse.
    """
    if "\\" in text:
        return text
    parsed = parse_uid(text)
    if parsed is None:
        return text
    return {"type": parsed[0], "id": parsed[1]}


@dataclass(frozen=True, repr=False, eq=False)
class Decision(Frozen):
    allowed: bool
    reasons: tuple[str, ...]  # ids of the policies that decided it (sorted)
    errors: tuple[tuple[str, str], ...] = ()  # (policy id or "", short message); any error means Deny

    @property
    def word(self) -> str:
        return "ALLOW" if self.allowed else "DENY"


class Authorizer:
    """Decides requests against one policy bundle and one entity graph; counts what it asked."""

    def __init__(self, bundle: PolicyBundle, graph: EntityGraph) -> None:
        self.bundle = bundle
        self.graph = graph
        self.named = bundle.observed.named
        self._ancestor_attrs: Mapping[str, AttrValue] | None = None
        """Attributes that stand in for an ancestor's own in a batch's entities (EntityGraph.closure):
        the stand-ins' values, once the schema accepted them; None: every entity's own."""
        self._validate()
        self.requests = 0
        self.calls = 0
        self.memo_hits = 0
        self._memo: dict[tuple[object, ...], Decision] = {}
        self._class_of: Callable[[list[str]], list[tuple[object, ...]]] | None = None

    def _validate(self) -> None:
        """Refuse entities that do not match the schema, as cedarpy would on the whole graph."""
        if not self._stand_ins_suffice():
            self._load(self.graph.to_json())
            return
        document = json.dumps(self._stand_ins(), separators=(",", ":"))
        key = self._key(document)
        if key is not None and read_pickled(VALID, key) is True:
            self._ancestor_attrs = self.graph.probe_attrs()
            return  # the schema accepted these very shapes before
        try:
            cedarpy.Entities.from_json_str(document, self.bundle.schema)
        except ValueError:
            # Refused: the real entities decide (some may not have the refused shape), with
            # cedarpy's own message.
            self._load(self.graph.to_json())
            return
        self._ancestor_attrs = self.graph.probe_attrs()
        if key is not None:
            write_pickled(VALID, key, True)

    def _stand_ins_suffice(self) -> bool:
        if _VALUE_CHECKED.search(self.bundle.schema_shown):
            return False
        for model in self.graph.inv.models.values():
            tflops = model.specs.get("fp64_gflops", 0) // 1000
            if type(tflops) is not int or not INT64_MIN <= tflops <= INT64_MAX:
                return False
        return True

    def _stand_ins(self) -> list[dict[str, object]]:
        """A principal of each shape, and a hardware entity of each type with each kind of parent it can have."""
        graph = self.graph
        # Principals too have one set of attribute types; their shapes differ only in whether
        # the set of teams and the parents are empty. One real principal of each shape.
        shapes_seen: set[tuple[str, bool, bool]] = set()
        out: list[dict[str, object]] = []
        for u in graph.uids_of_type(*PRINCIPAL_TYPES):
            e = graph.entity(u)
            shape = (e.type, bool(e.attrs.get("teams")), bool(e.parents))
            if shape not in shapes_seen:
                shapes_seen.add(shape)
                out.append(e.to_json())
        attrs = graph.probe_attrs()
        shapes: list[tuple[str, tuple[str, ...]]] = [(DOMAIN_TYPE, ())]
        for kind, etype in HARDWARE_TYPES.items():
            for parent in (None, *PARENT_KINDS[kind]):
                base = () if parent is None else (HARDWARE_TYPES[parent],)
                shapes.append((etype, base))
                if kind == "gpu":
                    shapes.append((etype, (*base, DOMAIN_TYPE)))
        for n, (etype, parents) in enumerate(shapes):
            out.append(
                {
                    "uid": {"type": etype, "id": f"topolog-stand-in-{n}"},
                    "attrs": dict(sorted(attrs.items())),
                    "parents": [{"type": t, "id": "topolog-stand-in"} for t in parents],
                }
            )
        return out

    def _load(self, document: str) -> cedarpy.Entities:
        try:
            return cedarpy.Entities.from_json_str(document, self.bundle.schema)
        except ValueError as err:
            raise TopologError.at(
                SourceLocation(str(self.bundle.directory)),
                f"the entities do not match the schema: {short(str(err))}",
            ) from None

    def _document(self, requests: Iterable[Request]) -> str:
        """The Cedar JSON of what a batch's requests can reach, and their ancestors."""
        roots = set(self.named)
        for r in requests:
            roots.add(r.principal)
            roots.add(r.resource)
            roots.update(_context_uids(r.context))
        return json.dumps(self.graph.closure(roots, self._ancestor_attrs), separators=(",", ":"))

    def _key(self, *parts: str) -> str | None:
        """A cache key for an answer that depends on this bundle and on `parts` alone (None: no cache)."""
        if not self.bundle.digest or not cache_enabled():
            return None
        code = code_digest("verifier.authorization", ("evaluate.py", "policies.py", "entities.py"))
        return entry_key(code, (self.bundle.digest, *parts))

    def decide(self, requests: Sequence[Request]) -> list[Decision]:
        with collector_paused():
            return self._decide(requests)

    def _decide(self, requests: Sequence[Request]) -> list[Decision]:
        out: list[Decision | None] = [None] * len(requests)
        todo: list[int] = []
        for i, r in enumerate(requests):
            missing = [u for u in (r.principal, r.resource) if u not in self.graph.entities]
            if missing:
                out[i] = Decision(False, (), tuple(("", f"{u} is not an entity of this inventory") for u in missing))
            elif r.action not in ACTIONS:
                out[i] = Decision(False, (), (("", f"unknown action {r.action!r}"),))
            else:
                todo.append(i)
        for start in range(0, len(todo), BATCH):
            chunk = todo[start : start + BATCH]
            asked = [requests[i].to_cedar() for i in chunk]
            for i, d in zip(chunk, self._batch(self._document(requests[i] for i in chunk), asked), strict=True):
                out[i] = d
            self.calls += 1
            self.requests += len(chunk)
        return [d for d in out if d is not None]

    def _batch(self, document: str, asked: list[dict[str, object]]) -> list[Decision]:
        """Cedar's decisions on `asked` with the entities of `document`.

        A small run (a CI gate, one `authorize`) asks the same batch run after run: the answer
        is kept in the cache, named by all that decides it (the policies and schema, the
        entities and the requests as Cedar is given them, cedarpy's build and this code), so a
        repeated run asks nothing and does not import cedarpy. A fleet's batches are not kept.
        """
        kept_here = len(document) <= CACHED_DOCUMENT and cache_enabled()
        key = self._key(document, json.dumps(asked, sort_keys=True)) if kept_here else None
        kept = read_pickled(DECISIONS, key) if key is not None else None
        if isinstance(kept, list) and len(kept) == len(asked) and all(isinstance(d, Decision) for d in kept):
            return kept
        results = cedarpy.is_authorized_batch(asked, self.bundle.policy_set, self._load(document), self.bundle.schema)
        decisions = [_decision(res) for res in results]
        if key is not None:
            write_pickled(DECISIONS, key, decisions)
        return decisions

    def decide_one(self, request: Request) -> Decision:
        """The decision on one request: Cedar's on it, or the one it gave an equivalent request before."""
        key = self._memo_key(request)
        if key is not None:
            found = self._memo.get(key)
            if found is not None:
                self.memo_hits += 1
                return found
        decided = self.decide([request])[0]
        if key is not None and not decided.errors:
            if len(self._memo) >= MEMO:
                self._memo.clear()
            self._memo[key] = decided
        return decided

    def _memo_key(self, request: Request) -> tuple[object, ...] | None:
        """What decides `request` (see the module's docstring); None: not kept, asked every time."""
        entities = self.graph.entities
        if request.action not in ACTIONS or request.principal not in entities or request.resource not in entities:
            return None  # denied before Cedar is asked, saying why
        if next(_context_uids(request.context), None) is not None:
            return None  # an entity in the context may be compared with the resource itself
        if self._class_of is None:
            self._class_of = class_keys(self.graph, policy_reads(self.bundle))
        try:
            context = json.dumps(request.context, sort_keys=True, separators=(",", ":"))
        except (TypeError, ValueError):  # not JSON's values: Cedar is asked, and says what it makes of them
            return None
        (resource_class,) = self._class_of([request.resource])
        return (request.principal, request.action, resource_class, context)


def _context_uids(context: object) -> Iterator[str]:
    """Whatever in a context may name an entity: `{"type": .., "id": ..}` (bare or under
    `__entity`) and text such as `Gpu::"x"`. Too many is harmless: they only join the batch.
    """
    stack = [context]
    while stack:
        v = stack.pop()
        if isinstance(v, Mapping):
            etype, eid = v.get("type"), v.get("id")
            if isinstance(etype, str) and isinstance(eid, str):
                yield uid(etype, eid)
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            stack.extend(v)
        elif isinstance(v, str) and "::" in v:
            yield v


def _decision(res: cedarpy.AuthzResult) -> Decision:
    diag = res.diagnostics
    errors = tuple(sorted({(_policy_of(e), short(e)) for e in diag.errors}))
    reasons = tuple(sorted(diag.reasons))
    # Fail closed: cedarpy answers Allow when an erroring forbid was skipped, and NoDecision
    # when the request itself is invalid; only a clean Allow is an Allow.
    allowed = res.decision == cedarpy.Decision.Allow and not errors
    return Decision(allowed, reasons, errors)


def _policy_of(message: str) -> str:
    m = _POLICY_IN_ERROR.search(message)
    return m.group(1) if m else ""


def parse_context(text: str) -> dict[str, object]:
    """A request context given as JSON text on the command line; ValueError with a short reason (the
    caller names the flag, as a location).
    """
    try:
        value = loads_exact(text, parse_int=_long)
    except json.JSONDecodeError as err:
        raise ValueError(f"not JSON: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise ValueError(
            f"JSON nested deeper than it can be read; expected at most nesting_depth = "
            f"{current_limits().nesting_depth} levels"
        ) from None
    if not isinstance(value, dict):
        raise ValueError('expected a JSON object such as {"incident": true}')
    return value


def _long(digits: str) -> int:
    value = int(digits) if len(digits) <= 20 else None
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(
            f"{digits} does not fit in 64 bits (a Cedar Long); "
            f"expected a whole number between {INT64_MIN} and {INT64_MAX}"
        )
    return value
