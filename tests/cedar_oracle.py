"""Cedar itself (cedarpy) as the judge of the schema-wide analysis' examples.

An example line (`principal User::"u" {tenant: "a"} in [Group::"g"], action Action::"x",
resource Gpu::"r" {gpus: 3}, context {incident: true}`) is read back into a cedarpy request and
entity list, and evaluated: a may-error example must make Cedar report an error for that
policy, and a compare counterexample must get the two decisions the analysis reported
(topolog's: allow iff Cedar allows and no policy raised an error). Cedar is given the schema,
so each example must also be a request and entities the schema allows (else the check fails
on Cedar's "failed to build request" / "failed to parse entities"). An example shows only the
attributes the policies read, and any value will do for the other required ones (`has` on a
required attribute is true whatever its value): each is given the first value of its type
(0, "", false, [], an entity of its type).
"""

from __future__ import annotations

import json
import re
from typing import Any

import cedarpy

from verifier.authorization.analysis.smt_schema import Attr, Schema, Type, read_schema
from verifier.authorization.analysis.symbolic import Difference, SymbolicFinding, analyse_policies, compare_policies
from verifier.authorization.policies import PolicyBundle

_TOKEN = re.compile(r'\s+|"(?:\\.|[^"\\])*"|-?\d+|[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*(?:::)?|.')


class _Reader:
    def __init__(self, line: str) -> None:
        self.tokens = [t for t in _TOKEN.findall(line) if not t.isspace()]
        self.pos = 0
        self.others: list[dict[str, Any]] = []

    def peek(self) -> str:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else ""

    def take(self, expected: str | None = None) -> str:
        tok = self.peek()
        assert tok and (expected is None or tok == expected), (expected, tok, self.tokens)
        self.pos += 1
        return tok

    def uid(self) -> dict[str, str]:
        head = self.take()
        assert head.endswith("::"), head
        return {"type": head[:-2], "id": json.loads(self.take())}

    def value(self) -> Any:
        tok = self.peek()
        if tok.startswith('"'):
            return json.loads(self.take())
        if tok in ("true", "false"):
            return self.take() == "true"
        if tok == "[":
            self.take()
            items = []
            while self.peek() != "]":
                items.append(self.value())
                if self.peek() == ",":
                    self.take()
            self.take("]")
            return items
        if tok.endswith("::"):
            uid = self.uid()
            if self.peek() == "in":  # an entity reached through an attribute, with its parents
                self.take()
                self.others.append({"uid": uid, "attrs": {}, "parents": [v["__entity"] for v in self.value()]})
            return {"__entity": uid}
        return int(self.take())

    def record(self) -> dict[str, Any]:
        self.take("{")
        out: dict[str, Any] = {}
        while self.peek() != "}":
            key = self.take()
            key = json.loads(key) if key.startswith('"') else key
            self.take(":")
            out[key] = self.value()
            if self.peek() == ",":
                self.take()
        self.take("}")
        return out

    def entity(self) -> dict[str, Any]:
        uid = self.uid()
        attrs = self.record()
        parents: list[dict[str, str]] = []
        if self.peek() == "in":
            self.take()
            parents = [v["__entity"] for v in self.value()]
        return {"uid": uid, "attrs": attrs, "parents": parents}


def request_of(line: str, bundle: PolicyBundle) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cedarpy request and entities an example line stands for."""
    r = _Reader(line)
    r.take("principal")
    principal = r.entity()
    r.take(",")
    r.take("action")
    action = r.uid()
    r.take(",")
    r.take("resource")
    resource = r.entity()
    r.take(",")
    r.take("context")
    context = r.record()
    assert r.peek() == "", r.tokens[r.pos :]
    # One entity in several places (principal and resource, an attribute's entity): the
    # example shows each place's reads and parents; it is one entity.
    merged: dict[str, dict[str, Any]] = {}
    for e in [principal, resource, *r.others]:
        key = json.dumps(e["uid"], sort_keys=True)
        if key in merged:
            merged[key]["attrs"] = {**e["attrs"], **merged[key]["attrs"]}
            parents = {json.dumps(p, sort_keys=True) for p in merged[key]["parents"] + e["parents"]}
            merged[key]["parents"] = [json.loads(p) for p in sorted(parents)]
        else:
            merged[key] = e
    entities = list(merged.values())
    schema = read_schema(bundle.schema_shown, "schema")
    for e in entities:
        declared = schema.entities[e["uid"]["type"]].attrs
        e["attrs"] = {**_required(declared, schema), **e["attrs"]}
    if action_uid := schema.actions.get(_text(action)):
        context = {**_required(action_uid.context, schema), **context}
    request = {
        "principal": _text(principal["uid"]),
        "action": _text(action),
        "resource": _text(resource["uid"]),
        "context": context,
    }
    return request, entities


def _required(attrs: dict[str, Attr], schema: Schema) -> dict[str, Any]:
    return {name: _any(a.type, schema) for name, a in sorted(attrs.items()) if a.required}


def _any(t: Type, schema: Schema) -> Any:
    """Some value of type `t` (what an attribute nobody reads holds)."""
    if t.kind == "Record":
        return _required(dict(t.attrs), schema)
    if t.kind == "Entity":
        enum = schema.entities[t.name].enum
        return {"__entity": {"type": t.name, "id": enum[0] if enum else "any"}}
    if t.kind == "Extension":
        arg = {"ipaddr": "0.0.0.0", "decimal": "0.0", "datetime": "1970-01-01", "duration": "0ms"}[t.name]
        return {"__extn": {"fn": t.name, "arg": arg}}
    return {"Long": 0, "String": "", "Bool": False, "Set": []}[t.kind]


def _uid(text: str) -> dict[str, str]:
    head, _, quoted = text.rpartition("::")
    return {"type": head, "id": json.loads(quoted)}


def _text(uid: dict[str, str]) -> str:
    return f"{uid['type']}::{json.dumps(uid['id'])}"


def evaluate(line: str, bundle: PolicyBundle, leave_out: str = "", only: str = "") -> tuple[str, list[str], int]:
    """Topolog's decision on the example (allow iff Cedar allows and nothing raised), Cedar's
    errors, and how many policies Cedar found satisfied; over the bundle's policies, less
    `leave_out`, or `only` that one.
    """
    request, entities = request_of(line, bundle)
    chosen = [p.text for pid, p in sorted(bundle.policies.items()) if pid != leave_out and only in ("", pid)]
    result = cedarpy.is_authorized(request, "\n".join(chosen), entities, bundle.schema_text)
    errors = [str(e) for e in result.diagnostics.errors]
    refused = [e for e in errors if e.startswith(("failed to build request", "failed to parse entities"))]
    assert not refused, f"the example is no request the schema allows: {line}: {refused}"
    allowed = result.decision == cedarpy.Decision.Allow and not errors
    return ("allow" if allowed else "deny"), errors, len(result.diagnostics.reasons)


def check_findings(bundle: PolicyBundle, findings: list[SymbolicFinding]) -> None:
    """Each example, evaluated by Cedar, shows what its finding says:
    may-error: Cedar raises on that policy; shadowed: the permit alone allows, the whole set
    denies; redundant: the policy is satisfied, and the set decides alike without it.
    """
    for f in findings:
        if f.kind == "may-error":
            _, errors, _ = evaluate(f.example, bundle, only=f.policy)
            assert errors, f"{f.policy}: Cedar raises nothing on the example {f.example}"
        elif f.kind == "shadowed":
            assert evaluate(f.example, bundle, only=f.policy)[0] == "allow", f
            assert evaluate(f.example, bundle)[0] == "deny", f
        elif f.kind == "redundant":
            _, errors, satisfied = evaluate(f.example, bundle, only=f.policy)
            assert satisfied == 1 and not errors, f
            assert evaluate(f.example, bundle)[0] == evaluate(f.example, bundle, leave_out=f.policy)[0], f
        else:
            assert f.kind == "dead" and f.example == "", f


def check_differences(first: PolicyBundle, second: PolicyBundle, diffs: list[Difference]) -> None:
    """Every counterexample gets, from Cedar on each set, the decision the analysis reported."""
    for d in diffs:
        line = f"principal {d.principal}, action {d.action}, resource {d.resource}, context {d.context}"
        assert evaluate(line, first)[0] == d.first, (line, d)
        assert evaluate(line, second)[0] == d.second, (line, d)
        assert d.first != d.second


def analysed(bundle: PolicyBundle) -> list[SymbolicFinding]:
    """analyse_policies, with every example checked by Cedar (check_findings)."""
    findings = analyse_policies(bundle)
    check_findings(bundle, findings)
    return findings


def compared(first: PolicyBundle, second: PolicyBundle) -> list[Difference]:
    """compare_policies, with every counterexample checked by Cedar (check_differences)."""
    diffs = compare_policies(first, second)
    check_differences(first, second, diffs)
    return diffs
