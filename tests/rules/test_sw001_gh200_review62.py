"""SW001 and placement on a Grace Hopper node written with unified memory (review R-FH2, round 16).

8bbc9794 exempts a Jetson's L4T driver from NVIDIA's server driver table by the part: an NVIDIA
GPU with no memory of its own in a node whose package model (or whose own model) has feature
unified_memory. It read "no memory of its own" as no memory figure in the GPU's model and none on
the instance, but a GPU's HBM may also be written as a memory object inside the GPU, or named by
its model's feature hbm (MEM008's gpu_own_memory reads all of these). A GH200 written as one
package of a unified-memory model (the package shares the Grace's LPDDR5X with the GPU) with its
Hopper's HBM3 as a child memory object became a "Jetson": SW001 fell silent (base: reported) and
placement stopped comparing its driver.

Expected, by hand from the inventory below (CUDA 12.6's least driver is 560.28.03, NVIDIA's table
in verifier/sources/inventory/software.yaml):
- gh-child: GPU model without memory figure, its HBM3 a memory object inside the GPU; driver
  535.129.03 (535,129,003 < 560,028,003) -> SW001 on gh-child.
- gh-hbm: GPU model with feature hbm, no memory figure, nothing inside it; same driver -> SW001.
- orin: a Jetson as the realistic inventory writes it (module model with unified_memory, GPU model
  without memory, nothing inside the GPU), JetPack 6.2's 540.4.0 with CUDA 12.6 -> not compared.
- orin-beside: the same driver and GPU model, but the GPU sits beside the module package, not in
  it, and its own model says nothing of unified memory -> compared, 540,004,000 < 560,028,003 ->
  SW001. 8bbc9794 took any package of the node, so verify was silent while placement, which loads
  a GPU and its ancestors only (not the package beside it), compared the driver and refused the
  node: the two disagreed. Now both read the package the GPU is in.
So SW001 names gh-child, gh-hbm and orin-beside, and a job asking CUDA >= 12.6 places on orin only.
Placement loads no object inside a GPU (verifier/placement/place.py: gpus_and_ancestors), so it
cannot see gh-child's HBM object and takes its GPU for an SoC's; it still refuses gh-child because
an SoC's driver numbered as a server release (minor 129 >= 10) is compared (last test below).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.place_run import place
from verifier.session.verify_run import VerifyRun, verify

INVENTORY = """\
apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: GH200-Package-Test, vendor: nvidia, kind: system, source: "test model", features: [unified_memory]}
    - {name: GH200-GPU-Test, vendor: nvidia, kind: gpu, source: "test model"}
    - {name: GH200-GPU-HBM-Test, vendor: nvidia, kind: gpu, source: "test model", features: [hbm, nvlink_c2c]}
    - {name: Orin-Module-Test, vendor: nvidia, kind: system, source: "test model", features: [unified_memory]}
    - {name: Orin-GPU-Test, vendor: nvidia, kind: gpu, source: "test model"}
objects:
  - name: gh-child
    kind: node
    software: {driver: "535.129.03", cuda: "12.6"}
    children:
      - name: gh0
        kind: socket
        model: GH200-Package-Test
        children:
          - {name: grace0, kind: cpu, model: Grace-72C}
          - name: gpu0
            kind: gpu
            model: GH200-GPU-Test
            children:
              - {name: hbm0, kind: memory, type: HBM3, size: 96 GB, bandwidth: 4 TB/s}
          - {name: lpddr0, kind: memory, type: LPDDR5X, size: 480 GB, serves: [grace0]}
  - name: gh-hbm
    kind: node
    software: {driver: "535.129.03", cuda: "12.6"}
    children:
      - name: gh0
        kind: socket
        model: GH200-Package-Test
        children:
          - {name: grace0, kind: cpu, model: Grace-72C}
          - {name: gpu0, kind: gpu, model: GH200-GPU-HBM-Test}
          - {name: lpddr0, kind: memory, type: LPDDR5X, size: 480 GB, serves: [grace0]}
  - name: orin
    kind: node
    software: {driver: "540.4.0", cuda: "12.6"}
    children:
      - name: soc
        kind: socket
        model: Orin-Module-Test
        children:
          - {name: igpu, kind: gpu, model: Orin-GPU-Test}
  - name: orin-beside
    kind: node
    software: {driver: "540.4.0", cuda: "12.6"}
    children:
      - name: soc
        kind: socket
        model: Orin-Module-Test
        children:
          - {name: cl0, kind: cpu}
      - {name: igpu, kind: gpu, model: Orin-GPU-Test}
"""

JOBS = """apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: cuda126
    principal: User::"hana"
    gpus: 1
    topology: {scope: node}
    software: {cuda: ">=12.6"}
"""


@pytest.mark.parametrize("engine", ["duckdb", "memory", "pydatalog"])
def test_a_gpu_with_memory_of_its_own_is_no_jetson(tmp_path: Path, engine: str) -> None:
    path = tmp_path / "gh.yaml"
    path.write_text(INVENTORY, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    assert {r.finding.subjects for r in report.results if r.finding.rule == "SW001"} == {
        ("gh-child",),
        ("gh-hbm",),
        ("orin-beside",),
    }


def _placed(tmp_path: Path, inventory_text: str, engine: str) -> list[str]:
    inventory = tmp_path / "gh.yaml"
    inventory.write_text(inventory_text, encoding="utf-8")
    (tmp_path / "jobs.yaml").write_text(JOBS, encoding="utf-8")
    report = place([inventory], [tmp_path / "jobs.yaml"], engine=engine, authorize=False)
    (job,) = report.jobs
    return [p.domain for p in job.placements]


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_placement_compares_a_grace_hoppers_driver(tmp_path: Path, engine: str) -> None:
    assert _placed(tmp_path, INVENTORY, engine) == ["orin"]


def _soc(tmp_path: Path, driver: str, cuda: str) -> Path:
    path = tmp_path / "soc.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\n"
        "catalog:\n"
        "  models:\n"
        "    - {name: SoC-GPU-Test, vendor: nvidia, kind: gpu, features: [unified_memory], source: 'test model'}\n"
        "objects:\n"
        "  - name: s0\n"
        "    kind: node\n"
        f'    software: {{driver: "{driver}", cuda: "{cuda}"}}\n'
        "    children:\n"
        "      - {name: gpu0, kind: gpu, model: SoC-GPU-Test}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("engine", ["duckdb", "memory", "pydatalog"])
@pytest.mark.parametrize(
    ("driver", "cuda", "reported"),
    [
        # A DGX Spark's GB10 shares its memory with the Grace too, but runs NVIDIA's Arm server
        # driver (public benchmark notes: "CUDA 13.0, driver 580.126.09"), numbered with a minor of
        # 10 or more: compared. 580,126,009 < 590,044,001 (13.1's least) -> reported;
        # >= 580,065,006 (13.0's least) -> silent.
        ("580.126.09", "13.1", True),
        ("580.126.09", "13.0", False),
        # L4T's numbers (minor below 10): not compared on an SoC, whatever the CUDA claimed
        # (8bbc9794 kept these silent, and so does this change).
        ("540.4.0", "12.6", False),
        ("580.00", "13.0", False),
        ("580.00", "13.1", False),
    ],
)
def test_an_soc_running_the_server_driver_is_compared(
    tmp_path: Path, engine: str, driver: str, cuda: str, reported: bool
) -> None:
    report = verify([_soc(tmp_path, driver, cuda)], VerifyRun(authorize=False, engine=engine))
    found = {r.finding.subjects for r in report.results if r.finding.rule == "SW001"}
    assert found == ({("s0",)} if reported else set())
