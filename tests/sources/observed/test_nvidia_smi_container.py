"""nvidia-smi run in a container given some of the host's GPUs: its numbers are not the host's indexes.

nvidia-smi numbers the GPUs it sees 0..n-1 (`Attached GPUs : n`), so in a container given the host's GPUs 5 and
6 it lists them as its GPU 0 and 1. Each block still prints the device node the kernel driver gave that GPU on the
host (`Minor Number : 5`: the container's /dev/nvidia5 is the host's; nvidia-container-cli lists each device it
mounts as `/dev/nvidia6 (GPU-... at 00000000:da:00.0)`, NVIDIA/nvidia-docker#1506; the `Minor Number` line's
shape: NVIDIA/nvidia-docker#1567, NVIDIA/k8s-device-plugin#250). Before, the positions were taken as host indexes:
the host GPU 6's pending row remapping was put on declared gpu1 and six GPUs the container was not given were
OBS006 missing. A minor number at or above the listing's count now says "not the host's numbering": no index; the
GPUs shown match by UUID, serial or bus id (then the declared GPUs not shown are OBS006), else the node is OBS014.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.model import container_numbered, unnumbered

BUS = {5: "00000000:AB:00.0", 6: "00000000:BA:00.0"}
"""Host GPU number -> PCI bus id; the inventories below declare the same ids for gpu5 / gpu6."""


def _xml(minors: tuple[int, int], attached: int = 2) -> str:
    # Two <gpu> blocks; the second (host GPU 6) has a row remapping pending: OBS004 for whichever GPU it is.
    blocks = []
    for minor, pending in zip(minors, ("No", "Yes"), strict=True):
        bus = BUS.get(minor, f"00000000:{minor + 1:02X}:00.0")
        blocks.append(
            f'    <gpu id="{bus}">\n'
            "        <product_name>NVIDIA H100 80GB HBM3</product_name>\n"
            f"        <serial>16523230100{minor:02d}</serial>\n"
            f"        <uuid>GPU-6f1c{minor}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31</uuid>\n"
            f"        <minor_number>{minor}</minor_number>\n"
            f"        <pci>\n            <pci_bus_id>{bus}</pci_bus_id>\n        </pci>\n"
            "        <remapped_rows>\n"
            "            <remapped_row_corr>0</remapped_row_corr>\n"
            "            <remapped_row_unc>0</remapped_row_unc>\n"
            f"            <remapped_row_pending>{pending}</remapped_row_pending>\n"
            "            <remapped_row_failure>No</remapped_row_failure>\n"
            "        </remapped_rows>\n"
            "    </gpu>\n"
        )
    return (
        '<?xml version="1.0" ?>\n<!DOCTYPE nvidia_smi_log SYSTEM "nvsmi_device_v12.dtd">\n<nvidia_smi_log>\n'
        "    <timestamp>Sun Dec  6 08:30:00 2026</timestamp>\n    <driver_version>535.129.03</driver_version>\n"
        f"    <attached_gpus>{attached}</attached_gpus>\n{''.join(blocks)}</nvidia_smi_log>\n"
    )


def _text(minors: tuple[int, int]) -> str:
    out = [
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Sun Dec  6 08:30:00 2026",
        "Driver Version                            : 535.129.03",
        "",
        f"Attached GPUs                             : {len(minors)}",
    ]
    for minor in minors:
        out += [
            f"GPU {BUS.get(minor, f'00000000:{minor + 1:02X}:00.0')}",
            "    Product Name                          : NVIDIA H100 80GB HBM3",
            f"    GPU UUID                              : GPU-6f1c{minor}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31",
            f"    Minor Number                          : {minor}",
        ]
    return "\n".join(out) + "\n"


@pytest.mark.parametrize("reader", ["xml", "xml-located", "text"])
def test_a_container_listing_has_no_host_index(reader: str) -> None:
    # Minor numbers 5 and 6 in a listing of 2 (5 >= 2): a container's view.
    if reader == "text":
        obs = nvidia_smi_text.read(_text((5, 6)), "smi.txt", "n1")
    elif reader == "xml":
        obs = nvidia_smi_xml.read(_xml((5, 6)), "smi.xml", "n1")
    else:
        obs = nvidia_smi_xml.read_located(_xml((5, 6)), "smi.xml", "n1")
        note = container_numbered(obs.gpus, 2)
        assert note is not None
        obs = unnumbered(obs, note)
    assert [(g.index, g.minor_number, g.renumbered) for g in obs.gpus] == [(None, 5, True), (None, 6, True)]
    (file,) = obs.files
    assert file.partial
    assert file.note is not None and "device minor numbers 5, 6" in file.note


@pytest.mark.parametrize("minors", [(0, 1), (1, 0)])
def test_a_host_listing_keeps_its_positions(minors: tuple[int, int]) -> None:
    # Minor numbers below the count (even out of order: the driver's probe order need not be the bus order)
    # say nothing: indexes 0 and 1 as before, a whole listing.
    for obs in (nvidia_smi_xml.read(_xml(minors), "smi.xml", "n1"), nvidia_smi_text.read(_text(minors), "t", "n1")):
        assert [(g.index, g.renumbered) for g in obs.gpus] == [(0, False), (1, False)]
        assert not obs.files[0].partial and obs.files[0].note is None


def test_a_selection_of_a_host_is_still_a_selection() -> None:
    # `nvidia-smi -q -x -i 5,6` on a host of 8: attached 8, minors 5 and 6 below 8: a selection as before (OBS009),
    # not a container.
    obs = nvidia_smi_xml.read(_xml((5, 6), attached=8), "smi.xml", "n1")
    assert [(g.index, g.renumbered) for g in obs.gpus] == [(None, False), (None, False)]
    assert obs.files[0].partial and obs.files[0].note is None


def _inventory(tmp_path: Path, with_bus: bool) -> Path:
    gpus = []
    for i in range(8):
        bus = f", pci_bus_id: '{BUS[i]}'" if with_bus and i in BUS else ""
        gpus.append(f"      - {{name: gpu{i}, kind: gpu, labels: {{index: '{i}'{bus}}}}}\n")
    path = tmp_path / "inv.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n" + "".join(gpus)
    )
    return path


def _obs_findings(tmp_path: Path, with_bus: bool, extra: dict[str, str] | None = None) -> list[tuple[str, list[str]]]:
    folder = tmp_path / "obs" / "n1"
    folder.mkdir(parents=True)
    (folder / "nvidia-smi.xml").write_text(_xml((5, 6)))
    for name, text in (extra or {}).items():
        (folder / name).write_text(text)
    code, out, err = run_cli(
        "verify", str(_inventory(tmp_path, with_bus)), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code in (0, 1), err
    return sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))


def test_verify_by_bus_id_judges_the_right_gpus(tmp_path: Path) -> None:
    # Declared bus ids match the container's two GPUs to gpu5 and gpu6: the pending remapping (second block, host
    # GPU 6) is OBS004 on n1/gpu6 (base: on gpu1, by position). Every GPU shown is tied by bus id, so the listing
    # is judged whole (RT2, round 16: the same file is a bare-metal host whose driver dropped six GPUs, which the
    # file cannot tell from a container; it fails closed): the six declared GPUs it does not show, gpu0-gpu4 and
    # gpu7, are each OBS006.
    missing = [("OBS006", [f"n1/gpu{i}"]) for i in (0, 1, 2, 3, 4, 7)]
    assert _obs_findings(tmp_path, with_bus=True) == sorted([("OBS004", ["n1/gpu6"]), *missing])


def test_verify_by_index_alone_judges_none_and_says_why(tmp_path: Path) -> None:
    # Only indexes declared: the container's numbers are not the host's, so neither GPU is matched and nothing is
    # put on gpu0 / gpu1; 2 shown of 8 declared with nothing to tie them: one OBS014 error for n1 (RT2, round 16:
    # was two OBS005 and an OBS009 warning, and the pending remapping judged nowhere), which names it.
    found = _obs_findings(tmp_path, with_bus=False)
    assert found == [("OBS014", ["n1"])]


def test_a_bare_gpu_number_beside_a_container_listing_is_no_index(tmp_path: Path) -> None:
    # dcgmi diag -j (3.x, no serials) from the same container fails its GPU 0 (the host's GPU 5): with only indexes
    # declared it is not put on n1/gpu0; its failure is part of n1's OBS014 (was a third OBS005).
    result = {"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "GPU 0 had a memory error."}]}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [result]}]}]}}  # fmt: skip
    found = _obs_findings(tmp_path, with_bus=False, extra={"dcgmi-diag.json": json.dumps(doc, indent=2)})
    assert found == [("OBS014", ["n1"])]
