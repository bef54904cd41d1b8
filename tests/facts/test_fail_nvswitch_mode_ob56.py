"""`--fail` of an NVSwitch chip reads the fabric manager's NVSWITCH_FAILURE_MODE as `state: down` does.

NVIDIA's Fabric Manager user guide, "Supported High Availability Modes": a failed chip is answered by
NVSWITCH_FAILURE_MODE (1: the chip is disabled, its GPUs keep NVLink over the other chips), a failed
GPU-NVSwitch access link by ACCESS_LINK_FAILURE_MODE (0, the default: the GPU leaves NVLink). A what-if
that failed a chip by writing each of its links down made its GPUs' access links read as failed on
their own, so under nvswitch_failure_mode 1 the GPUs left NVLink, which the chip written down does not
do. Every expected value is derived by hand from the inventories written here.
"""

from __future__ import annotations

from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.scenario import apply_scenario, scenario_from

# Two nodes of a board with two chips: gpu0 and gpu1 on both, gpu2 and gpu3 on nvsw1 only (9 NVLink 4
# links each), every GPU and the NIC on cpu0 over PCIe. ATTRS is the node type's `attrs` line.
BOX = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: box}
CATALOG
templates:
  box:
    kind: node
    promises: [nvlink_domain]
    labels: {tenant: research, zone: us-east-1a}
ATTRS
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: nic0, kind: nic, model: ConnectX-7}
      - {name: "nvsw{i}", kind: nvswitch, model: CHIP, count: 2}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 9, foreach: {g: [0, 1]}}
      - {a: "gpu{g}", b: nvsw1, kind: nvswitch, generation: 4, count: 9, foreach: {g: [0, 1, 2, 3]}}
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1, 2, 3]}}
      - {a: nic0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {template: box, name: "n{i}", count: 2DOWN}
"""

# A chip model of our own whose catalogue default is mode 1 (the shipped chips' default is 0).
MODE_1_CHIP = """catalog:
  models:
    - name: Chip-Mode-1
      vendor: nvidia
      kind: nvswitch
      source: "a test's chip: NVSwitch-Gen3's figures, its fabric manager in NVSWITCH_FAILURE_MODE=1"
      scaleup: {kind: nvlink, generation: 4, links: 64, bandwidth: 1.6 TB/s}
      features: [nvlink]
      specs: {access_link_failure_mode: 0, nvswitch_failure_mode: 1}"""


def _box(attrs: str = "", chip: str = "NVSwitch-Gen3", down: bool = False) -> str:
    catalog = MODE_1_CHIP if chip == "Chip-Mode-1" else ""
    text = BOX.replace("CATALOG", catalog).replace("CHIP", chip)
    text = text.replace("ATTRS\n", f"    attrs: {{{attrs}}}\n" if attrs else "")
    return text.replace("DOWN", ", overrides: {n1: {devices: {nvsw1: {state: down}}}}" if down else "")


def _down_links(text: str, *fail: str) -> list[str]:
    """The ids of the links `--fail` of `fail` leaves down, sorted."""
    inv = apply_scenario(load_inventory_text(text, "box.yaml"), scenario_from(fail=list(fail)))
    return sorted(lid for lid, lk in inv.links.items() if lk.state == "down")


# n1/nvsw1 has 4 links, one per GPU: n1/gpu0..3<->n1/nvsw1.
NVSW1_LINKS = [f"n1/gpu{g}<->n1/nvsw1" for g in range(4)]


def test_a_chip_of_a_mode_1_node_keeps_its_links_as_written() -> None:
    # The node type declares nvswitch_failure_mode 1: the chip's state alone says it carries nothing.
    assert _down_links(_box("nvswitch_failure_mode: 1"), "n1/nvsw1") == []


def test_a_chip_of_a_default_node_takes_its_links_down() -> None:
    # No attrs, the shipped chip's default 0: the four links go down, as before.
    assert _down_links(_box(), "n1/nvsw1") == NVSW1_LINKS


def test_the_chip_models_mode_counts_where_the_node_says_none() -> None:
    # Chip-Mode-1's catalogue default is 1 and the node says nothing: its links stay as written;
    # a node that declares 0 overrides the model: all four go down.
    assert _down_links(_box(chip="Chip-Mode-1"), "n1/nvsw1") == []
    assert _down_links(_box("nvswitch_failure_mode: 0", chip="Chip-Mode-1"), "n1/nvsw1") == NVSW1_LINKS


def test_a_gpu_failed_beside_a_kept_chip_still_takes_its_own_links_down() -> None:
    # n1/gpu2 failed too: its two links (to nvsw1 and to cpu0) are down for the GPU's sake; nvsw1's
    # three other links stay.
    assert _down_links(_box("nvswitch_failure_mode: 1"), "n1/nvsw1", "n1/gpu2") == [
        "n1/gpu2<->n1/cpu0",
        "n1/gpu2<->n1/nvsw1",
    ]


def test_the_chip_failed_and_written_down_make_the_same_nvlink_domains() -> None:
    # Mode 1, n1/nvsw1 down: gpu0 and gpu1 still meet over nvsw0 (domain n1/gpu0), gpu2 and gpu3
    # reach no working chip (each its own domain); n0 is whole (every GPU in domain n0/gpu0). The
    # links written down (before) took every GPU of nvsw1 out of NVLink under the access mode 0:
    # four one-GPU domains in n1.
    expected = [
        *[(f"n0/gpu{g}", "n0/gpu0") for g in range(4)],
        ("n1/gpu0", "n1/gpu0"),
        ("n1/gpu1", "n1/gpu0"),
        ("n1/gpu2", "n1/gpu2"),
        ("n1/gpu3", "n1/gpu3"),
    ]
    up = _box("nvswitch_failure_mode: 1")
    written = graph_facts(
        load_inventory_text(_box("nvswitch_failure_mode: 1", down=True), "box.yaml"), ["scaleup_domain"]
    )
    failed = graph_facts(
        apply_scenario(load_inventory_text(up, "box.yaml"), scenario_from(fail=["n1/nvsw1"])), ["scaleup_domain"]
    )
    assert sorted(tuple(r) for r in written["scaleup_domain"]) == expected
    assert sorted(tuple(r) for r in failed["scaleup_domain"]) == expected
