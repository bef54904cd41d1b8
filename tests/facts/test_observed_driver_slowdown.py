"""The driver nvidia-smi says runs (OBS011) and a GPU's clocks cut for temperature or power (OBS012), as rows.

Real samples: Telegraf's A100 `nvidia-smi -q -x` (samples/nvidia-smi-q-xml/README.md: driver 535.54.03,
every clock event reason Not Active), the H100 `nvidia-smi -q` text (samples/nvidia-smi-q/README.md:
Driver Version 565.57.01). What an expert reads from the reasons: HW Slowdown and its thermal and
power-brake kinds, and SW Thermal Slowdown, are faults to inspect (DCGM's health check reports a thermal
clocks event, NVIDIA/DCGM issue 270; gpud marks HW slowdown unhealthy and asks for a hardware inspection,
leptonai/gpud PR 330); SW Power Cap and Idle are a setting and the load.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.facts.observed import ObservedSettings, observed_facts
from verifier.sources.inventory.loader import load_inventory_text
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.model import Observations

SAMPLES = Path(__file__).resolve().parents[1] / "sources" / "observed" / "samples"
A100_XML = SAMPLES / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
H100_TEXT = SAMPLES / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"

INVENTORY = load_inventory_text(
    """\
apiVersion: topolog.dev/v1
objects:
  - name: node1
    kind: node
    software: {driver: "550.90.07"}
    children:
      - {name: "gpu{i}", kind: gpu, count: 8}
""",
    "t.yaml",
)


def _facts(obs: Observations) -> dict[str, list[tuple[str | int, ...]]]:
    return observed_facts(INVENTORY, obs, {}, ObservedSettings())


def test_the_driver_of_each_reader_is_kept_as_printed_and_numbered() -> None:
    # 535.54.03 -> 535*10^6 + 54*10^3 + 3 = 535054003; 565.57.01 -> 565057001. Both the XML's fast and
    # located paths carry it.
    xml = A100_XML.read_text()
    fast = nvidia_smi_xml.read(xml, "a.xml", "node1")
    located = nvidia_smi_xml.read_located(xml, "a.xml", "node1")
    assert fast.files[0].driver == located.files[0].driver == "535.54.03"
    assert _facts(fast)["observed_driver"] == [("node1", "535.54.03", 535_054_003, "a.xml")]
    text = nvidia_smi_text.read(H100_TEXT.read_text(), "h.txt", "node1")
    assert _facts(text)["observed_driver"] == [("node1", "565.57.01", 565_057_001, "h.txt")]


def test_a_driver_that_is_not_plain_numbers_is_not_compared() -> None:
    text = H100_TEXT.read_text().replace("565.57.01", "565.57.01-grid", 1)
    assert _facts(nvidia_smi_text.read(text, "h.txt", "node1"))["observed_driver"] == []


_REASONS = """\
==============NVSMI LOG==============

Attached GPUs                             : 1
GPU 00000000:18:00.0
    Clocks Throttle Reasons
        Idle                        : {idle}
        Applications Clocks Setting : Not Active
        SW Power Cap                : {cap}
        HW Slowdown                 : {hw}
            HW Thermal Slowdown     : {thermal}
            HW Power Brake Slowdown : {brake}
        Sync Boost                  : Not Active
        SW Thermal Slowdown         : {sw}
"""
"""The older driver's section and alignment, as kubeflow/kubeflow issue 68 quotes `nvidia-smi -q`."""


@pytest.mark.parametrize(
    ("active", "kinds"),
    [
        ((), ""),
        (("idle", "cap"), ""),  # the load and a setting: the GPU runs as configured
        (("hw",), "hardware slowdown"),  # HW Slowdown with neither kind said: named alone
        (("hw", "thermal"), "hardware thermal slowdown"),  # the parent and its kind: one finding, the kind
        (("hw", "brake"), "hardware power brake"),
        (
            ("hw", "thermal", "brake", "sw"),
            "hardware thermal slowdown, hardware power brake, software thermal slowdown",
        ),
        (("sw",), "software thermal slowdown"),
    ],
)
def test_slowdown_rows_name_the_kinds_once_per_gpu(active: tuple[str, ...], kinds: str) -> None:
    fields = {k: ("Active" if k in active else "Not Active") for k in ("idle", "cap", "hw", "thermal", "brake", "sw")}
    obs = nvidia_smi_text.read(_REASONS.format(**fields), "q.txt", "node1")
    rows = _facts(obs)["observed_slowdown"]
    # The GPU's block opens at line 4; the single-GPU listing makes it index 0 = node1/gpu0.
    assert rows == ([("node1/gpu0", kinds, "q.txt:4:1")] if kinds else [])
