"""A probe of a policy set: every policy turned into a permit, so one Cedar call names them all.

Cedar's answer to a request lists, in its diagnostics, the policies that determined it: with
only permits in the set, that is every policy whose scope matches and whose conditions hold,
i.e. every policy the request satisfies. Its errors name every policy whose condition raised.
So one request to the probe says, for each policy, whether it is satisfied, errs, or neither:
what the inventory analysis needs, with the effects known from the bundle. A test checks this
against cedarpy (tests/authorization/analysis/test_inventory.py).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from verifier.authorization.evaluate import Authorizer, Request
from verifier.authorization.policies import PolicyBundle
from verifier.core.errors import SourceLocation, TopologError
from verifier.core.lazy import lazy_module

if TYPE_CHECKING:
    import cedarpy

    from verifier.authorization.entities import EntityGraph
else:
    cedarpy = lazy_module("cedarpy")


@dataclass(frozen=True)
class Probed:
    """What one request does to each policy."""

    satisfied: frozenset[str]  # @ids of the policies whose scope and conditions hold
    errored: frozenset[str]  # @ids of the policies whose condition raised an error


def probe_bundle(bundle: PolicyBundle) -> PolicyBundle:
    """`bundle` with each of its policies as a permit (same @id, scope and conditions)."""
    tree = bundle.policy_set.to_pst()
    static = {pid: dataclasses.replace(t, effect="permit") for pid, t in tree.static_policies.items()}
    probe_set = cedarpy.PolicySet.from_pst(
        cedarpy.pst.PolicySet(templates={}, static_policies=static, template_links=())
    )
    # Its own digest: decisions kept in the cache under the bundle's would be the real set's.
    probe = dataclasses.replace(bundle, digest=f"{bundle.digest}:probe" if bundle.digest else "")
    probe.__dict__["schema"] = bundle.schema  # the handles are the bundle's (policies.py does the same)
    probe.__dict__["policy_set"] = probe_set
    return probe


class Prober:
    """Asks the probe of one bundle about requests over one entity graph."""

    def __init__(self, bundle: PolicyBundle, graph: EntityGraph) -> None:
        self.authorizer = Authorizer(probe_bundle(bundle), graph)

    @property
    def requests(self) -> int:
        return self.authorizer.requests

    def probe(self, requests: Sequence[Request]) -> list[Probed]:
        """One `Probed` per request; TopologError when Cedar cannot evaluate a request at all
        (it does not match the schema): the analysis would be incomplete, so it is refused.
        """
        out: list[Probed] = []
        for request, d in zip(requests, self.authorizer.decide(requests), strict=True):
            invalid = [message for policy, message in d.errors if not policy]
            if invalid:
                raise TopologError.at(
                    SourceLocation(str(self.authorizer.bundle.directory)),
                    f"the policy analysis cannot evaluate the request {describe(request)}: {invalid[0]}; "
                    "expected a schema whose actions apply to every principal and resource type topolog builds, "
                    "and whose context accepts the values the policies compare it with",
                )
            out.append(Probed(frozenset(d.reasons), frozenset(p for p, _ in d.errors)))
        return out


def describe(request: Request) -> str:
    """One line, Cedar-like: `User::"alice" schedule Gpu::"n0/gpu0" context {"incident": true}`."""
    context = json.dumps(dict(request.context), sort_keys=True)
    return f"{request.principal} {request.action} {request.resource} context {context}"
