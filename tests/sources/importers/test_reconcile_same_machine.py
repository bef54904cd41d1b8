"""One machine described by two tools agrees; a seeded difference is named, once.

The machines: the workstation whose `nvidia-smi topo -m` is a real capture (workstation-2gpu-2nic-node.txt:
one socket, GPU0-GPU1 PHB, a two-port mlx5 card NODE away), with its lstopo XML and NCCL dump written by
hand from that matrix; and the real hwloc XML 24em64t-2n6c2t-pci.xml (two sockets), with the nvidia-smi
matrix written by hand from its tree (fixtures/README.md says how each was derived).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import Disagreement, load_side, pair_devices, reconcile
from verifier.sources.inventory.model import Obj

SMI = "workstation-2gpu-2nic-node.txt"
LSTOPO = "workstation-2gpu-2nic-lstopo-handwritten.xml"
NCCL = "workstation-2gpu-2nic-nccl-handwritten.xml"


def _rows(items: list[Disagreement]) -> list[tuple[str, str, str, str]]:
    return [(d.subject, d.what, d.a, d.b) for d in items]


def _block(lines: list[str], marker: str) -> tuple[int, int]:
    """The lines of the XML element whose opening line holds `marker`: [start, end)."""
    start = next(k for k, ln in enumerate(lines) if marker in ln)
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    end = next(k for k in range(start + 1, len(lines)) if lines[k] == indent + "</object>\n")
    return start, end + 1


def _moved_gpu1(fx: Path, tmp_path: Path) -> Path:
    """lstopo with GPU1's root port (and GPU1, 42:00.0) moved from host bridge [40-5f] to [c0-df]."""
    lines = (fx / LSTOPO).read_text().splitlines(keepends=True)
    start, end = _block(lines, 'gp_index="15"')
    gpu1 = lines[start:end]
    rest = lines[:start] + lines[end:]
    anchor = next(k for k, ln in enumerate(rest) if 'gp_index="30"' in ln)
    moved = tmp_path / "lstopo-moved.xml"
    moved.write_text("".join(rest[:anchor] + gpu1 + rest[anchor:]))
    return moved


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (SMI, LSTOPO),
        (SMI, NCCL),
        (NCCL, LSTOPO),
        (LSTOPO, SMI),
        ("24em64t-2n6c2t-nvidia-smi-handwritten.txt", "24em64t-2n6c2t-pci.xml"),
        # The real p4d.24xlarge lstopo excerpt (hwloc 2.10 without its NVML backend: no NVLink stated, so
        # node labelled NVLinks unknown) and its matrix written by hand: NV12 between the two A100 is then
        # no difference; both on host bridge [90-90] (PHB) with the EFA, NIC0 = rdmap144s27 (the ENA has
        # no RDMA device, so nvidia-smi lists it not); NUMA node 1 on both sides.
        ("aws-p4d-24xl-nvidia-smi-handwritten.txt", "aws-p4d-24xl-lstopo-excerpt.xml"),
        ("aws-p4d-24xl-lstopo-excerpt.xml", "aws-p4d-24xl-nvidia-smi-handwritten.txt"),
    ],
)
def test_one_machine_two_tools_agree(fx: Path, a: str, b: str) -> None:
    # Paired by identity: GPU<k> is the k-th GPU by bus id, NIC<k> is its legend's mlx5_N (an OS device of
    # hwloc, a <net name> of NCCL). Not devices: the host bridges and socket nvidia-smi's importer infers,
    # the CPUs and NUMA nodes each tool cuts its own way, and the NICs nvidia-smi never lists (hwloc's
    # enp194s0 and the 24em64t's eth0/eth1 have no RDMA device). The path classes agree: PHB for two GPUs
    # under one host bridge (hwloc reads host bridges; a one-package machine hangs them on the Machine),
    # NODE to the card under the other host bridge, SYS across the 24em64t's two sockets.
    assert reconcile(load_side(fx / a, None), load_side(fx / b, None)) == []


def test_p4d_a_gpu_moved_across_sockets_is_named(fx: Path, tmp_path: Path) -> None:
    # Seeded: the hand-written p4d matrix with GPU1 printed SYS to NIC0 (as if across the sockets): the
    # NVLinks-unknown label hides only NV# between GPUs, so the NIC path is still compared: one difference.
    text = (fx / "aws-p4d-24xl-nvidia-smi-handwritten.txt").read_text()
    seeded = tmp_path / "p4d-smi-seeded.txt"
    seeded.write_text(
        text.replace("GPU1\tNV12\t X \tPHB", "GPU1\tNV12\t X \tSYS").replace("NIC0\tPHB\tPHB", "NIC0\tPHB\tSYS")
    )
    got = reconcile(load_side(seeded, None), load_side(fx / "aws-p4d-24xl-lstopo-excerpt.xml", None))
    # hwloc numbers NICs in bus order (ENA 90:01.0 nic0, EFA 90:1b.0 nic1): NIC0 pairs with its nic1.
    assert _rows(got) == [("p4d-smi-seeded/gpu1 - p4d-smi-seeded/nic0 (B: nic1)", "path class", "SYS", "PHB")]


def test_disabled_port_is_the_one_difference(fx: Path, tmp_path: Path) -> None:
    # lstopo of the same workstation with the card's second function (c1:00.1, mlx5_1) gone, e.g. disabled
    # in firmware. nvidia-smi still lists NIC1: mlx5_1. One NIC on one side only, named once; NIC0 still
    # pairs with mlx5_0 and nothing else moves.
    lines = (fx / LSTOPO).read_text().splitlines(keepends=True)
    start, end = _block(lines, 'gp_index="25"')
    later = tmp_path / "lstopo-one-port.xml"
    later.write_text("".join(lines[:start] + lines[end:]))
    got = reconcile(load_side(fx / SMI, None), load_side(later, None))
    n = SMI.removesuffix(".txt")
    assert _rows(got) == [(f"{n}/nic1", "nic present on one side only", "present", "missing")]
    assert got[0].a_loc.line == 5  # the NIC1 row of the matrix


def test_gpu_moved_to_the_cards_host_bridge(fx: Path, tmp_path: Path) -> None:
    # lstopo with GPU1 (42:00.0) under the card's host bridge [c0-df] instead of [40-5f] (its root port
    # moved there as well). By hand from the tree: GPU0-GPU1 now cross two host bridges of one package,
    # NODE (nvidia-smi said PHB); GPU1 and each port share a host bridge, PHB (nvidia-smi said NODE).
    # Three pairs, each once; GPU0's classes to the card are unchanged (NODE).
    got = reconcile(load_side(fx / SMI, None), load_side(_moved_gpu1(fx, tmp_path), None))
    n = SMI.removesuffix(".txt")
    assert _rows(got) == [
        (f"{n}/gpu0 - {n}/gpu1", "path class", "PHB", "NODE"),
        (f"{n}/gpu1 - {n}/nic0", "path class", "NODE", "PHB"),
        (f"{n}/gpu1 - {n}/nic1", "path class", "NODE", "PHB"),
    ]


def test_nccl_cannot_tell_phb_from_node(fx: Path, tmp_path: Path) -> None:
    # NCCL hangs every device of a NUMA node on its <cpu>, host bridges unseen: against it, PHB and NODE
    # are one class, so the moved GPU1 above shows no difference to the dump (it states none).
    nccl, moved = load_side(fx / NCCL, None), load_side(_moved_gpu1(fx, tmp_path), None)
    # Not an empty comparison: the dump holds the workstation's 2 GPUs and 2 NIC ports, each paired with
    # one of the moved lstopo's by bus id or mlx5 name (lstopo's third NIC, enp194s0, has no RDMA device:
    # NCCL never lists it, and reconcile does not hold that against the dump).
    for kind in ("gpu", "nic"):
        xs = sorted((o for o in nccl.inventory.objects.values() if o.kind == kind), key=lambda o: o.id)
        ys = sorted((o for o in moved.inventory.objects.values() if o.kind == kind), key=lambda o: o.id)
        pairs = pair_devices(xs, ys, by_name=False)
        assert len(xs) == 2 and sum(1 for a, b in pairs if a is not None and b is not None) == 2
    assert reconcile(nccl, moved) == []


def test_two_socket_seeded_cell(fx: Path, tmp_path: Path) -> None:
    # The hand-derived 24em64t matrix with GPU0-NIC0 written SYS (both cells) instead of PHB: hwloc puts
    # 06:00.0 and the mlx4 card 05:00.0 under host bridge [00-0f] of package 0, PHB. One difference.
    smi = "24em64t-2n6c2t-nvidia-smi-handwritten.txt"
    lines = (fx / smi).read_text().splitlines(keepends=True)
    lines[1] = lines[1].replace("\tSYS\tSYS\tPHB\t", "\tSYS\tSYS\tSYS\t", 1)
    lines[4] = lines[4].replace("NIC0\tPHB\t", "NIC0\tSYS\t", 1)
    seeded = tmp_path / "smi.txt"
    seeded.write_text("".join(lines))
    got = reconcile(load_side(seeded, None), load_side(fx / "24em64t-2n6c2t-pci.xml", None))
    # The subject names hwloc's own name for the card (nic2, after the two Intel functions) beside nvidia-smi's.
    assert _rows(got) == [("smi/gpu0 - smi/nic0 (B: nic2)", "path class", "SYS", "PHB")]


INVENTORY = "workstation-2gpu-2nic-inventory.yaml"


@pytest.mark.parametrize("tool", [SMI, NCCL])
def test_inventory_and_tool_agree(fx: Path, tool: str) -> None:
    # The operator's inventory names each device by bus id and each port by its mlx5 name; its CPU is not
    # compared with a tool's (each tool cuts CPUs its own way), and nothing else differs.
    assert reconcile(load_side(fx / INVENTORY, None), load_side(fx / tool, None)) == []


def test_inventory_against_lstopo_names_the_undescribed_nic(fx: Path) -> None:
    # lstopo also sees the onboard Intel NIC c2:00.0 (enp194s0), which the inventory does not describe:
    # a real difference between the two descriptions, the only one (hwloc calls it nic2).
    got = reconcile(load_side(fx / INVENTORY, None), load_side(fx / LSTOPO, None))
    assert _rows(got) == [("ws/nic2", "nic present on one side only", "missing", "present")]


def test_inventory_twin_at_x8(fx: Path, tmp_path: Path) -> None:
    # The twin host's inventory has the card at Gen4 x8 (8 x 1969 = 15752 MB/s) where this one has x16
    # (31504 MB/s): one difference, at nic0, which holds the card's link.
    twin = tmp_path / "twin.yaml"
    twin.write_text(
        (fx / INVENTORY)
        .read_text()
        .replace(
            "{a: nic0, b: cpu0, kind: pcie, generation: 4, lanes: 16}",
            "{a: nic0, b: cpu0, kind: pcie, generation: 4, lanes: 8}",
        )
    )
    got = reconcile(load_side(fx / INVENTORY, None), load_side(twin, None))
    assert _rows(got) == [("ws/nic0", "PCIe uplink bandwidth (MB/s)", "31504", "15752")]


def test_nvswitch_h100_nccl_and_nvidia_smi_agree(fx: Path, tmp_path: Path) -> None:
    # The real NCCL dump of an 8x H100 VM (ibm-cn-h100-topo.xml): each GPU has 5+5+4+4 = 18 NVLinks into
    # four NVSwitches, so every GPU pair reads NV18, as nvidia-smi prints it; NIC<k> is mlx5_<k>, PIX to the
    # GPU under its bridge, NODE to the other GPUs of its CPU, SYS across. The NVSwitches the dump names
    # (nvlink targets f3-f6:00.0) are not devices nvidia-smi lacks: its matrix lists no switch.
    smi = fx / "ibm-cn-h100-nvidia-smi-handwritten.txt"
    xml = fx / "ibm-cn-h100-topo.xml"
    assert reconcile(load_side(smi, None), load_side(xml, None)) == []
    # Seeded: the dump without mlx5_3 (0000:cb:00.0, under cpu 1), e.g. left out by NCCL_IB_HCA. One NIC on
    # one side only: NIC3, paired by nothing; every other NIC keeps its name and its classes.
    lines = xml.read_text().splitlines(keepends=True)
    start = next(k for k, ln in enumerate(lines) if 'busid="0000:cb:00.0"' in ln)
    end = next(k for k in range(start, len(lines)) if lines[k].strip() == "</pci>")
    seeded = tmp_path / "h100.xml"
    seeded.write_text("".join(lines[:start] + lines[end + 1 :]))
    got = reconcile(load_side(smi, None), load_side(seeded, None))
    n = "ibm-cn-h100-nvidia-smi-handwritten"
    assert _rows(got) == [(f"{n}/nic3", "nic present on one side only", "present", "missing")]


def test_rocm_smi_and_amd_smi_of_one_machine(fx: Path, tmp_path: Path) -> None:
    # The real rocm-smi capture of a 4-GPU Instinct node (every pair XGMI, one hop, weight 15) and the
    # amd-smi table of the same node written by hand (bus ids 05, 26, 46, 65:00.0: rocm-smi's GPU<k> is
    # the k-th by bus id). Neither tool describes NICs, and rocm-smi's NUMA-node CPUs are inferred: the
    # two agree on every pair, XGMI.
    smi = fx / "mi-4gpu-showtopo.txt"
    amd = fx / "mi-4gpu-amd-smi-handwritten.txt"
    assert reconcile(load_side(smi, None), load_side(amd, None)) == []
    # Seeded: amd-smi reads 05:00.0 <-> 26:00.0 at weight 30 (two hops of 15): their direct link is gone.
    # GPU0-GPU1 is the one difference: XGMI (rocm-smi) against SYS (no direct link, no shared parent).
    rows = amd.read_text().splitlines(keepends=True)
    weights = next(k for k, ln in enumerate(rows) if ln.startswith("WEIGHT TABLE:"))
    for k in (weights + 2, weights + 3):
        cells = rows[k].split()
        col = 2 if cells[0] == "0000:05:00.0" else 1
        cells[col] = "30"
        rows[k] = cells[0] + " " + "".join(c.ljust(13) for c in cells[1:]).rstrip() + "\n"
    seeded = tmp_path / "amd.txt"
    seeded.write_text("".join(rows))
    got = reconcile(load_side(smi, None), load_side(seeded, None))
    n = "mi-4gpu-showtopo"
    assert _rows(got) == [(f"{n}/gpu0 - {n}/gpu1", "path class", "XGMI", "SYS")]


def test_cli_reconcile_same_machine(fx: Path, tmp_path: Path) -> None:
    # `topolog reconcile` end to end: the real nvidia-smi capture and the lstopo XML of the same box agree
    # (exit 0); against the lstopo without mlx5_1 it names NIC1 once (exit 1), in JSON as in text.
    code, out, err = run_cli("reconcile", str(fx / SMI), str(fx / LSTOPO))
    assert (code, out, err) == (0, "The two descriptions agree.\n", "")
    lines = (fx / LSTOPO).read_text().splitlines(keepends=True)
    start, end = _block(lines, 'gp_index="25"')
    later = tmp_path / "later.xml"
    later.write_text("".join(lines[:start] + lines[end:]))
    code, out, _ = run_cli("reconcile", str(fx / SMI), str(later), "--format", "json")
    assert code == 1
    got = json.loads(out)["disagreements"]
    n = SMI.removesuffix(".txt")
    assert [(d["subject"], d["what"], d["a"], d["b"]) for d in got] == [
        (f"{n}/nic1", "nic present on one side only", "present", "missing")
    ]


def test_invented_names_pair_nothing() -> None:
    # Two imports each call an NVSwitch `nvsw0` and state no bus id, serial or index for it: the names are
    # the importers' own, so they pair nothing and each side's device stands alone. An inventory's author
    # names its devices: there, `nvsw0` meets `nvsw0`.
    loc = SourceLocation("x")
    a = Obj("n/nvsw0", "nvswitch", "n", loc)
    b = Obj("m/nvsw0", "nvswitch", "m", loc)
    assert pair_devices([a], [b], by_name=False) == [(a, None), (None, b)]
    assert pair_devices([a], [b]) == [(a, b)]
    # One tool's two captures pair by the index it prints, whatever the importer named them.
    g = Obj("n/gpu0", "gpu", "n", loc, labels={"nvidia_smi": "GPU1"})
    h = Obj("m/gpu5", "gpu", "m", loc, labels={"nvidia_smi": "GPU1"})
    assert pair_devices([g], [h], by_name=False) == [(g, h)]


def test_numa_node_compared_by_number(fx: Path, tmp_path: Path) -> None:
    # Paired GPUs are on the same NUMA node in both descriptions: nvidia-smi's NUMA Affinity (0, 1, 1)
    # against the one NUMANode of the package hwloc puts each GPU's host bridge in (os_index 0, 1, 1).
    # Seeded: GPU1's NUMA Affinity written 0. Its cells still say SYS to GPU0 and PHB to GPU2, so the
    # classes agree; the one difference is GPU1's NUMA node, 0 against hwloc's 1.
    smi = "24em64t-2n6c2t-nvidia-smi-handwritten.txt"
    lines = (fx / smi).read_text().splitlines(keepends=True)
    cells = lines[2].split("\t")
    assert cells[0] == "GPU1" and cells[6] == "1"
    cells[6] = "0"
    lines[2] = "\t".join(cells)
    seeded = tmp_path / "smi.txt"
    seeded.write_text("".join(lines))
    got = reconcile(load_side(seeded, None), load_side(fx / "24em64t-2n6c2t-pci.xml", None))
    assert _rows(got) == [("smi/gpu1", "NUMA node", "0", "1")]


RCCL = "mi-4gpu-rccl-handwritten.xml"


def test_rccl_dump_of_the_instinct_node(fx: Path, tmp_path: Path) -> None:
    # RCCL writes an AMD GPU's xGMI links as <xgmi target count> in its <gpu>: six GPU pairs of one link
    # each (assumed 50000 MB/s: RCCL states no speed). Against the real rocm-smi capture, the amd-smi table
    # and the lstopo XML of the same node: every pair XGMI in all four, GPU<k> on NUMA node k in RCCL and
    # rocm-smi; nothing differs.
    inv = import_files("nccl-xml", [fx / RCCL], node="r").inventory
    gpu_links = sorted(
        (lk.a, lk.b, lk.mbps, lk.attrs["count"])
        for lk in inv.links.values()
        if lk.kind == "xgmi" and inv.objects[lk.a].kind == "gpu"
    )
    gpus = ["r/gpu0", "r/gpu1", "r/gpu2", "r/gpu3"]
    assert gpu_links == [(a, b, 50000, 1) for k, a in enumerate(gpus) for b in gpus[k + 1 :]]
    for other in ("mi-4gpu-showtopo.txt", "mi-4gpu-amd-smi-handwritten.txt", "mi-4gpu-lstopo-handwritten.xml"):
        assert reconcile(load_side(fx / RCCL, None), load_side(fx / other, None)) == []
    # Seeded: GPU0 and GPU1 list no xGMI to each other. Against rocm-smi the one difference is that pair:
    # XGMI against SYS (their <cpu>s are NUMA nodes 0 and 1, with no link between the GPUs).
    lines = (fx / RCCL).read_text().splitlines(keepends=True)
    cut = [
        ln
        for k, ln in enumerate(lines)
        if not (('target="0000:26:00.0"' in ln and k < 12) or ('target="0000:05:00.0"' in ln and 12 <= k < 20))
    ]
    seeded = tmp_path / "rccl.xml"
    seeded.write_text("".join(cut))
    got = reconcile(load_side(fx / "mi-4gpu-showtopo.txt", None), load_side(seeded, None))
    assert _rows(got) == [("mi-4gpu-showtopo/gpu0 - mi-4gpu-showtopo/gpu1", "path class", "XGMI", "SYS")]


def test_rccl_xgmi_counts_must_agree(fx: Path, tmp_path: Path) -> None:
    # GPU0 lists 2 xGMI links to GPU1, which lists 1 back: refused at GPU1's line, naming both.
    text = (fx / RCCL).read_text()
    first = text.index('<xgmi target="0000:26:00.0" count="1"')
    bad = tmp_path / "bad.xml"
    bad.write_text(text[:first] + text[first:].replace('count="1"', 'count="2"', 1))
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [bad], node="r")
    assert "r/gpu1 lists 1 xGMI links to r/gpu0, which lists 2 back" in str(err.value)
