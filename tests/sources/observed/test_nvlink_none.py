"""`nvidia-smi nvlink -s` for a GPU without an NVLink its driver can use: `Device does not have or support Nvlink`.

Real sample: samples/nvidia-smi-nvlink/no-nvlink-checkbox-pr-2727.txt (README.md there). Before, the line was
an unexpected one and the whole file was refused (exit 2), so a node collecting `nvlink -s` everywhere could not
be observed at all where its GPUs have no NVLink.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.observed import nvlink_text
from verifier.sources.observed.sniff import sniff

REAL = Path(__file__).parent / "samples" / "nvidia-smi-nvlink" / "no-nvlink-checkbox-pr-2727.txt"
ROOT = Path(__file__).parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
OBSERVED = ROOT / "inventories" / "observed" / "dgx-h100-pod"


def test_real_message_reads_as_no_link_of_the_gpu_up() -> None:
    # By hand: line 1 names GPU 0 and its UUID; line 2 is the message: one observation, every link (-1) inactive.
    text = REAL.read_text()
    assert sniff(text) == "nvidia-smi-nvlink-s"
    obs = nvlink_text.read(text, "nvlink-s.txt", "n1")
    assert [(lk.gpu.index, lk.gpu.uuid, lk.link, lk.state, lk.speed_mbps, lk.source.line) for lk in obs.links] == [
        (0, "GPU-483cccbe-9d80-0d7b-5c48-12e6c8696e50", nvlink_text.ALL_LINKS, "inactive", None, 2)
    ]
    # The trailing period some drivers print reads the same; `-e` has no counter to give for such a GPU.
    assert len(nvlink_text.read(text.replace("Nvlink\n", "Nvlink.\n"), "s.txt", "n1").links) == 1
    both = text + "GPU 1: NVIDIA H100 (UUID: GPU-xxx)\n\t Link 0: Replay Errors: 0\n"
    errors = nvlink_text.read(both, "nvlink-e.txt", "n1")
    assert (errors.links, [c.value for c in errors.counters]) == ((), [0])


def _verify(tmp_path: Path, gpus_without_links: str, inventory: Path) -> tuple[int, str]:
    obs = tmp_path / "obs" / "node1"
    obs.mkdir(parents=True)
    (obs / "nvlink-s.txt").write_text(gpus_without_links)
    code, out, err = run_cli("verify", str(inventory), "--observed", str(tmp_path / "obs"))
    assert code in (0, 1), err
    return code, out


def test_a_node_that_declares_no_nvlink_has_nothing_against_it(tmp_path: Path) -> None:
    # Two PCIe GPUs, no NVLink declared: 0 usable NVLinks of 0 declared, no OBS finding.
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: node1\n    kind: node\n"
        '    children:\n      - {name: "gpu{i}", kind: gpu, count: 2}\n'
    )
    lines = "".join(
        f"GPU {i}: NVIDIA L40S (UUID: GPU-{i}000)\nDevice does not have or support Nvlink\n" for i in (0, 1)
    )
    _, out = _verify(tmp_path, lines, inventory)
    assert " OBS" not in out


def test_a_node_declaring_nvlinks_the_driver_cannot_use_is_judged(tmp_path: Path) -> None:
    # The shipped pod's dgx03 with GPU 5's 18 link lines replaced by the message: its node declares 18 working
    # NVLinks per GPU into the NVSwitch fabric, so 0 of 18 is OBS002 (it left the NVLink domain).
    obs = tmp_path / "obs"
    shutil.copytree(OBSERVED, obs)
    path = obs / "dgx03" / "nvlink-s.txt"
    out: list[str] = []
    gpu = None
    for line in path.read_text().splitlines():
        if line.startswith("GPU "):
            gpu = line.split()[1]
            out.append(line)
            if gpu == "5:":
                out.append("Device does not have or support Nvlink")
        elif gpu != "5:":
            out.append(line)
    path.write_text("\n".join(out) + "\n")
    code, stdout, stderr = run_cli("verify", str(POD), "--observed", str(obs), "--observed-now", "2026-12-06T09:00:00Z")
    assert code == 1, stderr
    assert "GPU dgx03/gpu5 reports 0 active NVLinks of the 18 its node declares working" in stdout
