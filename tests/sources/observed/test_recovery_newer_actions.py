"""A GPU Recovery Action newer than topolog's four takes that GPU out of service; the rest of the file is read.

NVML's nvmlDeviceGpuRecoveryAction_t had None, Reset, Reboot, Drain P2P and Drain and Reset (R550-R580); NVML 615
added RECOVER_IMEX_DOMAIN, BUS_RESET and SYSTEM_REBOOT (NVML API change log, "Changes between NVML v610 and v615",
https://docs.nvidia.com/deploy/nvml-api/change-log.html). How nvidia-smi words them is not in a public capture yet.
Before, any such value refused the whole file (exit 2: no GPU of the node judged). Any action but None asks for a
recovery before the GPU is used, so that GPU is OBS004 with the words printed; its other GPUs are judged as usual.
Files: the real R565 H100 text (samples/nvidia-smi-q/h100-8gpu-565-first2.txt, `GPU Recovery Action : None` at
line 60 of its first block) and the real A100 -q -x (samples/nvidia-smi-q-xml/a100-sxm4-v12.xml).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.model import IMEX_RECOVERY, UNKNOWN_RECOVERY

SAMPLES = Path(__file__).resolve().parent / "samples"
H100 = SAMPLES / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"
A100_XML = SAMPLES / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
LINE = "    GPU Recovery Action                   : None"


@pytest.mark.parametrize("printed", ["Bus Reset", "System Reboot", "BUS_RESET"])
def test_a_newer_action_is_read_for_its_gpu_alone(printed: str) -> None:
    text = H100.read_text().replace(LINE, LINE.replace("None", printed), 1)
    gpus = nvidia_smi_text.read(text, "h.txt", "n").gpus
    assert [g.recovery_action for g in gpus] == [UNKNOWN_RECOVERY + printed, None]


@pytest.mark.parametrize("printed", ["Recover IMEX Domain", "RECOVER_IMEX_DOMAIN", "recover imex domain"])
def test_an_imex_domain_recovery_is_not_the_gpus(printed: str) -> None:
    # Round 16 (RT62): NVML 615's RECOVER_IMEX_DOMAIN asks to recover the IMEX domain, not the GPU (OBS013, not
    # OBS004); before, it was an unknown action taking the GPU out of service.
    text = H100.read_text().replace(LINE, LINE.replace("None", printed), 1)
    gpus = nvidia_smi_text.read(text, "h.txt", "n").gpus
    assert [g.recovery_action for g in gpus] == [IMEX_RECOVERY, None]


def test_the_xml_readers_agree() -> None:
    text = A100_XML.read_text().replace(
        "</gpu_reset_status>", "</gpu_reset_status>\n<gpu_recovery_action>Bus Reset</gpu_recovery_action>"
    )
    fast = nvidia_smi_xml.read(text, "a.xml", "n")
    located = nvidia_smi_xml.read_located(text, "a.xml", "n")
    assert [g.recovery_action for g in fast.gpus] == [g.recovery_action for g in located.gpus]
    assert [g.recovery_action for g in fast.gpus] == [UNKNOWN_RECOVERY + "Bus Reset"]


def test_verify_takes_that_gpu_out_of_service_with_the_words_printed(tmp_path: Path) -> None:
    # The H100 sample lists two of its host's eight GPUs (bus 18 and 2A: matched by bus id; OBS009 says the
    # listing is short); the first one's action is "Bus Reset" (line 60): OBS004 for n/gpu0 alone, observed at its
    # block's line, `GPU 00000000:18:00.0` (line 9), as every reason nvidia-smi's block gives.
    # It is judged at --observed-now, an hour after its Timestamp (Thu Nov 14 07:00:14 2024): not stale.
    text = H100.read_text().replace(LINE, LINE.replace("None", "Bus Reset"), 1)
    (tmp_path / "obs" / "n").mkdir(parents=True)
    (tmp_path / "obs" / "n" / "nvidia-smi-q.txt").write_text(text)
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n\n    kind: node\n"
        "    children:\n"
        "      - {name: gpu0, kind: gpu, labels: {pci_bus_id: '0000:18:00.0'}}\n"
        "      - {name: gpu1, kind: gpu, labels: {pci_bus_id: '0000:2a:00.0'}}\n"
    )
    code, out, err = run_cli(
        "verify", str(inventory), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2024-11-14T08:00:14Z",
    )  # fmt: skip
    assert code == 1, err
    found = [(f["subjects"], f["message"]) for f in json.loads(out)["findings"] if f["rule"] == "OBS004"]
    assert len(found) == 1 and found[0][0] == ["n/gpu0"]
    assert "a recovery topolog does not know: 'Bus Reset'" in found[0][1]
    assert "nvidia-smi-q.txt:9:1)" in found[0][1]
