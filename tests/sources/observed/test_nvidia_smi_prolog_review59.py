"""Review R-RT (round 13) of 6a0f310: nvidia-smi's own `WARNING:` lines before a -q -x report are read past.

`nvidia-smi -q -x 2>&1` on a host with a damaged infoROM puts nvidia-smi's warning on stderr before the XML
(`WARNING: infoROM is corrupted at gpu 0000:B3:00.0`, https://github.com/NVIDIA/gpu-operator/issues/20; the
same warning beside `nvidia-smi -q -x` in https://github.com/microsoft/pai/issues/3756). c7f23ef read such a
file (its fast reader skipped the text); 6a0f310 refused any text before the document, so a real capture of a
working host exited 2. Other text (a shell prompt, a stray word) is still refused at its line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_xml

ROOT = Path(__file__).resolve().parents[3]
DGX03_XML = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvidia-smi.xml"
WARNING = "WARNING: infoROM is corrupted at gpu 0000:3A:00.0\n"


def _key(text: str) -> list[tuple[object, ...]]:
    obs = nvidia_smi_xml.read(text, "x.xml", "dgx03")
    return [(g.source.line, g.index, g.pci_bus_id, g.lost) for g in obs.gpus] + [
        (obs.files[0].partial, obs.files[0].attached, obs.files[0].driver)
    ]


def test_a_warning_before_the_report_is_read_past() -> None:
    # dgx03's file: <attached_gpus>7 and 7 <gpu> at lines 8, 92, 176, 260, 344, 428, 512 (bus 18, 2A, 3A, 5D,
    # 9A, AB, BA), indexes 0-6 by position; driver 535.129.03 (its line 5). One warning line first: each
    # GPU one line further down (9, 93, ...), nothing else changes.
    got = _key(WARNING + DGX03_XML.read_text())
    buses = ["18", "2a", "3a", "5d", "9a", "ab", "ba"]
    assert got == [(9 + 84 * i, i, f"0000:{b}:00.0", None) for i, b in enumerate(buses)] + [(False, 7, "535.129.03")]


def test_a_warning_and_a_lost_gpu_before_the_report() -> None:
    # dgx03 without its <gpu> of 3A (lines 176-259), the lost line for 3A and a warning before it (2 lines):
    # 7 attached = 6 reported + 1 lost; in bus order 3A is index 2. Lines: 18 at 8+2, 2A at 92+2, then the
    # GPUs after the cut 84 lines up: 5D 260-84+2 = 178, 9A 262, AB 346, BA 430; the lost one at its line 2.
    lines = DGX03_XML.read_text().splitlines(keepends=True)
    body = "".join(lines[:175] + lines[259:])
    lost = "Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error\n"
    assert _key(WARNING + lost + body) == [
        (10, 0, "0000:18:00.0", None),
        (94, 1, "0000:2a:00.0", None),
        (178, 3, "0000:5d:00.0", None),
        (262, 4, "0000:9a:00.0", None),
        (346, 5, "0000:ab:00.0", None),
        (430, 6, "0000:ba:00.0", None),
        (2, 2, "0000:3a:00.0", "Unknown Error"),
        (False, 7, "535.129.03"),
    ]


@pytest.mark.parametrize("prolog", ["$ nvidia-smi -q -x\n", "warning: something\n", WARNING + "hello\n"])
def test_other_text_before_the_report_is_still_refused(prolog: str) -> None:
    # Not nvidia-smi's `WARNING:` (upper case, as it prints it) nor a lost-GPU line: refused, at the first
    # line that is neither (line 1, or line 2 after a warning), as 6a0f310 does.
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(prolog + DGX03_XML.read_text(), "x.xml", "dgx03")
    assert str(err.value).startswith(f"x.xml:{prolog.count(chr(10))}:")
