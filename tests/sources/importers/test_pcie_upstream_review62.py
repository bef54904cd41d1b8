"""Review of FH3 (round 16): a switch's uplink trained down must not excuse a GPU trained down below it.

FH3 (a316723d) bounds a GPU's PCIe link by the lower of the node's CPU model generation and the
switch's stated uplink. Where the CPU model is known (a Xeon 8570: catalogue PCIe Gen5), an uplink
stated at Gen4 or Gen3 is itself below what the host's root port gives: the minimum then took the
degraded uplink as the design, and an H100 (catalogue Gen5 x16) trained down with it was no longer
reported, where the base reported it. The uplink now speaks only where no CPU model does.
"""

from __future__ import annotations

from pathlib import Path

from verifier.session.verify_run import verify

_WRITTEN = """\
apiVersion: topolog.dev/v1
objects:
  - name: s1
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8570}
      - {name: sw0, kind: pcie_switch}
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
    links:
      - {a: sw0, b: cpu0, kind: pcie, generation: 3, lanes: 16}
      - {a: gpu0, b: sw0, kind: pcie, generation: 3, lanes: 16}
"""

_IMPORTED = """\
apiVersion: topolog.dev/v1
objects:
  - name: h1
    kind: node
    labels: {imported_from: hwloc}
    children:
      - name: cpu0
        kind: cpu
        model: Xeon-8570
        children:
          - name: sw0
            kind: pcie_switch
            children:
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
    links:
      - {a: sw0, b: cpu0, kind: pcie, bandwidth: 31504}
      - {a: gpu0, b: sw0, kind: pcie, bandwidth: 31504}
"""


def _messages(text: str, rule: str, tmp_path: Path) -> list[str]:
    path = tmp_path / "inv.yaml"
    path.write_text(text)
    return sorted(f.message for f in verify([path]).findings if f.rule == rule)


def test_gen3_gpu_under_a_gen3_uplink_on_a_gen5_cpu_is_reported(tmp_path: Path) -> None:
    # H100 supports Gen5; the switch has no model; the CPU model gives Gen5. The uplink at Gen3 is
    # itself trained down, so both ends support min(5, 5) = 5 and the GPU's 3 is below it
    # (a316723d: min(5, uplink 3) = 3, no finding).
    assert _messages(_WRITTEN, "PCIE001", tmp_path) == [
        "GPU s1/gpu0's PCIe link s1/gpu0<->s1/sw0 runs at generation 3, below the 5 both ends support."
    ]


def test_x8_gpu_under_an_x8_uplink_on_a_gen5_cpu_is_reported(tmp_path: Path) -> None:
    # hwloc figures: 31504 MB/s is Gen5 x8 (8 x 3938) or Gen4 x16 (16 x 1969). The CPU model gives
    # Gen5, so the H100 is judged at its own Gen5 x16: 16 x 3938 = 63008, 90% is 56707.2, and 31504
    # is below it (a316723d read the uplink's 31504 as Gen4 x16 and judged the GPU at 31504: none).
    assert _messages(_IMPORTED, "PCIE002", tmp_path) == [
        "GPU h1/gpu0's PCIe link h1/gpu0<->h1/sw0 carries 31504 MB/s, below the 63008 MB/s of PCIe Gen5 x16"
        " (its model's)."
    ]


_DEGRADED_UPLINK = """\
apiVersion: topolog.dev/v1
objects:
  - name: s9
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: sw0, kind: pcie_switch}
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB}
    links:
      - {a: sw0, b: cpu0, kind: pcie, generation: 4, lanes: 16, state: degraded}
      - {a: gpu0, b: sw0, kind: pcie, generation: 4, lanes: 16}
"""


def test_gpu_under_an_uplink_marked_degraded_is_judged_at_its_own_generation(tmp_path: Path) -> None:
    # No CPU model, the switch has none: the uplink alone could bound the GPU, but it is marked
    # degraded (not running as built), so it says nothing of the design. The H100's own Gen5 stands
    # and its Gen4 is below it (a316723d: the degraded uplink's 4 was taken as the design, no finding).
    assert _messages(_DEGRADED_UPLINK, "PCIE001", tmp_path) == [
        "GPU s9/gpu0's PCIe link s9/gpu0<->s9/sw0 runs at generation 4, below the 5 both ends support."
    ]
