"""The amd-smi --json reader on the samples (samples/amd-smi/README.md) and variants of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import amd_smi
from verifier.sources.observed.model import Observations

SAMPLES = Path(__file__).parent / "samples" / "amd-smi"


def _read(name: str, host: str | None = "mi-n0") -> Observations:
    path = SAMPLES / name
    return amd_smi.read(path.read_text(), name, host)


def test_static_gives_identity_and_link_maximum() -> None:
    obs = _read("mi300x-8gpu-static-handwritten.json")
    gpu0 = obs.gpus[0]
    # By hand from GPU 0's object: bdf 0000:05:00.0, max_pcie_width 16, max_pcie_speed 32 GT/s
    # (Gen 5), pcie_interface_version "Gen 5", market_name MI300X-O, product_serial N/A (None).
    assert (gpu0.index, gpu0.pci_bus_id, gpu0.model, gpu0.vendor) == (0, "0000:05:00.0", "MI300X-O", "amd")
    assert (gpu0.pcie_width_max, gpu0.pcie_gen_max, gpu0.pcie_gen_device_max) == (16, 5, 5)
    assert (gpu0.pcie_width_current, gpu0.pcie_gen_current, gpu0.serial) == (None, None, None)
    assert [g.pci_bus_id[5:7] for g in obs.gpus if g.pci_bus_id] == ["05", "26", "46", "65", "85", "a6", "c6", "e5"]
    assert obs.gpus[0].source.line == 2  # the "{" that opens the first GPU object
    assert obs.links == ()
    assert [f.format for f in obs.files] == ["amd-smi"]


def test_metric_gives_the_trained_link_errors_and_load() -> None:
    obs = _read("mi300x-8gpu-metric-gpu3-x8-generated.json")
    # GPU 3's pcie.width is 8 in this variant; every GPU trained to 32 GT/s (Gen 5), no uncorrectable
    # ECC error, gfx_activity 100 %.
    assert [g.pcie_width_current for g in obs.gpus] == [16, 16, 16, 8, 16, 16, 16, 16]
    assert {(g.pcie_gen_current, g.ecc_uncorrectable_volatile, g.utilization_percent) for g in obs.gpus} == {
        (5, 0, 100)
    }
    assert all(g.pci_bus_id is None for g in obs.gpus)  # metric names GPUs by index only


def test_topology_gives_one_link_per_xgmi_peer() -> None:
    obs = _read("mi300x-8gpu-topology-xgmi-2-5-disabled-generated.json")
    # 8 GPUs, each with 7 XGMI peers (SELF is not a link): 56 observations; the pair 2-5 is
    # DISABLED in both GPUs' lists.
    assert len(obs.links) == 56 and obs.gpus == ()
    assert [f.format for f in obs.files] == ["amd-smi-topology"]  # lists links, not every GPU
    down = sorted((x.gpu.index, x.link, x.peer.index if x.peer else None) for x in obs.links if x.state == "inactive")
    assert down == [(2, 5, 5), (5, 2, 2)]
    first = obs.links[0]
    assert (first.gpu.pci_bus_id, first.peer and first.peer.pci_bus_id, first.kind, first.speed_mbps) == (
        "0000:05:00.0",
        "0000:26:00.0",
        "xgmi",
        None,
    )


def test_the_older_topology_layout() -> None:
    # ROCm 6.1 and before (the "Previous format" of ROCm/amdsmi's CHANGELOG): maps keyed gpu_<n>.
    text = json.dumps(
        [
            {
                "gpu": 0,
                "link_accessibility": {"gpu_0": "ENABLED", "gpu_1": "DISABLED"},
                "link_type": {"gpu_0": "SELF", "gpu_1": "XGMI"},
            },
            {
                "gpu": 1,
                "link_accessibility": {"gpu_0": "DISABLED", "gpu_1": "ENABLED"},
                "link_type": {"gpu_0": "XGMI", "gpu_1": "SELF"},
            },
        ]
    )
    obs = amd_smi.read(text, "t.json", "h")
    assert [(x.gpu.index, x.link, x.state) for x in obs.links] == [(0, 1, "inactive"), (1, 0, "inactive")]


def test_rocm7_gpu_data_wrapper_and_exact_speeds() -> None:
    text = '{"gpu_data": [{"gpu": 0, "pcie": {"width": 8, "speed": {"value": 2.5, "unit": "GT/s"}}}]}'
    (gpu,) = amd_smi.read(text, "t.json", "h").gpus
    assert (gpu.pcie_width_current, gpu.pcie_gen_current) == (8, 1)  # 2.5 GT/s is Gen 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "t.json:1: not JSON"),
        ('[{"gpu": 0, "bus": {"bdf": "0000:05:00.0"}', "t.json:1:43: not valid JSON (Expecting ',' delimiter)"),
        ('{"nvidia_smi_log": {}}', "t.json:1: a JSON object without a 'gpu_data' list"),
        (
            '[{"gpu": 0, "pcie": {"width": 16, "speed": {"value": 33, "unit": "GT/s"}}}]',
            "t.json:1: GPU 0: pcie.speed is",
        ),
        ('[{"gpu": 0, "pcie": {"width": "wide"}}]', "t.json:1: GPU 0: pcie.width is 'wide'"),
        ('[{"gpu": 0, "bus": {}}, {"gpu": 0, "bus": {}}]', "t.json:1: GPU 0 is listed twice"),
        ('[{"gpu": 0, "fan": {}}]', "t.json:1: GPU 0 has none of bus, pcie, ecc, links"),
        (
            '[{"gpu": 0, "bdf": "0000:05:00.0", "links": [{"gpu": 1, "link_type": "XGMI"}]}]',
            "t.json:1: GPU 0: the XGMI link to GPU 1 has status None",
        ),
        ("[]", "t.json:1: no GPU in the list"),
        ("[" * 100_000, "t.json:1: JSON nested too deeply"),
        (
            '[{"gpu": 0, "pcie": {"width": 1000}}]',
            "t.json:1: GPU 0: pcie.width is 1000; expected a whole number from 0 to 32",
        ),
        ('[{"gpu": 99999999999, "pcie": {"width": 16}}]', "t.json:1: GPU index 99999999999 is out of range"),
    ],
)
def test_bad_input_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        amd_smi.read(text, "t.json", "h")
    assert str(err.value).startswith(message)


def test_no_host_is_refused() -> None:
    with pytest.raises(TopologError, match="names no host"):
        _read("mi300x-8gpu-static-handwritten.json", host=None)


def test_looks_like() -> None:
    for name in (
        "mi300x-8gpu-static-handwritten.json",
        "mi300x-8gpu-metric-handwritten.json",
        "mi300x-8gpu-topology-handwritten.json",
    ):
        assert amd_smi.looks_like((SAMPLES / name).read_text())
    assert not amd_smi.looks_like('{"items": [{"metadata": {}}]}')
