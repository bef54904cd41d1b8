"""Review of the amd-smi text reader (round 58): a whole `amd-smi static`, `amd-smi list` with SR-IOV VFs,
and `amd-smi list --json` found among a host's files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import amd_smi_any as amd_smi  # either form, as an observation folder is read
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples" / "amd-smi"


def test_whole_static_with_numbered_clock_levels_is_read() -> None:
    text = (SAMPLES / "mi300a-static-amdsmi-docs.txt").read_text()
    assert sniff(text) == "amd-smi"
    # Was refused at every `0: 300 MHz` line of CLOCK's FREQUENCY_LEVELS (a key that is a number). By hand:
    # the CPU: 0 block is skipped; GPU 0 (line 7), BDF 0000:01:00.0, MARKET_NAME MI300A, MAX_PCIE_WIDTH 16,
    # MAX_PCIE_SPEED 32 GT/s = Gen 5, PCIE_INTERFACE_VERSION Gen 5, PRODUCT_SERIAL N/A = unknown.
    (gpu,) = amd_smi.read(text, "static.txt", "mi01").gpus
    got = (gpu.index, gpu.pci_bus_id, gpu.model, gpu.pcie_width_max, gpu.pcie_gen_max, gpu.pcie_gen_device_max)
    assert got == (0, "0000:01:00.0", "MI300A", 16, 5, 5)
    assert (gpu.serial, gpu.source.line) == (None, 7)


# `amd-smi list` on a host with SR-IOV (amd/MxGPU-Virtualization smi-lib/docs/how_to/amdsmi_cli_usage.md,
# "Human-readable (Default)"): each VF's own BDF and UUID are printed below `VF: 0`, inside the GPU's block.
LIST_WITH_VF = (
    "GPU: 0\n"
    "    BDF: 0000:0c:00.0\n"
    "    UUID: 67ff74a1-0000-1000-8081-b5b9fd6edd00\n"
    "    VF: 0\n"
    "        BDF: 0000:0c:02.0\n"
    "        UUID: 670074a1-0000-1000-8081-b5b9fd6edd00\n"
)


def test_a_vfs_bus_id_is_not_its_gpus() -> None:
    # By hand: GPU 0 is at 0000:0c:00.0; 0000:0c:02.0 is its VF's (it was read as the GPU's bus id).
    got = [(g.index, g.pci_bus_id) for g in amd_smi.read(LIST_WITH_VF, "list.txt", "host1").gpus]
    assert got == [(0, "0000:0c:00.0")]
    # The same listing's --json (same page): "vfs" is a list of its own; both read GPU 0 at 0000:0c:00.0.
    as_json = json.dumps(
        [
            {
                "gpu": 0,
                "bdf": "0000:0c:00.0",
                "uuid": "67ff74a1-0000-1000-8081-b5b9fd6edd00",
                "vfs": [{"vf": 0, "bdf": "0000:0c:02.0", "uuid": "670074a1-0000-1000-8081-b5b9fd6edd00"}],
            }
        ],
        indent=4,
    )
    assert [(g.index, g.pci_bus_id) for g in amd_smi.read(as_json, "list.json", "host1").gpus] == got


def test_list_json_is_recognised_among_a_hosts_files() -> None:
    # `amd-smi list --json` (ROCm 6.x: gpu, bdf, uuid, kfd_id, node_id, partition_id) was read only when
    # named with --observed-format: in a folder it was "not a format topolog reads".
    text = json.dumps(
        [{"gpu": 0, "bdf": "0000:05:00.0", "uuid": "x", "kfd_id": 1, "node_id": 2, "partition_id": 0}], indent=4
    )
    assert sniff(text) == "amd-smi"


def test_rocm7_static_with_bare_value_lists_and_level_keys_is_read() -> None:
    text = (SAMPLES / "mi300a-static-rocm7-rocm-systems-docs.txt").read_text()
    # Was refused at NUMA's "CPU AFFINITY:" masks (0xffffff ... one a line, no key) and at each
    # "LEVEL 0: 500 MHz". By hand: GPU 0, BDF 0000:01:00.0, MARKET_NAME "AMD Instinct MI300A",
    # MAX_PCIE_WIDTH 16, MAX_PCIE_SPEED 32 GT/s = Gen 5.
    (gpu,) = amd_smi.read(text, "static.txt", "mi01").gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.model, gpu.pcie_width_max, gpu.pcie_gen_max) == (
        0,
        "0000:01:00.0",
        "AMD Instinct MI300A",
        16,
        5,
    )


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("GPU: 0\n    BUS:\n        BDF: 0000:05:00.0\n        garbage\n", 4),
        ("GPU: 0\n    BUS:\n        BDF 0000:05:00.0\n", 3),
        ("GPU: 0\n    BUS:\n        MAX_PCIE_WIDTH 16\n", 3),
    ],
)
def test_a_bare_value_outside_a_list_is_still_refused(text: str, line: int) -> None:
    # A bare line is a list item only directly under a section header (or after other items); after a
    # KEY: value line, or holding a colon (a BDF line that lost its own), it is refused as before.
    with pytest.raises(TopologError) as err:
        amd_smi.read(text, "static.txt", "mi01")
    assert str(err.value).startswith(f"static.txt:{line}: unexpected text")


def _cpx_static(indices: range) -> str:
    """`amd-smi static --json` of an 8-board host in CPX: board b's partitions at 0000:<bus>:00.0 to .7."""
    buses = ["05", "26", "46", "65", "85", "a6", "c6", "e5"]
    entries = [
        {
            "gpu": i,
            "bus": {"bdf": f"0000:{buses[i // 8]}:00.{i % 8}", "max_pcie_width": 16},
            "asic": {"market_name": "MI300X"},
        }
        for i in indices
    ]
    return json.dumps(entries, indent=4)


def test_a_whole_cpx_listing_numbers_its_boards_as_without_partitions() -> None:
    # 64 entries, amd-smi's 0-63: boards at partitions 0, 8, ..., 56, numbered 0-7 (as in SPX), so gpu1-gpu7
    # of a node matched by index are found (amd-smi's 8, 16, ... matched none: OBS006 called them missing).
    got = [(g.index, g.pci_bus_id) for g in amd_smi.read(_cpx_static(range(64)), "s.json", "mi01").gpus]
    assert got == [
        (0, "0000:05:00.0"),
        (1, "0000:26:00.0"),
        (2, "0000:46:00.0"),
        (3, "0000:65:00.0"),
        (4, "0000:85:00.0"),
        (5, "0000:a6:00.0"),
        (6, "0000:c6:00.0"),
        (7, "0000:e5:00.0"),
    ]


def test_a_selection_keeps_amd_smis_numbers() -> None:
    # `amd-smi static -g 8 ... 23` lists boards 1 and 2 only: which boards they are cannot be told from a
    # renumbering, so amd-smi's numbers 8 and 16 stay.
    got = [(g.index, g.pci_bus_id) for g in amd_smi.read(_cpx_static(range(8, 24)), "s.json", "mi01").gpus]
    assert got == [(8, "0000:26:00.0"), (16, "0000:46:00.0")]


def test_a_cpx_host_is_no_missing_gpu_of_a_node_matched_by_index(tmp_path: Path) -> None:
    # mixed-fleet's mi300x-n0 declares gpu0-gpu7 (MI300X) with no bus ids: matched by index. Its amd-smi
    # static in CPX (64 partitions) reads as its 8 boards, so no OBS006 (declared GPU not listed) and no
    # OBS005 (observed GPU matching nothing); before, amd-smi's 8, 16, ... 56 gave both.
    obs = tmp_path / "obs"
    obs.mkdir()
    (obs / "mi300x-n0.static.json").write_text(_cpx_static(range(64)))
    inventory = Path(__file__).parents[3] / "inventories" / "mixed-fleet.yaml"
    code, stdout, stderr = run_cli("verify", str(inventory), "--observed", str(obs))
    assert code == 0, stderr
    assert "OBS006" not in stdout and "OBS005" not in stdout
