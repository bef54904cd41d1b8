"""One card, one PCIe link; one device, one object: NCCL's multi-port NICs and devices listed under several CPUs."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main as cli
from verifier.sources.importers import import_files
from verifier.sources.importers.reconcile import Disagreement, load_side, reconcile

pytestmark = pytest.mark.usefixtures("in_repo_root")

NCCL = "workstation-2gpu-2nic-nccl-handwritten.xml"
LSTOPO = "workstation-2gpu-2nic-lstopo-handwritten.xml"


def _rows(items: list[Disagreement]) -> list[tuple[str, str, str, str]]:
    return [(d.subject, d.what, d.a, d.b) for d in items]


def _bw003(kind: str, path: Path) -> list[str]:
    result = CliRunner().invoke(cli.main, ["verify", "--from", kind, str(path), "--fail-on", "warning"])
    assert result.exit_code in (0, 1), result.output
    return sorted(line.split(" BW003: ", 1)[1] for line in result.stdout.splitlines() if " BW003: " in line)


def test_ports_of_one_card_share_its_link(fx: Path) -> None:
    # The dump's <pci busid="0000:c1:00.0"> holds one <nic> with two <net>s, mlx5_0 and mlx5_1 (NCCL writes a
    # card's functions as function 0). Two NICs, as nvidia-smi's legend and hwloc list them; the first holds
    # the card's link (Gen4 x16 = 16 x 1969 = 31504 MB/s), the second hangs on the first by the same link,
    # and is known by its name, not by a bus id the dump does not give it.
    inv = import_files("nccl-xml", [fx / NCCL], node="w").inventory
    nics = {o.labels["name"]: o for o in inv.of_kind("nic")}
    assert sorted(nics) == ["mlx5_0", "mlx5_1"]
    first, second = nics["mlx5_0"], nics["mlx5_1"]
    assert first.labels["pci_busid"] == "0000:c1:00.0" and "shares_link_of" not in first.labels
    assert second.labels["shares_link_of"] == first.id and "pci_busid" not in second.labels
    assert second.labels["card_pci_busid"] == "0000:c1:00.0"
    pcie = sorted((lk.a, lk.b, lk.mbps) for lk in inv.links.values() if lk.kind == "pcie" and "nic" in lk.a)
    assert pcie == [(first.id, "w/cpu0", 31504), (second.id, first.id, 31504)]
    # Each port runs at 100000 Mb/s = 12500 MB/s.
    assert first.quantities["bandwidth_mbps"] == second.quantities["bandwidth_mbps"] == 12500


def test_two_port_card_on_gen4_x8_is_flagged(fx: Path, tmp_path: Path) -> None:
    # At x16 the card's two ports together, 2 x 12500 = 25000 MB/s, fit its 31504 MB/s link: no BW003.
    assert _bw003("nccl-xml", fx / NCCL) == []
    # The same card in a Gen4 x8 slot: 8 x 1969 = 15752 MB/s. Each port alone (12500) fits, the card
    # (25000) does not: one finding, at the port that holds the card's link.
    x8 = tmp_path / "x8.xml"
    text = (fx / NCCL).read_text()
    card = next(ln for ln in text.splitlines() if 'busid="0000:c1:00.0"' in ln)
    x8.write_text(text.replace(card, card.replace('link_width="16"', 'link_width="8"')))
    assert _bw003("nccl-xml", x8) == [
        "A NIC line rate of 25000 MB/s is more than its PCIe link carries (15752 MB/s), at NIC x8/nic0. [x8/nic0]"
    ]


def test_hwloc_card_on_gen4_x8_is_flagged_too(fx: Path, tmp_path: Path) -> None:
    # hwloc lists the same card as functions c1:00.0 and c1:00.1 of a ConnectX-6 Dx (15b3:101d: 2 ports of
    # 100 Gb/s in the catalogue), so each function is one port, 12500 MB/s, and the card 25000 MB/s. At
    # 31.507692 GB/s (x16) it fits; at 15.753846 GB/s (x8: 15754 MB/s) it does not.
    assert _bw003("hwloc", fx / LSTOPO) == []
    x8 = tmp_path / "x8.xml"
    text = (fx / LSTOPO).read_text()
    lines = text.splitlines(keepends=True)
    for k, ln in enumerate(lines):
        if any(f'pci_busid="{b}"' in ln for b in ("0000:c0:01.1", "0000:c1:00.0", "0000:c1:00.1")):
            lines[k] = ln.replace('pci_link_speed="31.507692"', 'pci_link_speed="15.753846"')
    x8.write_text("".join(lines))
    assert _bw003("hwloc", x8) == [
        "A NIC line rate of 25000 MB/s is more than its PCIe link carries (15754 MB/s), at NIC x8/nic0. [x8/nic0]"
    ]


def test_reconcile_names_the_card_link_once(fx: Path, tmp_path: Path) -> None:
    # Twin hosts: the card at x8 on one, x16 on the other. One link differs, so one disagreement, at the
    # port holding it (15752 vs 31504 MB/s); the second port shares that link and adds nothing.
    text = (fx / NCCL).read_text()
    card = next(ln for ln in text.splitlines() if 'busid="0000:c1:00.0"' in ln)
    twin = tmp_path / "twin.xml"
    twin.write_text(text.replace(card, card.replace('link_width="16"', 'link_width="8"')))
    got = reconcile(load_side(fx / NCCL, None), load_side(twin, None))
    n = NCCL.removesuffix(".xml")
    assert _rows(got) == [(f"{n}/nic0", "PCIe uplink bandwidth (MB/s)", "31504", "15752")]


def _ndv2_nic_under_both_cpus(fx: Path, tmp_path: Path) -> Path:
    """azure-ndv2 with its InfiniBand NIC (0101:00:00.0, under cpu 0) listed again under cpu 1, as a dump
    lists a NIC that has no NUMA node."""
    lines = (fx / "azure-ndv2-topo.xml").read_text().splitlines(keepends=True)
    start = next(k for k, ln in enumerate(lines) if 'busid="0101:00:00.0"' in ln)
    end = (
        start
        if lines[start].rstrip().endswith("/>")
        else next(k for k in range(start, len(lines)) if lines[k].strip() == "</pci>")
    )
    nic = lines[start : end + 1]
    second_cpu_end = max(k for k, ln in enumerate(lines) if ln.strip() == "</cpu>")
    out = tmp_path / "ndv2-twice.xml"
    out.write_text("".join(lines[:second_cpu_end] + nic + lines[second_cpu_end:]))
    return out


def test_device_listed_under_two_cpus_is_one_device(fx: Path, tmp_path: Path) -> None:
    twice = _ndv2_nic_under_both_cpus(fx, tmp_path)
    imp = import_files("nccl-xml", [twice], node="v")
    nics = list(imp.inventory.of_kind("nic"))
    # One NIC, hung where the dump lists it first (cpu0), with the other CPU named.
    assert [(o.id, o.parent, o.labels["also_under"]) for o in nics] == [("v/nic0", "v/cpu0", "v/cpu1")]
    assert any("listed again under v/cpu1" in n.message for n in imp.notes)
    # Against the dump that lists it once: nothing is on one side only (it is not counted twice), and its
    # path to the GPUs of cpu 1 (SYS in the original) is not stated by the second dump: not compared.
    got = reconcile(load_side(fx / "azure-ndv2-topo.xml", None), load_side(twice, None))
    assert got == []


def test_pci_less_nic_listed_under_every_cpu(fx: Path, tmp_path: Path) -> None:
    # azure-ncv4: a <nic> eth0 without PCI path in cpu 0; listed again in cpus 1-3 it is still one NIC.
    text = (fx / "azure-ncv4-topo.xml").read_text()
    block = text[text.index("    <nic>") : text.index("</nic>") + len("</nic>\n")]
    parts = text.split("  </cpu>\n")
    every = parts[0] + "  </cpu>\n" + "".join(p + block + "  </cpu>\n" for p in parts[1:-1]) + parts[-1]
    path = tmp_path / "ncv4-every.xml"
    path.write_text(every)
    inv = import_files("nccl-xml", [path], node="c").inventory
    assert [(o.labels["name"], o.parent, o.labels["also_under"]) for o in inv.of_kind("nic")] == [
        ("eth0", "c/cpu0", "c/cpu1,c/cpu2,c/cpu3")
    ]


def test_card_written_function_by_function(fx: Path, tmp_path: Path) -> None:
    # The same card written as two <pci> elements, functions c1:00.0 (mlx5_0) and c1:00.1 (mlx5_1), as a
    # hand-made NCCL_TOPO_FILE may (a dump merges them). Functions of one device below one parent are one
    # card: the second shares the first's link and keeps its own bus id, so it pairs with hwloc's c1:00.1.
    text = (fx / NCCL).read_text()
    net1 = next(ln for ln in text.splitlines(keepends=True) if 'name="mlx5_1"' in ln)
    card = next(ln for ln in text.splitlines(keepends=True) if 'busid="0000:c1:00.0"' in ln)
    second = card.replace('busid="0000:c1:00.0"', 'busid="0000:c1:00.1"') + "      <nic>\n" + net1
    second += "      </nic>\n    </pci>\n"
    split = text.replace(net1, "").replace("    </pci>\n  </cpu>", "    </pci>\n" + second + "  </cpu>")
    path = tmp_path / "functions.xml"
    path.write_text(split)
    inv = import_files("nccl-xml", [path], node="w").inventory
    nics = {o.labels["name"]: o for o in inv.of_kind("nic")}
    assert nics["mlx5_1"].labels["pci_busid"] == "0000:c1:00.1"
    assert nics["mlx5_1"].labels["shares_link_of"] == nics["mlx5_0"].id
    assert [lk.b for lk in inv.links.values() if lk.a == nics["mlx5_1"].id] == [nics["mlx5_0"].id]
    assert reconcile(load_side(path, None), load_side(fx / LSTOPO, None)) == []
