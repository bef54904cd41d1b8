"""One request as a user writes it (`--principal alice --resource dgx00/gpu0`), resolved and decided."""

from __future__ import annotations

from dataclasses import dataclass

from verifier.authorization.entities import HARDWARE_TYPES, PRINCIPAL_TYPES, RESOURCE_TYPES, uid
from verifier.authorization.evaluate import Decision, Request
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.suggest import did_you_mean, look_alike_hint

ENTITY_TYPES = (*PRINCIPAL_TYPES, *RESOURCE_TYPES)
"""The entity types of a request's principal and resource (policies/schema.cedarschema)."""


def _bad(message: str, where: str = "<request>") -> TopologError:
    return TopologError.at(SourceLocation(where), message)


@dataclass(frozen=True)
class AuthorizeReport:
    """A decision with what is needed to say why: each deciding policy's effect."""

    request: Request
    decision: Decision
    effects: dict[str, str]
    """permit / forbid, per policy id among the decision's reasons."""

    @property
    def exit_code(self) -> int:
        return 0 if self.decision.allowed else 1


def decide(
    setup: AuthzSetup, principal: str, action: str, resource: str, context: dict[str, object]
) -> AuthorizeReport:
    """Resolve the names, ask Cedar once (TopologError for a name that is nowhere or a request off the schema)."""
    request = Request(resolve(setup, principal, "principal"), action, resolve(setup, resource, "resource"), context)
    d = setup.authorizer.decide_one(request)
    invalid = [m for p, m in d.errors if not p and m.startswith("failed to build request")]
    if invalid:
        raise _bad(f"the request does not match the schema: {invalid[0]}", "--context")
    return AuthorizeReport(request, d, {r: setup.bundle.effect(r) for r in d.reasons})


def resolve(setup: AuthzSetup, text: str, role: str) -> str:
    """`Type::"id"` as written, or a bare id: a principal id or an inventory object id."""
    entities = setup.graph.entities
    if "::" in text:
        etype, _, rest = text.partition("::")
        if etype not in ENTITY_TYPES:
            # `gpu::"x"`: no entity of any type has that uid; say which types there are, not "no such entity".
            raise _bad(
                f"--{role} {text}: {etype!r} is no entity type; expected one of: {', '.join(ENTITY_TYPES)}"
                f"{did_you_mean(etype, ENTITY_TYPES)}"
            )
        eid = rest[1:-1] if len(rest) >= 2 and rest[0] == rest[-1] == '"' else rest
        candidate = uid(etype, eid)
        if candidate not in entities:
            raise _bad(f"--{role} {text}: no such entity in the inventory and principals file")
        return candidate
    if role == "principal":
        p = setup.principals.principals.get(text)
        if p is None:
            # A look-alike of a known id (a Cyrillic a in ivan) is named with its odd letter. Not the
            # nearest by difflib, as the jobs' loader gives: `serve` decides each request of a batch
            # here, and that comparison with every principal (about 3 ms each at 1,000 principals)
            # made a batch of a few hundred unknown names run past --authorize-timeout, denying its
            # known principals' requests with them. The look-alike test is one pass, for a non-ASCII
            # name only.
            hint = look_alike_hint(text, setup.principals.principals)
            raise _bad(f"--principal {text!r} is not in {setup.principals.file}{hint}")
        return p.uid
    obj = setup.inventory.objects.get(text)
    if obj is not None and obj.kind in HARDWARE_TYPES:
        return uid(HARDWARE_TYPES[obj.kind], obj.id)
    domain = uid("NvlinkDomain", text)
    if domain in entities and obj is None:
        return domain
    raise _bad(
        f"--resource {text!r} is not a GPU, node, rack or pod of the inventory "
        '(or write the uid, e.g. NvlinkDomain::"dgx00/gpu0")'
    )
