"""What the platform does with a failed NVSwitch link or chip, as the NVLink domains and placement see it
(verifier/facts/graph.py fm_isolated_gpus; rules/topology/lib/platform.dl holds the same line, and
tests/facts/test_graph_facts.py holds the two equal on every shipped inventory and rule fixture)."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

from verifier.facts.graph import graph_facts
from verifier.sources.inventory.loader import load_inventory_text

# One HGX-like node: 3 GPUs, 2 NVSwitch chips, every GPU - chip bond 9 NVLink 4 links (225 GB/s),
# each GPU on a PCIe Gen5 x16 link to the CPU (63,008 MB/s). gpu2 - nvsw0 trains 8 of 9 (degraded).
BOARD = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    promises: [nvlink_domain]
    {attrs}
    children:
      - {{name: cpu0, kind: cpu}}
      - {{name: "gpu{{i}}", kind: gpu, count: 3}}
      - {{name: "nvsw{{i}}", kind: nvswitch, count: 2}}
    links:
      - {{a: "gpu{{g}}", b: "nvsw{{s}}", kind: nvswitch, generation: 4, count: 9, foreach: {{g: [0, 1], s: [0, 1]}}}}
      - {{a: gpu2, b: nvsw0, kind: nvswitch, generation: 4, count: 8, state: degraded}}
      - {{a: gpu2, b: nvsw1, kind: nvswitch, generation: 4, count: 9}}
      - {{a: "gpu{{g}}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {{g: 0..2}}}}
"""


def _facts(attrs: str) -> tuple[dict[str, str], dict[tuple[str, str], tuple[str, int]]]:
    facts = graph_facts(load_inventory_text(BOARD.format(attrs=attrs), "t.yaml"))
    domains = {str(g): str(d) for g, d in facts["scaleup_domain"]}
    pairs = {(str(a), str(b)): (str(c), int(m)) for a, b, c, m in facts["gpu_pair_bottleneck"]}
    return domains, pairs


def test_the_fabric_managers_default_takes_the_gpu_out_of_nvlink() -> None:
    domains, pairs = _facts("")
    # ACCESS_LINK_FAILURE_MODE=0: gpu2 leaves NVSwitch routing, a domain of its own.
    assert domains == {"n0/gpu0": "n0/gpu0", "n0/gpu1": "n0/gpu0", "n0/gpu2": "n0/gpu2"}
    # gpu0 - gpu2 then runs over PCIe through the CPU: 63,008 MB/s; gpu0 - gpu1 keeps both
    # chips, 2 x 225,000 = 450,000 MB/s.
    assert pairs[("n0/gpu0", "n0/gpu2")] == ("PHB", 63008)
    assert pairs[("n0/gpu0", "n0/gpu1")] == ("NV", 450000)


def test_the_other_mode_keeps_the_gpu_with_less_bandwidth() -> None:
    domains, pairs = _facts("attrs: {access_link_failure_mode: 1}")
    assert set(domains.values()) == {"n0/gpu0"}
    # gpu2 keeps 8 x 25 + 9 x 25 = 425,000 MB/s of NVSwitch bandwidth: the pair's bottleneck.
    assert pairs[("n0/gpu0", "n0/gpu2")] == ("NV", 425000)


def test_a_down_chip_leaves_the_board_without_nvlink() -> None:
    text = BOARD.format(attrs="").replace(
        '{name: "nvsw{i}", kind: nvswitch, count: 2}',
        "{name: nvsw0, kind: nvswitch}\n      - {name: nvsw1, kind: nvswitch, state: down}",
    )
    facts = graph_facts(load_inventory_text(text, "t.yaml"))
    # NVSWITCH_FAILURE_MODE=0: every GPU linked to nvsw1 (all three) is out: three domains of one.
    assert sorted(str(d) for _g, d in facts["scaleup_domain"]) == ["n0/gpu0", "n0/gpu1", "n0/gpu2"]


def test_a_mode_other_than_0_or_1_is_refused_at_its_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(BOARD.format(attrs="attrs: {access_link_failure_mode: 2}"))
    code, out, err = run_cli("verify", str(bad))
    # Line 6, column 13: the key after 4 spaces and "attrs: {" (8 characters) on the node.
    assert code == 2 and out == ""
    assert f"{bad}:6:13:" in err and "'access_link_failure_mode' in attrs of" in err and "got 2" in err
    assert "Traceback" not in err


def test_the_catalogue_gives_the_chip_models_default_where_the_node_says_nothing() -> None:
    # An inventory model of the chips whose catalogue entry gives mode 1 (as a site's own catalogue
    # may for its A100 boards): the node declares nothing, so gpu2 keeps its place in the domain.
    catalog = (
        "catalog:\n  models:\n    - {name: Chip-M1, vendor: nvidia, kind: nvswitch, source: test,"
        " specs: {access_link_failure_mode: 1}}\n"
    )
    text = BOARD.format(attrs="").replace("objects:\n", catalog + "objects:\n", 1)
    text = text.replace(
        '{name: "nvsw{i}", kind: nvswitch, count: 2}', '{name: "nvsw{i}", kind: nvswitch, model: Chip-M1, count: 2}'
    )
    facts = graph_facts(load_inventory_text(text, "t.yaml"))
    assert {str(d) for _g, d in facts["scaleup_domain"]} == {"n0/gpu0"}
    # The node's own attrs win over the catalogue: 0 written on it takes gpu2 out again.
    text = text.replace(
        "promises: [nvlink_domain]\n", "promises: [nvlink_domain]\n    attrs: {access_link_failure_mode: 0}\n", 1
    )
    facts = graph_facts(load_inventory_text(text, "t.yaml"))
    assert sorted({str(d) for _g, d in facts["scaleup_domain"]}) == ["n0/gpu0", "n0/gpu2"]
