"""The blocks of a placement's subset (`keep`) name a node stamped whole none of whose links is kept
by the node's own list of names (the one the inventory keeps for it, which authorization's GPU
blocks hold too), so an engine can tell the two lists' nodes the same by identity; a node with a
link kept gets a list of its own, its names and then those links' ids.
"""

from __future__ import annotations

from engine.stamp_helpers import FLEET

from verifier.core.stamped_rows import StampedRows
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text

_KEPT = (("", "node"), ("/gpu0", "gpu"), ("/gpu1", "gpu"))


def test_a_node_with_no_link_kept_is_named_by_its_own_list() -> None:
    inv = load_inventory_text(FLEET)
    unmade = inv.unmade_links()
    # The GPUs and their node kept, not the NVSwitch: neither link (GPU to NVSwitch) has both ends kept.
    facts = inventory_facts(inv, keep={"n0", "n0/gpu0", "n0/gpu1", "n1", "n1/gpu0", "n1/gpu1"})
    objects = facts["object"]
    assert isinstance(objects, StampedRows)
    lists = {id(b.names): b.names for b in objects.blocks}
    assert len(lists) == 1
    (names,) = lists.values()
    assert [node is unmade[f"n{n}"][1] for n, node in enumerate(names)] == [True, True]
    # By hand: the rows are the kept objects, each a gpu or the node.
    assert sorted(objects) == sorted((f"n{n}{x}", kind) for n in range(2) for x, kind in _KEPT)
    assert list(facts["link"]) == []


def test_a_node_with_a_link_kept_has_a_list_of_its_own() -> None:
    inv = load_inventory_text(FLEET)
    unmade = inv.unmade_links()
    # n0's gpu0, its NVSwitch and the node kept: the link gpu0 <-> nvsw0 has both ends kept.
    facts = inventory_facts(inv, keep={"n0", "n0/gpu0", "n0/nvsw0"})
    links = facts["link"]
    assert isinstance(links, StampedRows)
    (block,) = links.blocks
    (names,) = block.names
    assert names is not unmade["n0"][1]
    # Its names as the inventory keeps them (4 slots: the node, gpu0, gpu1, nvsw0), then the kept link's id.
    assert list(names) == [*unmade["n0"][1], "n0/gpu0<->n0/nvsw0"]
    # Bandwidth in megabytes a second, as the facts carry it: 450 GB/s is 450,000.
    assert list(links) == [("n0/gpu0<->n0/nvsw0", "n0/gpu0", "n0/nvsw0", "nvlink", 450_000)]
