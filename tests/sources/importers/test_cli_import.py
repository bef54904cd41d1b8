"""`topolog import` writes a loadable, deterministic inventory; `topolog reconcile` finds disagreements."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.sources.importers import import_files
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.model import Inventory

CASES = [
    ("nccl-xml", "aws-p4d-24xl-topo.xml"),
    ("hwloc", "nvidiaDGX2.xml"),
    ("hwloc", "fakecpukinds.xml"),
    ("nvidia-smi", "dgx-a100-topo-tabs.txt"),
    ("slurm", "topology-tree.conf"),
]


def _view(inv: Inventory) -> tuple[object, ...]:
    objs = {o.id: (o.kind, o.parent, dict(o.labels), dict(o.quantities)) for o in inv.objects.values()}
    links = {lk.id: (lk.a, lk.b, lk.kind, lk.mbps, dict(lk.attrs), dict(lk.labels)) for lk in inv.links.values()}
    return objs, links


@pytest.mark.parametrize(("kind", "name"), CASES)
def test_round_trip(fx: Path, tmp_path: Path, kind: str, name: str) -> None:
    out = tmp_path / "inv.yaml"
    result = CliRunner().invoke(main, ["import", kind, str(fx / name), "-o", str(out)])
    assert result.exit_code == 0, result.output
    again = CliRunner().invoke(main, ["import", kind, str(fx / name)])
    assert again.stdout == out.read_text()  # deterministic
    assert _view(load_inventory([out])) == _view(import_files(kind, [fx / name]).inventory)


def test_import_bad_input_exits_2_with_line(fx: Path) -> None:
    result = CliRunner().invoke(main, ["import", "nccl-xml", str(fx / "aws-g5.48xl-topo.xml")])
    assert result.exit_code == 2
    assert "aws-g5.48xl-topo.xml:3:5: 9 PCI devices, 0000:00:16.0 (line 3)" in result.stderr


def test_import_notes_go_to_stderr(fx: Path) -> None:
    result = CliRunner().invoke(main, ["import", "hwloc", str(fx / "nvidiaDGX2.xml")])
    assert result.exit_code == 0
    assert "note: " in result.stderr and "NUMALatency" in result.stderr
    assert "note" not in result.stdout.split("\n", 3)[-1][:200]


def test_reconcile_agrees_with_its_own_import(fx: Path, tmp_path: Path) -> None:
    out = tmp_path / "p4d.yaml"
    CliRunner().invoke(main, ["import", "nccl-xml", str(fx / "aws-p4d-24xl-topo.xml"), "-o", str(out)])
    result = CliRunner().invoke(main, ["reconcile", str(fx / "aws-p4d-24xl-topo.xml"), str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "The two descriptions agree.\n"


def test_reconcile_reports_missing_devices_speeds_and_classes(fx: Path, tmp_path: Path) -> None:
    text = (fx / "aws-p4d-24xl-topo.xml").read_text()
    # B: GPU 7 is gone, NIC 0 trained at x8, GPU 3 moved under switch 0 (PIX with GPUs 0/1 and NIC 0).
    gpu7 = next(ln for ln in text.splitlines() if "0000:a0:1d.0" in ln)
    gpu3 = next(ln for ln in text.splitlines() if "0000:20:1d.0" in ln)
    b = text.replace(gpu7 + "\n", "").replace(gpu3 + "\n", "")
    b = b.replace(
        'busid="0000:10:1b.0" class="0x020000" vendor="0x1d0f" device="0xefa0" subsystem_vendor="0x1d0f" '
        'subsystem_device="0xefa0" link_speed="8 GT/s" link_width="16"',
        'busid="0000:10:1b.0" class="0x020000" vendor="0x1d0f" device="0xefa0" subsystem_vendor="0x1d0f" '
        'subsystem_device="0xefa0" link_speed="8 GT/s" link_width="8"',
    )
    b = b.replace("<!-- NIC 0 -->", "<!-- NIC 0 -->\n" + gpu3)
    pb = tmp_path / "b.xml"
    pb.write_text(b)
    result = CliRunner().invoke(main, ["reconcile", str(fx / "aws-p4d-24xl-topo.xml"), str(pb), "--format", "json"])
    assert result.exit_code == 1, result.output
    import json

    items = json.loads(result.stdout)["disagreements"]
    whats = {(d["subject"], d["what"], d["a"], d["b"]) for d in items}
    assert ("aws-p4d-24xl-topo/gpu7", "gpu present on one side only", "present", "missing") in whats
    assert ("aws-p4d-24xl-topo/nic0", "PCIe uplink bandwidth (MB/s)", "15760", "7880") in whats
    assert ("aws-p4d-24xl-topo/gpu0 - aws-p4d-24xl-topo/gpu3", "path class", "NODE", "PIX") in whats
    assert ("aws-p4d-24xl-topo/gpu2 - aws-p4d-24xl-topo/gpu3", "path class", "PIX", "NODE") in whats


def test_reconcile_nvidia_smi_against_inventory(fx: Path, tmp_path: Path) -> None:
    out = tmp_path / "a100.yaml"
    CliRunner().invoke(main, ["import", "nvidia-smi", str(fx / "dgx-a100-topo-tabs.txt"), "-o", str(out)])
    # The space-aligned capture of the same machine agrees with the inventory (one node each: matched).
    same = CliRunner().invoke(main, ["reconcile", str(fx / "dgx-a100-topo-spaces.txt"), str(out)])
    assert same.exit_code == 0, same.output
    # GPU0-GPU1 degraded to 8 NVLinks in a later capture.
    text = (fx / "dgx-a100-topo-tabs.txt").read_text().splitlines(keepends=True)
    text[1] = text[1].replace("\t X \tNV12", "\t X \tNV8", 1)
    text[2] = text[2].replace("GPU1\tNV12", "GPU1\tNV8", 1)
    later = tmp_path / "later.txt"
    later.write_text("".join(text))
    result = CliRunner().invoke(main, ["reconcile", str(out), str(later), "--b-kind", "nvidia-smi"])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    assert lines[-1] == "1 disagreement(s)."
    assert (
        lines[0].startswith("dgx-a100-topo-tabs/gpu0 - dgx-a100-topo-tabs/gpu1: path class: A NV12 (")
        and " B NV8 (" in lines[0]
    )
