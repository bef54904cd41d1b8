"""Everything one authorization question needs, loaded and checked once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from verifier.authorization.entities import EntityGraph, build_graph
from verifier.authorization.evaluate import Authorizer
from verifier.authorization.policies import PolicyBundle, default_policies, load_policies
from verifier.core.errors import SourceLocation, TopologError
from verifier.facts.graph import scaleup_domains
from verifier.session.model import LoadedModel
from verifier.sources.inventory.model import Inventory
from verifier.sources.principals import Principals, load_principals, principals_file_for


@dataclass
class AuthzSetup:
    inventories: tuple[str, ...]
    inventory: Inventory
    bundle: PolicyBundle
    principals: Principals
    graph: EntityGraph
    authorizer: Authorizer


def policies_for(inventory_paths: Sequence[Path]) -> Path:
    """A `policies/` directory next to the first inventory, else the shipped policies."""
    if inventory_paths:
        local = inventory_paths[0].parent / "policies"
        if local.is_dir():
            return local
    return default_policies()


def setup_from_model(
    model: LoadedModel,
    inventory_paths: Sequence[Path],
    policy_dir: Path | None,
    principals_path: Path | None,
) -> AuthzSetup:
    bundle = load_policies(policy_dir or policies_for(inventory_paths))
    path = principals_path or principals_file_for(list(inventory_paths))
    if path is None:
        where = inventory_paths[0].parent if inventory_paths else Path(".")
        raise TopologError.at(
            SourceLocation(str(where)),
            "no principals file: put principals.yml next to the inventory or pass --principals FILE",
        )
    principals = load_principals(path)
    # NVLink domains by union-find over the inventory (graph_facts.scaleup_domains, held equal
    # to the rules' nvlink_domain by a test), so the entities never depend on the rules loaded.
    domains = [(str(g), str(d)) for g, d in scaleup_domains(model.inventory)]
    graph = build_graph(model.inventory, domains, principals)
    return AuthzSetup(
        tuple(str(p) for p in inventory_paths), model.inventory, bundle, principals, graph, Authorizer(bundle, graph)
    )


def load_setup(
    inventory_paths: Sequence[Path],
    policy_dir: Path | None = None,
    principals_path: Path | None = None,
    engine: str = "duckdb",
) -> AuthzSetup:
    """Load the inventory (rules evaluated, for the NVLink domains), policies and principals."""
    from verifier.session.model import load_model

    # authz=False: the model's own authorization facts are not needed to answer a request.
    model = load_model(list(inventory_paths), None, engine, authz=False)
    try:
        return setup_from_model(model, inventory_paths, policy_dir, principals_path)
    finally:
        model.engine.close()
