"""A batch's ancestors carry stand-in attributes (EntityGraph.closure): the decisions stay the whole graph's.

An entity that is only an ancestor of a request's entities is reached by Cedar through `in`
alone, so its attributes cannot decide anything; `Authorizer` gives it the stand-ins' values
(verifier/authorization/evaluate.py) instead of counting every GPU below a pod. These tests hold
the answers to cedarpy's on the whole graph (every entity with its own attributes), and check
that an entity a policy names keeps its own.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import cedarpy

from verifier.authorization.classes import contexts, policy_reads
from verifier.authorization.entities import DOMAIN_TYPE, HARDWARE_TYPES, PRINCIPAL_TYPES, uid
from verifier.authorization.evaluate import Authorizer, Request
from verifier.session.api import load_authorization as load_setup

ROOT = Path(__file__).resolve().parents[2]
MIXED = ROOT / "inventories" / "mixed-fleet.yaml"
SMALL = Path(__file__).resolve().parent / "small"


def test_every_decision_is_the_whole_graphs_on_the_mixed_fleet() -> None:
    # Every principal of inventories/principals.yml, every GPU, node, rack, pod and NVLink domain,
    # `schedule` and `drain`, in every context the shipped policies distinguish: topolog's batch
    # (stand-ins for ancestors) against cedarpy given every entity with its own attributes.
    setup = load_setup([MIXED])
    graph = setup.graph
    resources = [*graph.uids_of_type(*HARDWARE_TYPES.values()), *graph.uids_of_type(DOMAIN_TYPE)]
    principals = graph.uids_of_type(*PRINCIPAL_TYPES)
    requests = [
        Request(p, action, r, context)
        for context in contexts(policy_reads(setup.bundle))
        for p in principals
        for action in ("schedule", "drain")
        for r in resources
    ]
    ours = Authorizer(setup.bundle, graph).decide(requests)
    whole = cedarpy.Entities.from_json_str(graph.to_json(), setup.bundle.schema)
    theirs = cedarpy.is_authorized_batch(
        [r.to_cedar() for r in requests], setup.bundle.policy_set, whole, setup.bundle.schema
    )
    # The shipped policies raise no error on this fleet, so Cedar's Allow is the answer as it stands.
    assert all(not res.diagnostics.errors for res in theirs)
    want = [(res.decision == cedarpy.Decision.Allow, tuple(sorted(res.diagnostics.reasons))) for res in theirs]
    assert [(d.allowed, d.reasons) for d in ours] == want
    assert {allowed for allowed, _ in want} == {True, False}  # both answers were compared


def test_an_ancestor_gets_the_stand_ins_and_a_root_its_own() -> None:
    setup = load_setup([SMALL / "cluster.yaml"])
    graph = setup.graph
    probe = graph.probe_attrs()
    # tests/authorization/small/cluster.yaml: na0/gpu1 in na0 in rack ra in pod p0; ra holds na0's
    # four H100s. Asked for the GPU and the rack, the rack keeps its own attributes (4 GPUs, tenant
    # a) and the node and the pod, only ancestors, get the stand-ins (no GPU, no label).
    attrs = _attrs(graph.closure(['Gpu::"na0/gpu1"', 'Rack::"ra"'], probe))
    assert attrs['Rack::"ra"']["gpus"] == 4 and attrs['Rack::"ra"']["tenant"] == "a"
    assert attrs['Gpu::"na0/gpu1"']["gpus"] == 1
    assert attrs['Node::"na0"'] == attrs['Pod::"p0"'] == probe
    # Without stand-ins every entity has its own: the pod holds all six GPUs (4 H100 + 2 RTX 4090).
    own = _attrs(graph.closure(['Gpu::"na0/gpu1"']))
    assert own['Pod::"p0"']["gpus"] == 6 and own['Node::"na0"']["gpus"] == 4


def _attrs(closure: list[dict[str, object]]) -> dict[str, dict[str, object]]:
    """Each entity's attributes by uid, from Cedar's JSON form."""
    out: dict[str, dict[str, object]] = {}
    for entity in closure:
        ident, attrs = entity["uid"], entity["attrs"]
        assert isinstance(ident, dict) and isinstance(attrs, dict)
        out[uid(ident["type"], ident["id"])] = attrs
    return out


def _policies(tmp_path: Path, gpus: int) -> Path:
    folder = tmp_path / f"policies-{gpus}"
    folder.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", folder / "schema.cedarschema")
    (folder / "rack.cedar").write_text(
        '@id("counted-rack")\n'
        'permit (principal, action == Action::"schedule", resource in Rack::"ra")\n'
        f'when {{ Rack::"ra".gpus == {gpus} }};\n'
    )
    return folder


def test_an_ancestor_a_policy_names_is_read_with_its_own_attributes(tmp_path: Path) -> None:
    # Rack ra of tests/authorization/small/cluster.yaml holds node na0 with 4 H100s (gpu0..gpu3),
    # so `Rack::"ra".gpus == 4` holds and u1 may schedule on na0/gpu1; `== 0` (the stand-ins'
    # count) does not. The rack is an ancestor of the GPU, but the policy names it: a root, read
    # with its own attributes.
    for gpus, allowed in ((4, True), (0, False)):
        setup = load_setup(
            [SMALL / "cluster.yaml"], policies=_policies(tmp_path, gpus), principals=SMALL / "principals.yml"
        )
        d = setup.authorizer.decide_one(Request('User::"u1"', "schedule", 'Gpu::"na0/gpu1"'))
        assert (d.allowed, d.reasons, d.errors) == (allowed, ("counted-rack",) if allowed else (), ())


def test_gpus_that_are_leaves_hold_no_gpu() -> None:
    # No object of inventories/mixed-fleet.yaml is declared inside a GPU (GPUs are its leaves), so
    # no GPU counts another below it; test_hardware_view.py covers a GPU that does.
    assert load_setup([MIXED]).graph.gpus_holding_gpus() == frozenset()
