"""The recovery a GPU's driver asks for (nvidia-smi's GPU Recovery Action and GPU Reset Status) is OBS004, and
an R610 listing's driver is its KMD Version.

Real samples (samples/nvidia-smi-q/README.md, samples/nvidia-smi-q-xml/README.md):
- a10-535.129.03-remap-pending.txt: leptonai/gpud's A10 `nvidia-smi -q` (535.129.03), a row remapping pending
  (`Remapped Rows > Pending : Yes`, 4 uncorrectable) and `GPU Reset Status > Reset Required : No`;
- h100-8gpu-565-first2.txt: R565 prints both `GPU Reset Status` and `GPU Recovery Action : None`;
- a100-sxm4-v12.xml: R535's `<gpu_reset_status>` with `<reset_required>No</reset_required>`.
The values a faulted GPU shows were seen in public pastes: `Reset Required : Yes` (an RTX 3090 node on
535.247.01 whose GPU 2 failed CUDA initialisation), `GPU Recovery Action` `Reset` and `Reboot` (runbooks
and notes grepping `nvidia-smi -q`); R575 prints `<reset_required>Requested functionality has been
deprecated</reset_required>` beside `<gpu_recovery_action>None</gpu_recovery_action>` (a 575.51.02 capture
in a public repository's test data), so the deprecated field says nothing.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml

SAMPLES = Path(__file__).resolve().parent / "samples"
A10 = SAMPLES / "nvidia-smi-q" / "a10-535.129.03-remap-pending.txt"
H100 = SAMPLES / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"
A100_XML = SAMPLES / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
BLACKWELL_XML = SAMPLES / "nvidia-smi-q-xml" / "rtx-pro-6000-blackwell-590-v13.xml"

_RESET_NO = "        Reset Required                    : No"
_PENDING_YES = "        Pending                           : Yes"


def _a10(*, reset: str = "No", pending: str = "Yes") -> str:
    text = A10.read_text()
    assert text.count(_RESET_NO) == 1 and text.count(_PENDING_YES) == 1
    return text.replace(_RESET_NO, _RESET_NO.replace("No", reset)).replace(
        _PENDING_YES, _PENDING_YES.replace("Yes", pending)
    )


def _obs004(tmp_path: Path, text: str) -> list[tuple[list[str], str]]:
    """verify --observed of one node `a10n` with one indexed GPU, the file as its nvidia-smi -q."""
    (tmp_path / "obs" / "a10n").mkdir(parents=True)
    (tmp_path / "obs" / "a10n" / "nvidia-smi-q.txt").write_text(text)
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: a10n\n    kind: node\n"
        '    children:\n      - {name: "gpu{i}", kind: gpu, count: 1}\n'
    )
    code, out, err = run_cli(
        "verify", str(inventory), "--observed", str(tmp_path / "obs"), "--observed-now", "2024-09-25T12:00:00Z",
        "--format", "json",
    )  # fmt: skip
    assert code == 1, err
    found = json.loads(out)["findings"]
    return sorted((f["subjects"], f["message"]) for f in found if f["rule"] == "OBS004")


def test_the_real_a10_sample_is_its_pending_remapping_alone(tmp_path: Path) -> None:
    # The sample as published: Pending Yes, Reset Required No -> the remapping's reason, no recovery verdict.
    gpu = nvidia_smi_text.read(A10.read_text(), "a.txt", "a10n").gpus[0]
    assert (gpu.remapped_rows_pending, gpu.recovery_action) == (True, None)
    findings = _obs004(tmp_path, A10.read_text())
    assert [m.split(": ", 1)[1] for _, m in findings] == [
        "a row remapping is pending (the GPU needs a reset to use it) (observed at "
        + str(tmp_path / "obs" / "a10n" / "nvidia-smi-q.txt")
        + ":8:1)."
    ]


def test_reset_required_alone_takes_the_gpu_out_of_service(tmp_path: Path) -> None:
    # Reset Required Yes with nothing else wrong (remapping not pending): the driver's own verdict is the
    # finding; base read the file and found nothing. The GPU block starts at line 8 (`GPU 00000000:07:00.0`).
    text = _a10(reset="Yes", pending="No")
    assert nvidia_smi_text.read(text, "a.txt", "a10n").gpus[0].recovery_action == "reset"
    findings = _obs004(tmp_path, text)
    assert findings == [
        (
            ["a10n/gpu0"],
            "GPU a10n/gpu0 is out of service: its driver asks for a GPU reset (nvidia-smi: GPU Recovery Action "
            f"Reset, or Reset Required) (observed at {tmp_path / 'obs' / 'a10n' / 'nvidia-smi-q.txt'}:8:1).",
        )
    ]


def test_one_cause_one_finding_the_remapping_names_it(tmp_path: Path) -> None:
    # A pending remapping is why the driver asks for a reset: one finding, the remapping's.
    findings = _obs004(tmp_path, _a10(reset="Yes", pending="Yes"))
    assert len(findings) == 1 and "row remapping is pending" in findings[0][1]


@pytest.mark.parametrize(
    ("printed", "kept"),
    [("None", None), ("Reset", "reset"), ("Reboot", "reboot"), ("Drain P2P", "drain_p2p"),
     ("Drain and Reset", "drain_and_reset"), ("N/A", None)],
)  # fmt: skip
def test_the_recovery_action_of_r565_text(printed: str, kept: str | None) -> None:
    # The sample's first block prints `GPU Recovery Action : None` at line 60; only that block is changed.
    line = "    GPU Recovery Action                   : None"
    text = H100.read_text().replace(line, line.replace("None", printed), 1)
    gpus = nvidia_smi_text.read(text, "h.txt", "n").gpus
    assert [g.recovery_action for g in gpus] == [kept, None]


def test_a_recovery_action_nvidia_smi_does_not_print_is_refused_at_its_line() -> None:
    # An action topolog does not know is read for that GPU alone (test_recovery_newer_actions.py); a value that is
    # no action's name (a Yes/No, a number) is refused at its line.
    line = "    GPU Recovery Action                   : None"
    text = H100.read_text().replace(line, line.replace("None", "Yes"), 1)
    with pytest.raises(TopologError) as bad:
        nvidia_smi_text.read(text, "h.txt", "n")
    assert "h.txt:60" in str(bad.value) and "Drain and Reset" in str(bad.value)
    reset = "        Reset Required                    : No"
    with pytest.raises(TopologError) as bad:
        nvidia_smi_text.read(H100.read_text().replace(reset, reset.replace("No", "Maybe"), 1), "h.txt", "n")
    assert "h.txt:58" in str(bad.value) and "Yes or No" in str(bad.value)


_XML_RESET = "<reset_required>No</reset_required>"
_XML_DRAIN = "<drain_and_reset_recommended>No</drain_and_reset_recommended>"


@pytest.mark.parametrize(
    ("old", "new", "kept"),
    [
        (_XML_RESET, _XML_RESET, None),
        (_XML_RESET, "<reset_required>Yes</reset_required>", "reset"),
        (_XML_DRAIN, "<drain_and_reset_recommended>Yes</drain_and_reset_recommended>", "drain_and_reset"),
        (_XML_RESET, "<reset_required>Requested functionality has been deprecated</reset_required>", None),
        ("</gpu_reset_status>", "</gpu_reset_status>\n<gpu_recovery_action>Reboot</gpu_recovery_action>", "reboot"),
        ("</gpu_reset_status>", "</gpu_reset_status>\n<gpu_recovery_action>None</gpu_recovery_action>", None),
    ],
)
def test_the_xml_readers_agree_on_the_recovery(old: str, new: str, kept: str | None) -> None:
    text = A100_XML.read_text()
    assert text.count(old) == 1
    text = text.replace(old, new)
    fast = nvidia_smi_xml.read(text, "a.xml", "n")
    located = nvidia_smi_xml.read_located(text, "a.xml", "n")
    assert [g.recovery_action for g in fast.gpus] == [g.recovery_action for g in located.gpus] == [kept]


def test_an_xml_recovery_action_nvidia_smi_does_not_print_is_refused_at_its_line() -> None:
    text = A100_XML.read_text().replace(
        "</gpu_reset_status>", "</gpu_reset_status>\n<gpu_recovery_action>2 GB</gpu_recovery_action>"
    )
    # </gpu_reset_status> is on line 87 of the sample: the inserted element is on line 88.
    with pytest.raises(TopologError) as bad:
        nvidia_smi_xml.read(text, "a.xml", "n")
    assert "a.xml:88" in str(bad.value) and "'2 GB'" in str(bad.value)


# The header of an R610 `nvidia-smi -q` (`nvidia-smi -q -d TEMPERATURE` of a 610.57.04 host, in a public
# repository's test data recorded from real hosts): the version moved to `KMD Version` and `Driver Version`
# keeps a note. R610's banner prints `KMD Version: 610.43.02  CUDA UMD Version: 13.3` (several public
# parsers test both banner forms) and `nvidia-smi --version` `DRIVER version : Deprecated, see "KMD version"`.
_R610 = """\

==============NVSMI LOG==============

Timestamp                                              : Sun Sep  6 08:21:38 2026
Driver Version                                         : 610.57.04 [Deprecated; will be removed in CUDA 14.0. Use KMD Version instead]
CUDA Version                                           : 13.3 [Deprecated; will be removed in CUDA 14.0. Use CUDA UMD Version instead]
KMD Version                                            : {kmd}
CUDA UMD Version                                       : 13.3

Attached GPUs                                          : 1
GPU 00000000:01:00.0
    Temperature
        GPU Current Temp                               : 79 C
"""  # noqa: E501


def test_an_r610_listing_names_its_kmd_version() -> None:
    # KMD Version printed: it is the driver (was the whole annotated Driver Version line, which OBS011 then
    # could not compare and skipped without a word).
    assert nvidia_smi_text.read(_R610.format(kmd="610.57.04"), "r.txt", "n").files[0].driver == "610.57.04"
    # Without the KMD line the Driver Version is read without its deprecation note.
    text = "".join(line for line in _R610.splitlines(keepends=True) if not line.startswith("KMD"))
    assert nvidia_smi_text.read(text, "r.txt", "n").files[0].driver == "610.57.04"


def test_an_r610_listing_is_judged_by_obs011(tmp_path: Path) -> None:
    # Declared 610.60.01 > observed 610.57.04: OBS011 (base: the note made the version unreadable, no finding).
    (tmp_path / "obs" / "n").mkdir(parents=True)
    (tmp_path / "obs" / "n" / "q.txt").write_text(_R610.format(kmd="610.57.04"))
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n\n    kind: node\n"
        '    software: {driver: "610.60.01"}\n'
        '    children:\n      - {name: "gpu{i}", kind: gpu, count: 1}\n'
    )
    _code, out, _ = run_cli(
        "verify", str(inventory), "--observed", str(tmp_path / "obs"), "--observed-now", "2026-09-06T09:00:00Z",
        "--format", "json",
    )  # fmt: skip
    found = [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "OBS011"]
    where = tmp_path / "obs" / "n" / "q.txt"
    assert found == [
        f"Node n runs NVIDIA driver 610.57.04 where the inventory declares 610.60.01 (observed at {where})."
    ]


def test_nvml_errors_in_place_of_values_are_unknown_not_refused(tmp_path: Path) -> None:
    # A GPU that needs a reset prints NVML's `System is not in ready state` (or `Unknown Error`) for what it
    # cannot read (the RTX 3090 paste beside Reset Required : Yes). Here the A10's utilisation, PCIe generation
    # and remapping Pending say so: each is unknown (None), and the file is read, its GPU OBS004 for the reset.
    text = _a10(reset="Yes", pending="Unknown Error")
    for old in ("        Gpu                               : 0 %", "                Current                   : 4"):
        assert text.count(old) == 1
        text = text.replace(old, old.rsplit(": ", 1)[0] + ": System is not in ready state")
    gpu = nvidia_smi_text.read(text, "a.txt", "a10n").gpus[0]
    assert (gpu.utilization_percent, gpu.pcie_gen_current, gpu.remapped_rows_pending) == (None, None, None)
    assert gpu.pcie_gen_max == 4 and gpu.recovery_action == "reset"
    assert [s for s, _ in _obs004(tmp_path, text)] == [["a10n/gpu0"]]


def test_nvml_errors_in_the_xml_are_unknown_in_both_readers() -> None:
    # The R590 sample's <gpu_util> (0 %) and <remapped_row_pending> (No), each printed once, as NVML's error.
    text = BLACKWELL_XML.read_text()
    for tag in ("gpu_util", "remapped_row_pending"):
        assert text.count(f"<{tag}>") == 1
        start = text.index(f"<{tag}>")
        end = text.index(f"</{tag}>", start)
        text = text[: start + len(tag) + 2] + "System is not in ready state" + text[end:]
    fast = nvidia_smi_xml.read(text, "a.xml", "n").gpus[0]
    located = nvidia_smi_xml.read_located(text, "a.xml", "n").gpus[0]
    assert fast == located
    assert (fast.utilization_percent, fast.remapped_rows_pending) == (None, None)
    # As published: 0 % and No, and <gpu_recovery_action>None</gpu_recovery_action> asks for nothing.
    plain = nvidia_smi_xml.read(BLACKWELL_XML.read_text(), "a.xml", "n").gpus[0]
    assert (plain.utilization_percent, plain.remapped_rows_pending, plain.recovery_action) == (0, False, None)
