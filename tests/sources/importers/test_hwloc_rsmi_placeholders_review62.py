"""Review of the ROCm SMI placeholder reading (round 16): hwloc's AMD SMI backend writes 1000000 on the
diagonal for GPUs that report no memory bandwidth (the MI250X: "Old hardware ... may report -1") and asks
AMD SMI for each xGMI pair's maximum bandwidth, which is 0 for a pair routed through other GPUs
(open-mpi/hwloc hwloc/topology-rsmi.c, AMD SMI part; ROCm/rocm-systems issue 5763). Where every direct link
reports 100000, that file holds only the figures 0, 100000 and 1000000, like the ROCm SMI placeholders, but
the 0 beside a hop count says which pair is routed. It was read as placeholders: the routed pair became an
inferred link and the stated 100000 MB/s became an assumed 50000.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.importers import import_files

LSTOPO = "mi-4gpu-lstopo-handwritten.xml"


def _amd_smi_figures(fx: Path, tmp_path: Path) -> Path:
    """The 4-GPU lstopo sample (XGMIHops 1 for every pair) with AMD SMI's figures for an MI250X-like
    machine: 1000000 on the diagonal, 100000 for the direct pairs, 0 for GPU0-GPU1 (routed)."""
    text = (fx / LSTOPO).read_text()
    start = text.index('name="XGMIBandwidth"')
    end = text.index("</distances2>", start)
    block = text[start:end]
    values = ["1000000" if i % 5 == 0 else "100000" for i in range(16)]  # i % 5 == 0: the diagonal of 4x4
    values[1] = values[4] = "0"
    chunk = " ".join(values) + " "
    head = block[: block.index("<u64values")]
    path = tmp_path / "amd-smi.xml"
    path.write_text(text[:start] + head + f'<u64values length="{len(chunk)}">{chunk}</u64values>\n  ' + text[end:])
    return path


def test_a_routed_pair_beside_a_hop_count_keeps_the_figures_stated(fx: Path, tmp_path: Path) -> None:
    result = import_files("hwloc", [_amd_smi_figures(fx, tmp_path)], node="m")
    links = sorted(
        (lk.a, lk.b, lk.mbps, dict(lk.labels)) for lk in result.inventory.links.values() if lk.kind == "xgmi"
    )
    # 6 pairs with XGMIHops 1, less GPU0-GPU1 (bandwidth 0: routed) = 5 links, each at its stated 100000 MB/s,
    # neither inferred nor assumed.
    assert [(a, b, mbps) for a, b, mbps, _ in links] == [
        ("m/gpu0", "m/gpu2", 100000),
        ("m/gpu0", "m/gpu3", 100000),
        ("m/gpu1", "m/gpu2", 100000),
        ("m/gpu1", "m/gpu3", 100000),
        ("m/gpu2", "m/gpu3", 100000),
    ]
    assert not any("inferred" in labels or "assumed" in labels for *_, labels in links)
    notes = [str(n) for n in result.notes]
    assert not any("ROCm SMI placeholders" in n for n in notes)
    assert sum("m/gpu0 - m/gpu1 is 1 but XGMIBandwidth gives them 0" in n for n in notes) == 1


def test_two_gpus_keep_the_stated_figure(fx: Path, tmp_path: Path) -> None:
    # docs/importers.md: the placeholder reading applies with more than two GPUs. Two GPUs (gp 107 and
    # 117 of the sample) with ROCm SMI's figures (1000000 diagonal, 100000 between) and 1 hop: one link at
    # the stated 100000 MB/s, as on the base; it had become an assumed 50000 without a note.
    text = (fx / LSTOPO).read_text()
    cut = text.index('  <distances2 type="OSDev" nbobjs="4" kind="9"')
    tail = (
        '  <distances2 type="OSDev" nbobjs="2" kind="9" name="XGMIBandwidth" indexing="gp">\n'
        '    <indexes length="8">107 117 </indexes>\n'
        '    <u64values length="29">1000000 100000 100000 1000000 </u64values>\n'
        "  </distances2>\n"
        '  <distances2 type="OSDev" nbobjs="2" kind="33" name="XGMIHops" indexing="gp">\n'
        '    <indexes length="8">107 117 </indexes>\n'
        '    <u64values length="8">0 1 1 0 </u64values>\n'
        "  </distances2>\n"
        "</topology>\n"
    )
    path = tmp_path / "two.xml"
    path.write_text(text[:cut] + tail)
    result = import_files("hwloc", [path], node="m")
    links = [lk for lk in result.inventory.links.values() if lk.kind == "xgmi"]
    assert [(lk.a, lk.b, lk.mbps) for lk in links] == [("m/gpu0", "m/gpu1", 100000)]
    assert not any("inferred" in lk.labels or "assumed" in lk.labels for lk in links)
