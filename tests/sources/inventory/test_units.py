"""Unit conversions, each checked by hand against the fixed units (decimal MB, MB/s, ...)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text, units


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


# --- commas in numbers: refused, never read as 35 TB/s or as 1000 ---------------------


@pytest.mark.parametrize(
    ("parse", "text", "message"),
    [
        (
            units.bandwidth_mbps,
            "3,5 TB/s",
            "bandwidth '3,5 TB/s' uses a decimal comma, which is not accepted; write '3.5 TB/s' with a decimal point",
        ),
        (
            units.size_mb,
            "1,5 GB",
            "size '1,5 GB' uses a decimal comma, which is not accepted; write '1.5 GB' with a decimal point",
        ),
        (units.bandwidth_mbps, "3,5", "bandwidth '3,5' uses a decimal comma"),  # a bare number, no unit
        (units.power_w, "10,2 kW", "write '10.2 kW' with a decimal point"),
        (units.latency_ns, "1,5 us", "write '1.5 us' with a decimal point"),
        (units.flops_gflops, "989,4 TFLOPS", "write '989.4 TFLOPS' with a decimal point"),
        (units.price_millicents, "$2,49/h", "write '$2.49/h' with a decimal point"),
        (units.size_kb, "1,25 MiB", "write '1.25 MiB' with a decimal point"),
        (
            units.bandwidth_mbps,
            "1,000 GB/s",
            "bandwidth '1,000 GB/s' has a comma in its number, which is not accepted (a thousands separator "
            "or a decimal comma? it cannot be told); write '1000 GB/s' without separators, or '1.000 GB/s' "
            "if the comma was a decimal point",
        ),
        (units.bandwidth_mbps, "1,000,000", "write '1000000' without separators"),
        (units.size_mb, "1.000,5 GB", "expected a number with at most one decimal point and no separators"),
        (units.bandwidth_mbps, "12,34,5 GB/s", "expected a number with at most one decimal point"),
    ],
)
def test_comma_in_a_number_is_refused(parse: Callable[[object], int], text: str, message: str) -> None:
    with pytest.raises(units.UnitError) as err:
        parse(text)
    assert message in str(err.value)


def test_comma_in_a_count_is_only_a_thousands_separator() -> None:
    with pytest.raises(units.UnitError) as err:
        units.integer("1,000", "count")
    assert str(err.value) == (
        "count '1,000' has a comma in its number, which is not accepted; write '1000' without separators"
    )
    with pytest.raises(units.UnitError, match="expected a whole number without separators"):
        units.integer("1,5", "count")


def test_underscores_and_plain_decimals_still_read() -> None:
    assert units.bandwidth_mbps("1_000 GB/s") == 1_000_000
    assert units.bandwidth_mbps("3.5 TB/s") == 3_500_000
    assert units.size_mb("1.5 GB") == 1_500


INVENTORY = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    labels: {numa: "0-1,3", note: "GPUs 0,1 share a switch"}
    software: {driver: "535.129.03, patched"}
    description: Two GPUs, one link, 3,5 TB/s nowhere
    children:
      - {name: gpu0, kind: gpu}
      - {name: gpu1, kind: gpu}
links:
  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, bandwidth: BW}
"""


def _load_errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    return [str(d) for d in err.value.diagnostics]


def test_decimal_comma_in_an_inventory_is_an_error_at_its_place() -> None:
    # Block style: the value is the text '3,5 TB/s'; the key 'bandwidth' is at line 15, column 5.
    block = "  - a: n0/gpu0\n    b: n0/gpu1\n    kind: nvlink\n    bandwidth: 3,5 TB/s\n"
    text = INVENTORY.replace("  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, bandwidth: BW}\n", block)
    assert text.splitlines()[14] == "    bandwidth: 3,5 TB/s"
    assert _load_errors(text) == [
        "inv.yaml:15:5: 'bandwidth' in link n0/gpu0 - n0/gpu1: bandwidth '3,5 TB/s' uses a decimal comma, "
        "which is not accepted; write '3.5 TB/s' with a decimal point"
    ]
    size = INVENTORY.replace("{name: gpu0, kind: gpu}", "{name: gpu0, kind: gpu, memory: {size: '1,5 GB'}}")
    (error,) = _load_errors(size.replace("BW", "3.5 TB/s"))
    # "      - {" is 9 columns, then "name: gpu0, " 12, "kind: gpu, " 11, "memory: {" 9: size at 42.
    assert error.startswith("inv.yaml:9:42: 'size' in memory of object 'gpu0': size '1,5 GB' uses a decimal comma")


def test_decimal_comma_inside_braces_is_named_not_an_unknown_key() -> None:
    # In {...} YAML splits at the comma: 'bandwidth: 3' and a key '5 TB/s'. The error is
    # about the figure, at 'bandwidth' (line 12, column 44: 5 + 1 + 12 + 12 + 14), and says what YAML did.
    (error,) = _load_errors(INVENTORY.replace("BW", "3,5 TB/s"))
    assert error == (
        "inv.yaml:12:44: 'bandwidth' in link n0/gpu0 - n0/gpu1: bandwidth '3,5 TB/s' uses a decimal comma, "
        "which is not accepted; write '3.5 TB/s' with a decimal point (inside {...} a comma separates "
        "entries, so YAML read 'bandwidth: 3' and a key '5 TB/s')"
    )
    (error,) = _load_errors(INVENTORY.replace("BW", "1,000 GB/s"))
    assert error.startswith("inv.yaml:12:44: 'bandwidth' in link n0/gpu0 - n0/gpu1: bandwidth '1,000 GB/s' has a comma")


def test_commas_in_words_are_left_alone() -> None:
    inv = load_inventory_text(INVENTORY.replace("BW", "3.5 TB/s"), "inv.yaml")
    n0 = inv.objects["n0"]
    assert n0.labels == {"numa": "0-1,3", "note": "GPUs 0,1 share a switch"}
    assert inv.software["n0"] == {"driver": "535.129.03, patched"}
    (link,) = inv.links.values()
    assert link.mbps == 3_500_000
