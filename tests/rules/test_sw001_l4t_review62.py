"""SW001 and placement against a Jetson's L4T driver (review of round 62's CUDA driver rows).

The table in verifier/sources/inventory/software.yaml holds NVIDIA's least Linux driver per CUDA
release: the releases for x86_64 and Arm servers, numbered with a minor of 10 or more (13.0 GA:
580.65.06). A Jetson's L4T driver is numbered otherwise, and its CUDA is the one JetPack ships
with it. Public `nvidia-smi` captures (GitHub, found by exact text):

- Jetson AGX Thor, JetPack 7: `NVIDIA-SMI 580.00  Driver Version: 580.00  CUDA Version: 13.0`
  (GPU "NVIDIA Thor", compute capability 11.0);
- Jetson Orin, JetPack 6.2: `NVIDIA-SMI 540.4.0  Driver Version: 540.4.0  CUDA Version: 12.6`
  (GPU "Orin (nvgpu)").

Round 62 added the 13.0 row: a Thor node written as nvidia-smi shows it became an SW001 error
("580.00, older than 580.65.06"), and a job asking CUDA >= 13.0 was refused there; the base left
13.0 uncompared. The Orin node was an SW001 error on the base already (12.6's row, 560.28.03).
Neither is a stack the node lacks. A data-center driver below its release's least (535.129.03
with CUDA 13.0: branch 535 < 580) and a branch written alone below the release's branch (525 with
CUDA 12.4: 525 < 550) are still reported.

Round 16 (FH2): the exemption went by the driver's digits (a minor of 1-9 not compared), so a
server node written with such a number was never judged either. It now goes by the part: a node
whose NVIDIA GPUs are an SoC's integrated GPU (its model shares the SoC's memory, feature
unified_memory, as tests/sources/inventory/realistic/jetson-agx-orin.yaml writes an Orin) is not
held to the server table; every other node is compared by release, a branch written alone (580.00,
525) by branch. The first cases' Jetson model now says it is one (it was a bare GPU model, which
by itself is no Jetson), and the server cases run on a discrete H100 (they were on the Jetson
model, where the table no longer applies).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place
from verifier.session.verify_run import VerifyRun, verify


def _inventory(tmp_path: Path, driver: str, cuda: str, gpu: str = "Jetson-GPU") -> Path:
    path = tmp_path / "edge.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\n"
        "catalog:\n"
        "  models:\n"
        "    - {name: Jetson-GPU, vendor: nvidia, kind: gpu, features: [unified_memory],\n"
        "       source: 'test: the integrated GPU of a Jetson module, sharing the module memory'}\n"
        "objects:\n"
        "  - name: j0\n"
        "    kind: node\n"
        f'    software: {{driver: "{driver}", cuda: "{cuda}"}}\n'
        "    children:\n"
        f"      - {{name: gpu0, kind: gpu, model: {gpu}}}\n",
        encoding="utf-8",
    )
    return path


def _sw001(path: Path, engine: str) -> set[tuple[str, ...]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {r.finding.subjects for r in report.results if r.finding.rule == "SW001"}


@pytest.mark.parametrize("engine", ["duckdb", "memory", "pydatalog"])
@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("580.00", "13.0"),  # Thor, JetPack 7 (capture above): minor 0, branch 580 = 13.0's 580
        ("540.4.0", "12.6"),  # Orin, JetPack 6.2 (capture above): minor 4, no server release has it
    ],
)
def test_a_jetsons_l4t_driver_is_not_held_to_the_server_table(
    tmp_path: Path, engine: str, driver: str, cuda: str
) -> None:
    assert _sw001(_inventory(tmp_path, driver, cuda), engine) == set()


@pytest.mark.parametrize("engine", ["duckdb", "memory", "pydatalog"])
@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("535.129.03", "13.0"),  # 535.129.03 < 580.65.06, minor 129
        ("579.99.99", "13.0"),  # one below by every part, minor 99
        ("525", "12.4"),  # a branch alone: 525 < 550 (12.4's 550.54.14)
        ("575.00", "13.0"),  # a branch written as x.00: 575 < 580 (13.0's 580.65.06)
        ("540.4.0", "12.6"),  # L4T's digits on a server GPU: 540.004.000 < 560.028.003
        ("566.03", "12.8"),  # a Windows-style number: 566.003.000 < 570.026.000 (12.8's 570.26)
    ],
)
def test_a_server_driver_below_its_release_is_still_reported(
    tmp_path: Path, engine: str, driver: str, cuda: str
) -> None:
    assert _sw001(_inventory(tmp_path, driver, cuda, gpu="H100-SXM5-80GB"), engine) == {("j0",)}


@pytest.mark.parametrize("engine", ["duckdb", "memory", "pydatalog"])
@pytest.mark.parametrize(
    ("driver", "cuda"),
    [
        ("580.00", "13.0"),  # branch 580 is 13.0's own (580.65.06): its release unknown, not older
        ("580.65.06", "13.0"),  # 13.0's least itself
        ("570.26", "12.8"),  # 12.8's least itself, written with two parts
    ],
)
def test_a_server_driver_at_its_release_or_of_its_branch_is_silent(
    tmp_path: Path, engine: str, driver: str, cuda: str
) -> None:
    assert _sw001(_inventory(tmp_path, driver, cuda, gpu="H100-SXM5-80GB"), engine) == set()


def test_an_soc_named_by_its_package_model_is_not_held_to_the_table(tmp_path: Path) -> None:
    # The Orin written as the shipped realistic inventory writes it (unified memory on the module's
    # system model, the GPU under it): 540.4.0 with CUDA 12.6 is JetPack 6.2's pair, no finding; the
    # same node with a discrete H100 beside the SoC runs the server driver, which 540.4.0 < 560.28.3
    # is older than (one finding, j0).
    def write(extra: str) -> Path:
        path = tmp_path / "orin.yaml"
        path.write_text(
            "apiVersion: topolog.dev/v1\n"
            "catalog:\n"
            "  models:\n"
            "    - {name: Orin-Module, vendor: nvidia, kind: system, features: [unified_memory], source: 'test'}\n"
            "    - {name: Orin-GPU, vendor: nvidia, kind: gpu, source: 'test'}\n"
            "objects:\n"
            "  - name: j0\n"
            "    kind: node\n"
            '    software: {driver: "540.4.0", cuda: "12.6"}\n'
            "    children:\n"
            "      - name: soc\n"
            "        kind: socket\n"
            "        model: Orin-Module\n"
            "        children:\n"
            "          - {name: igpu, kind: gpu, model: Orin-GPU}\n" + extra,
            encoding="utf-8",
        )
        return path

    assert _sw001(write(""), "duckdb") == set()
    assert _sw001(write("      - {name: dgpu, kind: gpu, model: H100-SXM5-80GB}\n"), "duckdb") == {("j0",)}


JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: cuda13
    principal: User::"hana"
    gpus: 1
    topology: {scope: node}
    software: {cuda: ">=13.0"}
"""


@pytest.mark.parametrize(
    ("driver", "gpu", "placed"),
    [("580.00", "Jetson-GPU", ["j0"]), ("580.00", "H100-SXM5-80GB", ["j0"]), ("535.129.03", "H100-SXM5-80GB", [])],
)
def test_a_cuda_13_job_is_placed_on_a_thor(tmp_path: Path, driver: str, gpu: str, placed: list[str]) -> None:
    # The node claims CUDA 13.0: a Thor with L4T's 580.00 runs the job, and so does a server node
    # of branch 580 (13.0's own); a server node with 535.129.03 (branch 535 < 580) does not,
    # whatever its label says.
    inventory = _inventory(tmp_path, driver, "13.0", gpu)
    (tmp_path / "jobs.yaml").write_text(JOBS, encoding="utf-8")
    report = place([inventory], [tmp_path / "jobs.yaml"], engine="duckdb", authorize=False)
    (job,) = report.jobs
    assert [p.domain for p in job.placements] == placed
