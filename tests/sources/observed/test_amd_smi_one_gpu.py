"""amd-smi / rocm-smi output of one GPU: read, and never taken for a listing of every GPU of its host.

- Real sample (samples/amd-smi/rx7800xt-static-python-warnings-ajean-39-excerpt.txt, README cites
  https://github.com/nathaninline/ajean/issues/39): Python 3.14 printed two `SyntaxWarning` lines (each with its
  indented source line) before amd-smi's JSON, which the capture holds. Before: not recognised (exit 2).
- amd-smi's logger printed one device's object bare (`{"gpu": 0, ...}`) before it wrapped it in a list (ROCm/amdsmi
  amdsmi_cli/amdsmi_logger.py, `_print_json_output`). Before: refused ("a JSON object without a 'gpu_data' list").
- `amd-smi static --json -g 0` on a host of eight prints GPU 0 alone; before, the file was the host's whole listing
  and its seven other GPUs each "missing" (OBS006). amd-smi prints no count of the host's GPUs, so one GPU (`-g 0`,
  `-g 3`) proves no GPU missing; two or more, gaps included, are a whole listing (review R-RT: a gap hid GPU 3).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.sources.observed import amd_smi, amd_smi_any, amd_smi_text, rocm_smi
from verifier.sources.observed.sniff import sniff

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = Path(__file__).parent / "samples" / "amd-smi" / "rx7800xt-static-python-warnings-ajean-39-excerpt.txt"
STATIC = ROOT / "inventories" / "observed" / "mixed-fleet" / "mi300x-n0" / "amd-smi-static.json"


def test_real_sample_after_python_warnings_is_read() -> None:
    # Lines 1-4 are the warnings, 5 `{`, 6 `"gpu_data": [`, 7 the GPU's object: GPU 0 at 0000:03:00.0, x16 at most,
    # "AMD Radeon RX 7800 XT"; one GPU numbered 0, so a selection for all the file can tell.
    text = SAMPLE.read_text()
    assert sniff(text) == "amd-smi"
    found = amd_smi_any.read(text, "static.txt", "bazzite")
    (gpu,) = found.gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.model, gpu.pcie_width_max, gpu.source.line) == (
        0,
        "0000:03:00.0",
        "AMD Radeon RX 7800 XT",
        16,
        7,
    )
    assert found.files[0].partial


def test_other_text_before_the_json_is_still_refused() -> None:
    text = "$ amd-smi static --json\n" + SAMPLE.read_text().split("\n", 4)[4]
    assert sniff(text) is None
    with pytest.raises(Exception, match=r"static\.txt:1: not JSON"):
        amd_smi.read(text, "static.txt", "h")


def test_one_gpu_object_printed_bare_is_read() -> None:
    gpu0 = json.loads(STATIC.read_text())[0]
    text = json.dumps(gpu0, indent=4)
    assert sniff(text) == "amd-smi"
    found = amd_smi.read(text, "static.json", "mi300x-n0")
    assert [(g.index, g.pci_bus_id) for g in found.gpus] == [(0, gpu0["bus"]["bdf"])]
    assert found.files[0].partial


@pytest.mark.parametrize(
    ("numbers", "whole"),
    [([0], False), ([3], False), ([0, 1], True), ([1, 2], True), ([0, 2], True), (list(range(8)), True)],
)
def test_whole_listing_is_more_than_one_gpu(numbers: list[int], whole: bool) -> None:
    assert amd_smi.whole_listing(numbers) is whole


def test_text_and_rocm_smi_selections_are_partial() -> None:
    text = "GPU: 3\n    BUS:\n        BDF: 0000:26:00.0\n"
    assert amd_smi_text.read(text, "static.txt", "h").files[0].partial
    card = {"card0": {"PCI Bus": "0000:05:00.0"}}
    assert rocm_smi.read(json.dumps(card), "rocm.json", "h").files[0].partial
    two = {"card0": {"PCI Bus": "0000:05:00.0"}, "card1": {"PCI Bus": "0000:26:00.0"}}
    assert not rocm_smi.read(json.dumps(two), "rocm.json", "h").files[0].partial


def test_one_gpu_proves_no_other_missing_nor_do_seven_of_eight(tmp_path: Path) -> None:
    # inventories/mixed-fleet.yaml declares mi300x-n0 and mi300x-n1 with gpu0-gpu7 each (matched by index).
    # mi300x-n0: `-g 0` (GPU 0 alone) and mi300x-n1: GPUs 0-6 (`-g 0 1 2 3 4 5 6`, or a host whose GPU amd-smi no
    # longer sees: amd-smi prints no count and numbers what it sees from 0, so the file cannot say which): nothing
    # judged missing, each node told so -> one OBS009 per node (round 16, RT62: was OBS006 mi300x-n1/gpu7).
    static = json.loads(STATIC.read_text())
    (tmp_path / "mi300x-n0").mkdir()
    (tmp_path / "mi300x-n0" / "static.json").write_text(json.dumps([static[0]], indent=4))
    (tmp_path / "mi300x-n1").mkdir()
    (tmp_path / "mi300x-n1" / "static.json").write_text(json.dumps(static[:7], indent=4))
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories" / "mixed-fleet.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code == 0, err  # warnings only
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert sorted(found) == [("OBS009", ["mi300x-n0"]), ("OBS009", ["mi300x-n1"])]


def test_the_text_form_after_python_warnings_is_read_at_its_own_lines() -> None:
    # The real `amd-smi static` text of GPU 0 (samples/amd-smi/mi300x-static-gpu0-rocm-blogs.txt, its `GPU: 0` on
    # line 1) after the two lines of one Python warning: its GPU is read, at line 1 + 2 = 3. Before: not recognised.
    warning = (
        "/usr/lib/python3.14/site-packages/amdsmi/amdsmi_interface.py:3569: SyntaxWarning: 'return' in a 'finally' "
        "block\n  return return_dictionary\n"
    )
    text = warning + (SAMPLE.parent / "mi300x-static-gpu0-rocm-blogs.txt").read_text()
    assert sniff(text) == "amd-smi"
    (gpu,) = amd_smi_any.read(text, "static.txt", "h").gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.source.line) == (0, "0000:05:00.0", 3)
