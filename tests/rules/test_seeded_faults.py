"""Single faults seeded into the shipped inventories, each caught by the check that owns it, once.

Each case writes one realistic fault into a copy of a shipped inventory (an override of one node,
or one cable changed) and lists the findings it must add to that inventory's own, as (rule,
subjects) pairs worked out by hand from the fault: which check owns that kind of fault, and which
objects it names. A fault that adds nothing, or a second finding for the same cause, fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from seeded_faults import (
    EDGE,
    MIXED,
    POD,
    Fault,
    check_fault,
    dgx07_fault,
    mi300x_fault,
    pod_fault,
    tray_fault,
)

FAULTS: dict[str, Fault] = {
    # PCIE001: the link runs below the width (generation) the node type plans for it.
    "pod: a GPU's PCIe link at x8": pod_fault(
        "links:\n  - {a: gpu3, b: pcie1, lanes: 8}",
        frozenset({("PCIE001", ("dgx05/gpu3", "dgx05/gpu3<->dgx05/pcie1"))}),
    ),
    "pod: a GPU's PCIe link at Gen4": pod_fault(
        "links:\n  - {a: gpu3, b: pcie1, generation: 4}",
        frozenset({("PCIE001", ("dgx05/gpu3", "dgx05/gpu3<->dgx05/pcie1"))}),
    ),
    # The node type's line for GPUs 2 and 3 at Gen4 where the H100 and the PEX89104 run Gen5: one line,
    # one finding naming the 16 GPUs and their 16 links, dgx03 included (its override changes an
    # NVLink bond of gpu2, not the PCIe link this finding is about).
    "pod: the node type's PCIe line for GPUs 2 and 3 at Gen4": Fault(
        POD,
        '{a: "gpu{g}", b: pcie1, kind: pcie, generation: 5',
        '{a: "gpu{g}", b: pcie1, kind: pcie, generation: 4',
        frozenset(
            {
                (
                    "PCIE001",
                    (
                        *(f"dgx{n:02d}/gpu{g}" for n in range(8) for g in (2, 3)),
                        *(f"dgx{n:02d}/gpu{g}<->dgx{n:02d}/pcie1" for n in range(8) for g in (2, 3)),
                    ),
                )
            }
        ),
    ),
    # A link the node type declares, left out of one node: NODE004 names the node and the link; the
    # GPU it leaves without a way to a NIC is not also TOPO001's (gpu3 of dgx00, built exactly from
    # the type, reaches one), and a NIC left without a host is not also TOPO006's or BW006's.
    "pod: a GPU's PCIe link left out": pod_fault(
        "links:\n  - {a: gpu3, b: pcie1, remove: true}",
        frozenset({("NODE004", ("dgx05",))}),
    ),
    "pod: a NIC's PCIe link left out": pod_fault(
        "links:\n  - {a: nic3, b: pcie1, remove: true}",
        frozenset({("NODE004", ("dgx05",))}),
    ),
    # The node type's line for NICs 6 and 7 left out: no CPU reaches them in any node. One line, one
    # TOPO006 finding naming the 16 NICs; GPUs 6 and 7 landing on rail 4's NIC is that cause too.
    "pod: the node type's PCIe line for NICs 6 and 7 left out": Fault(
        POD,
        '      - {a: "nic{g}", b: pcie3, kind: pcie, generation: 5, lanes: 16, foreach: {g: [6, 7]}}\n',
        "",
        frozenset({("TOPO006", tuple(f"dgx{n:02d}/nic{k}" for n in range(8) for k in (6, 7)))}),
    ),
    # The uplinks of pcie2 and pcie3 to cpu1 left out: the switches, and the GPUs and NICs behind them,
    # reach no CPU (no root port enumerates them). A finding per switch of the type (each is wired by
    # lines of its own), naming it in the 8 nodes; what hangs off them is in the switch's finding.
    "pod: the node type's uplinks to cpu1 left out": Fault(
        POD,
        '      - {a: "pcie{s}", b: cpu1, kind: pcie, generation: 5, lanes: 16, foreach: {s: [2, 3]}}\n',
        "",
        frozenset({("TOPO006", tuple(f"dgx{n:02d}/pcie{s}" for n in range(8))) for s in (2, 3)}),
    ),
    # x32 where the H100 and its switch slot have 16 lanes: a width no end supports (LINK002), the
    # one finding, not also NODE005 for the width differing from the type's x16.
    "pod: a GPU's PCIe link written at x32": pod_fault(
        "links:\n  - {a: gpu3, b: pcie1, lanes: 32}",
        frozenset({("LINK002", ("dgx05/gpu3<->dgx05/pcie1", "dgx05/gpu3"))}),
    ),
    # dgx07/nic7's cable written as 2 cables at 800 Gb/s on a single-port ConnectX-7 (LINK001: more
    # than its one 400 Gb/s port carries); leaf7's downlinks are not also BW005's: at the NIC's one
    # port the leaf is as the others.
    "pod: a NIC cable written as two": dgx07_fault(
        6,
        "{a: dgx07/nic7, b: leaf7, kind: infiniband, count: 2, bandwidth: 800 Gb/s}",
        frozenset({("LINK001", ("dgx07/nic7<->leaf7", "dgx07/nic7"))}),
    ),
    # TOPO001: gpu3's one host link is down, so it reaches no NIC (the link itself is not reported twice).
    "pod: a GPU's PCIe link down": pod_fault(
        "links:\n  - {a: gpu3, b: pcie1, state: down}",
        frozenset({("TOPO001", ("dgx05/gpu3",))}),
    ),
    # A NIC down cuts GPU 3 off its rail: HEALTH002's error (HEALTH001 keeps degraded devices).
    "pod: a NIC down": pod_fault(
        "devices: {nic3: {state: down}}",
        frozenset({("HEALTH002", ("dgx05/nic3",))}),
    ),
    "pod: a PCIe switch degraded": pod_fault(
        "devices: {pcie1: {state: degraded}}",
        frozenset({("HEALTH001", ("dgx05/pcie1",))}),
    ),
    "pod: a GPU missing": pod_fault(
        "devices: {gpu3: {remove: true}}",
        frozenset({("NODE001", ("dgx05",))}),
    ),
    "pod: an NVSwitch chip missing": pod_fault(
        "devices: {nvsw2: {remove: true}}",
        frozenset({("NODE001", ("dgx05",))}),
    ),
    # NIC 3 is rail 3's; gpu3 then reaches the fabric through NIC 2 (rail 2), and its cable to
    # leaf3 has no end in the inventory: the missing device is the one cause (not BW006, not LINK*).
    "pod: a NIC missing": pod_fault(
        "devices: {nic3: {remove: true}}",
        frozenset({("NODE001", ("dgx05",))}),
    ),
    # pcie1 hosts gpu2, gpu3, nic2 and nic3: with it gone they reach no CPU and no NIC, but the node
    # lacks a device its type declares, which is the one cause (not TOPO001 for two GPUs).
    "pod: a PCIe switch missing": pod_fault(
        "devices: {pcie1: {remove: true}}",
        frozenset({("NODE001", ("dgx05",))}),
    ),
    # The node type declares H100-SXM5-80GB: a GPU of another model is one NODE002 finding, not
    # also SCALE003 for the NVLink count the type planned for an H100 (18) against the A100's (12).
    "pod: a GPU of another model": pod_fault(
        "devices: {gpu3: {model: A100-SXM4-80GB}}",
        frozenset({("NODE002", ("dgx05/gpu3", "dgx05"))}),
    ),
    # A ConnectX-6 Dx (200 Gb/s ports) where the type declares a ConnectX-7, its cable still written at
    # NDR's 400 Gb/s: the swap is the one cause (NODE002), not also LINK001 for the cable.
    "pod: a NIC of another model": pod_fault(
        "devices: {nic3: {model: ConnectX-6-Dx}}",
        frozenset({("NODE002", ("dgx05/nic3", "dgx05"))}),
    ),
    # An EPYC 9654 (12 DDR5 channels, 460.8 GB/s) where the type declares a Xeon 8480C: its socket's
    # DRAM, written for the Xeon's 8 channels (307.2 GB/s), is not also MEM005's.
    "pod: a CPU of another model": pod_fault(
        "devices: {cpu1: {model: EPYC-9654}}",
        frozenset({("NODE002", ("dgx05/cpu1", "dgx05"))}),
    ),
    # pcie1's uplink to cpu0 at x8 where the type plans x16 (NODE005's): 2 GPUs + 2 NICs at x16
    # Gen5 (4 x 64 GB/s) over a 32 GB/s uplink puts the switch over BW004's limit, but the twin
    # switch of the reference node is within it, so the narrow link is the one cause.
    "pod: a PCIe switch uplink at x8": pod_fault(
        "links:\n  - {a: pcie1, b: cpu0, lanes: 8}",
        frozenset({("NODE005", ("dgx05",))}),
    ),
    "pod: another driver": pod_fault(
        'software: {driver: "550.54.15"}',
        frozenset({("NODE006", ("dgx05",))}),
    ),
    # 4 of the 5 NVLinks to nvsw0: 17 links, 425 GB/s where an H100 SXM5 has 18 and 450 GB/s.
    "pod: an NVLink bond short of one link": pod_fault(
        "links:\n  - {a: gpu0, b: nvsw0, count: 4}",
        frozenset({("SCALE003", ("dgx05/gpu0",))}),
    ),
    # An access NVLink down on an HGX board in the fabric manager's default mode: gpu0 is taken out
    # of NVLink peer-to-peer and falls out of dgx05's promised domain (rules/topology/lib/platform.dl).
    "pod: an NVLink bond down": pod_fault(
        "links:\n  - {a: gpu0, b: nvsw0, state: down}",
        frozenset({("TOPO005", ("dgx05/gpu0<->dgx05/nvsw0", "dgx05/gpu0"))}),
    ),
    "pod: the UPI link down": pod_fault(
        "links:\n  - {a: cpu0, b: cpu1, state: down}",
        frozenset({("LINK008", ("dgx05/cpu0<->dgx05/cpu1",))}),
    ),
    # A failed DIMM: socket 1's DRAM at 512 GB where dgx-h100 declares 1 TB.
    "pod: a socket's DRAM at half its size": pod_fault(
        "devices: {dram1: {size: 512 GB}}",
        frozenset({("NODE007", ("dgx05/dram1", "dgx05"))}),
    ),
    "pod: a cable down": dgx07_fault(
        6,
        "{a: dgx07/nic7, b: leaf7, kind: infiniband, bandwidth: 400 Gb/s, state: down}",
        frozenset({("LINK006", ("dgx07/nic7<->leaf7", "dgx07/nic7"))}),
    ),
    "pod: a cable missing": dgx07_fault(6, "", frozenset({("LINK003", ("dgx07/nic7",))})),
    # 200 Gb/s is 25000 MB/s per direction, below the 50000 that both 400 Gb/s ports carry.
    "pod: a cable at half speed": dgx07_fault(
        6,
        "{a: dgx07/nic7, b: leaf7, kind: infiniband, bandwidth: 200 Gb/s}",
        frozenset({("LINK005", ("dgx07/nic7<->leaf7", "dgx07/nic7", "leaf7"))}),
    ),
    # NIC 6 on rail 7's leaf and NIC 7 on rail 6's: GPUs 6 and 7 each land on another rail.
    "pod: two cables swapped": dgx07_fault(
        5,
        "{a: dgx07/nic6, b: leaf7, kind: infiniband, bandwidth: 400 Gb/s}\n"
        "  - {a: dgx07/nic7, b: leaf6, kind: infiniband, bandwidth: 400 Gb/s}",
        frozenset(
            {
                ("BW006", ("dgx07/gpu6", "dgx07/nic6", "leaf7")),
                ("BW006", ("dgx07/gpu7", "dgx07/nic7", "leaf6")),
            }
        ),
    ),
    # The cable is right (GPU 3's NIC on rail 3's leaf); the NIC's label, which placement reads, is not.
    "pod: a NIC labelled with another rail": pod_fault(
        'devices: {nic3: {labels: {rail: "4"}}}',
        frozenset({("BW007", ("dgx05/nic3", "dgx05/nic3<->leaf3", "leaf3"))}),
    ),
    # ConnectX-7 speaks Ethernet too; the QM9700 leaf only InfiniBand.
    "pod: an Ethernet cable into an InfiniBand leaf": dgx07_fault(
        6,
        "{a: dgx07/nic7, b: leaf7, kind: ethernet, bandwidth: 400 Gb/s}",
        frozenset({("LINK001", ("dgx07/nic7<->leaf7", "leaf7"))}),
    ),
    "pod: a NIC cabled to a spine": dgx07_fault(
        6,
        "{a: dgx07/nic7, b: spine0, kind: infiniband, bandwidth: 400 Gb/s}",
        frozenset({("BW008", ("dgx07/gpu7", "dgx07/nic7", "spine0"))}),
    ),
    # leaf7 keeps 3 of its 4 spine uplinks: 400 GB/s down over 300 GB/s up.
    # The leaf-spine line at 400 Gb/s for its 2 cables, where both QM9700 ports carry 2 x 400: one
    # line, one LINK005 finding naming its 32 links and their ends. At their ports' speed each leaf
    # has 4 x 100000 MB/s up for 8 x 50000 down (1:1, within BW005's limit): the slow links are
    # the cause of the leaves' 2:1, not a leaf designed short of uplinks.
    "pod: the leaf-spine cables at half speed": Fault(
        POD,
        "bandwidth: 800 Gb/s ",
        "bandwidth: 400 Gb/s ",
        frozenset(
            {
                (
                    "LINK005",
                    (
                        *(f"leaf{leaf}<->spine{spine}" for leaf in range(8) for spine in range(4)),
                        *(f"leaf{leaf}" for leaf in range(8)),
                        *(f"spine{spine}" for spine in range(4)),
                    ),
                )
            }
        ),
    ),
    # The NIC cables' line written 400 GB/s for 400 Gb/s: 400000 MB/s per cable, above the 50000 that
    # the ConnectX-7 and QM9700 ports carry. One line, one LINK001 finding naming the 64 cables and
    # the NIC end of each (the two ends carry the same; the smaller id is reported). The leaves' 8:1
    # that the figure makes is not also BW005's: at their ports' figures they are 1:1.
    "pod: the NIC cables written in GB/s": Fault(
        POD,
        "bandwidth: 400 Gb/s            # ConnectX-7",
        "bandwidth: 400 GB/s            # ConnectX-7",
        frozenset(
            {
                (
                    "LINK001",
                    (
                        *sorted(f"dgx{n:02d}/nic{r}<->leaf{r}" for n in range(8) for r in range(8)),
                        *sorted(f"dgx{n:02d}/nic{r}" for n in range(8) for r in range(8)),
                    ),
                )
            }
        ),
    ),
    "pod: a leaf short of one spine uplink": Fault(
        POD,
        "    foreach: {l: 0..7, s: 0..3}",
        "    foreach: {l: 0..6, s: 0..3}\n"
        '  - {a: leaf7, b: "spine{s}", kind: infiniband, count: 2, bandwidth: 800 Gb/s, foreach: {s: 0..2}}',
        frozenset({("BW005", ("leaf7",))}),
    ),
    "gb200: a C2C link trained at half speed": tray_fault(
        "links:\n  - {a: grace0, b: gpu1, bandwidth: 225 GB/s}",
        frozenset({("NODE005", ("tray05",))}),
    ),
    # gpu1 is cut off its NICs; gpu0's own C2C link is still judged against the half of the LPDDR5X
    # it was built to share (256 GB/s), not all of it.
    "gb200: a C2C link down": tray_fault(
        "links:\n  - {a: grace0, b: gpu1, state: down}",
        frozenset({("TOPO001", ("tray05/gpu1",))}),
    ),
    "gb200: a C2C link left out": tray_fault(
        "links:\n  - {a: grace0, b: gpu1, remove: true}",
        frozenset({("NODE004", ("tray05",))}),
    ),
    # 900 GB/s, the C2C link's two directions together, written per direction: above the Grace's
    # 450 GB/s port (LINK001), not also NODE005 for differing from the type's 450.
    "gb200: a C2C link written at both directions' 900 GB/s": tray_fault(
        "links:\n  - {a: grace0, b: gpu1, bandwidth: 900 GB/s}",
        frozenset({("LINK001", ("tray05/grace0<->tray05/gpu1", "tray05/grace0"))}),
    ),
    "gb200: a Grace's LPDDR5X at half its size": tray_fault(
        "devices: {lpddr1: {size: 240 GB}}",
        frozenset({("NODE007", ("tray05/lpddr1", "tray05"))}),
    ),
    "gb200: a NIC's PCIe link at Gen4": tray_fault(
        "links:\n  - {a: grace0, b: nic1, generation: 4}",
        frozenset({("NODE005", ("tray05",))}),
    ),
    "gb200: a GPU of another model": tray_fault(
        "devices: {gpu2: {model: H100-SXM5-80GB}}",
        frozenset({("NODE002", ("tray05/gpu2", "tray05"))}),
    ),
    # An xGMI link of the full mesh down: one finding for the link, none per pair it leaves on PCIe.
    "mixed: an MI300X xGMI link down": mi300x_fault(
        "{links: [{a: gpu0, b: gpu5, state: down}]}",
        frozenset({("SCALE001", ("mi300x-n1/gpu0<->mi300x-n1/gpu5",))}),
    ),
    # One tray of the NVL72 rack rolled back to an older NCCL: that tray is the one that differs
    # from its NVLink domain (the other 17 run the type's 2.25.1), not the 17.
    "gb200: a tray's NCCL rolled back": tray_fault(
        'software: {nccl: "2.23.4"}',
        frozenset({("SW004", ("tray05",))}),
    ),
    # The node type's driver line: 470.57.02 is older than 535.54.03, the least driver NVIDIA lists for
    # CUDA 12.2. One written line, one finding naming all 8 nodes: dgx03's override of one NVLink
    # bond changes nothing SW001 reads.
    "pod: the node type's driver too old for its CUDA": Fault(
        POD,
        'driver: "535.129.03"',
        'driver: "470.57.02"',
        frozenset({("SW001", tuple(f"dgx{n:02d}" for n in range(8)))}),
    ),
    # 525.60.13 is older than 550.54.14, the least driver for CUDA 12.4: one finding for the four
    # workstations, though rtx-n0..n2 carry overrides (labels, a GPU down) that SW001 does not read.
    "mixed: the workstations' driver too old for their CUDA": Fault(
        MIXED,
        'software: {driver: "550.54.14", cuda: "12.4"',
        'software: {driver: "525.60.13", cuda: "12.4"',
        frozenset({("SW001", ("rtx-n0", "rtx-n1", "rtx-n2", "rtx-n3"))}),
    ),
    # The SoC fabric link from die0 to the LPDDR5 at 50 GB/s: every client reaches the 100 GB/s
    # memory through it (die0 its one reader across a link, share 100 GB/s x the default 1000/1000).
    "edge: the memory's fabric link at half speed": Fault(
        EDGE,
        "- {a: die0, b: lpddr5, kind: soc, bandwidth: 100 GB/s}",
        "- {a: die0, b: lpddr5, kind: soc, bandwidth: 50 GB/s}",
        frozenset({("MEM002", ("edge-m2-01/die0<->edge-m2-01/lpddr5", "edge-m2-01/die0", "edge-m2-01/lpddr5"))}),
    ),
    # h100-n1's nic3 relabelled rail 2: two NICs on rail 2 and none on rail 3. The leaf carries no
    # rail label, so no cable contradicts it: the label against the node type is the finding.
    "mixed: an H100 NIC labelled with another rail": Fault(
        MIXED,
        '{template: mf-hgx-h100, name: "h100-n{i}", count: 2}',
        '{template: mf-hgx-h100, name: "h100-n{i}", count: 2,\n'
        '                 overrides: {h100-n1: {devices: {nic3: {labels: {rail: "2"}}}}}}',
        frozenset({("NODE008", ("h100-n1/nic3", "h100-n1"))}),
    ),
    # The P cluster's fabric link at 10 GB/s where the operator budgets 25000 MB/s for the cluster:
    # the budget cannot reach the memory (the 100 GB/s memory itself is not the limit: MEM003's
    # sum, 95000 MB/s, is within it).
    "edge: the P cluster's fabric link at 10 GB/s": Fault(
        EDGE,
        '- {a: "{c}", b: die0, kind: soc, bandwidth: 100 GB/s, foreach: {c: [pcluster, ecluster, igpu]}}',
        '- {a: "{c}", b: die0, kind: soc, bandwidth: 100 GB/s, foreach: {c: [ecluster, igpu]}}\n'
        "      - {a: pcluster, b: die0, kind: soc, bandwidth: 10 GB/s}",
        frozenset({("MEM006", ("edge-m2-01/pcluster", "edge-m2-01/pcluster<->edge-m2-01/die0"))}),
    ),
    # One xGMI link of the full mesh left out: NODE004 names the link its type declares, the one
    # finding; the pair talking over PCIe (BW001) and each end short of the MI300X's 7 links
    # (SCALE003) are what that link's absence means.
    "mixed: an xGMI link of the mesh left out": mi300x_fault(
        "{links: [{a: gpu0, b: gpu5, remove: true}]}",
        frozenset({("NODE004", ("mi300x-n1",))}),
    ),
    # The same link written as a bond of 2 (8 links at each end, where an MI300X has 7), or at a
    # lower generation and bandwidth: NODE005 names the one link against its type, not SCALE003 for
    # each of its two ends.
    "mixed: an xGMI link of the mesh written as two": mi300x_fault(
        "{links: [{a: gpu0, b: gpu5, count: 2}]}",
        frozenset({("NODE005", ("mi300x-n1",))}),
    ),
    "mixed: an xGMI link of the mesh at generation 3": mi300x_fault(
        "{links: [{a: gpu0, b: gpu5, generation: 3, bandwidth: 32 GB/s}]}",
        frozenset({("NODE005", ("mi300x-n1",))}),
    ),
    # The 10GbE controller's lane trained at Gen1: 10 Gb/s = 1250 MB/s through 1 x 250 MB/s.
    "edge: the Ethernet controller's lane at Gen1": Fault(
        EDGE,
        "      - {a: eth0, b: die0, kind: pcie, generation: 4, lanes: 1}\n",
        "      - {a: eth0, b: die0, kind: pcie, generation: 1, lanes: 1}\n",
        frozenset({("BW003", ("edge-m2-01/eth0",))}),
    ),
    # The 10GbE controller's PCIe link left out: no CPU reaches it (TOPO006); the integrated GPU that
    # reaches no NIC because of it is not also TOPO001's.
    "edge: the Ethernet controller's link left out": Fault(
        EDGE,
        "      - {a: eth0, b: die0, kind: pcie, generation: 4, lanes: 1}\n",
        "",
        frozenset({("TOPO006", ("edge-m2-01/eth0",))}),
    ),
    # The workstations' GPU line at x16 where the board runs x8/x8: 16 + 16 + the NIC's 4 = 36 lanes
    # written to a Ryzen 9 7950X, which has 28 (one line, one finding for the four CPUs).
    "mixed: the workstations' GPUs written at x16": Fault(
        MIXED,
        '{a: "gpu{g}", b: cpu0, kind: pcie, generation: 4, lanes: 8, foreach: {g: [0, 1]}}',
        '{a: "gpu{g}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {g: [0, 1]}}',
        frozenset({("LINK009", ("rtx-n0/cpu0", "rtx-n1/cpu0", "rtx-n2/cpu0", "rtx-n3/cpu0"))}),
    ),
    # nic1 (on cpu1) gone: GPUs 4-7 reach the fabric only across the sockets (SYS), where a100-n0's
    # reach nic1 on their own socket: the missing NIC is the one cause (NODE001), not BW002.
    "mixed: an A100 node's second NIC missing": Fault(
        MIXED,
        '{template: mf-hgx-a100, name: "a100-n{i}", count: 2}',
        '{template: mf-hgx-a100, name: "a100-n{i}", count: 2, overrides: {a100-n1: {devices: {nic1: {remove: true}}}}}',
        frozenset({("NODE001", ("a100-n1",))}),
    ),
    # A Xeon 8480C (80 lanes) where the type declares an EPYC 9654 (128): the 128 lanes written to it
    # were planned for the EPYC, so the swap (NODE002) is the one finding, not also LINK009.
    "mixed: an MI300X node's CPU of another model": mi300x_fault(
        "{devices: {cpu0: {model: Xeon-8480C}}}",
        frozenset({("NODE002", ("mi300x-n1/cpu0", "mi300x-n1"))}),
    ),
    # The workstations' GPUs written with 12 GB, where the RTX 4090 has 24 GB of GDDR6X: MEM001 holds
    # a model without HBM to its device memory figures too (one line, one finding for the 8 GPUs).
    "mixed: the workstations' GPUs written with half their memory": Fault(
        MIXED,
        '- {name: "gpu{i}", kind: gpu, model: RTX-4090, count: 2}',
        '- {name: "gpu{i}", kind: gpu, model: RTX-4090, count: 2, memory: {size: 12 GB}}',
        frozenset({("MEM001", tuple(f"rtx-n{n}/gpu{g}" for n in range(4) for g in range(2)))}),
    ),
    "mixed: an older ROCm": mi300x_fault(
        '{software: {rocm: "6.0.2"}}',
        frozenset({("NODE006", ("mi300x-n1",))}),
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS))
def test_a_seeded_fault_adds_exactly_its_findings(name: str, tmp_path: Path) -> None:
    check_fault(FAULTS[name], tmp_path)
