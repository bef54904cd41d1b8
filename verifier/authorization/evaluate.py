"""Evaluate requests with cedarpy, failing closed.

cedarpy 4.12.2 fails open in two ways that topolog closes:
- a `forbid` whose condition errors (an overflow, a missing attribute) is skipped, and a
  permit that matched still yields Allow: here any evaluation error makes the answer Deny,
  with the error kept (and reported as a finding);
- a request naming an entity that is not in the entity set is evaluated anyway (`in` just
  never matches, so a forbid scoped to a team can miss): here such a request is Deny with
  the reason, and callers that take input from users refuse it before asking (exit 2).

The PolicySet, Entities and Schema handles are parsed once and reused for every batch:
cedarpy's batch call then only parses the requests.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import cedarpy

from verifier.authorization.entities import EntityGraph
from verifier.authorization.policies import PolicyBundle, short
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.exact_json import loads_exact
from verifier.core.limits import INT64_MAX, INT64_MIN, current_limits

ACTIONS = ("schedule", "reserve", "drain", "administer")
BATCH = 5000
"""Requests per cedarpy batch call: bounds the JSON built at once for a big audit."""

_POLICY_IN_ERROR = re.compile(r"policy `([^`]*)`")

Context = Mapping[str, object]


@dataclass(frozen=True)
class Request:
    principal: str  # uid, e.g. User::"alice"
    action: str  # schedule, reserve, drain or administer
    resource: str  # uid
    context: Context = field(default_factory=dict)

    def to_cedar(self) -> dict[str, object]:
        return {
            "principal": self.principal,
            "action": f'Action::"{self.action}"',
            "resource": self.resource,
            "context": dict(self.context),
        }


@dataclass(frozen=True)
class Decision:
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
        try:
            self.entities = cedarpy.Entities.from_json_str(graph.to_json(), bundle.schema)
        except ValueError as err:
            raise TopologError.at(
                SourceLocation(str(bundle.directory)),
                f"the entities do not match the schema: {short(str(err))}",
            ) from None
        self.requests = 0
        self.calls = 0

    def decide(self, requests: Sequence[Request]) -> list[Decision]:
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
            results = cedarpy.is_authorized_batch(
                [requests[i].to_cedar() for i in chunk], self.bundle.policy_set, self.entities, self.bundle.schema
            )
            self.calls += 1
            self.requests += len(chunk)
            for i, res in zip(chunk, results, strict=True):
                out[i] = _decision(res)
        return [d for d in out if d is not None]

    def decide_one(self, request: Request) -> Decision:
        return self.decide([request])[0]


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
    """A request context given as JSON text on the command line; ValueError with a short reason."""
    try:
        value = loads_exact(text, parse_int=_long)
    except json.JSONDecodeError as err:
        raise ValueError(f"--context is not JSON: {err.msg} at column {err.colno}") from None
    except RecursionError:
        raise ValueError(
            f"JSON nested deeper than it can be read; expected at most nesting_depth = "
            f"{current_limits().nesting_depth} levels"
        ) from None
    if not isinstance(value, dict):
        raise ValueError('--context must be a JSON object such as {"incident": true}')
    return value


def _long(digits: str) -> int:
    value = int(digits) if len(digits) <= 20 else None
    if value is None or not INT64_MIN <= value <= INT64_MAX:
        raise ValueError(
            f"{digits} does not fit in 64 bits (a Cedar Long); "
            f"expected a whole number between {INT64_MIN} and {INT64_MAX}"
        )
    return value
