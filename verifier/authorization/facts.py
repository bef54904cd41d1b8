"""Authorization decisions as Datalog facts, so rules can join them with the topology.

Cedar is asked once per (principal class, action, GPU class) in the context {}; the rows
of the relations below (declared in rules/schema.dl) go into the engine with the inventory's
facts, before the one evaluation. Without a principals file there are none and rules/authz/
has nothing to judge.
"""

from __future__ import annotations

from verifier.authorization.classes import partition, policy_reads
from verifier.authorization.entities import PRINCIPAL_TYPES
from verifier.authorization.evaluate import ACTIONS, Request
from verifier.authorization.relations import AUTHZ_RELATIONS
from verifier.authorization.setup import AuthzSetup
from verifier.core.gc_pause import collector_paused
from verifier.engine.ast import Row


def authz_facts(setup: AuthzSetup) -> dict[str, list[Row]]:
    """The rows of every relation in AUTHZ_RELATIONS."""
    with collector_paused():
        return _facts(setup)


def _facts(setup: AuthzSetup) -> dict[str, list[Row]]:
    graph = setup.graph
    reads = policy_reads(setup.bundle)
    principal_classes = partition(graph.uids_of_type(*PRINCIPAL_TYPES), graph, reads)
    gpu_classes = partition(graph.uids_of_type("Gpu"), graph, reads)

    def id_of(entity_uid: str) -> str:
        ident = graph.ident(entity_uid)
        if ident is None:
            raise KeyError(entity_uid)
        return ident[1]

    rows: dict[str, list[Row]] = {name: [] for name in sorted(AUTHZ_RELATIONS)}
    for p in setup.principals.sorted():
        rows["authz_principal"].append((p.id, p.type))
        rows["member_of"].extend((p.id, t) for t in p.teams)
    for c in gpu_classes:
        name = id_of(c.id)
        rows["authz_class"].extend((id_of(m), name) for m in c.members)
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
                cls = id_of(rc.id)
                if d.allowed:
                    rows["permitted"].extend((id_of(m), action, cls) for m in pc.members)
                for policy, message in d.errors:
                    rows["authz_error"].append((id_of(pc.representative), action, cls, policy, message))
    return rows
