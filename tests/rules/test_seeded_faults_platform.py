"""Seeded faults of the platform kind (issue 40, items 1 and 4): what the platform does with a failed
scale-up link or switch chip, and figures that cannot be right for their catalogue model.

Each case seeds one fault into a copy of a shipped inventory (tests/seeded_faults.py) and names, derived
by hand in its comment, exactly the (rule, subjects) it adds; the non-faults an expert accepts add nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import GB200, MIXED, POD, Fault, check_fault, mi300x_fault, pod_fault

_XGMI_OF_GPU3 = ", ".join(
    f"{{a: gpu{a}, b: gpu{b}, state: down}}" for a, b in [(0, 3), (1, 3), (2, 3), (3, 4), (3, 5), (3, 6), (3, 7)]
)

FAULTS: dict[str, Fault] = {
    # dgx05's gpu0 - nvsw0 bond trains 4 of its 5 NVLinks (degraded). The node type declares no
    # fabric manager mode, so the default (ACCESS_LINK_FAILURE_MODE=0) takes gpu0 out of NVLink
    # peer-to-peer: dgx05 keeps gpu1..gpu7 (7 GPUs) as its main domain and gpu0 fell out of the
    # promise. One error naming the link and the GPU (TOPO005), not SCALE001's warning, not BW001
    # for gpu0's 7 pairs that now run over PCIe, not SCALE003 for its 17 links.
    "pod: an NVLink bond trained short (degraded)": pod_fault(
        "links:\n  - {a: gpu0, b: nvsw0, count: 4, state: degraded}",
        frozenset({("TOPO005", ("dgx05/gpu0<->dgx05/nvsw0", "dgx05/gpu0"))}),
    ),
    # dgx05's nvsw1 down: under NVSWITCH_FAILURE_MODE=0 (the default) the fabric manager leaves the
    # board's fabric uninitialized; all 8 GPUs are linked to nvsw1, so none has an NVLink peer. One
    # error naming the chip (SCALE007), not SCALE006's warning, not TOPO004's split into 8 domains,
    # not BW001 for 28 pairs.
    "pod: an NVSwitch chip down": pod_fault(
        "devices: {nvsw1: {state: down}}",
        frozenset({("SCALE007", ("dgx05/nvsw1",))}),
    ),
    # mi300x-n1's gpu3 lost all 7 of its xGMI links: the full mesh (full_mesh promises one domain)
    # keeps the other 7 GPUs, gpu3 has no peer. One error naming its 7 links and gpu3 (TOPO005),
    # not 7 SCALE001 warnings saying no domain is split.
    "mixed: an MI300X GPU with every xGMI link down": mi300x_fault(
        f"{{links: [{_XGMI_OF_GPU3}]}}",
        frozenset(
            {
                (
                    "TOPO005",
                    (
                        "mi300x-n1/gpu0<->mi300x-n1/gpu3",
                        "mi300x-n1/gpu1<->mi300x-n1/gpu3",
                        "mi300x-n1/gpu2<->mi300x-n1/gpu3",
                        "mi300x-n1/gpu3<->mi300x-n1/gpu4",
                        "mi300x-n1/gpu3<->mi300x-n1/gpu5",
                        "mi300x-n1/gpu3<->mi300x-n1/gpu6",
                        "mi300x-n1/gpu3<->mi300x-n1/gpu7",
                        "mi300x-n1/gpu3",
                    ),
                )
            }
        ),
    ),
    # An HGX A100 board whose fabric manager runs ACCESS_LINK_FAILURE_MODE=1 (declared on the node
    # type) with gpu0 - nvsw0 degraded: the switch plane is disabled instead, gpu0 stays in the
    # domain: SCALE001's warning naming the link, no error.
    "mixed: an A100 access link degraded under access_link_failure_mode 1": Fault(
        MIXED,
        '{template: mf-hgx-a100, name: "a100-n{i}", count: 2}',
        '{template: mf-hgx-a100, name: "a100-n{i}", count: 2, attrs: {access_link_failure_mode: 1},'
        " overrides: {a100-n1: {links: [{a: gpu0, b: nvsw0, state: degraded}]}}}",
        frozenset({("SCALE001", ("a100-n1/gpu0<->a100-n1/nvsw0",))}),
    ),
    # dgx05's gpu0 written with 800 GB of HBM, a zero too many: 800,000 MB x 1000 > 80,000 MB x 1500
    # (catalog_figure_above_max_permille) of the H100-SXM5-80GB. One MEM001 error naming the GPU (not
    # also NODE007 for the node differing from its type: the one figure is the one cause).
    "pod: a GPU's HBM written ten times too large": pod_fault(
        "devices: {gpu0: {memory: {size: 800 GB}}}",
        frozenset({("MEM001", ("dgx05/gpu0",))}),
    ),
    # mi300x-n1's gpu3 with its HBM bandwidth written 53 TB/s for 5.3 TB/s (a decimal slip):
    # 53,000,000 x 1000 > 5,300,000 x 1500. One MEM001 error.
    "mixed: an MI300X's HBM bandwidth with a decimal slip": mi300x_fault(
        "{devices: {gpu3: {memory: {bandwidth: 53 TB/s}}}}",
        frozenset({("MEM001", ("mi300x-n1/gpu3",))}),
    ),
    # The GB200 rack's switch tray swtray4 down (a node of its own): its 2 chips carry nothing, and each
    # of the 72 GPUs loses its one NVLink 5 link to each (2 x 50,000 MB/s): 72 x 100,000 = 7,200,000
    # MB/s. The rack-scale domain keeps its GPUs (16 chips left); one warning naming the tray
    # (SCALE008), not one per chip, no TOPO005 or SCALE007.
    "gb200: an NVLink switch tray down": Fault(
        GB200,
        "        labels: {role: nvlink-switch-tray}\n",
        "        labels: {role: nvlink-switch-tray}\n        overrides: {swtray4: {state: down}}\n",
        frozenset({("SCALE008", ("swtray4",))}),
    ),
}

NON_FAULTS: dict[str, Fault] = {
    # dgx05's gpu0 written as 80 GiB (85,899 MB): the catalogue's 80 GB in binary units, 1.07 x, within
    # catalog_figure_above_max_permille (1500): no MEM001, and the type declares no figure to differ from.
    "pod: a GPU's HBM written in GiB": pod_fault("devices: {gpu0: {memory: {size: 80 GiB}}}", frozenset()),
    # The fabric manager's default written out (0) on the DGX node type: the same platform, nothing new.
    "pod: the fabric manager's default mode written out": Fault(
        POD,
        "    promises: [nvlink_domain, rail_optimized, gpu_nic_affinity]\n",
        "    promises: [nvlink_domain, rail_optimized, gpu_nic_affinity]\n"
        "    attrs: {access_link_failure_mode: 0, nvswitch_failure_mode: 0}\n",
        frozenset(),
    ),
    # A link drained for maintenance is healthy, out of service by choice: no finding.
    "pod: an NVLink bond drained": pod_fault("links:\n  - {a: gpu0, b: nvsw0, state: drained}", frozenset()),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_platform_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)


@pytest.mark.parametrize("name", sorted(NON_FAULTS))
def test_a_platform_non_fault_adds_nothing(name: str, tmp_path: Path) -> None:
    check_fault(NON_FAULTS[name], tmp_path)
