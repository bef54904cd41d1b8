"""Schema-wide policy analysis: answers that hold for every entity the schema allows (issue 44).

The policies and the schema are compiled into SMT formulas (smt_compile, over one symbolic
request per action, principal type and resource type: smt_request) and z3 decides them:

- dead: no request satisfies the policy;
- shadowed (permit): every request that satisfies it satisfies some forbid too;
- redundant: removing it changes no decision (topolog's: allow iff some permit is satisfied,
  no forbid is, and no policy raised an error);
- may-error: some request makes its condition raise (an optional attribute read without
  `has`, Long overflow), with that request as the example;
- compare_policies: requests two policy sets decide differently, one per action and type pair.

What the encoding does not cover raises OutsideAnalysis naming the policy and the construct
(docs/policy-analysis.md lists both); an answer is never given for a policy it could not read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any

from verifier.authorization.analysis.smt_compile import Compiled, compile_policy
from verifier.authorization.analysis.smt_errors import OutsideAnalysis
from verifier.authorization.analysis.smt_request import ENTITY_VARS, Request, string_val
from verifier.authorization.analysis.smt_schema import Schema, read_schema
from verifier.authorization.analysis.smt_show import example, finite_sets, holds
from verifier.authorization.policies import SCHEMA_FILE, PolicyBundle
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import z3
else:
    z3 = lazy_module("z3")

__all__ = ["Difference", "OutsideAnalysis", "SymbolicFinding", "analyse_policies", "compare_policies"]

SMALL_LONG = 1000
"""An example's Longs are kept within +-SMALL_LONG where the formulas allow it (readability)."""

SOLVER_TIMEOUT_MS = 20_000
"""One query's limit: past it the solver answers `unknown`, which is refused, never read as an answer."""


@dataclass(frozen=True)
class SymbolicFinding:
    kind: str
    """"dead" | "shadowed" | "redundant" | "may-error"."""
    policy: str
    related: tuple[str, ...]
    """shadowed: the forbids that shadow it; redundant: the policies deciding instead; sorted."""
    example: str
    """One Cedar-like line: a request that shows it ("" for a dead policy: there is none)."""
    message: str = ""


@dataclass(frozen=True)
class Difference:
    action: str
    principal: str
    resource: str
    context: str
    first: str
    """"allow" | "deny" (any evaluation error denies)."""
    second: str
    first_policies: tuple[str, ...]
    second_policies: tuple[str, ...]


def analyse_policies(bundle: PolicyBundle) -> list[SymbolicFinding]:
    """Dead, shadowed, redundant and may-error policies of `bundle`, over every entity its schema allows."""
    schema = _schema(bundle)
    trees = [_templates(bundle)]
    envs = [_Env.of(req, [bundle], trees) for req in _requests(schema)]
    # One query per request first: where no policy can raise an error, none is asked about it alone.
    where = SourceLocation(str(bundle.directory))
    may_err = {id(e) for e in envs if e.check(where, e.erred(bundle)) is not None}
    findings: list[SymbolicFinding] = []
    for pid in sorted(bundle.policies):
        findings += _policy_findings(bundle, pid, envs, may_err)
    return sorted(findings, key=lambda f: (f.policy, f.kind))


def compare_policies(first: PolicyBundle, second: PolicyBundle) -> list[Difference]:
    """Requests the two sets decide differently, at most one per (action, principal type, resource
    type), sorted; [] when they decide alike for every entity the (shared) schema allows.
    """
    schema = _schema(first)
    if _schema(second) != schema:
        raise TopologError.at(
            SourceLocation(str(second.directory / SCHEMA_FILE)),
            f"the schema differs from {first.directory / SCHEMA_FILE}; policy sets are compared "
            "over one schema (make the two schema files declare the same types, attributes and actions)",
        )
    out: list[Difference] = []
    trees = [_templates(first), _templates(second)]
    for req in _requests(schema):
        env = _Env.of(req, [first, second], trees)
        differ = env.allow(first) != env.allow(second)
        model = env.check(_where(first), differ)
        if model is None:
            continue
        model = env.readable(model, differ)
        ex = example(req, model)
        first_decision, first_policies = _decided(env, first, model)
        second_decision, second_policies = _decided(env, second, model)
        out.append(
            Difference(
                ex.action,
                ex.principal,
                ex.resource,
                ex.context,
                first_decision,
                second_decision,
                first_policies,
                second_policies,
            )
        )
    return sorted(out, key=lambda d: (d.action, d.principal, d.resource))


def _schema(bundle: PolicyBundle) -> Schema:
    return read_schema(bundle.schema_shown, str(bundle.directory / SCHEMA_FILE))


def _where(bundle: PolicyBundle) -> SourceLocation:
    return SourceLocation(str(bundle.directory))


def _requests(schema: Schema) -> list[Request]:
    return [Request(schema, action, p, r) for action, p, r in schema.requests()]


@dataclass
class _Env:
    """One symbolic request with every policy of some bundles compiled over it, and its solver."""

    req: Request
    compiled: dict[tuple[int, str], Compiled]
    """(bundle index, policy id) of the policies whose scope can match this request."""
    bundles: list[PolicyBundle]
    solver: Any
    memo: dict[tuple[str, int, str], Any] = field(default_factory=dict)
    """Decision formulas already built (z3 terms are built in Python: slow enough to keep)."""

    @staticmethod
    def of(req: Request, bundles: list[PolicyBundle], trees: list[dict[str, Any]]) -> _Env:
        compiled: dict[tuple[int, str], Compiled] = {}
        for i, bundle in enumerate(bundles):
            templates = trees[i]
            for pid in sorted(bundle.policies):
                c = compile_policy(templates[pid], req, pid, bundle.policies[pid].loc)
                if c is not None:
                    compiled[(i, pid)] = c
        solver = z3.Solver()
        solver.set("timeout", SOLVER_TIMEOUT_MS)
        solver.add(*req.constraints())
        return _Env(req, compiled, bundles, solver)

    def policies(
        self, bundle: PolicyBundle, effect: str | None = None, leave_out: str = ""
    ) -> list[tuple[str, Compiled]]:
        i = self.bundles.index(bundle)
        return [
            (pid, c)
            for (j, pid), c in sorted(self.compiled.items())
            if j == i and pid != leave_out and (effect is None or bundle.policies[pid].effect == effect)
        ]

    def sat(self, bundle: PolicyBundle, pid: str) -> Any:
        c = self.compiled.get((self.bundles.index(bundle), pid))
        return c.sat if c is not None else z3.BoolVal(False)

    def forbidden(self, bundle: PolicyBundle, leave_out: str = "") -> Any:
        key = ("forbidden", self.bundles.index(bundle), leave_out)
        if key not in self.memo:
            self.memo[key] = z3.Or(z3.BoolVal(False), *[c.sat for _, c in self.policies(bundle, "forbid", leave_out)])
        return self.memo[key]

    def erred(self, bundle: PolicyBundle, leave_out: str = "") -> Any:
        key = ("erred", self.bundles.index(bundle), leave_out)
        if key not in self.memo:
            self.memo[key] = z3.Or(z3.BoolVal(False), *[c.err for _, c in self.policies(bundle, None, leave_out)])
        return self.memo[key]

    def allow(self, bundle: PolicyBundle, leave_out: str = "") -> Any:
        """Topolog's decision: some permit satisfied, no forbid satisfied, no policy raising an error."""
        key = ("allow", self.bundles.index(bundle), leave_out)
        if key not in self.memo:
            permitted = z3.Or(z3.BoolVal(False), *[c.sat for _, c in self.policies(bundle, "permit", leave_out)])
            forbidden, erred = self.forbidden(bundle, leave_out), self.erred(bundle, leave_out)
            self.memo[key] = z3.And(permitted, z3.Not(forbidden), z3.Not(erred))
        return self.memo[key]

    def check(self, where: SourceLocation, *formulas: Any) -> Any:
        """A model of the formulas with the schema's constraints, or None when there is none."""
        self.solver.push()
        try:
            self.solver.add(*formulas)
            result = self.solver.check()
            if result == z3.unknown:
                raise TopologError.at(
                    where,
                    f"the solver could not decide a query for {self.req.action.uid} on "
                    f"{self.req.principal}/{self.req.resource} ({self.solver.reason_unknown()}); "
                    "nonlinear Long arithmetic (a product of two attributes) is the usual cause",
                )
            return self.solver.model() if result == z3.sat else None
        finally:
            self.solver.pop()

    def readable(self, model: Any, *formulas: Any) -> Any:
        """A model of `formulas` as a person would write the request: each entity id `user0`,
        `gpu0` ... (by type) where the formulas leave it free, strings in printable ASCII, Longs
        within +-SMALL_LONG, then every set pinned finite (what the example shows is then the
        whole set). Each pin is kept only where the formulas still hold with it; `model` is
        returned as it is where none does.
        """
        hints: list[Any] = []
        counts: dict[str, int] = {}
        entity_ids = [(self.req.type_of(v), self.req.id(v)) for v in ENTITY_VARS]
        entity_ids += [(r.type.name, r.value) for _, r in sorted(self.req.reads.items()) if r.type.kind == "Entity"]
        for type_name, term in entity_ids:
            if self.req.schema.entities[type_name].enum is None:
                n = counts.get(type_name, 0)
                counts[type_name] = n + 1
                hints.append(term == string_val(f"{type_name.rpartition('::')[2].lower()}{n}"))
        strings = [r.value for _, r in sorted(self.req.reads.items()) if r.type.kind == "String"]
        if strings:  # printable ASCII where the formulas allow it
            printable = z3.Star(z3.Range(" ", "~"))
            hints.append(z3.And(*[z3.InRe(v, printable) for v in strings]))
        for _, r in sorted(self.req.reads.items()):
            if r.type.kind == "Long":  # a small number where the formulas allow one
                hints.append(z3.And(r.value >= -SMALL_LONG, r.value <= SMALL_LONG))
        hints.append(None)  # the sets, pinned from the model found by then
        self.solver.push()
        depth = 1
        try:
            self.solver.add(*formulas)
            for hint in hints:
                self.solver.push()
                self.solver.add(hint if hint is not None else finite_sets(self.req, model))
                result = self.solver.check()
                if result == z3.sat:
                    model = self.solver.model()
                    depth += 1
                else:
                    self.solver.pop()
            return model
        finally:
            for _ in range(depth):
                self.solver.pop()


def _templates(bundle: PolicyBundle) -> dict[str, Any]:
    """The syntax tree of each policy of `bundle`, by id."""
    return dict(bundle.policy_set.to_pst().static_policies)


def _decided(env: _Env, bundle: PolicyBundle, model: Any) -> tuple[str, tuple[str, ...]]:
    """The decision of `bundle` in `model`, and what decided it: the satisfied permits (allow),
    the satisfied forbids, else the policies that raised an error, else none (no permit: deny).
    """

    def holds_(x: Any) -> bool:
        return holds(model, x)

    if holds_(env.allow(bundle)):
        return "allow", tuple(pid for pid, c in env.policies(bundle, "permit") if holds_(c.sat))
    forbids = tuple(pid for pid, c in env.policies(bundle, "forbid") if holds_(c.sat))
    if forbids:
        return "deny", forbids
    return "deny", tuple(pid for pid, c in env.policies(bundle) if holds_(c.err))


def _policy_findings(bundle: PolicyBundle, pid: str, envs: list[_Env], may_err: set[int]) -> list[SymbolicFinding]:
    policy = bundle.policies[pid]
    where = policy.loc
    mine = [e for e in envs if (0, pid) in e.compiled]
    out: list[SymbolicFinding] = []
    err = _first([e for e in mine if id(e) in may_err], where, lambda e: [e.compiled[(0, pid)].err])
    if err is not None:
        env, shown = err
        out.append(
            SymbolicFinding(
                "may-error",
                pid,
                (),
                example(env.req, shown.model).line(),
                _raised(env.compiled[(0, pid)], shown.model),
            )
        )
    if not mine:
        return [
            *out,
            SymbolicFinding(
                "dead", pid, (), "", "its scope matches no action with principal and resource types the schema allows"
            ),
        ]
    live = _first(mine, where, lambda e: [e.sat(bundle, pid), z3.Not(e.forbidden(bundle))])
    if live is None:
        satisfied = _first(mine, where, lambda e: [e.sat(bundle, pid)])
        if satisfied is None:
            return [*out, SymbolicFinding("dead", pid, (), "", "no request the schema allows satisfies its conditions")]
        if policy.effect == "permit":
            env, shown = satisfied
            shadows = _overlapping(bundle, pid, mine, "forbid")
            message = f"every request it permits is forbidden by {', '.join(shadows)}"
            return [*out, SymbolicFinding("shadowed", pid, shadows, example(env.req, shown.model).line(), message)]
        live = satisfied  # a forbid: satisfied where another forbid is too, yet it may still be redundant
    if _first(mine, where, lambda e: [e.allow(bundle) != e.allow(bundle, leave_out=pid)]) is None:
        env, shown = live
        related = _overlapping(bundle, pid, mine, policy.effect)
        if policy.effect == "permit":
            message = "every request it allows is allowed without it"
        else:
            message = (
                "every request it forbids is denied without it (no permit allows it, or another forbid also applies)"
            )
        out.append(SymbolicFinding("redundant", pid, related, example(env.req, shown.model).line(), message))
    return out


def _first(envs: Iterable[_Env], where: SourceLocation, formulas: Any) -> tuple[_Env, _Shown] | None:
    """The first request (in schema order) with a model of `formulas(env)`, and that model (made
    readable: `_Env.readable`, where shown).
    """
    for env in envs:
        model = env.check(where, *formulas(env))
        if model is not None:
            return env, _Shown(env, model, formulas(env))
    return None


@dataclass
class _Shown:
    """A model found by `_first`, made readable only when an example is shown from it."""

    env: _Env
    found: Any
    formulas: list[Any]

    @cached_property
    def model(self) -> Any:
        return self.env.readable(self.found, *self.formulas)


def _overlapping(bundle: PolicyBundle, pid: str, envs: list[_Env], effect: str) -> tuple[str, ...]:
    """Other policies of `effect` satisfied together with `pid` by some request, sorted."""
    found: set[str] = set()
    where = bundle.policies[pid].loc
    for env in envs:
        for other, c in env.policies(bundle, effect):
            if other != pid and other not in found and env.check(where, env.sat(bundle, pid), c.sat) is not None:
                found.add(other)
    return tuple(sorted(found))


def _raised(c: Compiled, model: Any) -> str:
    """What raises in `model`: the first error, in Cedar's evaluation order, whose condition holds."""
    for what, cond in c.errors:
        if holds(model, cond):
            return what
    return "an error"
