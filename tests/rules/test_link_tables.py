"""The figures the link checks (rules/links/) compare against agree with the ones topolog
derives link bandwidths from, so that a link written by generation and lanes or count is
never reported as faster than its own ends."""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.specs import NVLINK_LINK_MBPS, PCIE_LANE_MBPS, XGMI_LINK_MBPS

ENDPOINTS = Path(__file__).resolve().parents[2] / "rules" / "links" / "lib" / "endpoints.dl"
FACT = re.compile(r"^pcie_lane\((\d+), (\d+), (\d+)\)\.$", re.MULTILINE)


def _pcie_lanes() -> dict[int, tuple[int, int]]:
    return {int(g): (int(m), int(raw)) for g, m, raw in FACT.findall(ENDPOINTS.read_text())}


def test_pcie_lane_figures_are_the_derivation_figures() -> None:
    assert {g: m for g, (m, _raw) in _pcie_lanes().items()} == PCIE_LANE_MBPS


def test_raw_pcie_rate_is_the_encoded_rate_before_line_coding() -> None:
    for gen, (mbps, raw_mbit) in _pcie_lanes().items():
        # 8b/10b to Gen2, 128b/130b Gen3 to Gen5, Gen6 FLIT mode: 242 of every 256 bytes carry TLPs and
        # data-link payload (8 CRC, 6 FEC; PCIe Base Specification 6.0), 7,562.5 taken down to 7,562.
        coding = Fraction(8, 10) if gen <= 2 else Fraction(128, 130) if gen <= 5 else Fraction(242, 256)
        assert math.floor(Fraction(raw_mbit, 8) * coding + Fraction(1, 2) - Fraction(1, 10**6)) == mbps, gen


def test_catalogue_per_link_scaleup_rate_is_the_derivation_rate() -> None:
    # A full bond derived from generation and count then equals the model's capacity exactly.
    checked = 0
    for m in builtin_models():
        gen, per_link = m.specs.get("scaleup_generation"), m.specs.get("scaleup_link_mbps")
        if gen is None or per_link is None:
            continue
        if "nvlink" in m.features and m.kind in ("gpu", "nvswitch"):
            assert per_link == NVLINK_LINK_MBPS[gen], m.name
            checked += 1
        elif "xgmi" in m.features:
            assert per_link == XGMI_LINK_MBPS[gen], m.name
            checked += 1
    assert checked >= 6
