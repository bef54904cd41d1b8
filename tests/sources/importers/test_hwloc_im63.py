"""hwloc import, round 17 (IM): the package's CPUModel names its catalogue CPU, a switch uplink hwloc
states as 0 GB/s is not a Gen4 default, an AWS ENA on a host bridge beside an EFA is that EFA's card,
and which RSMI backend wrote XGMIBandwidth is read from the file's hwlocVersion.

Inputs are the real captures of fixtures/README.md, some with one figure changed (said at each test).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.facts.graph import graph_facts
from verifier.sources.importers import cpu_names, import_files
from verifier.sources.importers.cpu_names import cpu_models_for_name

P5EN = "aws-p5en-48xl-lstopo-excerpt.xml"
P4D = "aws-p4d-24xl-lstopo-excerpt.xml"
LSTOPO_MI = "mi-4gpu-lstopo-handwritten.xml"


# CPU names as /proc/cpuinfo and hwloc's CPUModel write them, each seen in public logs:
# "Intel(R) Xeon(R) Platinum 8480C" (DGX H100 hosts; AMD's MI300X platform notes), "...8480CL" (a
# Slurm node inventory in a Rust test), "...8480CTDX" (Intel's kernel test robot, lkp-spr-r02),
# "INTEL(R) XEON(R) PLATINUM 8570" (bexhoma benchmark logs: Emerald Rapids writes it upper case),
# "AMD EPYC 9654 96-Core Processor" and "AMD EPYC 7742 64-Core Processor" (lscpu pastes),
# "AMD Ryzen 9 7950X 16-Core Processor" (lscpu), "Intel(R) Xeon(R) Platinum 8488C" (AWS p5en capture).
@pytest.mark.parametrize(
    ("name", "vendor", "expected"),
    [
        ("Intel(R) Xeon(R) Platinum 8480C", "GenuineIntel", ("Xeon-8480C",)),
        ("INTEL(R) XEON(R) PLATINUM 8570", "GenuineIntel", ("Xeon-8570",)),
        ("AMD EPYC 9654 96-Core Processor", "AuthenticAMD", ("EPYC-9654",)),
        ("AMD EPYC 7742 64-Core Processor", None, ("EPYC-7742",)),
        ("AMD Ryzen 9 7950X 16-Core Processor", "AuthenticAMD", ("Ryzen-9-7950X",)),
        # Another part whose number the catalogue's begins: a whole word is needed, so none of these.
        ("Intel(R) Xeon(R) Platinum 8480CL", "GenuineIntel", ()),
        ("Intel(R) Xeon(R) Platinum 8480CTDX", "GenuineIntel", ()),
        ("Intel(R) Xeon(R) Platinum 8480+", "GenuineIntel", ()),
        ("AMD EPYC 9654P 96-Core Processor", "AuthenticAMD", ()),
        ("AMD Ryzen 9 7950X3D 16-Core Processor", "AuthenticAMD", ()),
        ("Intel(R) Xeon(R) Platinum 8488C", "GenuineIntel", ()),
        # The words fit but cpuid's vendor is not the model's (EPYC-9654 is AMD's).
        ("AMD EPYC 9654 96-Core Processor", "GenuineIntel", ()),
        ("", None, ()),
    ],
)
def test_cpu_names(name: str, vendor: str | None, expected: tuple[str, ...]) -> None:
    assert cpu_models_for_name(name, vendor) == expected


def test_a_name_two_catalogue_cpus_fit_is_not_mapped(fx: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A second catalogue CPU whose words ("xeon", "8480c") are also in the name: two fit, none is taken.
    monkeypatch.setattr(
        cpu_names,
        "_cpu_models",
        lambda: (
            ("Xeon-8480C", "intel", frozenset({"xeon", "8480c"})),
            ("Xeon-Platinum-8480C", "intel", frozenset({"xeon", "platinum", "8480c"})),
        ),
    )
    path = tmp_path / "p5en.xml"
    path.write_text((fx / P5EN).read_text().replace("Platinum 8488C", "Platinum 8480C"))
    result = import_files("hwloc", [path], node="n")
    assert result.inventory.objects["n/cpu0"].model is None
    assert [str(n) for n in result.notes if "fits the catalogue CPUs" in str(n)] != []


def _gen4_trained_p5en(fx: Path, tmp_path: Path, cpu: str) -> Path:
    """The real p5en capture with the Amazon switch's uplink (45:00.0, line 34) and both H200 (59:00.0,
    5a:00.0) stated at 31.507692 GB/s (Gen4 x16) instead of 63.015385 (Gen5 x16), and `cpu` as CPUModel."""
    lines = (fx / P5EN).read_text().split("\n")
    for k in (33, 164, 185):  # lines 34, 165 and 186
        assert 'pci_link_speed="63.015385"' in lines[k]
        lines[k] = lines[k].replace('pci_link_speed="63.015385"', 'pci_link_speed="31.507692"')
    path = tmp_path / "p5en-gen4.xml"
    path.write_text("\n".join(lines).replace("Intel(R) Xeon(R) Platinum 8488C", cpu))
    return path


def _findings(path: Path) -> list[tuple[str, ...]]:
    result = CliRunner().invoke(cli.main, ["verify", "--from", "hwloc", str(path), "--format", "json"])
    assert result.exit_code in (0, 1), result.output
    return sorted((f["rule"], *f["subjects"]) for f in json.loads(result.stdout)["findings"])


@pytest.mark.usefixtures("in_repo_root")
def test_a_known_cpu_judges_a_gpu_trained_down_with_its_uplink(fx: Path, tmp_path: Path) -> None:
    # H200 (Gen5 x16, 63008 MB/s) at 31508 MB/s under a switch whose uplink is also at 31508 MB/s.
    # With CPUModel "Intel(R) Xeon(R) Platinum 8480C" the node's CPU is Xeon-8480C (PCIe Gen5): both
    # ends give Gen5, so each GPU's link is below them -> PCIE002 x2. BW004 is the switch: downstream
    # 2 x 31508 (GPUs) + 4 x 31508 (EFA; each ENA shares its EFA's link) = 189048 over 31508 = 6:1 > 4.
    path = _gen4_trained_p5en(fx, tmp_path, "Intel(R) Xeon(R) Platinum 8480C")
    node = path.stem
    assert import_files("hwloc", [path], node=node).inventory.objects[f"{node}/cpu0"].model == "Xeon-8480C"
    assert _findings(path) == [
        ("BW004", f"{node}/pcisw0"),
        ("PCIE002", f"{node}/gpu0", f"{node}/gpu0<->{node}/pcisw0"),
        ("PCIE002", f"{node}/gpu1", f"{node}/gpu1<->{node}/pcisw0"),
    ]


@pytest.mark.usefixtures("in_repo_root")
def test_an_unknown_cpu_leaves_the_uplink_to_bound_the_gpu(fx: Path, tmp_path: Path) -> None:
    # Control: the capture's own 8488C is not in the catalogue, so no CPU model; the Gen4 uplink then
    # bounds what the GPUs can train at (Gen4) and only BW004 remains.
    path = _gen4_trained_p5en(fx, tmp_path, "Intel(R) Xeon(R) Platinum 8488C")
    assert import_files("hwloc", [path], node="n").inventory.objects["n/cpu0"].model is None
    assert _findings(path) == [("BW004", f"{path.stem}/pcisw0")]


def test_an_uplink_stated_as_zero_takes_the_widest_link_below(fx: Path, tmp_path: Path) -> None:
    # The p5en switch's uplink (45:00.0, line 34) written as 0.000000. Below it: 2 H200 at 63015 MB/s and
    # 4 EFA at 31508, so the uplink is taken at 63015 (the widest), labelled assumed; the Gen4 x16
    # default (31504) made 252062 / 31504 = 8:1, a BW004 on a figure no tool stated.
    lines = (fx / P5EN).read_text().split("\n")
    lines[33] = lines[33].replace('pci_link_speed="63.015385"', 'pci_link_speed="0.000000"')
    path = tmp_path / "p5en-up0.xml"
    path.write_text("\n".join(lines))
    result = import_files("hwloc", [path], node="n")
    up = result.inventory.links["n/pcisw0<->n/hb0"]
    assert (up.mbps, up.labels.get("assumed")) == (63015, "bandwidth")
    assert sum("no figure (0 GB/s" in str(n) for n in result.notes) == 1


def test_an_uplink_at_zero_is_never_lowered(fx: Path, tmp_path: Path) -> None:
    # The p5en switch's uplink at 0.000000 and every link below it (lines after 34) at 15.753846 GB/s:
    # nothing below is wider than the Gen4 x16 default (31504 MB/s), so the uplink keeps the default
    # (a narrower figure would make 2 GPUs + 4 EFA = 6 x 15754 over 15754, a 6:1 BW004); no note.
    lines = (fx / P5EN).read_text().split("\n")
    lines[33] = lines[33].replace('pci_link_speed="63.015385"', 'pci_link_speed="0.000000"')
    for k in range(34, len(lines)):
        lines[k] = lines[k].replace('"63.015385"', '"15.753846"').replace('"31.507692"', '"15.753846"')
    path = tmp_path / "p5en-narrow.xml"
    path.write_text("\n".join(lines))
    result = import_files("hwloc", [path], node="n")
    up = result.inventory.links["n/pcisw0<->n/hb0"]
    assert (up.mbps, up.labels.get("assumed")) == (31504, "bandwidth")
    assert not any("no figure (0 GB/s" in str(n) for n in result.notes)


def test_an_uplink_at_zero_over_links_at_zero_keeps_the_default(fx: Path) -> None:
    # Control: the Cisco VIC capture states 0 for every link, so every link below its switches is the
    # Gen4 x16 default (31504 MB/s) too, and nothing changes: no note.
    result = import_files("hwloc", [fx / "16intel64-manyVFs.xml"], node="n")
    ups = sorted(lk.mbps for lk in result.inventory.links.values() if lk.a.split("/")[-1].startswith("pcisw"))
    assert ups == [31504, 31504, 31504, 31504]
    assert not any("no figure (0 GB/s" in str(n) for n in result.notes)


def test_p4d_ena_on_a_host_bridge_is_the_ip_side_of_its_efa(fx: Path) -> None:
    # Real p4d.24xlarge host bridge [90-90]: ENA 90:01.0 (nic0, bus order), EFA 90:1b.0 (nic1, RDMA
    # device rdmap144s27), A100 90:1c.0 and 90:1d.0, all straight on the host bridge. Before: the
    # ENA, first in bus order at the same PHB class and width, was each GPU's nearest NIC. Now the
    # ENA shares the EFA's link, and each GPU's nearest NIC is the EFA.
    result = import_files("hwloc", [fx / P4D], node="n")
    inv = result.inventory
    assert inv.objects["n/nic0"].labels["pci_device"] == "0xec20"
    assert inv.objects["n/nic0"].labels.get("shares_link_of") == "n/nic1"
    assert "n/nic0<->n/nic1" in inv.links
    nearest = {row[0]: row[1] for row in graph_facts(inv, ["nearest_nic"])["nearest_nic"]}
    assert nearest == {"n/gpu0": "n/nic1", "n/gpu1": "n/nic1"}


def _xgmi_file(fx: Path, tmp_path: Path, version: str | None, gpus: int) -> Path:
    """The 4-GPU lstopo sample with ROCm SMI's figures for its first `gpus` GPUs (XGMIBandwidth 1000000
    on the diagonal and 100000 elsewhere, XGMIHops 1 for every pair: topology-rsmi.c) and, where given,
    a hwlocVersion record."""
    text = (fx / LSTOPO_MI).read_text()
    if version is not None:
        text = text.replace("</topology>", f'  <info name="hwlocVersion" value="{version}"/>\n</topology>')
    start = text.index('  <distances2 type="OSDev"')
    ids = text[text.index("<indexes", start) : text.index("</indexes>", start)].split(">")[1].split()[:gpus]
    end = text.rindex("</distances2>") + len("</distances2>")
    cells = [(i, j) for i in range(gpus) for j in range(gpus)]
    mats = [
        ("XGMIBandwidth", " ".join("1000000" if i == j else "100000" for i, j in cells)),
        ("XGMIHops", " ".join("0" if i == j else "1" for i, j in cells)),
    ]
    block = "".join(
        f'  <distances2 type="OSDev" nbobjs="{gpus}" kind="9" name="{name}" indexing="gp">\n'
        f'    <indexes length="{len(" ".join(ids)) + 1}">{" ".join(ids)} </indexes>\n'
        f'    <u64values length="{len(vals) + 1}">{vals} </u64values>\n  </distances2>\n'
        for name, vals in mats
    )
    path = tmp_path / f"mi-{gpus}-{version}.xml"
    path.write_text(text[:start] + block + text[end:])
    return path


def _xgmi(path: Path) -> tuple[list[tuple[str, str, int, dict[str, str]]], list[str]]:
    result = import_files("hwloc", [path], node="m")
    links = sorted(
        (lk.a, lk.b, lk.mbps, {k: v for k, v in lk.labels.items() if k != "source"})
        for lk in result.inventory.links.values()
        if lk.kind == "xgmi"
    )
    return links, [str(n) for n in result.notes]


def test_two_gpus_from_hwloc_before_2_14_are_placeholders(fx: Path, tmp_path: Path) -> None:
    # hwloc 2.10.0 has only the ROCm SMI backend, which writes 100000 without measuring: the one pair
    # (1 hop, and no third GPU to route through) is a direct link, its bandwidth the assumed default.
    links, notes = _xgmi(_xgmi_file(fx, tmp_path, "2.10.0", 2))
    assert links == [("m/gpu0", "m/gpu1", 50000, {"assumed": "bandwidth"})]
    assert sum("hwloc 2.10.0 has no other backend" in n for n in notes) == 1


def test_two_gpus_without_a_version_keep_the_stated_figure(fx: Path, tmp_path: Path) -> None:
    # Control (as before): no hwlocVersion, two GPUs: the 100000 MB/s is kept as stated.
    links, _notes = _xgmi(_xgmi_file(fx, tmp_path, None, 2))
    assert links == [("m/gpu0", "m/gpu1", 100000, {})]


def test_a_full_mesh_from_hwloc_2_14_is_stated(fx: Path, tmp_path: Path) -> None:
    # hwloc 2.14 reads XGMIBandwidth from AMD SMI where installed (hwloc NEWS 2.14.0), which asks each
    # pair: 4 GPUs, every pair 1 hop at 100000 -> 6 direct links at the stated 100000 MB/s, one note.
    links, notes = _xgmi(_xgmi_file(fx, tmp_path, "2.14.1", 4))
    assert [(a, b, mbps, labels) for a, b, mbps, labels in links] == [
        (f"m/gpu{i}", f"m/gpu{j}", 100000, {}) for i in range(4) for j in range(i + 1, 4)
    ]
    assert sum("taken as stated" in n for n in notes) == 1


def test_a_full_mesh_from_hwloc_2_10_stays_placeholders(fx: Path, tmp_path: Path) -> None:
    # Control: the same file written by hwloc 2.10.0 (ROCm SMI only): 6 pairs with XGMIHops 1, each an
    # inferred link at the assumed 50000 MB/s, as without a version.
    links, _notes = _xgmi(_xgmi_file(fx, tmp_path, "2.10.0", 4))
    assert links == [
        (f"m/gpu{i}", f"m/gpu{j}", 50000, {"assumed": "bandwidth", "inferred": "true"})
        for i in range(4)
        for j in range(i + 1, 4)
    ]


@pytest.mark.parametrize(
    ("name", "unknown"),
    [
        # Real AWS captures (hwloc 2.10, OpenCL and DRM OS devices only, no NVLinkBandwidth): unknown.
        (P5EN, True),
        (P4D, True),
        # Real DGX-2 capture: an nvml<k> OS device under each V100 and the NVLinkBandwidth matrix.
        ("nvidiaDGX2.xml", False),
        # Hand-written workstation lstopo: nvml0/nvml1 under its GPUs, no NVLink: absent, not unknown.
        ("workstation-2gpu-2nic-lstopo-handwritten.xml", False),
        # AMD GPUs only: no NVLink to be unknown.
        (LSTOPO_MI, False),
    ],
)
def test_nvlinks_unknown_without_the_nvml_backend(fx: Path, name: str, unknown: bool) -> None:
    result = import_files("hwloc", [fx / name], node="n")
    assert (result.inventory.objects["n"].labels.get("nvlinks_described") == "false") is unknown
    assert sum("hwloc ran without its NVML backend" in str(n) for n in result.notes) == int(unknown)
