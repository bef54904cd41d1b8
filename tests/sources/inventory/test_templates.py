"""Templates: counts, name patterns, nesting, per-instance overrides, and their errors."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

BASE = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    promises: [nvlink_domain]
    labels: {tenant: a}
    software: {driver: "550.54.14", cuda: "12.10"}
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: "nvsw{i}", kind: nvswitch, model: NVSwitch-Gen3, count: 2}
    links:
      - {a: "gpu{g}", b: "nvsw{s}", kind: nvswitch, generation: 4, count: 9, foreach: {g: 0..3, s: 0..1}}
objects:
  - name: r0
    kind: rack
    children:
      - template: box
        name: "n{i:02d}"
        count: 3
"""


def test_instances_and_ids() -> None:
    inv = load_inventory_text(BASE, "t.yaml")
    assert [o.id for o in inv.of_kind("node")] == ["n00", "n01", "n02"]
    assert inv.count("gpu") == 12
    assert len(inv.links) == 3 * 8
    gpu = inv.objects["n01/gpu3"]
    assert (gpu.parent, gpu.index, gpu.model) == ("n01", 3, "H100-SXM5-80GB")
    link = inv.links["n02/gpu1<->n02/nvsw0"]
    assert link.mbps == 9 * 25_000 and dict(link.attrs) == {"generation": 4, "count": 9}
    assert inv.software["n00"] == {"driver": "550.54.14", "cuda": "12.10"}
    assert inv.promises["n02"] == ("nvlink_domain",)
    assert inv.objects["n00"].template == "box"
    # Locations: the instance is where it was instantiated, a device where the template wrote it.
    assert inv.location("n01").line == 18
    assert inv.location("n01/gpu2").line == 10


def test_override_one_failed_nvlink_and_a_label() -> None:
    text = (
        BASE
        + """        overrides:
          n01:
            labels: {tenant: b, quarantine: "true"}
            devices:
              gpu3: {state: down}
            links:
              - {a: gpu0, b: nvsw1, count: 8, state: degraded}
"""
    )
    inv = load_inventory_text(text, "t.yaml")
    assert inv.objects["n01"].labels == {"tenant": "b", "quarantine": "true"}
    assert inv.objects["n00"].labels == {"tenant": "a"}
    assert inv.objects["n01/gpu3"].state == "down"
    assert inv.objects["n00/gpu3"].state is None
    bad = inv.links["n01/gpu0<->n01/nvsw1"]
    assert (bad.mbps, bad.attrs["count"], bad.state) == (8 * 25_000, 8, "degraded")
    assert bad.loc.line == 27  # findings about the degraded link point at the override
    assert inv.links["n00/gpu0<->n00/nvsw1"].mbps == 9 * 25_000


def test_override_can_remove_a_device_and_its_links() -> None:
    text = (
        BASE
        + """        overrides:
          n02:
            devices:
              gpu0: {remove: true}
"""
    )
    inv = load_inventory_text(text, "t.yaml")
    assert "n02/gpu0" not in inv.objects
    assert not [lk for lk in inv.links.values() if "n02/gpu0" in (lk.a, lk.b)]
    assert inv.count("gpu") == 11


def test_removed_device_takes_its_links_written_outside_the_node() -> None:
    # A rack's cabling written once for every instance (as an NVL72 rack's NVLink spine is) joins
    # a device an override removes: those links go with the device instead of naming a missing
    # endpoint, and a misspelt endpoint is still an error.
    text = (
        BASE
        + """        overrides:
          n02:
            devices:
              gpu3: {remove: true}
  - {name: sw0, kind: switch}
links:
  - {a: "n{n:02d}/gpu{g}", b: sw0, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..2, g: 0..3}}
"""
    )
    inv = load_inventory_text(text, "t.yaml")
    assert "n02/gpu3" not in inv.objects
    assert not [lk for lk in inv.links.values() if "n02/gpu3" in (lk.a, lk.b)]
    assert len([lk for lk in inv.links.values() if lk.b == "sw0"]) == 11
    with pytest.raises(TopologError, match="link endpoint 'n02/gpu4' does not exist"):
        load_inventory_text(text + "  - {a: n02/gpu4, b: sw0, kind: ethernet, bandwidth: 100 Gb/s}\n", "t.yaml")


def test_override_can_retrain_a_pcie_link() -> None:
    # A GPU's PCIe link that trains narrower or slower in one node: the override writes the width
    # or generation it runs at, the bandwidth follows, and the template's plan is kept for PCIE001.
    text = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 3}
      - {name: cpu0, kind: cpu}
    links:
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1}}
      - {a: gpu2, b: cpu0, kind: pcie, generation: 5, lanes: 16, bandwidth: 64 GB/s}
objects:
  - template: box
    name: "n{i}"
    count: 2
    overrides:
      n1:
        links:
          - {a: gpu0, b: cpu0, lanes: 8}
          - {a: gpu1, b: cpu0, generation: 4}
          - {a: gpu2, b: cpu0, lanes: 4}
"""
    inv = load_inventory_text(text, "t.yaml")
    narrow, slow, written = (inv.links[f"n1/gpu{g}<->n1/cpu0"] for g in range(3))
    assert (narrow.mbps, narrow.attrs["lanes"], dict(narrow.plan)) == (8 * 3938, 8, {"generation": 5, "lanes": 16})
    assert (slow.mbps, slow.attrs["generation"], slow.attrs["lanes"]) == (16 * 1969, 4, 16)
    assert written.mbps == 64_000 // 4  # a written figure scales with the width
    assert inv.links["n0/gpu0<->n0/cpu0"].mbps == 16 * 3938


def test_override_refuses_a_retraining_whose_bandwidth_is_unknown() -> None:
    # xGMI has a known per-link figure for generation 4 only (64 GB/s per direction), PCIe none for
    # generation 9, and a UPI link's bandwidth was written: a new generation there gives no figure
    # to scale by, so the load stops at the override instead of keeping the old bandwidth. With
    # 'bandwidth:' written beside it, the override is taken as written.
    text = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: MI300X, count: 2}
      - {name: "cpu{i}", kind: cpu, count: 2}
    links:
      - {a: gpu0, b: gpu1, kind: xgmi, generation: 4}
      - {a: gpu0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
      - {a: cpu0, b: cpu1, kind: upi, generation: 2, bandwidth: 128 GB/s}
objects:
  - template: box
    name: "n{i}"
    count: 3
    overrides:
      n1:
        links:
          - {a: gpu0, b: gpu1, generation: 3}
          - {a: gpu0, b: cpu0, generation: 9}
          - {a: cpu0, b: cpu1, generation: 1}
      n2:
        links:
          - {a: gpu0, b: gpu1, generation: 3, bandwidth: 50 GB/s}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    msgs = sorted(str(d) for d in err.value.diagnostics)
    assert msgs == [
        "t.yaml:20:13: override of link 'n1/gpu0<->n1/gpu1': 'generation: 3' gives a xgmi link no bandwidth topolog "
        "knows; expected 'bandwidth:' (per direction) written with it",
        "t.yaml:21:13: override of link 'n1/gpu0<->n1/cpu0': 'generation: 9' gives a pcie link no bandwidth topolog "
        "knows; expected 'bandwidth:' (per direction) written with it",
        "t.yaml:22:13: override of link 'n1/cpu0<->n1/cpu1': 'generation: 1' gives a upi link no bandwidth topolog "
        "knows; expected 'bandwidth:' (per direction) written with it",
    ]
    fixed = text.split("      n1:")[0] + "      n2:" + text.split("      n2:")[1]  # n2's override alone
    inv = load_inventory_text(fixed, "t.yaml")
    written = inv.links["n2/gpu0<->n2/gpu1"]
    assert (written.mbps, written.attrs["generation"]) == (50_000, 3)


def test_override_errors() -> None:
    text = (
        BASE
        + """        overrides:
          n09: {labels: {x: "1"}}
          n01:
            devices:
              gpu7: {state: down}
            links:
              - {a: gpu0, b: gpu1, state: down}
"""
    )
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    msgs = [str(d) for d in err.value.diagnostics]
    assert any(":22:" in m and "override 'n09' matches no instance" in m for m in msgs), msgs
    assert any(":25:" in m and "override names device 'gpu7'" in m for m in msgs), msgs
    assert any(":27:" in m and "link gpu0 - gpu1" in m for m in msgs), msgs


def test_nested_templates_seq_and_cycles() -> None:
    text = """
apiVersion: topolog.dev/v1
templates:
  node2: {kind: node, children: [{name: "gpu{i}", kind: gpu, count: 2}]}
  rack4:
    kind: rack
    children:
      - {template: node2, name: "n{seq:03d}", count: 4}
  loop: {kind: rack, children: [{template: loop, name: x}]}
objects:
  - {template: rack4, name: "r{i}", count: 2}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert [o.id for o in inv.of_kind("node")] == [f"n{k:03d}" for k in range(8)]
    assert inv.objects["n005"].parent == "r1"
    with pytest.raises(TopologError, match="template 'loop' includes itself"):
        load_inventory_text(text + "  - {template: loop, name: y}\n", "t.yaml")


def test_pattern_errors() -> None:
    text = """
apiVersion: topolog.dev/v1
objects:
  - {name: "n{j}", kind: node}
  - {name: "m", kind: node, count: 2}
  - {name: "k{i:>9999}", kind: node, count: 2}
"""
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    msgs = [d.message for d in err.value.diagnostics]
    assert any("uses {j}, which is not defined here" in m for m in msgs), msgs
    assert any("its name has no {i} or {seq}" in m for m in msgs), msgs
    assert any("is not supported; expected a zero-padded width" in m for m in msgs), msgs


STAMPED = """
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: cpu0, b: cpu1, kind: upi, bandwidth: 64 GB/s}
      - {a: nic0, b: SWITCH, kind: ethernet, bandwidth: 100 Gb/s}
objects:
  - {name: sw0, kind: switch}
  - {template: box, name: "n{i}", count: 3}
"""


def test_stamped_copies_share_names_and_carry_their_node() -> None:
    inv = load_inventory_text(STAMPED.replace("SWITCH", "/sw0"), "t.yaml")
    assert set(inv.stamped) == {"n0", "n1", "n2"}
    cpu = inv.objects["n1/cpu0"]
    assert cpu.origin == "n1" and inv.objects["n1"].origin is None and inv.objects["sw0"].origin is None
    upi = inv.links["n1/cpu0<->n1/cpu1"]
    assert upi.origin == "n1"
    # One string per name of a copy: its object's id, its children's parent and its links' ends.
    assert upi.a is cpu.id and inv.objects["n1/nic0"].parent is inv.objects["n1"].id


def test_checks_of_stamped_copies_are_those_of_their_plan() -> None:
    # Checked once per plan, a copy still reports what only it gets wrong: n1's NIC cabled to itself.
    with pytest.raises(TopologError) as err:
        load_inventory_text(STAMPED.replace("SWITCH", "/n1/nic0"), "t.yaml")
    assert [d.message for d in err.value.diagnostics] == ["link 'n1/nic0<->n1/nic0' connects 'n1/nic0' to itself"]
    with pytest.raises(TopologError) as err:
        load_inventory_text(STAMPED.replace("SWITCH", "/sw9"), "t.yaml")
    assert [d.message for d in err.value.diagnostics] == ["link endpoint 'sw9' does not exist; did you mean 'sw0'?"]
    with pytest.raises(TopologError) as err:
        load_inventory_text(
            STAMPED.replace("SWITCH", "/sw0").replace("kind: cpu,", "kind: cpu, model: Xeon-9999,"), "t.yaml"
        )
    (message,) = [d.message for d in err.value.diagnostics]
    assert message.startswith("unknown model 'Xeon-9999' for 'n0/cpu0'") and message.endswith("(and 5 more copies)")


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("dgx{i:02d}", {"i": 3}),
        ("{{lit}}-{a}}}", {"a": "x"}),
        ("{a}-{b:03x}{c:X}", {"a": 1, "b": 255, "c": 10}),
        ("plain", {}),
        ("{a:02d}", {"a": "word"}),
        ("{a}{b:02d}", {"b": "word"}),
        ("{b:02d}{a}", {"b": "word"}),
        ("{a}{missing}", {"a": 1}),
    ],
)
def test_pattern_renders_as_its_parts_do(text: str, ns: dict[str, int | str]) -> None:
    from verifier.sources.inventory.patterns import compile_pattern

    pattern = compile_pattern(text)

    def outcome(render: Callable[[Mapping[str, int | str]], str]) -> str:
        try:
            return render(ns)
        except (KeyError, ValueError) as err:
            return f"{type(err).__name__}: {err}"

    assert outcome(pattern.render) == outcome(pattern._render_parts)


def test_a_node_given_an_object_from_outside_is_no_longer_its_plan_alone() -> None:
    from verifier.facts.graph import scaleup_domains

    # n01 gets a fifth GPU placed with `parent:` from outside the template: n01 is not stamped
    # (its summaries are read whole), n00 and n02 still are. The extra GPU has no scale-up link,
    # so it is a domain of its own; each node's 4 cabled GPUs are one domain named by gpu0.
    text = BASE + "  - {name: extra, kind: gpu, model: H100-SXM5-80GB, parent: n01}\n"
    inv = load_inventory_text(text, "t.yaml")
    assert set(inv.stamped) == {"n00", "n02"}
    domains: dict[str, str] = {}
    for gpu, domain in scaleup_domains(inv):  # scaleup_domain rows are (GPU, the domain's GPU)
        assert isinstance(gpu, str) and isinstance(domain, str)
        domains[gpu] = domain
    assert domains["extra"] == "extra"
    assert {g: d for g, d in domains.items() if g.startswith("n01/")} == {f"n01/gpu{i}": "n01/gpu0" for i in range(4)}
    assert domains["n02/gpu3"] == "n02/gpu0"
