"""Figures in tool outputs: ASCII decimals only, and an exponent no float a tool prints goes past.

`Fraction("1e99999999")` builds the integer 10**99999999 (minutes of CPU) and `Fraction("١٣٩")`
is 139: a dcgm-exporter value, an nccl-tests or nvbandwidth cell written so was read as a number
(or never finished). Each is now "not a number", which every reader refuses at its line.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgm
from verifier.sources.observed.model import exact_number


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("370.25", Fraction(37025, 100)),
        ("2e9", Fraction(2 * 10**9)),
        ("-1.5e-2", Fraction(-15, 1000)),
        ("1e+308", Fraction(10**308)),  # the largest power of ten a float64 holds
    ],
)
def test_decimals_as_tools_print_them_are_read_exactly(text: str, value: Fraction) -> None:
    assert exact_number(text) == value


@pytest.mark.parametrize("text", ["1e401", "1e99999999", "\u0661\u0663\u0669", "\uff11\uff12", "nan", "0x10", "1_000"])
def test_other_figures_are_not_numbers(text: str) -> None:
    assert exact_number(text) is None


XID = '# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS{gpu="GPU",UUID="GPU-1"} VALUE\n'


@pytest.mark.parametrize("value", ["1e401", "\u0661\u0663\u0669"])
def test_a_dcgm_exporter_value_past_float_or_in_other_digits_is_refused_at_its_line(value: str) -> None:
    # The sample is line 2 (line 1 is its TYPE comment).
    with pytest.raises(TopologError) as err:
        dcgm.read(XID.replace("GPU", "0", 1).replace("VALUE", value), "m.prom", "h")
    assert str(err.value).startswith("m.prom:2: DCGM_FI_DEV_XID_ERRORS has value")
    assert "expected a finite decimal number" in str(err.value)


def test_a_gpu_label_in_other_digits_is_no_index() -> None:
    # gpu="\u0663" (Arabic-Indic three) is not GPU 3; the UUID still names the GPU.
    (obs,) = dcgm.read(XID.replace("GPU", "\u0663", 1).replace("VALUE", "79"), "m.prom", "h").counters
    assert obs.gpu.index is None and obs.gpu.uuid == "GPU-1"
    (obs,) = dcgm.read(XID.replace("GPU", "3", 1).replace("VALUE", "79"), "m.prom", "h").counters
    assert obs.gpu.index == 3
