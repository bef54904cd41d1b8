"""Text around an `nvidia-smi -q` report (before its banner) or a `-q -x` document (after it) that says nothing of
the GPUs is read past, as the text before a -q -x document already is (test_nvidia_smi_prolog_review59.py).

nvidia-smi prints `WARNING: infoROM is corrupted at gpu <bus>` on stderr: a capture with 2>&1 has it before the
report (stdout is flushed at exit: NVIDIA/gpu-operator issue 20, https://github.com/NVIDIA/gpu-operator/issues/20),
a terminal's copy after it (the line follows the plain `nvidia-smi` table in pastes such as the Paperspace
setup notes quoted in public repositories: `+---...---+` then `WARNING: infoROM is corrupted at gpu
0000:00:05.0`). NVIDIA's CUDA container images print their `== CUDA ==` banner before any command's output.
Before, a -q text file so captured was "not a format topolog reads" (or, named with --observed-format, had "a
second NVSMI LOG banner"), and a -q -x file with the warning after its document was "junk after document
element": a working host's capture exited 2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).resolve().parent / "samples"
A10 = SAMPLES / "nvidia-smi-q" / "a10-535.129.03-remap-pending.txt"
A100_XML = SAMPLES / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
WARNING = "WARNING: infoROM is corrupted at gpu 0000:07:00.0\n"
BANNER = (
    "\n==========\n== CUDA ==\n==========\n\nCUDA Version 12.2.2\n\n"
    "Container image Copyright (c) 2016-2023, NVIDIA CORPORATION & AFFILIATES. All rights reserved.\n\n"
)  # 9 lines


def _text_key(text: str) -> list[tuple[object, ...]]:
    obs = nvidia_smi_text.read(text, "q.txt", "n")
    return [(g.source.line, g.index, g.pci_bus_id, g.remapped_rows_pending) for g in obs.gpus] + [
        (obs.files[0].partial, obs.files[0].attached, obs.files[0].driver)
    ]


@pytest.mark.parametrize(("before", "lines"), [(WARNING, 1), (BANNER, 9), (BANNER + WARNING, 10)])
def test_text_before_a_q_report_is_read_past(before: str, lines: int) -> None:
    # The sample's GPU block is on line 8 (`GPU 00000000:07:00.0`); `lines` lines come before it now. The rest
    # is read as without them: one GPU, index 0 of 1 attached, its remapping pending, driver 535.129.03.
    text = before + A10.read_text()
    assert sniff(text) == "nvidia-smi-q"
    assert _text_key(text) == [(8 + lines, 0, "0000:07:00.0", True), (False, 1, "535.129.03")]


def test_a_lost_gpu_before_the_banner_is_still_a_lost_gpu() -> None:
    # The warning, then a GPU nvidia-smi could not open (line 2), then the report of the other GPU: the file
    # counts 1 attached, so 2 GPUs against 1 is refused; with Attached GPUs 2 the lost one is read beside it.
    lost = "Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error\n"
    text = WARNING + lost + A10.read_text().replace("Attached GPUs                             : 1",
                                                     "Attached GPUs                             : 2")  # fmt: skip
    gpus = nvidia_smi_text.read(text, "q.txt", "n").gpus
    assert sorted((g.pci_bus_id, g.lost is not None, g.source.line) for g in gpus) == [
        ("0000:07:00.0", False, 10),
        ("0000:3a:00.0", True, 2),
    ]


def test_a_lost_line_in_a_shape_not_read_before_the_banner_is_refused() -> None:
    with pytest.raises(TopologError) as bad:
        nvidia_smi_text.read("Unable to determine the device handle for GPU: oops\n" + A10.read_text(), "q.txt", "n")
    assert "q.txt:1" in str(bad.value)


def test_a_second_run_is_still_refused() -> None:
    # Only text before the first banner is read past: a second report in the file is still refused.
    with pytest.raises(TopologError) as bad:
        nvidia_smi_text.read(WARNING + A10.read_text() + A10.read_text(), "q.txt", "n")
    assert "second" in str(bad.value)


def _xml_key(text: str) -> list[tuple[object, ...]]:
    obs = nvidia_smi_xml.read(text, "x.xml", "n")
    return [(g.source.line, g.index, g.pci_bus_id) for g in obs.gpus] + [(obs.files[0].driver,)]


def test_nvidia_smi_warnings_after_a_q_x_document_are_read_past() -> None:
    # The A100 sample's one <gpu> (bus 00000000:01:00.0) is on line 8 of 4 attached (a selection: no index),
    # driver 535.54.03; a warning (and a blank line) after the closing tag changes nothing.
    plain = A100_XML.read_text()
    expected = [(8, None, "0000:01:00.0"), ("535.54.03",)]
    assert _xml_key(plain) == _xml_key(plain + "\n" + WARNING) == _xml_key(plain + WARNING + WARNING) == expected


def test_other_text_after_a_q_x_document_is_refused_at_its_line() -> None:
    plain = A100_XML.read_text()
    lines = plain.count("\n")
    with pytest.raises(TopologError) as bad:
        nvidia_smi_xml.read(plain + WARNING + "$ nvidia-smi -q -x\n", "x.xml", "n")
    # The located reader names the first line after the document (the warning's: the text is not cut).
    assert f"x.xml:{lines + 1}:" in str(bad.value)
