"""rocm-smi --showtopo and amd-smi topology: what an expert reads from each table, and the import meets it."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files
from verifier.sources.importers.yaml_out import to_yaml
from verifier.sources.inventory.model import Inventory


def _xgmi(inv: Inventory) -> dict[tuple[str, str], tuple[int, bool]]:
    """Each xgmi link as (a, b) -> (MB/s, assumed)."""
    return {
        tuple(sorted((lk.a, lk.b))): (lk.mbps, "assumed" in lk.labels)  # type: ignore[misc]
        for lk in inv.links.values()
        if lk.kind == "xgmi"
    }


def _verified(tmp_path: Path, inv: Inventory) -> list[tuple[str, str]]:
    from verifier.session.verify_run import verify

    p = tmp_path / "node.yaml"
    p.write_text(to_yaml(inv, "node", "test"))
    return sorted((f.rule, f.message) for f in verify([p]).findings)


def test_rocm_smi_real_4gpu(fx: Path, tmp_path: Path) -> None:
    # mi-4gpu-showtopo.txt (real, pasted in a public issue), by hand:
    # - weight 15 between every pair = one xGMI hop each (15 per hop), link type XGMI, hops 1:
    #   a full mesh of direct xGMI links, 4*3/2 = 6 links; the output states no bandwidth: assumed default.
    # - `GPU k : (Topology) Numa Node: k`: each GPU on its own NUMA node 0..3, so cpu0..cpu3, one GPU each.
    # - rocm-smi lists no NICs: their absence is unknown, so no "GPU reaches no NIC" finding; nothing else
    #   is wrong: no finding at all.
    result = import_files("rocm-smi", [fx / "mi-4gpu-showtopo.txt"], node="mi0")
    inv = result.inventory
    gpus = [f"mi0/gpu{k}" for k in range(4)]
    assert sorted(o.id for o in inv.of_kind("gpu")) == gpus
    assert {g: inv.objects[g].parent for g in gpus} == {f"mi0/gpu{k}": f"mi0/cpu{k}" for k in range(4)}
    assert inv.objects["mi0/cpu2"].labels["numa"] == "2"
    pairs = [(a, b) for i, a in enumerate(gpus) for b in gpus[i + 1 :]]
    assert _xgmi(inv) == {p: (50000, True) for p in pairs}
    assert inv.objects["mi0/gpu1"].labels["rocm_smi"] == "GPU1"
    assert any("lists no NICs" in n.message for n in result.notes)
    assert _verified(tmp_path, inv) == []


def test_rocm_smi_pcie_two_numa_nodes(fx: Path) -> None:
    # rocm-smi-4gpu-pcie-handwritten.txt (older `GPU[0]` NUMA lines): all PCIE, GPU0-1 and GPU2-3 two hops
    # apart (same NUMA node), others three (across). NUMA table: GPU0,1 on 0; GPU2,3 on 1: consistent, no note.
    # No XGMI: no scale-up link.
    result = import_files("rocm-smi", [fx / "rocm-smi-4gpu-pcie-handwritten.txt"], node="w")
    inv = result.inventory
    assert {o.id: o.parent for o in inv.of_kind("gpu")} == {
        "w/gpu0": "w/cpu0",
        "w/gpu1": "w/cpu0",
        "w/gpu2": "w/cpu1",
        "w/gpu3": "w/cpu1",
    }
    assert _xgmi(inv) == {}
    assert not any("hops apart" in n.message for n in result.notes)


def test_rocm_smi_hops_contradicting_numa_is_a_note(fx: Path, tmp_path: Path) -> None:
    # GPU0 and GPU1 two hops apart over PCIe (one NUMA node) but in NUMA nodes 0 and 1: kept, said out loud.
    text = (
        (fx / "rocm-smi-4gpu-pcie-handwritten.txt")
        .read_text()
        .replace("GPU[1]\t\t: (Topology) Numa Node: 0", "GPU[1]\t\t: (Topology) Numa Node: 1")
    )
    p = tmp_path / "topo.txt"
    p.write_text(text)
    result = import_files("rocm-smi", [p])
    assert result.inventory.objects["topo/gpu1"].parent == "topo/cpu1"
    notes = [n for n in result.notes if "hops apart" in n.message]
    # By hand (hops table rows on lines 11-14): GPU0-GPU1 is 2 hops across nodes 0/1 (line 11); GPU1, now on
    # node 1, is 3 hops from GPU2 and GPU3, also on node 1 (line 12): three contradictions, one note each.
    assert sorted((n.location.line, n.message.split(" are ")[0]) for n in notes) == [
        (11, "GPU0 and GPU1"),
        (12, "GPU1 and GPU2"),
        (12, "GPU1 and GPU3"),
    ]


def test_amd_smi_xgmi_ring(fx: Path) -> None:
    # amd-smi-4gpu-xgmi-handwritten.txt (hand-written in amd-smi's format): bus ids 0c, 22, 38, 5c = gpu0..gpu3
    # (PCI bus order). Weight 15 (one xGMI hop): 0c-22, 0c-38, 22-5c, 38-5c; weight 30 (two hops, through a
    # neighbour): 0c-5c, 22-38. So a ring of 4 direct links, each stated 50000-50000 MB/s in NUMA BW: not assumed.
    # amd-smi states no NUMA node: the GPUs sit under the node, with a note.
    result = import_files("amd-smi", [fx / "amd-smi-4gpu-xgmi-handwritten.txt"], node="m")
    inv = result.inventory
    assert {o.id: o.labels["pci_busid"] for o in inv.of_kind("gpu")} == {
        "m/gpu0": "0000:0c:00.0",
        "m/gpu1": "0000:22:00.0",
        "m/gpu2": "0000:38:00.0",
        "m/gpu3": "0000:5c:00.0",
    }
    ring = [("m/gpu0", "m/gpu1"), ("m/gpu0", "m/gpu2"), ("m/gpu1", "m/gpu3"), ("m/gpu2", "m/gpu3")]
    assert _xgmi(inv) == {p: (50000, False) for p in ring}
    assert {o.parent for o in inv.of_kind("gpu")} == {"m"}
    assert any("does not state the NUMA node" in n.message for n in result.notes)
    assert any("CACHE COHERANCY" in n.message for n in result.notes)


def test_amd_smi_pcie_pair(fx: Path) -> None:
    # amd-smi-2gpu-pcie-handwritten.txt (the layout of amd-smi's own documentation): two GPUs over PCIe, 2 hops
    # = one NUMA node, so they share one CPU (unknown number); P2P access DISABLED both ways: two notes.
    result = import_files("amd-smi", [fx / "amd-smi-2gpu-pcie-handwritten.txt"], node="ws")
    inv = result.inventory
    assert {o.id: o.parent for o in inv.of_kind("gpu")} == {"ws/gpu0": "ws/cpu-unknown0", "ws/gpu1": "ws/cpu-unknown0"}
    assert _xgmi(inv) == {}
    assert sum("DISABLED" in n.message for n in result.notes) == 2


@pytest.mark.parametrize(
    ("fixture", "kind"),
    [("mi-4gpu-showtopo.txt", "rocm-smi"), ("amd-smi-4gpu-xgmi-handwritten.txt", "amd-smi")],
)
def test_nvidia_smi_names_the_amd_importer(fx: Path, fixture: str, kind: str) -> None:
    with pytest.raises(TopologError) as err:
        import_files("nvidia-smi", [fx / fixture])
    assert [d.location.line for d in err.value.diagnostics] == [1]
    assert f"topolog import {kind}" in str(err.value)


def _rocm(tmp_path: Path, text: str) -> TopologError:
    p = tmp_path / "t.txt"
    p.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("rocm-smi", [p])
    return err.value


_HEAD = "=== Weight between two GPUs ===\n       GPU0   GPU1\n"


@pytest.mark.parametrize(
    ("body", "line", "col", "needle"),
    [
        ("GPU0   0      x\nGPU1   15     0\n", 3, 15, "weight 'x'; expected a whole number"),
        ("GPU0   0      15\n", 2, 0, "no row for GPU1"),
        ("GPU0   0      15\nGPU1   15\n", 4, 0, "has 1 cells; expected 2"),
        ("GPU0   9      15\nGPU1   15     0\n", 3, 8, "to itself is '9'"),
    ],
)
def test_rocm_smi_errors(tmp_path: Path, body: str, line: int, col: int, needle: str) -> None:
    err = _rocm(tmp_path, _HEAD + body)
    assert any(d.location.line == line and d.location.col == col and needle in d.message for d in err.diagnostics), err


def test_link_type_must_be_symmetric(tmp_path: Path) -> None:
    text = "=== Link Type between two GPUs ===\n       GPU0   GPU1\nGPU0   0      XGMI\nGPU1   PCIE   0\n"
    err = _rocm(tmp_path, text)
    assert any("must be symmetric" in d.message and d.location.line == 3 for d in err.diagnostics), err


def test_not_a_rocm_file(tmp_path: Path) -> None:
    err = _rocm(tmp_path, "hello\n")
    assert [d.location.line for d in err.diagnostics] == [1]
    assert "rocm-smi --showtopo" in str(err)


def test_amd_smi_warning_lines_are_notes_and_json_is_refused(fx: Path, tmp_path: Path) -> None:
    text = (fx / "amd-smi-2gpu-pcie-handwritten.txt").read_text()
    p = tmp_path / "topo.txt"
    p.write_text("WARNING: User is missing the following required groups: render, video.\n" + text)
    result = import_files("amd-smi", [p])
    assert any(n.location.line == 1 and "outside the amd-smi tables" in n.message for n in result.notes)
    assert sum(1 for _ in result.inventory.of_kind("gpu")) == 2
    j = tmp_path / "topo.json"
    j.write_text('[{"gpu": 0}]')
    with pytest.raises(TopologError) as err:
        import_files("amd-smi", [j])
    assert "without --json" in str(err.value)


def test_a_byte_order_mark_leaves_the_first_table_read(fx: Path, tmp_path: Path) -> None:
    # The same amd-smi output saved with a UTF-8 byte order mark: the mark is no text, so the file
    # reads as without it (same GPUs, links and notes), and its first line, ACCESS TABLE:, is no
    # stray line outside the tables.
    plain = import_files("amd-smi", [fx / "amd-smi-4gpu-xgmi-handwritten.txt"], node="mi")
    p = tmp_path / "amd-smi-4gpu-xgmi-handwritten.txt"
    p.write_bytes(b"\xef\xbb\xbf" + (fx / "amd-smi-4gpu-xgmi-handwritten.txt").read_bytes())
    marked = import_files("amd-smi", [p], node="mi")
    assert _xgmi(marked.inventory) == _xgmi(plain.inventory)
    assert sorted(o.id for o in marked.inventory.objects.values()) == sorted(plain.inventory.objects)
    assert [(n.location.line, n.message) for n in marked.notes] == [(n.location.line, n.message) for n in plain.notes]


def _weights(fx: Path, tmp_path: Path, row_10: str, row_11: str) -> Path:
    # amd-smi-4gpu-xgmi-handwritten.txt lines 10 and 11: the weight rows of 0000:0c:00.0 and
    # 0000:22:00.0, whose cells to each other (15, one xGMI hop) are replaced.
    lines = (fx / "amd-smi-4gpu-xgmi-handwritten.txt").read_text().splitlines(keepends=True)
    assert lines[9].split() == ["0000:0c:00.0", "0", "15", "15", "30"]
    assert lines[10].split() == ["0000:22:00.0", "15", "0", "30", "15"]
    lines[9] = f"0000:0c:00.0 0            {row_10:<12} 15           30\n"
    lines[10] = f"0000:22:00.0 {row_11:<12} 0            30           15\n"
    p = tmp_path / "topo.txt"
    p.write_text("".join(lines))
    return p


def test_a_weight_that_differs_by_direction_is_refused(fx: Path, tmp_path: Path) -> None:
    # 0c -> 22 weighs 45 (three hops), 22 -> 0c 15 (one): one route cannot be both; reported once, at
    # line 10 where the pair is read first.
    with pytest.raises(TopologError) as err:
        import_files("amd-smi", [_weights(fx, tmp_path, "45", "15")])
    assert [(d.location.line, d.message) for d in err.value.diagnostics] == [
        (
            10,
            "weight of 0000:0c:00.0 to 0000:22:00.0 is 45 but 0000:22:00.0 to 0000:0c:00.0 is 15; "
            "the table must be symmetric",
        )
    ]


def test_a_weight_of_zero_between_two_gpus_is_said_and_gives_no_link(fx: Path, tmp_path: Path) -> None:
    # Weight 0 both ways between 0c and 22 (the others filled in): no route costs 0, so their
    # xGMI link (gpu0-gpu1: 0c and 22 are the first two in bus order) is not recorded, with a note
    # at line 10; the other direct pairs of weight 15 (0c-38, 22-5c, 38-5c) stay.
    result = import_files("amd-smi", [_weights(fx, tmp_path, "0", "0")], node="mi")
    assert sorted(_xgmi(result.inventory)) == [("mi/gpu0", "mi/gpu2"), ("mi/gpu1", "mi/gpu3"), ("mi/gpu2", "mi/gpu3")]
    assert any(
        n.location.line == 10 and "xGMI weight 0 between 0000:0c:00.0 and 0000:22:00.0" in n.message
        for n in result.notes
    )
