"""A driver version that is no release nvidia-smi prints is refused at its line (round 16).

OBS011 compares a host's driver with the inventory's by its release (facts/observed.py reads it with
release_number): a listing whose driver was any other text (`999999999999999999999.535.129.03`, `N/A
535`, fullwidth digits) was kept as text and never compared, so the check passed without a word.
nvidia-smi prints major.minor.patch (535.129.03; 418.87 before R430), in both -q and -q -x.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml

FIXTURES = Path(__file__).resolve().parents[2] / "rules" / "fixtures"
XML = (FIXTURES / "OBS007" / "pass.observed" / "n1" / "nvidia-smi.xml").read_text(encoding="utf-8")
TEXT = (FIXTURES / "OBS011" / "fail.observed" / "n1" / "nvidia-smi-q.txt").read_text(encoding="utf-8")
BAD = ["999999999999999999999.535.129.03", "535.129.03.1", "\uff15\uff13\uff15.129.03", "535.129.03 beta", "R535"]


def _line(text: str, needle: str) -> int:
    """The 1-based line of the file where `needle` is (counted, not read from the program)."""
    return text[: text.index(needle)].count("\n") + 1


@pytest.mark.parametrize("bad", BAD)
def test_xml_driver_that_is_no_release_is_refused(bad: str) -> None:
    assert "<driver_version>535.129.03</driver_version>" in XML
    text = XML.replace("<driver_version>535.129.03</driver_version>", f"<driver_version>{bad}</driver_version>")
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(text, "n1/nvidia-smi.xml", "n1")
    said = str(err.value)
    assert f"n1/nvidia-smi.xml:{_line(text, '<driver_version>')}:" in said, said
    assert f"driver version {bad!r} is not a release" in said, said


@pytest.mark.parametrize("bad", BAD)
def test_text_driver_that_is_no_release_is_refused(bad: str) -> None:
    text = TEXT.replace("535.129.03", bad, 1)
    with pytest.raises(TopologError) as err:
        nvidia_smi_text.read(text, "n1/nvidia-smi-q.txt", "n1")
    said = str(err.value)
    # Line 3 of the OBS011 fixture: `Driver Version : 535.129.03`.
    assert f"n1/nvidia-smi-q.txt:{_line(text, 'Driver Version')}:" in said and _line(text, "Driver Version") == 3
    assert f"driver version {bad!r} is not a release" in said, said


@pytest.mark.parametrize("good", ["535.129.03", "418.87", "610.57.04 [Deprecated; will be removed in CUDA 14.0]"])
def test_a_release_is_read(good: str) -> None:
    text = XML.replace("<driver_version>535.129.03</driver_version>", f"<driver_version>{good}</driver_version>")
    (file,) = nvidia_smi_xml.read(text, "n1/nvidia-smi.xml", "n1").files
    assert file.driver == good.split(" [")[0]
