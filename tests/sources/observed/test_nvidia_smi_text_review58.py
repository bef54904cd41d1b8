"""Review of the nvidia-smi -q text reader (round 58): spellings of later drivers, a reason with kinds."""

from __future__ import annotations

from pathlib import Path

from verifier.sources.observed import nvidia_smi_text
from verifier.sources.observed.model import GpuObservation

H100 = Path(__file__).parent / "samples" / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"


def _gpus(text: str) -> list[GpuObservation]:
    return list(nvidia_smi_text.read(text, "q.txt", "node1").gpus)


def test_utilization_as_r570_and_later_spell_it() -> None:
    # Through R565 the Utilization section's first line is "Gpu : 0 %"; R570 and R580 print "GPU : 0 %"
    # (public pastes of 570.172.08 on an RTX 3090 Ti and 580.173.02 on an RTX 5080 Laptop GPU). The real
    # H100 sample with its two "Gpu" lines written as later drivers write them reads the same 0 % (it was
    # unknown, so OBS001 never judged a link's generation under load from a newer driver's text).
    text = H100.read_text()
    assert text.count("        Gpu                               : 0 %") == 2
    later = text.replace(
        "        Gpu                               : 0 %", "        GPU                               : 0 %"
    )
    assert [g.utilization_percent for g in _gpus(later)] == [0, 0]
    assert [g.utilization_percent for g in _gpus(text)] == [0, 0]


def test_hw_slowdown_is_read_though_it_holds_its_kinds() -> None:
    # "HW Slowdown : Active" holds "HW Thermal Slowdown" and "HW Power Brake Slowdown" below it: its own value
    # was dropped (a line with lines below it read as a section), so an active HW slowdown was no reason.
    text = H100.read_text().replace(
        "        HW Slowdown                       : Not Active",
        "        HW Slowdown                       : Active",
        1,
    )
    # By hand: the first GPU's block also says "Idle : Active" (line 95), sorted first.
    first = _gpus(text)[0]
    assert first.throttle_reasons == ("gpu_idle", "hw_slowdown")
