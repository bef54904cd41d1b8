"""NVML's error string in place of the driver version is unknown, not a version refused (review R-HI, round 16).

2eb65c3e refuses a driver version that is not a release nvidia-smi prints. nvidia-smi prints NVML's
error string (nvmlErrorString: `Unknown Error`, `Insufficient Permissions`) in place of a value it could
not read; -q's reader took `Unknown Error` as unknown, but -q -x's now refused the whole listing (exit 2)
for it, and both refused `Insufficient Permissions`. Each is unknown, as for a count: the listing is read
and its driver not compared (on the base it was kept as text and not compared either).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml

FIXTURES = Path(__file__).resolve().parents[2] / "rules" / "fixtures"
XML = (FIXTURES / "OBS007" / "pass.observed" / "n1" / "nvidia-smi.xml").read_text(encoding="utf-8")
TEXT = (FIXTURES / "OBS011" / "fail.observed" / "n1" / "nvidia-smi-q.txt").read_text(encoding="utf-8")


@pytest.mark.parametrize("said", ["Unknown Error", "Insufficient Permissions"])
def test_nvml_error_string_as_driver_is_unknown(said: str) -> None:
    assert "<driver_version>535.129.03</driver_version>" in XML and "535.129.03" in TEXT
    xml = XML.replace("<driver_version>535.129.03</driver_version>", f"<driver_version>{said}</driver_version>")
    (from_xml,) = nvidia_smi_xml.read(xml, "n1/nvidia-smi.xml", "n1").files
    (from_text,) = nvidia_smi_text.read(TEXT.replace("535.129.03", said, 1), "n1/nvidia-smi-q.txt", "n1").files
    assert from_xml.driver is None and from_text.driver is None


def test_kmd_version_that_could_not_be_read_gives_way_to_the_driver_version() -> None:
    # R610 prints KMD Version beside Driver Version; where NVML could not say the first, the second is read.
    xml = XML.replace(
        "<driver_version>535.129.03</driver_version>",
        "<driver_version>535.129.03</driver_version><kmd_version>Unknown Error</kmd_version>",
    )
    (file,) = nvidia_smi_xml.read(xml, "n1/nvidia-smi.xml", "n1").files
    assert file.driver == "535.129.03"
