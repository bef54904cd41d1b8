"""`nvidia-smi topo -m`: real outputs (see fixtures/README.md), hand-written DGX A100 matrices and the older form.

The importer rebuilds the smallest PCIe tree that reproduces the matrix. The check that it does
is independent of the importer: `_cells` reads the device cells of the file with a plain split
(device cells are never empty), and `_classes` asks the path facts (verifier.facts.graph, what
the rules read) for the class of every GPU-GPU and GPU-NIC pair of the imported inventory.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.facts.graph import graph_facts
from verifier.sources.importers import import_files
from verifier.sources.inventory.model import Inventory

REAL = [
    "gb200-4gpu-numa-lists.txt",
    "h100-8gpu-no-nic.txt",
    "h200-8gpu-10nic-empty-affinity.txt",
    "rtx5090-2gpu-tabs.txt",
    "workstation-2gpu-2nic-node.txt",
    "a100-2gpu-vm-8nic-vllm19607.txt",
]
HAND_WRITTEN = ["dgx-a100-topo-tabs.txt", "dgx-a100-topo-spaces.txt", "old-mlx5-topo.txt"]


def _shape(inv: Inventory) -> tuple[object, ...]:
    objs = sorted((o.id, o.kind, o.parent, o.labels.get("name")) for o in inv.objects.values())
    links = sorted((lk.id, lk.kind, lk.mbps, dict(lk.attrs)) for lk in inv.links.values())
    return objs, links


def _cells(path: Path) -> dict[tuple[str, str], str]:
    lines = path.read_text().splitlines()
    h = next(i for i, ln in enumerate(lines) if ln.split()[:1] == ["GPU0"] and ln.split()[1:2] != ["X"])
    cols = [c for c in lines[h].split() if re.match(r"^(GPU\d+|NIC\d+|mlx5_\d+)$", c)]
    out = {}
    for ln in lines[h + 1 : h + 1 + len(cols)]:
        t = ln.split()
        for c, v in zip(cols, t[1 : 1 + len(cols)], strict=True):
            out[(t[0], c)] = "SYS" if v == "SOC" else v
    return out


def _classes(inv: Inventory) -> dict[tuple[str, str], str]:
    """(row, column) in nvidia-smi's names -> the class the path facts give the pair."""
    smi = {o.id: o.labels["nvidia_smi"] for o in inv.objects.values() if "nvidia_smi" in o.labels}
    facts = graph_facts(inv, {"gpu_pair_bottleneck", "gpu_nic_path"})
    out = {}
    for a, b, cls, _mbps in [*facts["gpu_pair_bottleneck"], *facts["gpu_nic_path"]]:
        out[(smi[str(a)], smi[str(b)])] = out[(smi[str(b)], smi[str(a)])] = str(cls)
    return out


def _nearest(inv: Inventory) -> dict[str, tuple[str, str]]:
    smi = {o.id: o.labels["nvidia_smi"] for o in inv.objects.values() if "nvidia_smi" in o.labels}
    rows = graph_facts(inv, {"nearest_nic"})["nearest_nic"]
    return {smi[str(g)]: (smi[str(n)], str(c)) for g, n, c, _m in rows}


@pytest.mark.parametrize("name", REAL + HAND_WRITTEN)
def test_imported_paths_reproduce_every_cell(fx: Path, name: str) -> None:
    inv = import_files("nvidia-smi", [fx / name], node="n").inventory
    got = _classes(inv)
    want = {
        (r, c): ("NV" if v.startswith("NV") else v)
        for (r, c), v in _cells(fx / name).items()
        if r != c and (r.startswith("GPU") or c.startswith("GPU"))
    }
    assert {k: got.get(k) for k in want} == want


def test_remote_nics_are_found_where_an_expert_finds_them(fx: Path) -> None:
    # BW002 reports nearest_nic rows of class NODE or SYS. By hand, from each GPU row's NIC cells:
    # - workstation: GPU0 and GPU1 read NODE NODE for NIC0, NIC1 (NIC0 first on a tie) -> 2 warnings;
    # - gb200: every GPU row reads SYS for all 8 NICs -> 4 warnings (NIC0 first on a tie);
    # - h200: GPU k has exactly one PIX NIC: GPU0-NIC0, GPU1-NIC3, GPU2-NIC4 ... GPU7-NIC9 -> none;
    # - h100 and rtx5090 list no NIC: no nearest NIC at all (TOPO001 instead, every GPU).
    near = {n: _nearest(import_files("nvidia-smi", [fx / n], node="n").inventory) for n in REAL}
    assert near["workstation-2gpu-2nic-node.txt"] == {"GPU0": ("NIC0", "NODE"), "GPU1": ("NIC0", "NODE")}
    assert near["gb200-4gpu-numa-lists.txt"] == {f"GPU{g}": ("NIC0", "SYS") for g in range(4)}
    pix = {0: 0, 1: 3, 2: 4, 3: 5, 4: 6, 5: 7, 6: 8, 7: 9}
    assert near["h200-8gpu-10nic-empty-affinity.txt"] == {f"GPU{g}": (f"NIC{n}", "PIX") for g, n in pix.items()}
    assert near["h100-8gpu-no-nic.txt"] == {} and near["rtx5090-2gpu-tabs.txt"] == {}


def test_node_and_phb_stay_distinct(fx: Path) -> None:
    # GPU0-GPU1 PHB: one host bridge; NIC0/NIC1 PIX to each other: a switch on a second host
    # bridge; GPU-NIC NODE: both host bridges in the one NUMA domain 0 (the NUMA column says 0).
    inv = import_files("nvidia-smi", [fx / "workstation-2gpu-2nic-node.txt"], node="w").inventory
    assert [o.id for o in inv.of_kind("socket")] == ["w/cpu0"]
    bridges = {o.id: o.labels["members"] for o in inv.of_kind("cpu")}
    assert bridges == {"w/hb0": "GPU0,GPU1", "w/hb1": "NIC0,NIC1"}
    assert all(o.parent == "w/cpu0" for o in inv.of_kind("cpu"))
    assert inv.objects["w/gpu0"].parent == inv.objects["w/gpu1"].parent == "w/hb0"
    assert inv.objects[inv.objects["w/nic0"].parent or ""].parent == "w/hb1"


def test_empty_cpu_affinity_does_not_shift_columns(fx: Path) -> None:
    # GPU0-3 rows: CPU Affinity empty, NUMA Affinity 0, GPU NUMA ID N/A; GPU4-7: 56, 1, N/A.
    imp = import_files("nvidia-smi", [fx / "h200-8gpu-10nic-empty-affinity.txt"], node="h")
    gpu0, gpu4 = imp.inventory.objects["h/gpu0"], imp.inventory.objects["h/gpu4"]
    assert "cpu_affinity" not in gpu0.labels and gpu0.labels["numa_affinity"] == "0"
    assert gpu4.labels["cpu_affinity"] == "56" and gpu4.labels["numa_affinity"] == "1"
    assert "gpu_numa_id" not in gpu0.labels  # N/A
    # Every cell of the matrix is NODE or closer (no SYS): one NUMA domain, although the NUMA
    # column says 0 for GPU0-3 and 1 for GPU4-7. The matrix is kept and the contradiction said.
    assert [o.id for o in imp.inventory.of_kind("socket")] == ["h/cpu0"]
    assert any("NUMA Affinity column says 0 and 1" in n.message for n in imp.notes)


def test_numa_affinity_lists_and_gpu_numa_ids(fx: Path) -> None:
    # GB200: GPU0/1 NUMA Affinity 0,3-9,11-17, GPU2/3 1,19-25,27-33; GPU NUMA IDs 2, 10, 18, 26.
    # NICs have no NUMA column and are SYS to every GPU and to each other, except the PIX pairs
    # NIC2/NIC3 and NIC6/NIC7: NIC0, NIC1, NIC2+3, NIC4, NIC5, NIC6+7 are 6 domains of unknown NUMA.
    imp = import_files("nvidia-smi", [fx / "gb200-4gpu-numa-lists.txt"], node="g")
    inv = imp.inventory
    assert inv.objects["g/gpu0"].labels["numa_affinity"] == "0,3-9,11-17"
    assert [inv.objects[f"g/gpu{i}"].labels["gpu_numa_id"] for i in range(4)] == ["2", "10", "18", "26"]
    sockets = sorted(o.id for o in inv.of_kind("socket"))
    assert sockets == sorted(["g/cpu0", "g/cpu1"] + [f"g/cpu-unknown{k}" for k in range(6)])
    assert inv.objects[inv.objects["g/gpu1"].parent or ""].parent == "g/cpu0"
    assert inv.objects[inv.objects["g/gpu2"].parent or ""].parent == "g/cpu1"
    # 8 domains, each pair across the CPU interconnect: 8*7/2 = 28 links, kind and speed assumed.
    cross = [lk for lk in inv.links.values() if lk.kind == "upi"]
    assert len(cross) == 28 and {lk.labels["assumed"] for lk in cross} == {"bandwidth,kind"}
    assert any("states no CPU interconnect" in n.message for n in imp.notes)


def test_nvlink_hidden_pcie_is_one_host_bridge_with_a_note(fx: Path) -> None:
    # H100: every GPU pair is NV18, so no cell states their PCIe relation; NUMA 0 for GPU0-3, 1 for 4-7.
    imp = import_files("nvidia-smi", [fx / "h100-8gpu-no-nic.txt"], node="h")
    inv = imp.inventory
    assert {o.id: o.parent for o in inv.of_kind("cpu")} == {"h/hb0": "h/cpu0", "h/hb1": "h/cpu1"}
    assert {inv.objects[f"h/gpu{g}"].parent for g in range(4)} == {"h/hb0"}
    assert any("hidden by their NV# cells" in n.message for n in imp.notes)
    # Every pair NV18: as a mesh each GPU would have 7 * 18 = 126 NVLinks, more than any GPU has;
    # so 18 NVLinks from each of the 8 GPUs into one (inferred) NVSwitch fabric, no direct links.
    assert not [lk for lk in inv.links.values() if lk.kind == "nvlink"]
    sw = [lk for lk in inv.links.values() if lk.kind == "nvswitch"]
    assert sorted(lk.a for lk in sw) == [f"h/gpu{g}" for g in range(8)] and {lk.b for lk in sw} == {"h/nvsw0"}
    assert {(lk.attrs["count"], lk.mbps) for lk in sw} == {(18, 18 * 25000)}


def test_dgx_a100_matrix(fx: Path) -> None:
    inv = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="dgx").inventory
    kinds = sorted(o.kind for o in inv.objects.values())
    assert kinds.count("gpu") == 8 and kinds.count("nic") == 10
    # NUMA Affinity column: GPUs 0-1 on 3, 2-3 on 1, 4-5 on 7, 6-7 on 5 -> four NUMA domains.
    assert sorted(o.id for o in inv.of_kind("socket")) == ["dgx/cpu1", "dgx/cpu3", "dgx/cpu5", "dgx/cpu7"]
    # PXB groups {GPU2k, GPU2k+1, NIC2k, NIC2k+1} and {NIC8, NIC9}; PIX pairs NIC2k/NIC2k+1 inside
    # the first four (NIC8/NIC9's PIX pair is its whole PXB group: one switch): 5 + 4 switches.
    # GPU2k and GPU2k+1 are NV12 (their PCIe relation unknown), so both hang on the PXB switch.
    assert kinds.count("pcie_switch") == 9
    # Every GPU pair NV12: 7 * 12 = 84 NVLinks per GPU as a mesh, more than any GPU has: 12 NVLinks
    # from each GPU into one NVSwitch fabric (DGX A100: 6 NVSwitches), 12 * 25,000 MB/s each.
    sw = [lk for lk in inv.links.values() if lk.kind == "nvswitch"]
    assert not [lk for lk in inv.links.values() if lk.kind == "nvlink"]
    assert len(sw) == 8 and {(lk.b, lk.attrs["count"], lk.mbps) for lk in sw} == {("dgx/nvsw0", 12, 300000)}
    assert all(lk.labels.get("assumed") for lk in inv.links.values())
    nic8 = inv.objects["dgx/nic8"]
    assert nic8.labels["name"] == "mlx5_8"
    # NODE to GPU4/5 (NUMA 7): another host bridge of NUMA domain 7.
    hb = inv.objects[inv.objects[nic8.parent or ""].parent or ""]
    assert hb.kind == "cpu" and hb.parent == "dgx/cpu7" and hb.id != inv.objects["dgx/gpu4"].parent
    gpu0 = inv.objects["dgx/gpu0"]
    assert gpu0.labels["cpu_affinity"] == "48-63,176-191" and gpu0.loc.line == 2
    pix = inv.objects[inv.objects["dgx/nic0"].parent or ""]
    assert pix.labels["class"] == "PIX" and inv.objects[pix.parent or ""].labels["members"] == "GPU0,GPU1,NIC0,NIC1"


def test_space_aligned_copy_reads_the_same(fx: Path) -> None:
    tabs = import_files("nvidia-smi", [fx / "dgx-a100-topo-tabs.txt"], node="dgx").inventory
    spaces = import_files("nvidia-smi", [fx / "dgx-a100-topo-spaces.txt"], node="dgx").inventory
    assert _shape(tabs) == _shape(spaces)


def test_terminal_copy_with_expanded_tabs_reads_as_the_tabs(fx: Path, tmp_path: Path) -> None:
    # The H200 matrix written back with tabs as nvidia-smi prints them (CPU Affinity, NUMA Affinity,
    # an empty padding field, GPU NUMA ID), by hand from the file: GPU0-3 rows carry 18 cells then
    # "0 N/A" (CPU Affinity empty), GPU4-7 "56 1 N/A", NIC rows only their 18 cells. Then expanded
    # to 8- and 4-column stops and indented as a Markdown code block: all read the same.
    lines = (fx / "h200-8gpu-10nic-empty-affinity.txt").read_text().splitlines()
    header = ["GPU" + str(g) for g in range(8)] + ["NIC" + str(n) for n in range(10)]
    tabbed = ["\t" + "\t".join([*header, "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"])]
    for ln in lines[1:19]:
        t = ln.split()
        label, cells, rest = t[0], t[1:19], t[19:]
        cells = [" X " if c == "X" else c for c in cells]
        if len(rest) == 2:
            rest = ["", rest[0], "", rest[1]]
        elif len(rest) == 3:
            rest = [rest[0], rest[1], "", rest[2]]
        tabbed.append("\t".join([label, *cells, *rest]))
    variants = {
        "tabs.txt": tabbed,
        "stops8.txt": [ln.expandtabs(8) for ln in tabbed],
        "stops4.txt": [ln.expandtabs(4) for ln in tabbed],
        "indented.txt": ["    " + ln.expandtabs(8) for ln in tabbed],
    }
    shapes = {}
    for name, text in variants.items():
        (tmp_path / name).write_text("\n".join(text) + "\n")
        inv = import_files("nvidia-smi", [tmp_path / name], node="h").inventory
        assert "cpu_affinity" not in inv.objects["h/gpu0"].labels, name
        assert inv.objects["h/gpu0"].labels["numa_affinity"] == "0", name
        assert inv.objects["h/gpu4"].labels["cpu_affinity"] == "56", name
        shapes[name] = _shape(inv)
    assert len({repr(v) for v in shapes.values()}) == 1


@pytest.mark.parametrize(
    "name", ["rtx5090-2gpu-tabs.txt", "dgx-a100-topo-spaces.txt", "workstation-2gpu-2nic-node.txt"]
)
def test_header_without_leading_whitespace(fx: Path, tmp_path: Path, name: str) -> None:
    lines = (fx / name).read_text().splitlines()
    lines[0] = lines[0].lstrip()
    (tmp_path / name).write_text("\n".join(lines) + "\n")
    a = import_files("nvidia-smi", [fx / name], node="n").inventory
    b = import_files("nvidia-smi", [tmp_path / name], node="n").inventory
    assert _shape(a) == _shape(b)


def test_pxb_devices_without_pix_partners_are_not_read_as_pix(tmp_path: Path) -> None:
    # GPU0, GPU1, GPU2 pairwise PXB (no NVLink): two PCIe switches apart, never under one.
    p = tmp_path / "pxb.txt"
    p.write_text(
        "\tGPU0\tGPU1\tGPU2\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tPXB\tPXB\t0-7\t0\n"
        "GPU1\tPXB\t X \tPXB\t0-7\t0\n"
        "GPU2\tPXB\tPXB\t X \t0-7\t0\n"
    )
    got = _classes(import_files("nvidia-smi", [p], node="n").inventory)
    assert {got[("GPU0", "GPU1")], got[("GPU0", "GPU2")], got[("GPU1", "GPU2")]} == {"PXB"}


def test_cells_that_no_pcie_tree_gives_are_refused(tmp_path: Path) -> None:
    # GPU0-GPU1 PIX and GPU1-GPU2 PIX put all three under one switch, so GPU0-GPU2 cannot be SYS.
    p = tmp_path / "bad.txt"
    p.write_text("\tGPU0\tGPU1\tGPU2\nGPU0\t X \tPIX\tSYS\nGPU1\tPIX\t X \tPIX\nGPU2\tSYS\tPIX\t X \n")
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert any(d.location.line == 2 and "one PCIe tree" in d.message for d in err.value.diagnostics), err.value


def test_older_form_with_mlx5_columns(fx: Path) -> None:
    inv = import_files("nvidia-smi", [fx / "old-mlx5-topo.txt"], node="old").inventory
    assert [(o.id, o.labels["name"]) for o in inv.of_kind("nic")] == [("old/nic0", "mlx5_0"), ("old/nic1", "mlx5_1")]
    # SOC is the old name of SYS: GPU0/1 + mlx5_0 (PIX) and GPU2/3 + mlx5_1 (PHB) are two domains
    # of unknown NUMA (no NUMA column).
    assert sorted(o.id for o in inv.of_kind("socket")) == ["old/cpu-unknown0", "old/cpu-unknown1"]
    hb1 = inv.objects["old/gpu2"].parent or ""
    assert hb1 == inv.objects["old/nic1"].parent and inv.objects[hb1].parent == "old/cpu-unknown1"
    assert inv.objects["old/gpu0"].parent == inv.objects["old/nic0"].parent  # one PIX switch
    assert [lk.attrs["count"] for lk in inv.links.values() if lk.kind == "nvlink"] == [2, 2]


def test_bad_numa_affinity_is_reported(fx: Path, tmp_path: Path) -> None:
    text = (fx / "rtx5090-2gpu-tabs.txt").read_text()
    p = tmp_path / "topo.txt"
    p.write_text(text.replace("0-63\t0\t", "0-63\tzero\t", 1))
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert any(d.location.line == 2 and "'zero'" in d.message for d in err.value.diagnostics), err.value


@pytest.mark.parametrize(
    ("edit", "line", "needle"),
    [
        (("GPU1\tNV12\t X \tNV12", "GPU1\tNV12\t X \tNVX"), 3, "'NVX'"),
        (("GPU1\tNV12\t X \tNV12", "GPU1\tNV12\t X \tPIX"), 3, "symmetric"),
        (("GPU0\t X \tNV12", "GPU0\t Y \tNV12"), 2, "expected X"),
    ],
)
def test_bad_cells_have_file_line(fx: Path, tmp_path: Path, edit: tuple[str, str], line: int, needle: str) -> None:
    text = (fx / "dgx-a100-topo-tabs.txt").read_text()
    assert edit[0] in text
    p = tmp_path / "topo.txt"
    p.write_text(text.replace(edit[0], edit[1], 1))
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value


def test_not_a_matrix(tmp_path: Path) -> None:
    p = tmp_path / "x.txt"
    p.write_text("hello\n")
    with pytest.raises(TopologError, match="no `nvidia-smi topo -m` header"):
        import_files("nvidia-smi", [p])


def test_terminal_escape_codes_in_the_header_are_ignored(fx: Path, tmp_path: Path) -> None:
    # On a terminal nvidia-smi underlines the header (ESC[4m ... ESC[0m); pastes often keep "[4m".
    text = (fx / "rtx5090-2gpu-tabs.txt").read_text()
    lines = text.splitlines()
    for k, (on, off) in enumerate((("\x1b[4m", "\x1b[0m"), ("[4m", "[0m"))):
        lines[0] = "\t" + on + lines[0].lstrip("\t") + off
        p = tmp_path / f"esc{k}.txt"
        p.write_text("\n".join(lines) + "\n")
        a = import_files("nvidia-smi", [fx / "rtx5090-2gpu-tabs.txt"], node="n").inventory
        assert _shape(import_files("nvidia-smi", [p], node="n").inventory) == _shape(a)
        lines = text.splitlines()


def test_cells_aligned_by_hand_under_their_columns(tmp_path: Path) -> None:
    # Typed (or reflowed) with blanks so that each value stands under its column name: CPU Affinity
    # empty for GPU0, whose NUMA Affinity 0 stands under "NUMA Affinity" and N/A under "GPU NUMA ID".
    header = "        GPU0    GPU1    CPU Affinity    NUMA Affinity   GPU NUMA ID"
    numa, gnuma = header.index("NUMA Affinity"), header.index("GPU NUMA ID")
    row0 = "GPU0     X      PHB".ljust(numa) + "0".ljust(gnuma - numa) + "N/A"
    row1 = "GPU1    PHB      X".ljust(header.index("CPU Affinity")) + "0-7".ljust(16) + "1".ljust(16) + "N/A"
    p = tmp_path / "hand.txt"
    p.write_text("\n".join([header, row0, row1]) + "\n")
    imp = import_files("nvidia-smi", [p], node="n")
    gpu0, gpu1 = imp.inventory.objects["n/gpu0"], imp.inventory.objects["n/gpu1"]
    assert "cpu_affinity" not in gpu0.labels and gpu0.labels["numa_affinity"] == "0"
    assert (gpu1.labels["cpu_affinity"], gpu1.labels["numa_affinity"]) == ("0-7", "1")
    # PHB to each other but NUMA 0 and 1: the matrix is kept (one domain), the contradiction said.
    assert any("NUMA Affinity column says 0 and 1" in n.message for n in imp.notes)


def test_every_bad_cell_is_reported_once_with_its_line(tmp_path: Path) -> None:
    # Clean rows take a whole-row path, the others are read cell by cell: both must report alike.
    p = tmp_path / "bad.txt"
    p.write_text(
        "\tGPU0\tGPU1\tGPU2\tNIC0\tCPU Affinity\tNUMA Affinity\n"
        "GPU0\t X \tNV2\tNV4\tPIX\t0-7\t0\n"
        "GPU1\tNV2\t X \tSYS\tNV1\t0-7\t0\n"
        "GPU2\tNV2\tSYS\t X \tFOO\t0-7\t0\n"
        "NIC0\tPIX\tNV1\tPHB\t X \t0-7\t0\n"
    )
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert [(d.location.line, d.message) for d in err.value.diagnostics] == [
        (2, "GPU0 to GPU2 is NV4 but GPU2 to GPU0 is NV2; the matrix must be symmetric"),
        (3, "GPU1 to NIC0 is NV1, but only GPUs have NVLinks"),
        (4, "GPU2 to GPU0 is NV2 but GPU0 to GPU2 is NV4; the matrix must be symmetric"),
        (4, "GPU2 to NIC0 is 'FOO'; expected X, NV<count>, PIX, PXB, PHB, NODE or SYS"),
        (5, "NIC0 to GPU1 is NV1, but only GPUs have NVLinks"),
        (5, "NIC0 to GPU2 is PHB but GPU2 to NIC0 is FOO; the matrix must be symmetric"),
    ]


def test_tree_check_on_a_larger_matrix_names_the_first_offending_pair(tmp_path: Path) -> None:
    # 48 GPUs, NVLink groups of 8, two NUMA domains; one pair made SYS inside a domain.
    n = 48
    lines = ["\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity"]
    for i in range(n):
        cells = [
            "X" if i == j else "NV18" if i // 8 == j // 8 else "NODE" if (i < n // 2) == (j < n // 2) else "SYS"
            for j in range(n)
        ]
        if i in (3, 17):
            cells[20 - i] = "SYS"
        lines.append(f"GPU{i}\t" + "\t".join(cells) + f"\t0-7\t{int(i >= n // 2)}")
    p = tmp_path / "topo.txt"
    p.write_text("\n".join(lines) + "\n")
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    others = ", ".join(f"GPU{i}" for i in range(24) if i not in (3, 17))
    assert [(d.location.line, d.message) for d in err.value.diagnostics] == [
        (
            5,
            f"GPU3 to GPU17 is SYS, but both are NODE or closer to {others}: the cells cannot come from one PCIe tree",
        )
    ]


def test_a_column_named_twice_is_refused_at_the_header(tmp_path: Path) -> None:
    p = tmp_path / "dup.txt"
    p.write_text(
        "\tGPU0\tGPU1\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tNV1\tNV1\t0-1\t0\nGPU1\tNV1\t X \tX\t0-1\t0\n"
    )
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert [(d.location.line, d.message) for d in err.value.diagnostics] == [
        (1, "column 'GPU1' appears twice in the header; each device has one column")
    ]


@pytest.mark.parametrize(
    ("cpus", "numa", "column"),
    [
        ("63-0", "0", "CPU Affinity"),
        ("0-63,99999999999", "0", "CPU Affinity"),
        ("all", "0", "CPU Affinity"),
        ("0-63", "1-0", "NUMA Affinity"),
    ],
)
def test_an_affinity_that_is_no_list_is_reported_at_its_line(
    fx: Path, tmp_path: Path, cpus: str, numa: str, column: str
) -> None:
    # rtx5090-2gpu-tabs.txt line 2: GPU0 with CPU Affinity 0-63 and NUMA Affinity 0. A range written
    # high to low, a CPU number of 11 digits and a word are no CPU list; 1-0 is no NUMA list. The
    # CPU Affinity is kept as a label and compared as text, so each would stand as an affinity.
    text = (fx / "rtx5090-2gpu-tabs.txt").read_text()
    assert "0-63\t0\t" in text.splitlines()[1]
    p = tmp_path / "topo.txt"
    p.write_text(text.replace("0-63\t0\t", f"{cpus}\t{numa}\t", 1))
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    given = cpus if column == "CPU Affinity" else numa
    assert [(d.location.line, d.message.split(";")[0]) for d in err.value.diagnostics] == [
        (2, f"{column} of GPU0 is {given!r}")
    ]


@pytest.mark.parametrize("given", [".nan", "-3", "2.5", "two"])
def test_a_gpu_numa_id_that_is_no_node_number_is_reported(fx: Path, tmp_path: Path, given: str) -> None:
    # gb200-4gpu-numa-lists.txt line 2: GPU0, whose GPU NUMA ID (the last column) is 2. None of
    # these is a NUMA node number (a node is 0 or more, whole).
    lines = (fx / "gb200-4gpu-numa-lists.txt").read_text().splitlines(keepends=True)
    assert lines[1].startswith("GPU0") and lines[1].rstrip().endswith(" 2")
    lines[1] = lines[1].rstrip()[:-1] + given + "\n"
    p = tmp_path / "topo.txt"
    p.write_text("".join(lines))
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [p])
    assert [(d.location.line, d.message.split(";")[0]) for d in err.value.diagnostics] == [
        (2, f"GPU NUMA ID of GPU0 is {given!r}")
    ]


def test_vm_rows_with_no_affinity_read_every_cell_under_its_column(fx: Path) -> None:
    # vllm issue 19607: GPU rows end "PXB PXB <blanks> N/A" (CPU and NUMA Affinity empty), NIC rows end at
    # NIC7. By hand: the N/A is GPU NUMA ID, so no GPU has a NUMA or CPU affinity; NIC6 and NIC7 are PXB to
    # both GPUs (one switch tree with the GPUs), PIX to each other; NIC0/1, 2/3, 4/5 PIX pairs, SYS elsewhere.
    inv = import_files("nvidia-smi", [fx / "a100-2gpu-vm-8nic-vllm19607.txt"], node="vm").inventory
    for g in ("vm/gpu0", "vm/gpu1"):
        labels = inv.objects[g].labels
        assert ("cpu_affinity" in labels, "numa_affinity" in labels) == (False, False)
    got = _classes(inv)
    assert [got[("GPU0", f"NIC{k}")] for k in range(8)] == ["SYS"] * 6 + ["PXB", "PXB"]
    assert got[("GPU0", "GPU1")] == "NV"
    assert sum(1 for o in inv.objects.values() if o.kind == "gpu") == 2
    assert sum(1 for o in inv.objects.values() if o.kind == "nic") == 8


def _drop_tab_after(text: str, column: int) -> str:
    """Each line of a tab-separated matrix with the tab after its `column`-th field (0 = the label) taken out."""
    out = []
    for ln in text.splitlines():
        f = ln.split("\t")
        if len(f) > column + 1 and f[column].strip() and f[column + 1].strip():
            f[column : column + 2] = [f[column] + f[column + 1]]
        out.append("\t".join(f))
    return "\n".join(out) + "\n"


def test_cells_joined_by_a_lost_tab_read_as_the_cells_they_spell(fx: Path, tmp_path: Path) -> None:
    # As pasted in vllm issue 13855 (https://github.com/vllm-project/vllm/issues/13855): the tab between the
    # NIC8 and NIC9 columns lost in the header ("NIC8NIC9") and in every GPU row ("NODENODE", "NODEPXB"). Made
    # here from the DGX A100 matrix by removing the tab after field 17 (NIC8's: the header's field 0 is empty,
    # a row's is its label) on every line: each class ends where the next starts with a letter, so the one way
    # to split them gives back the file's cells, and the import is the same as the untouched file's.
    src = fx / "dgx-a100-topo-tabs.txt"
    joined = tmp_path / "joined.txt"
    joined.write_text(_drop_tab_after(src.read_text(), 17))
    assert "NIC8NIC9" in joined.read_text() and "SYSSYS" in joined.read_text()
    result = import_files("nvidia-smi", [joined], node="dgx")
    assert _shape(result.inventory) == _shape(import_files("nvidia-smi", [src], node="dgx").inventory)
    notes = [str(n) for n in result.notes if "without the tab between them" in str(n)]
    assert len(notes) == 1 and notes[0].startswith(f"{joined}:1: line(s) 1, 2, 3,")


def test_a_joined_token_that_is_not_only_classes_is_still_refused(fx: Path, tmp_path: Path) -> None:
    joined = tmp_path / "joined.txt"
    joined.write_text(_drop_tab_after((fx / "dgx-a100-topo-tabs.txt").read_text(), 17).replace("SYSSYS", "SYSSYX", 1))
    with pytest.raises(TopologError, match=r"joined.txt:2: .*'SYSSYX'"):
        import_files("nvidia-smi", [joined], node="dgx")
