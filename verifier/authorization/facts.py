"""Authorization decisions as Datalog facts, so rules can join them with the topology.

`load_model` calls `authz_facts_hook(paths)`; when a principals file sits next to the first
inventory it returns a function that, given the evaluated model (for its NVLink domains),
asks Cedar once per (principal class, action, GPU class) in the context {} and returns the
rows of the relations below (declared in rules/schema.dl). Without a principals file the
relations stay empty and rules/authz/ reports nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from verifier.authorization.classes import partition, policy_reads
from verifier.authorization.entities import PRINCIPAL_TYPES
from verifier.authorization.evaluate import ACTIONS, Request
from verifier.authorization.setup import AuthzSetup, setup_from_model
from verifier.facts.inventory import Row
from verifier.session.model import LoadedModel
from verifier.sources.principals import principals_file_for

AUTHZ_RELATIONS: frozenset[str] = frozenset({"authz_principal", "member_of", "authz_class", "permitted", "authz_error"})
RELATIONS: dict[str, int] = {
    "authz_principal": 2,
    "member_of": 2,
    "authz_class": 2,
    "permitted": 3,
    "authz_error": 5,
}
"""Every relation emitted, with its arity (a test checks this against rules/schema.dl)."""

FactHook = Callable[[LoadedModel], dict[str, list[Row]]]


def authz_facts_hook(inventory_paths: Sequence[Path]) -> FactHook | None:
    principals = principals_file_for(list(inventory_paths))
    if principals is None:
        return None
    paths = list(inventory_paths)
    return lambda model: authz_facts(setup_from_model(model, paths, None, principals))


def authz_facts(setup: AuthzSetup) -> dict[str, list[Row]]:
    graph = setup.graph
    reads = policy_reads(setup.bundle)
    principal_classes = partition(graph.of_type(*PRINCIPAL_TYPES), graph, reads)
    gpu_classes = partition(graph.of_type("Gpu"), graph, reads)
    rows: dict[str, list[Row]] = {name: [] for name in RELATIONS}
    for p in setup.principals.sorted():
        rows["authz_principal"].append((p.id, p.type))
        rows["member_of"].extend((p.id, t) for t in p.teams)
    for c in gpu_classes:
        name = graph.entities[c.id].id
        rows["authz_class"].extend((graph.entities[m].id, name) for m in c.members)
    requests = [
        Request(pc.representative, action, rc.representative)
        for pc in principal_classes
        for action in ACTIONS
        for rc in gpu_classes
    ]
    decisions = iter(setup.authorizer.decide(requests))
    for pc in principal_classes:
        for action in ACTIONS:
            for rc in gpu_classes:
                d = next(decisions)
                cls = graph.entities[rc.id].id
                if d.allowed:
                    rows["permitted"].extend((graph.entities[m].id, action, cls) for m in pc.members)
                for policy, message in d.errors:
                    rows["authz_error"].append((graph.entities[pc.representative].id, action, cls, policy, message))
    return rows
