"""A placement's bottleneck inside a node compares NVSwitch boards and direct meshes like with like.

NodePairs.worst gives, for members joined pairwise by scale-up links, what the worst member sends to
all the others at once: min(its scale-up links together, the sum of its pairs' figures). Figures by hand.
"""

from __future__ import annotations

from pathlib import Path

from verifier.facts.graph import NodePairs, graph_facts
from verifier.sources.inventory.loader import load_inventory

ROOT = Path(__file__).resolve().parents[2]


def _pairs(gpus: int, mbps: int, cls: str) -> list[tuple[str, str, int, str]]:
    return [(f"gpu{a}", f"gpu{b}", mbps, cls) for a in range(gpus) for b in range(a + 1, gpus)]


def test_a_mesh_counts_each_peer_link_a_switch_shares_one_bandwidth() -> None:
    pairs = NodePairs(
        class_of={"mesh": 0, "board": 1, "pcie": 2},
        pairs=[_pairs(4, 64000, "NV"), _pairs(4, 450000, "NV"), _pairs(4, 63008, "PIX")],
        totals=[{f"gpu{g}": 3 * 64000 for g in range(4)}, {f"gpu{g}": 450000 for g in range(4)}, {}],
    )
    four = [f"gpu{g}" for g in range(4)]
    # Mesh: 3 peers, a 64 GB/s link to each: 3 x 64000 = 192000 (its 3 links together as well).
    assert pairs.worst("mesh", [f"mesh/{g}" for g in four]) == 192000
    # Two members of the mesh: one link between them.
    assert pairs.worst("mesh", ["mesh/gpu0", "mesh/gpu1"]) == 64000
    # Board: each pair's max-flow is the GPU's whole 450000, which it shares: min(3 x 450000, 450000).
    assert pairs.worst("board", [f"board/{g}" for g in four]) == 450000
    # Over PCIe the pairs share the host path: the worst pair.
    assert pairs.worst("pcie", [f"pcie/{g}" for g in four]) == 63008
    assert pairs.worst("mesh", ["mesh/gpu0"]) is None


def test_shipped_mi300x_and_h100_nodes() -> None:
    node_pairs = NodePairs()
    graph_facts(load_inventory([ROOT / "inventories" / "mixed-fleet.yaml"]), set(), node_pairs)
    mi300x = [f"mi300x-n0/gpu{g}" for g in range(8)]
    # Every MI300X pair has one xGMI gen 4 link (64000 MB/s per direction): 8 GPUs, 7 peers each.
    assert node_pairs.worst("mi300x-n0", mi300x) == 7 * 64000
    assert node_pairs.worst("mi300x-n0", mi300x[:3]) == 2 * 64000
    # HGX H100: 18 NVLink 4 links (5 + 4 + 4 + 5) x 25000 to the 4 NVSwitches, whatever the member count.
    h100 = [f"h100-n0/gpu{g}" for g in range(8)]
    assert node_pairs.worst("h100-n0", h100) == 450000
    assert node_pairs.worst("h100-n0", h100[:2]) == 450000
