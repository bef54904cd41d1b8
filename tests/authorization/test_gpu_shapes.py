"""GPUs of one shape share a class key worked out once; the keys are those worked out GPU by GPU.

The shortcut (verifier.authorization.classes._Keys.keys) must never merge GPUs that a policy can
tell apart: the keys it gives are compared with the GPU-by-GPU keys on every shipped inventory,
on tests/authorization/layered.yaml (labels on switches, sockets and a fleet object, a GPU
outside any node), and with policies that name hardware (then the parent counts) or an NVLink
domain (then no shortcut is taken).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from verifier.authorization.classes import _Keys, policy_reads
from verifier.authorization.entities import build_graph
from verifier.authorization.policies import load_policies
from verifier.facts.graph import scaleup_domains
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.principals import load_principals

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
INVENTORIES = [*sorted((ROOT / "inventories").glob("*.yaml")), HERE / "layered.yaml"]
READS = policy_reads(load_policies(ROOT / "policies"))
PRINCIPALS = load_principals(ROOT / "inventories" / "principals.yml")


def _both(path: Path, named: frozenset[str]) -> tuple[list[tuple[object, ...]], list[tuple[object, ...]]]:
    inv = load_inventory([path])
    graph = build_graph(inv, [(str(g), str(d)) for g, d in scaleup_domains(inv)], PRINCIPALS)
    reads = replace(READS, named=READS.named | named)
    gpus = graph.uids_of_type("Gpu")
    return _Keys(graph, reads).keys(gpus), _Keys(graph, reads)._keys(gpus)


@pytest.mark.parametrize("path", INVENTORIES, ids=lambda p: p.name)
def test_shortcut_keys_are_the_keys(path: Path) -> None:
    fast, slow = _both(path, frozenset())
    assert fast == slow


def test_a_named_node_or_gpu_or_domain_keeps_its_gpus_apart() -> None:
    # mixed-fleet: h100-n0 holds 8 identical H100s; naming the node separates its GPUs from
    # h100-n1's (the same shape but another parent), naming gpu3 separates it from its siblings.
    path = ROOT / "inventories" / "mixed-fleet.yaml"
    named = frozenset({'Node::"h100-n0"', 'Gpu::"h100-n0/gpu3"'})
    fast, slow = _both(path, named)
    assert fast == slow
    inv = load_inventory([path])
    graph = build_graph(inv, None, PRINCIPALS)
    keys = dict(zip(graph.uids_of_type("Gpu"), fast, strict=True))
    assert keys['Gpu::"h100-n0/gpu0"'] != keys['Gpu::"h100-n1/gpu0"']
    assert keys['Gpu::"h100-n0/gpu0"'] == keys['Gpu::"h100-n0/gpu1"']
    assert keys['Gpu::"h100-n0/gpu3"'] != keys['Gpu::"h100-n0/gpu1"']
    fast, slow = _both(path, frozenset({'NvlinkDomain::"h100-n0/gpu0"'}))
    assert fast == slow
