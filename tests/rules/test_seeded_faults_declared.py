"""Seeded faults of what an inventory declares against the hardware or its own layout: an NVLink
generation its ends do not speak, a node labelled with another zone than the pod it stands in.

Each case seeds one fault into a copy of a shipped inventory (tests/seeded_faults.py) and names, derived
by hand in its comment, exactly the (rule, subjects) it adds; the non-faults an expert accepts add nothing.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import EDGE, GB200, MIXED, POD, Fault, check_fault, pod_fault

FAULTS: dict[str, Fault] = {
    # dgx05's gpu3 - nvsw2 bond written NVLink generation 3: the H100-SXM5-80GB and the NVSwitch-Gen3
    # both speak NVLink 4 (catalogue), and generation 3 derives the same 25 GB/s per link, so no
    # bandwidth check sees it. One LINK013 error naming the link (not SCALE003 for gpu3).
    "pod: an NVLink bond written one generation too old": pod_fault(
        "links:\n  - {a: gpu3, b: nvsw2, generation: 3}",
        frozenset({("LINK013", ("dgx05/gpu3<->dgx05/nvsw2",))}),
    ),
    # Every GB200 GPU's link to swtray3/chip1 written generation 4 (the B200 and the NVLink Switch
    # Gen4 chip both speak NVLink 5): 72 links of one foreach line, one LINK013 error naming them all;
    # not SCALE003 for the 72 GPUs whose derived bandwidth drops by 25,000 MB/s (the one cause).
    "gb200: the links to one switch chip written NVLink 4": Fault(
        GB200,
        "    foreach: {t: 0..17, g: 0..3, s: 0..8, c: [0, 1]}",
        "    foreach: {t: 0..17, g: 0..3, s: [0, 1, 2, 4, 5, 6, 7, 8], c: [0, 1]}\n"
        '  - {a: "tray{t:02d}/gpu{g}", b: swtray3/chip0, kind: nvswitch, generation: 5, count: 1,'
        " foreach: {t: 0..17, g: 0..3}}\n"
        '  - {a: "tray{t:02d}/gpu{g}", b: swtray3/chip1, kind: nvswitch, generation: 4, count: 1,'
        " foreach: {t: 0..17, g: 0..3}}",
        frozenset({("LINK013", tuple(f"tray{t:02d}/gpu{g}<->swtray3/chip1" for t in range(18) for g in range(4)))}),
    ),
    # The DGX node type's 4 NVSwitch chips written NVLink-Switch-Gen4 (NVLink 5 ports, a GB200 rack's
    # chip): each of the 8 x 8 x 4 = 256 GPU - chip bonds, written generation 4, joins an H100 (NVLink
    # 4) to NVLink 5 ports. One LINK013 error naming the 256 links (grouped by the model pair and the
    # generation: one cause, one line written wrong).
    "pod: the NVSwitch chips written as another generation's model": Fault(
        POD,
        '{name: "nvsw{i}", kind: nvswitch, model: NVSwitch-Gen3, count: 4}',
        '{name: "nvsw{i}", kind: nvswitch, model: NVLink-Switch-Gen4, count: 4}',
        frozenset(
            {
                (
                    "LINK013",
                    tuple(
                        sorted(
                            f"dgx{n:02d}/gpu{g}<->dgx{n:02d}/nvsw{s}"
                            for n in range(8)
                            for g in range(8)
                            for s in range(4)
                        )
                    ),
                )
            }
        ),
    ),
    # dgx05 labelled zone us-west-2b; its racks carry no zone, its pod pod0 says us-east-1a. One
    # NODE011 warning naming dgx05.
    "pod: a node labelled another zone than its pod": pod_fault(
        "labels: {zone: us-west-2b}",
        frozenset({("NODE011", ("dgx05",))}),
    ),
    # h100-n1 labelled eu-west-1b; its rack euw-h100 says eu-west-1a (nearer than the pod, which also
    # says eu-west-1a). One NODE011 warning naming h100-n1.
    "mixed: an H100 node labelled another zone than its rack": Fault(
        MIXED,
        '{template: mf-hgx-h100, name: "h100-n{i}", count: 2}',
        '{template: mf-hgx-h100, name: "h100-n{i}", count: 2, overrides: {h100-n1: {labels: {zone: eu-west-1b}}}}',
        frozenset({("NODE011", ("h100-n1",))}),
    ),
    # The DGX node type's power written 102 kW for 10.2 kW: its catalogued parts are 8 H100 (700 W)
    # and 2 Xeon-8480C (350 W), 6300 W; 102,000 x 1000 > 6300 x 4000 (node_power_parts_max_permille).
    # The 8 nodes of the one template line: one NODE012 warning naming them.
    "pod: the node type's power ten times too large": Fault(
        POD,
        "    power: 10.2 kW  ",
        "    power: 102 kW  ",
        frozenset({("NODE012", tuple(f"dgx{n:02d}" for n in range(8)))}),
    ),
    # mi300x-n1's power written 850 W for 8.5 kW: its parts are 8 MI300X (750 W) and 2 EPYC-9654
    # (360 W), 6720 W (the PEX89104 switches and ConnectX-7 carry no catalogue power); 850 x 1000 <
    # 6720 x 500. One NODE012 warning naming mi300x-n1.
    "mixed: an MI300X node's power ten times too small": Fault(
        MIXED,
        '{template: mf-mi300x, name: "mi300x-n{i}", count: 2}',
        '{template: mf-mi300x, name: "mi300x-n{i}", count: 2, overrides: {mi300x-n1: {power: 850 W}}}',
        frozenset({("NODE012", ("mi300x-n1",))}),
    ),
    # The edge SoC's P-cluster L2 (l2-p, unified, 16 MiB = 16,777 KB) written to serve p0, p1, e2, e3:
    # e2 and e3 also have the E cluster's L2 (l2-e, unified, 4 MiB = 4,194 KB), two unified level-2
    # caches on their paths. One MEM004 warning at the larger, l2-p, on the first such core, e2.
    "edge: the P cluster's L2 serving two E cores": Fault(
        EDGE,
        "serves: [p0, p1, p2, p3]",
        "serves: [p0, p1, e2, e3]",
        frozenset({("MEM004", ("edge-m2-01/e2", "edge-m2-01/l2-p"))}),
    ),
    # l2-p written level 1: on each P core's path a unified 16,777 KB cache beside the core's split L1
    # (p0-l1i 197 KB instruction, p0-l1d 131 KB data). One MEM004 warning at l2-p, on p0 (first by id).
    "edge: the P cluster's L2 written level 1": Fault(
        EDGE,
        "                  - name: l2-p\n                    kind: cache\n                    level: 2",
        "                  - name: l2-p\n                    kind: cache\n                    level: 1",
        frozenset({("MEM004", ("edge-m2-01/p0", "edge-m2-01/l2-p"))}),
    ),
    # The GB200 tray type's GPUs written B200-HGX-180GB (the HGX board's B200, which has no NVLink-C2C
    # port) instead of the superchip's B200-GB200-186GB: each of the two C2C lines of the type (Grace 0
    # to GPUs 0 and 1, Grace 1 to GPUs 2 and 3; 36 links each over 18 trays) carries 450,000 MB/s into
    # a GPU that carries 0 on C2C. One LINK001 error per line, naming its links and their GPU ends.
    "gb200: the tray's GPUs written as the HGX B200": Fault(
        GB200,
        "model: B200-GB200-186GB",
        "model: B200-HGX-180GB",
        frozenset(
            {
                (
                    "LINK001",
                    tuple(
                        [f"tray{t:02d}/grace{c}<->tray{t:02d}/gpu{g}" for t in range(18) for g in gs]
                        + [f"tray{t:02d}/gpu{g}" for t in range(18) for g in gs]
                    ),
                )
                for c, gs in ((0, (0, 1)), (1, (2, 3)))
            }
        ),
    ),
    # rtx-n0's quarantine label dropped, its reason (PSU recall INC-2291) left: nothing closes the
    # workstation the reason says is quarantined. One AUTHZ005 warning naming rtx-n0.
    "mixed: a quarantine dropped, its reason left": Fault(
        MIXED,
        'rtx-n0:\n                    labels: {quarantine: "true", quarantine_reason: "PSU recall INC-2291"}',
        'rtx-n0:\n                    labels: {quarantine_reason: "PSU recall INC-2291"}',
        frozenset({("AUTHZ005", ("rtx-n0",))}),
    ),
}

NON_FAULTS: dict[str, Fault] = {
    # The mixed fleet's MI300X rack says eu-west-1b under a pod that says eu-west-1a: the owner's
    # grouping. An MI300X node labelled eu-west-1b, as its rack, adds nothing.
    "mixed: an MI300X node labelled its rack's zone": Fault(
        MIXED,
        '{template: mf-mi300x, name: "mi300x-n{i}", count: 2}',
        '{template: mf-mi300x, name: "mi300x-n{i}", count: 2, overrides: {mi300x-n1: {labels: {zone: eu-west-1b}}}}',
        frozenset(),
    ),
    # The DGX bond's generation written out as what it is (4): nothing new.
    "pod: an NVLink bond's generation written out": pod_fault(
        "links:\n  - {a: gpu3, b: nvsw2, generation: 4}", frozenset()
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_declared_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)


@pytest.mark.parametrize("name", sorted(NON_FAULTS))
def test_a_declared_non_fault_adds_nothing(name: str, tmp_path: Path) -> None:
    check_fault(NON_FAULTS[name], tmp_path)
