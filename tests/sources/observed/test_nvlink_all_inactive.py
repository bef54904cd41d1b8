"""`nvidia-smi nvlink -s` for a GPU whose NVLinks are all down: NVML's message instead of link lines.

Real sample: samples/nvidia-smi-nvlink/b200-all-inactive-gpud-issue-1085.txt (README.md there). Before,
the message was an unexpected line and the whole file was refused; the GPU that lost every NVLink (the
failure that matters most) then went unjudged.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.observed import nvlink_text
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples" / "nvidia-smi-nvlink"
REAL = SAMPLES / "b200-all-inactive-gpud-issue-1085.txt"
ROOT = Path(__file__).parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
OBSERVED = ROOT / "inventories" / "observed" / "dgx-h100-pod"


def _rows(text: str, name: str = "nvlink-s.txt") -> list[tuple[object, ...]]:
    obs = nvlink_text.read(text, name, "n1")
    return [(lk.gpu.index, lk.gpu.uuid, lk.link, lk.state, lk.speed_mbps, lk.source.line) for lk in obs.links]


def test_real_message_reads_as_every_link_of_the_gpu_inactive() -> None:
    # By hand: "GPU 2: NVIDIA B200 (UUID: GPU-xxx)" is GPU index 2 ("GPU-xxx" is no UUID: the reporter's
    # redaction, so none is kept); line 2 is NVML's message: one observation, every link (-1) inactive.
    assert sniff(REAL.read_text()) == "nvidia-smi-nvlink-s"
    assert _rows(REAL.read_text()) == [(2, None, nvlink_text.ALL_LINKS, "inactive", None, 2)]


def test_message_among_gpus_with_links() -> None:
    text = (
        "GPU 0: NVIDIA B200 (UUID: GPU-00000000-0000-0000-0000-000000000000)\n"
        "\t Link 0: 50 GB/s\n\t Link 1: <inactive>\n" + REAL.read_text()
    )
    # GPU 0: link 0 active at 50 GB/s (50,000 MB/s), link 1 inactive; GPU 2 (lines 4-5): all inactive.
    assert _rows(text) == [
        (0, "GPU-00000000-0000-0000-0000-000000000000", 0, "active", 50_000, 2),
        (0, "GPU-00000000-0000-0000-0000-000000000000", 1, "inactive", None, 3),
        (2, None, -1, "inactive", None, 5),
    ]


def test_error_counters_skip_a_gpu_with_no_link_up() -> None:
    text = REAL.read_text() + "GPU 3: NVIDIA B200 (UUID: GPU-xxx)\n\t Link 0: Replay Errors: 0\n"
    obs = nvlink_text.read(text, "nvlink-e.txt", "n1")
    # The first GPU prints only the message: `-e` has nothing to count for it; GPU 3 has one counter.
    assert nvlink_text.kind_of(text) == "nvidia-smi-nvlink-e"
    assert [(c.gpu.index, c.metric, c.value) for c in obs.counters] == [(3, "nvlink Replay Errors", 0)]
    assert obs.links == ()


def test_a_gpu_with_every_link_down_is_judged_not_refused(tmp_path: Path) -> None:
    # The shipped pod observation with GPU 5's 18 link lines of dgx03 replaced by NVML's message: its node
    # declares 18 working NVLinks per GPU into the NVSwitch fabric, so 0 active of 18 is OBS002 (it left the
    # NVLink domain), where the shipped file (two links inactive) gives 16 of 18.
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
                out.append("NVML: Unable to retrieve NVLink information as all links are inActive")
        elif gpu != "5:":
            out.append(line)
    path.write_text("\n".join(out) + "\n")
    code, stdout, stderr = run_cli("verify", str(POD), "--observed", str(obs), "--observed-now", "2026-12-06T09:00:00Z")
    assert code == 1, stderr
    assert "GPU dgx03/gpu5 reports 0 active NVLinks of the 18 its node declares working" in stdout
