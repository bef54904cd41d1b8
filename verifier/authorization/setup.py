"""Everything one authorization question needs, built from the inventory once.

The entities come from the inventory and its NVLink domains, found by union-find over the
scale-up links (verifier.facts.graph.scaleup_domains, held equal to the rules'
`nvlink_domain` by a test), so authorizing never waits for a rule to be evaluated.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.authorization.entities import PRINCIPAL_TYPES, EntityGraph, build_graph, uid
from verifier.authorization.evaluate import Authorizer, Request
from verifier.authorization.policies import PolicyBundle, load_policies
from verifier.core.errors import SourceLocation, TopologError
from verifier.facts.graph import scaleup_domains
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals, load_principals


@dataclass
class AuthzSetup:
    inventories: tuple[str, ...]
    inventory: Inventory
    bundle: PolicyBundle
    principals: Principals
    graph: EntityGraph
    authorizer: Authorizer

    def denying(self, principal: str, gpus: Sequence[str]) -> tuple[str, ...]:
        """The policies that deny `principal` (an id of the principals file) scheduling on some of `gpus`.

        "(no permit)" stands for a default deny; () when the principal is unknown.
        """
        who = next((e.uid for e in self.graph.of_type(*PRINCIPAL_TYPES) if e.id == principal), None)
        if who is None:
            return ()
        found: set[str] = set()
        for d in self.authorizer.decide([Request(who, "schedule", uid("Gpu", g)) for g in gpus]):
            if not d.allowed:
                found.update(d.reasons or ("(no permit)",))
        return tuple(sorted(found))


def build_setup(
    inventory: Inventory, inventory_paths: Sequence[Path], policy_dir: Path, principals: Principals
) -> AuthzSetup:
    """Policies loaded and validated, entities built from `inventory`, one reusable authorizer."""
    bundle = load_policies(policy_dir)
    domains = [(str(g), str(d)) for g, d in scaleup_domains(inventory)]
    graph = build_graph(inventory, domains, principals)
    return AuthzSetup(
        tuple(str(p) for p in inventory_paths), inventory, bundle, principals, graph, Authorizer(bundle, graph)
    )


def require_principals(path: Path | None, inventory_paths: Sequence[Path], why: str = "") -> Principals:
    """The principals file loaded; TopologError naming where it was looked for when there is none."""
    if path is None:
        where = Path(inventory_paths[0]).parent if inventory_paths else Path(".")
        raise TopologError.at(
            SourceLocation(str(where)),
            f"no principals file{why}: put principals.yml next to the inventory or pass --principals FILE",
        )
    return load_principals(path)
