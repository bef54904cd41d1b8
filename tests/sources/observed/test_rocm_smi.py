"""The rocm-smi --json reader on a real 4x MI100 dump (samples/rocm-smi/README.md) and variants of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import rocm_smi

SAMPLE = Path(__file__).parent / "samples" / "rocm-smi" / "mi100-4gpu-rocm602.json"


def test_real_dump_every_card() -> None:
    obs = rocm_smi.read(SAMPLE.read_text(), "rocm.json", "mi100")
    # By hand from the sample: card0..3 at PCI Bus 0000:83/A3/C3/E3:00.0, "pcie clock level":
    # "0 (16.0GT/s x16)" (16 GT/s: Gen 4, x16), "GPU use (%)": "0", "Serial Number": "N/A",
    # "Card series": "Arcturus GL-XL [Instinct MI100]"; each card holds 70 fields, so with its key line
    # and closing brace 72 lines: "cardN" is at line 2 + 72 N.
    got = [
        (g.index, g.pci_bus_id, g.pcie_gen_current, g.pcie_width_current, g.utilization_percent, g.source.line)
        for g in obs.gpus
    ]
    assert got == [
        (0, "0000:83:00.0", 4, 16, 0, 2),
        (1, "0000:a3:00.0", 4, 16, 0, 74),
        (2, "0000:c3:00.0", 4, 16, 0, 146),
        (3, "0000:e3:00.0", 4, 16, 0, 218),
    ]
    assert {(g.model, g.serial, g.vendor, g.pcie_width_max, g.pcie_gen_max) for g in obs.gpus} == {
        ("Arcturus GL-XL [Instinct MI100]", None, "amd", None, None)
    }
    assert [(f.format, f.host) for f in obs.files] == [("rocm-smi", "mi100")]


def test_a_link_trained_down() -> None:
    text = json.dumps({"card0": {"PCI Bus": "0000:04:00.0", "pcie clock level": "1 (8.0GT/s x8)"}, "system": {}})
    (gpu,) = rocm_smi.read(text, "r.json", "h").gpus
    assert (gpu.pcie_gen_current, gpu.pcie_width_current) == (3, 8)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"card0": {"PCI Bus": "0000:04:00.0",', "r.json:1:38: not valid JSON"),
        ("[]", "r.json:1: not a JSON object of cardN keys"),
        ('{"system": {"Driver version": "6.3.6"}}', "r.json:1: no cardN object"),
        ('{"card0": {"pcie clock level": "0 (3.0GT/s x16)"}}', "r.json:1: card0: pcie clock level '0 (3.0GT/s x16)'"),
        ('{"card0": {"PCI Bus": "fast"}}', "r.json:1: card0: PCI Bus 'fast' is not a PCI bus id"),
        ('{"card0": {"GPU use (%)": "lots"}}', "r.json:1: card0: GPU use (%) 'lots' is not a whole number"),
        ('{"card0": ' + '{"a": ' * 100_000 + "1" + "}" * 100_001, "r.json:1: JSON nested too deeply"),
        ('{"card0": {"pcie clock level": "0 (16.0GT/s x99)"}}', "r.json:1: card0: pcie clock level"),
    ],
)
def test_bad_input_is_refused_with_its_line(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        rocm_smi.read(text, "r.json", "h")
    assert str(err.value).startswith(message)


def test_looks_like_and_not_amd_smi() -> None:
    assert rocm_smi.looks_like(SAMPLE.read_text())
    assert not rocm_smi.looks_like('[{"gpu": 0, "pcie": {"width": 16}}]')
