"""Review R-RT (round 13) of 6a0f310: text before a -q -x report's document is read past, not refused.

Real captures put text before the XML: nvidia-smi's own warning on stderr with 2>&1 on a host with a damaged
infoROM (`WARNING: infoROM is corrupted at gpu 0000:B3:00.0`, https://github.com/NVIDIA/gpu-operator/issues/20;
the same warning beside `nvidia-smi -q -x` in https://github.com/microsoft/pai/issues/3756), or the banner
NVIDIA's CUDA container images print before any command's output (`== CUDA ==`, `CUDA Version 12.2.2`, the
image's licence lines: the output pasted in the README of a public nvidia-ctk-test, and in Japanese and
English setup guides of `docker run --gpus all nvcr.io/nvidia/cuda:... nvidia-smi`). c7f23ef read such a
file (its fast reader skipped the text); 6a0f310 refused any text before the document, so a real capture of
a working host exited 2. A lost-GPU line among that text is a lost GPU wherever it stands in it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.sniff import sniff

ROOT = Path(__file__).resolve().parents[3]
DGX03_XML = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvidia-smi.xml"
WARNING = "WARNING: infoROM is corrupted at gpu 0000:3A:00.0\n"
BANNER = (
    "\n==========\n== CUDA ==\n==========\n\nCUDA Version 12.2.2\n\n"
    "Container image Copyright (c) 2016-2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.\n\n"
)  # 9 lines
LOST = "Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error\n"


def _key(text: str) -> list[tuple[object, ...]]:
    obs = nvidia_smi_xml.read(text, "x.xml", "dgx03")
    return [(g.source.line, g.index, g.pci_bus_id, g.lost) for g in obs.gpus] + [
        (obs.files[0].partial, obs.files[0].attached, obs.files[0].driver)
    ]


BUSES = ["18", "2a", "3a", "5d", "9a", "ab", "ba"]


@pytest.mark.parametrize(("prolog", "lines"), [(WARNING, 1), (BANNER, 9), ("$ nvidia-smi -q -x\n", 1)])
def test_text_before_the_report_is_read_past(prolog: str, lines: int) -> None:
    # dgx03's file: <attached_gpus>7 and 7 <gpu> at lines 8, 92, 176, 260, 344, 428, 512 (bus 18, 2A, 3A, 5D,
    # 9A, AB, BA), indexes 0-6 by position; driver 535.129.03. `lines` lines first: each GPU that many
    # lines further down, nothing else changes.
    got = _key(prolog + DGX03_XML.read_text())
    want = [(8 + lines + 84 * i, i, f"0000:{b}:00.0", None) for i, b in enumerate(BUSES)]
    assert got == [*want, (False, 7, "535.129.03")]


@pytest.mark.parametrize("prolog", [WARNING + LOST, BANNER + LOST, LOST + BANNER])
def test_a_lost_gpu_among_the_text_before_the_report(prolog: str) -> None:
    # dgx03 without its <gpu> of 3A (lines 176-259) and the lost line for 3A among the text before it:
    # 7 attached = 6 reported + 1 lost; in bus order 3A is index 2. With p lines before the document, 18 is
    # at 8+p, 2A at 92+p, the GPUs after the cut 84 lines up (5D 260-84+p, 9A 344-84+p, ...); the lost one
    # at its own line.
    lines = DGX03_XML.read_text().splitlines(keepends=True)
    body = "".join(lines[:175] + lines[259:])
    p = prolog.count("\n")
    at = prolog.splitlines().index(LOST.strip()) + 1
    assert _key(prolog + body) == [
        (8 + p, 0, "0000:18:00.0", None),
        (92 + p, 1, "0000:2a:00.0", None),
        (176 + p, 3, "0000:5d:00.0", None),
        (260 + p, 4, "0000:9a:00.0", None),
        (344 + p, 5, "0000:ab:00.0", None),
        (428 + p, 6, "0000:ba:00.0", None),
        (at, 2, "0000:3a:00.0", "Unknown Error"),
        (False, 7, "535.129.03"),
    ]


def test_an_error_in_the_report_keeps_the_files_line() -> None:
    # <attached_gpus> is the report's line 7; after the 9 banner lines it is the file's line 16.
    text = BANNER + DGX03_XML.read_text().replace("<attached_gpus>7<", "<attached_gpus>x7<")
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(text, "x.xml", "dgx03")
    assert str(err.value).startswith("x.xml:16:5: <attached_gpus> is 'x7'")


@pytest.mark.parametrize(
    "line", ["Unable to determine the device handle for GPU0", "UNABLE TO DETERMINE THE DEVICE HANDLE FOR GPU 3A: x"]
)
def test_a_lost_gpu_line_not_read_is_refused_not_passed_over(line: str) -> None:
    # Text before the report is passed over, but a line that says nvidia-smi could not open a GPU, in a shape
    # not read (no NVML message; no bus id), is refused at its line (2, after the warning): passing it over
    # would drop a lost GPU.
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(WARNING + line + "\n" + DGX03_XML.read_text(), "x.xml", "dgx03")
    assert str(err.value).startswith("x.xml:2:")


def test_bus_order_is_the_pci_numbers_not_the_text() -> None:
    # Three GPUs in three PCI domains, as Hyper-V numbers them (nvidia-smi prints 8 digits; read as
    # 0001, 3e3f8e05 and f1a2b3c). NVML's order is PCI's: 0x1 < 0x0F1A2B3C < 0x3E3F8E05, so the lost
    # 0F1A2B3C is index 1 and the two blocks 0 and 2. As text "f1a2b3c" sorts last: 6a0f310 made it index 2
    # and gave the block of 3E3F8E05 index 1, the lost GPU's (a finding on the wrong declared GPU).
    text = (
        "==============NVSMI LOG==============\n\nDriver Version                            : 535.129.03\n\n"
        "Attached GPUs                             : 3\n"
        "Unable to determine the device handle for GPU 0F1A2B3C:00:00.0: Unknown Error\n"
        "GPU 00000001:00:00.0\n    Product Name                          : NVIDIA A100 80GB PCIe\n"
        "GPU 3E3F8E05:00:00.0\n    Product Name                          : NVIDIA A100 80GB PCIe\n"
    )
    obs = nvidia_smi_text.read(text, "q.txt", "vm1")
    assert [(g.index, g.pci_bus_id, g.lost) for g in obs.gpus] == [
        (0, "0001:00:00.0", None),
        (2, "3e3f8e05:00:00.0", None),
        (1, "f1a2b3c:00:00.0", "Unknown Error"),
    ]


def test_a_long_banner_before_the_report_is_still_sniffed_as_its_format() -> None:
    # NGC framework images print a copyright line per bundled project before the command's output: 40 lines
    # of 60 characters (2,400, past the 2,048 the root was looked for in) before dgx03's report. Sniffed as
    # -q -x (was: "not a format topolog reads"), its 7 GPUs read 40 + 9 lines on (the banner, then line 8).
    banner = "".join(
        f"Copyright (c) 2014-2023 Bundled project {i:02d} contributors. Rights.\n"[:59] + "\n" for i in range(40)
    )
    assert len(banner) == 2400
    text = BANNER + banner + DGX03_XML.read_text()
    assert sniff(text) == "nvidia-smi-q-xml"
    assert [g.source.line for g in nvidia_smi_xml.read(text, "x.xml", "dgx03").gpus][:2] == [8 + 49, 92 + 49]
