"""The entity graph is built on demand and Cedar is given only what a batch can reach.

Every expectation is worked out by hand from tests/authorization/small (see test_audit.py):
pod p0 holds rack ra (tenant a: node na0 with 4 NVLinked H100s, 34 FP64 TFLOPS each) and rack
rb (tenant b, quarantined: node nb0 with 2 RTX 4090s, 1.29 FP64 TFLOPS, no ECC, no NVLink).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verifier.authorization.entities import build_graph, parse_uid, uid
from verifier.authorization.evaluate import Authorizer, Request
from verifier.authorization.policies import load_policies
from verifier.core.errors import TopologError
from verifier.facts.graph import scaleup_domains
from verifier.session.api import load_authorization as load_setup
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).resolve().parent / "small"
SCHEMA = (ROOT / "policies" / "schema.cedarschema").read_text()


@pytest.mark.parametrize(
    "eid", ["na0/gpu3", 'say "hi"', "back\\slash", "tab\tnew\nline", "\x00\x1f\x7f", "é/ü", "\u2028", "日本"]
)
def test_uids_are_quoted_as_json_strings(eid: str) -> None:
    assert uid("Gpu", eid) == "Gpu::" + json.dumps(eid, ensure_ascii=False)
    assert parse_uid(uid("Gpu", eid)) == ("Gpu", eid)


@pytest.mark.parametrize(
    "text",
    [
        r'Gpu::"na0\u002fgpu1"',  # the same id, escaped where uid() does not escape
        r'Gpu::"na0\/gpu1"',
        'Gpu::"a"b"',  # an inner quote uid() would escape
        "Gpu::na0",
        'Gpu:"na0"',
        '::"na0"',
        'Gpu::"na0',
    ],
)
def test_other_spellings_name_no_entity(text: str) -> None:
    assert parse_uid(text) is None
    assert text not in load_setup([SMALL / "cluster.yaml"]).graph.entities


def test_entities_of_the_small_cluster() -> None:
    graph = load_setup([SMALL / "cluster.yaml"]).graph
    # Principals in file order, hardware in inventory order, domains sorted.
    assert list(graph.entities) == [
        'Team::"a"',
        'Team::"b"',
        'Team::"sre"',
        'User::"u1"',
        'User::"u2"',
        'User::"oc"',
        'Pod::"p0"',
        'Rack::"ra"',
        'Node::"na0"',
        *(f'Gpu::"na0/gpu{i}"' for i in range(4)),
        'Rack::"rb"',
        'Node::"nb0"',
        'Gpu::"nb0/gpu0"',
        'Gpu::"nb0/gpu1"',
        'NvlinkDomain::"na0/gpu0"',
        'NvlinkDomain::"nb0/gpu0"',
        'NvlinkDomain::"nb0/gpu1"',
    ]
    e = graph.entities
    assert e['Gpu::"na0/gpu2"'].parents == ('Node::"na0"', 'NvlinkDomain::"na0/gpu0"')
    assert e['Node::"nb0"'].parents == ('Rack::"rb"',)
    assert e['User::"oc"'].parents == ('Team::"sre"',)
    # The pod: 6 GPUs of two models; not all FP64, not all consumer; the slowest FP64 is 1 TFLOPS.
    assert dict(e['Pod::"p0"'].attrs) == {
        "model": "mixed",
        "fp64": False,
        "fp64_tflops": 1,
        "consumer": False,
        "gpus": 6,
        "tenant": "",
        "zone": "",
        "owner": "",
        "quarantined": False,
        "state": "ok",
    }
    # A GPU of rb inherits the rack's labels.
    gpu = e['Gpu::"nb0/gpu1"'].attrs
    assert (gpu["tenant"], gpu["quarantined"], gpu["consumer"], gpu["gpus"], gpu["model"]) == (
        "b",
        True,
        True,
        1,
        "RTX-4090",
    )
    # The H100 domain: its 4 GPUs agree on tenant a.
    dom = e['NvlinkDomain::"na0/gpu0"'].attrs
    assert (dom["gpus"], dom["tenant"], dom["fp64_tflops"], dom["quarantined"]) == (4, "a", 34, False)
    assert graph.ancestors('Gpu::"na0/gpu2"') == {'Node::"na0"', 'Rack::"ra"', 'Pod::"p0"', 'NvlinkDomain::"na0/gpu0"'}
    with pytest.raises(KeyError):
        e['Gpu::"na0/gpu9"']


def _uids(closure: list[dict[str, object]]) -> list[str]:
    out = []
    for entity in closure:
        u = entity["uid"]
        assert isinstance(u, dict)
        out.append(uid(u["type"], u["id"]))
    return out


def test_a_batch_gets_what_it_can_reach() -> None:
    graph = load_setup([SMALL / "cluster.yaml"]).graph
    # The GPU and its ancestors; no domain parent, since no root is a domain. Unknown names drop out.
    closure = graph.closure(['Gpu::"na0/gpu1"', 'Gpu::"nope"', "User::u1"])
    assert _uids(closure) == ['Gpu::"na0/gpu1"', 'Node::"na0"', 'Pod::"p0"', 'Rack::"ra"']
    assert closure[0]["parents"] == [{"type": "Node", "id": "na0"}]
    # With a domain among the roots, GPUs carry their domains (and the domains come along).
    closure = graph.closure(['Gpu::"na0/gpu1"', 'NvlinkDomain::"nb0/gpu0"', 'User::"u1"'])
    assert _uids(closure) == [
        'Gpu::"na0/gpu1"',
        'Node::"na0"',
        'NvlinkDomain::"na0/gpu0"',
        'NvlinkDomain::"nb0/gpu0"',
        'Pod::"p0"',
        'Rack::"ra"',
        'Team::"a"',
        'User::"u1"',
    ]
    assert closure[0]["parents"] == [{"type": "Node", "id": "na0"}, {"type": "NvlinkDomain", "id": "na0/gpu0"}]


def test_domains_are_found_only_when_a_request_needs_them() -> None:
    inv = load_inventory([SMALL / "cluster.yaml"])
    asked: list[int] = []

    def domains() -> list[tuple[str, str]]:
        asked.append(1)
        return [(str(g), str(d)) for g, d in scaleup_domains(inv)]

    graph = build_graph(inv, domains, load_principals(SMALL / "principals.yml"))
    authorizer = Authorizer(load_policies(ROOT / "policies"), graph)
    d = authorizer.decide_one(Request('User::"u1"', "schedule", 'Gpu::"na0/gpu1"'))
    assert (d.allowed, d.reasons, asked) == (True, ("tenant-own-hardware",), [])
    d = authorizer.decide_one(Request('User::"u1"', "schedule", 'NvlinkDomain::"na0/gpu0"'))
    assert (d.allowed, d.reasons, asked) == (True, ("tenant-own-hardware",), [1])


def _policies(tmp_path: Path, extra: str, schema: str = SCHEMA) -> Path:
    d = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", d)
    (d / "schema.cedarschema").write_text(schema)
    (d / "extra.cedar").write_text(extra)
    return d


def test_entities_that_policies_name_are_given_to_cedar(tmp_path: Path) -> None:
    extra = """
@id("na0-domain-closed")
forbid (principal, action == Action::"reserve", resource in NvlinkDomain::"na0/gpu0");

@id("rb-is-b")
forbid (principal, action == Action::"drain", resource) when { Rack::"rb".tenant == "b" };
"""
    setup = load_setup([SMALL / "cluster.yaml"], _policies(tmp_path, extra))
    decide = setup.authorizer.decide_one
    # A GPU of the domain is in it; its node is not (a node is under its rack only).
    d = decide(Request('User::"u1"', "reserve", 'Gpu::"na0/gpu1"'))
    assert (d.allowed, d.reasons, d.errors) == (False, ("na0-domain-closed",), ())
    d = decide(Request('User::"u1"', "reserve", 'Node::"na0"'))
    assert (d.allowed, d.reasons) == (True, ("tenant-own-hardware",))
    # sre may drain anything, but rb's tenant (read off the literal, not the request) forbids it.
    d = decide(Request('User::"oc"', "drain", 'Gpu::"na0/gpu1"'))
    assert (d.allowed, d.reasons, d.errors) == (False, ("rb-is-b",), ())


def test_an_entity_named_in_the_context_is_given_to_cedar(tmp_path: Path) -> None:
    extra = """
@id("target-tenant-b")
forbid (principal, action, resource) when { context has target && context.target.tenant == "b" };
"""
    schema = SCHEMA.replace("context: { incident?: Bool }", "context: { incident?: Bool, target?: Rack }")
    setup = load_setup([SMALL / "cluster.yaml"], _policies(tmp_path, extra, schema))
    decide = setup.authorizer.decide_one
    for target in ({"__entity": {"type": "Rack", "id": "rb"}}, {"type": "Rack", "id": "rb"}):
        d = decide(Request('User::"u1"', "schedule", 'Gpu::"na0/gpu1"', {"target": target}))
        assert (d.allowed, d.reasons, d.errors) == (False, ("target-tenant-b",), ())
    d = decide(
        Request('User::"u1"', "schedule", 'Gpu::"na0/gpu1"', {"target": {"__entity": {"type": "Rack", "id": "ra"}}})
    )
    assert (d.allowed, d.reasons, d.errors) == (True, ("tenant-own-hardware",), ())


def _without_racks_and_pods() -> str:
    schema = SCHEMA
    for name in ("Pod", "Rack"):
        start = schema.index(f"entity {name} ")
        schema = schema[:start] + schema[schema.index("};", start) + 3 :]
    return (
        schema.replace("entity Node in [Rack, Pod] =", "entity Node =")
        .replace("entity Gpu in [Node, Rack, Pod, NvlinkDomain]", "entity Gpu in [Node, NvlinkDomain]")
        .replace("resource: [Gpu, Node, Rack, Pod, NvlinkDomain]", "resource: [Gpu, Node, NvlinkDomain]")
    )


def test_a_schema_refusing_a_stand_in_is_judged_on_the_real_entities(tmp_path: Path) -> None:
    """Without Rack and Pod types the stand-in rack is refused: the real entities decide."""
    policies = _policies(tmp_path, "", _without_racks_and_pods())
    (policies / "extra.cedar").unlink()
    # The edge SoC has a node and its GPU only: every real entity matches.
    setup = load_setup([ROOT / "inventories" / "edge-soc.yaml"], policies)
    d = setup.authorizer.decide_one(Request('Team::"retail-vision"', "administer", 'Gpu::"edge-m2-01/igpu"'))
    assert (d.allowed, d.reasons) == (True, ("owners-administer",))
    # The small cluster has racks and a pod, which the schema does not know.
    with pytest.raises(TopologError, match="the entities do not match the schema"):
        load_setup([SMALL / "cluster.yaml"], policies)


def test_denying_names_the_policies_that_refuse() -> None:
    setup = load_setup([SMALL / "cluster.yaml"])
    # u2 is an intern: H100s are not consumer GPUs. u1 may use ra, but rb is quarantined.
    assert setup.denying("u2", ["na0/gpu0"]) == ("interns-consumer-only",)
    assert setup.denying("u1", ["na0/gpu0", "nb0/gpu0"]) == ("quarantine-closed",)
    assert setup.denying("u1", ["na0/gpu0", "na0/gpu1"]) == ()
    assert setup.denying("nobody", ["na0/gpu0"]) == ()


def test_denying_asks_cedar_once_per_class() -> None:
    setup = load_setup([SMALL / "cluster.yaml"])
    # The 4 H100s of na0 look alike to every policy: one request answers for all of them.
    assert setup.denying("u2", ["na0/gpu0", "na0/gpu1"]) == ("interns-consumer-only",)
    assert setup.authorizer.requests == 1
    assert setup.denying("u2", ["na0/gpu2", "na0/gpu3"]) == ("interns-consumer-only",)
    assert setup.authorizer.requests == 1
    # Another principal is another question; a GPU that does not exist is denied with no policy.
    assert setup.denying("u1", ["na0/gpu2", "ghost/gpu0"]) == ("(no permit)",)
    assert setup.authorizer.requests == 2
