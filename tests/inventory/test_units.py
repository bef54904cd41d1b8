"""Unit conversions, each checked by hand against the fixed units (decimal MB, MB/s, ...)."""

from __future__ import annotations

import pytest

from verifier.inventory import units


@pytest.mark.parametrize(
    ("text", "mbps"),
    [
        ("64 GB/s", 64_000),
        ("400 Gb/s", 50_000),  # 400e9 bits / 8 = 50e9 bytes
        ("900GBps", 900_000),
        ("3.35 TB/s", 3_350_000),  # exact decimal, not 3349999
        ("100 Gbps", 12_500),
        ("1.6 TB/s", 1_600_000),
        ("25000", 25_000),  # bare number: already MB/s
        (25000, 25_000),
        ("2039 GB/s", 2_039_000),
    ],
)
def test_bandwidth(text: object, mbps: int) -> None:
    assert units.bandwidth_mbps(text) == mbps


@pytest.mark.parametrize(
    ("text", "mb"),
    [("80 GB", 80_000), ("80GiB", 85_899), ("1 TB", 1_000_000), ("24 GB", 24_000), ("512 MiB", 537)],
)
def test_size_mb(text: str, mb: int) -> None:
    assert units.size_mb(text) == mb  # 80 GiB = 85,899,345,920 bytes


def test_other_units() -> None:
    assert units.size_kb("64 KiB") == 66  # 65,536 bytes
    assert units.size_kb("16 MiB") == 16_777
    assert units.power_w("700 W") == 700
    assert units.power_w("10.2 kW") == 10_200
    assert units.flops_gflops("34 TFLOPS") == 34_000
    assert units.flops_gflops("989.4 TFLOPS") == 989_400
    assert units.latency_ns("1.5 us") == 1_500
    assert units.price_millicents("$2.49/h") == 249_000
    assert units.price_millicents("2.49 USD") == 249_000
    assert units.price_millicents("$0.45 per hour") == 45_000


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("fast", "cannot read bandwidth 'fast'; expected a bandwidth such as"),
        ("0 GB/s", "is zero"),
        ("-5 GB/s", "is negative"),
        ("12 parsecs", "cannot read bandwidth"),
        ([1, 2], "expected a bandwidth"),
    ],
)
def test_bandwidth_errors(text: object, fragment: str) -> None:
    with pytest.raises(units.UnitError, match=fragment):
        units.bandwidth_mbps(text)


def test_size_in_bits_is_refused() -> None:
    with pytest.raises(units.UnitError, match="in bits"):
        units.size_mb("80 Gb")
