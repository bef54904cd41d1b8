"""amd-smi static / metric as printed without --json (amd_smi_text.py), on real samples (samples/amd-smi)."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import amd_smi_any as amd_smi  # either form, as an observation folder is read
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples" / "amd-smi"
STATIC = SAMPLES / "mi300x-static-gpu0-rocm-blogs.txt"
METRIC = SAMPLES / "metric-pcie-amdsmi-changelog.txt"
STATIC_JSON = SAMPLES / "mi300x-8gpu-static-handwritten.json"


def _fields(g: object) -> tuple[object, ...]:
    names = ("index", "pci_bus_id", "model", "pcie_gen_max", "pcie_gen_device_max", "pcie_width_max")
    return tuple(getattr(g, n) for n in names)


def test_real_static_text_reads_as_its_json() -> None:
    assert sniff(STATIC.read_text()) == "amd-smi"
    (gpu,) = amd_smi.read(STATIC.read_text(), "static.txt", "mi01").gpus
    # By hand: GPU 0, BDF 0000:05:00.0, MARKET_NAME MI300X-O, MAX_PCIE_SPEED 32 GT/s = Gen 5 (the link's
    # maximum), PCIE_INTERFACE_VERSION Gen 5 (the GPU's own), MAX_PCIE_WIDTH 16; the line of "GPU: 0" is 1.
    assert _fields(gpu) == (0, "0000:05:00.0", "MI300X-O", 5, 5, 16)
    assert gpu.source.line == 1 and gpu.vendor == "amd"
    # The same GPU in the --json sample of that node (written from the same page): the same observation.
    json_gpu = amd_smi.read(STATIC_JSON.read_text(), "static.json", "mi01").gpus[0]
    assert _fields(json_gpu) == _fields(gpu)


def test_real_metric_text_gives_each_gpus_link_now() -> None:
    obs = amd_smi.read(METRIC.read_text(), "metric.txt", "mi01")
    # Two blocks (GPU: 0 on line 1, GPU: 1 on line 16), each WIDTH 16 and SPEED 32 GT/s (Gen 5).
    got = [(g.index, g.pcie_width_current, g.pcie_gen_current, g.source.line) for g in obs.gpus]
    assert got == [(0, 16, 5, 1), (1, 16, 5, 16)]
    assert [(f.format, f.host) for f in obs.files] == [("amd-smi", "mi01")]


def test_windows_header_older_key_units_and_other_devices() -> None:
    text = (
        "CPU: 0\n    SMU:\n        FW_VERSION: 85.90.0\n\n"
        "GPU 0:\n    BUS:\n        BDF: 0000:0c:00.0\n        MAX_PCIE_LANES: 16\n        MAX_PCIE_SPEED: 16000 MT/s\n"
        "    USAGE:\n        GFX_ACTIVITY: 100 %\n    ECC:\n        TOTAL_UNCORRECTABLE_COUNT: 3\n"
    )
    (gpu,) = amd_smi.read(text, "static.txt", "mi01").gpus
    # "GPU 0:" (amd-smi.exe) is GPU 0; MAX_PCIE_LANES is the older name of MAX_PCIE_WIDTH; 16000 MT/s is
    # 16 GT/s, Gen 4; "100 %" is 100; the CPU block of an APU is not a GPU.
    assert (gpu.index, gpu.pcie_width_max, gpu.pcie_gen_max) == (0, 16, 4)
    assert (gpu.utilization_percent, gpu.ecc_uncorrectable_volatile) == (100, 3)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("GPU: 0\n    BUS:\n        MAX_PCIE_SPEED: fast\n", "static.txt:1: GPU 0: bus.max_pcie_speed is 'fast'"),
        ("GPU: 0\n    BUS:\n        BDF 0000:05:00.0\n", "static.txt:3: unexpected text 'BDF 0000:05:00.0'"),
        ("GPU: 0\n    BUS:\nGPU: 0\n    BUS:\n", "static.txt:3: GPU 0 is listed twice (first at line 1)"),
    ],
)
def test_text_that_cannot_be_read_exactly_is_refused(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        amd_smi.read(text, "static.txt", "mi01")
    assert str(err.value).startswith(message)


LIST = SAMPLES / "mi300x-list-rocm-blogs.txt"


def test_real_list_text_lists_each_gpu_by_bus_id() -> None:
    obs = amd_smi.read(LIST.read_text(), "list.txt", "mi01")
    # By hand: three blocks (lines 1, 5, 9) with BDF 05, 26, 46 (the blog's page stops after GPU 2). The
    # UUIDs are not kept (amd-smi prints one UUID for boards without a unique id: see amd_smi.py).
    got = [(g.index, g.pci_bus_id, g.uuid, g.source.line) for g in obs.gpus]
    assert got == [(0, "0000:05:00.0", None, 1), (1, "0000:26:00.0", None, 5), (2, "0000:46:00.0", None, 9)]


def test_list_json_reads_as_its_text() -> None:
    # `amd-smi list --json`: the same fields as objects with the text's keys in lower case.
    text = (
        '[{"gpu": 0, "bdf": "0000:05:00.0", "uuid": "afff74a1-0000-1000-8054-e92b0a5d57c8"},\n'
        ' {"gpu": 1, "bdf": "0000:26:00.0", "uuid": "0aff74a1-0000-1000-805b-ce698de95724"},\n'
        ' {"gpu": 2, "bdf": "0000:46:00.0", "uuid": "97ff74a1-0000-1000-8065-fa81273af9ce"}]\n'
    )
    as_json = [(g.index, g.pci_bus_id) for g in amd_smi.read(text, "list.json", "mi01").gpus]
    assert as_json == [(g.index, g.pci_bus_id) for g in amd_smi.read(LIST.read_text(), "list.txt", "mi01").gpus]


def test_a_block_of_fields_topolog_does_not_read_still_shows_its_gpu() -> None:
    text = (
        "GPU: 0\n    POWER:\n        SOCKET_POWER: 36 W\n    PCIE:\n        WIDTH: 16\n"
        "GPU: 1\n    POWER:\n        SOCKET_POWER: N/A\n"
    )
    # GPU 1 has only a POWER section: it is still a GPU the driver lists (no GPU of the node is "missing").
    assert [g.index for g in amd_smi.read(text, "metric.txt", "mi01").gpus] == [0, 1]


def test_partitions_of_one_board_are_one_gpu() -> None:
    path = SAMPLES / "static-partitions-ceems.json"
    obs = amd_smi.read(path.read_text(), "static.json", "mi01")
    # By hand: 12 entries; 1-8 share bus id c8:00.0 (one board in CPX, partition_id 0-7) and 9-10 share
    # 8a:00.0 (DPX): 4 boards, each kept as its first entry; amd-smi's numbers 0-11 are a whole listing, so
    # the boards are numbered 0-3 in its order (review 58: amd-smi's 0, 1, 9, 11 left gpu2/gpu3 "missing").
    got = [(g.index, g.pci_bus_id, g.serial) for g in obs.gpus]
    assert got == [
        (0, "0000:c5:00.0", "20170000800c"),
        (1, "0000:c8:00.0", "20170003580c"),
        (2, "0000:8a:00.0", "20180003050c"),
        (3, "0000:8d:00.0", "20170005280c"),
    ]


def test_partitions_at_further_functions_are_one_gpu() -> None:
    # ROCm 7 lists a DPX board's second partition at function 1 (0000:05:00.1): two boards, not four GPUs.
    text = "".join(
        f"GPU: {i}\n    BDF: {bdf}\n\n"
        for i, bdf in enumerate(["0000:05:00.0", "0000:05:00.1", "0000:26:00.0", "0000:26:00.1"])
    )
    got = [(g.index, g.pci_bus_id) for g in amd_smi.read(text, "list.txt", "mi01").gpus]
    assert got == [(0, "0000:05:00.0"), (1, "0000:26:00.0")]
