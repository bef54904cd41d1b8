"""Review of round 61's release shapes (62ab3f0): versions people write and tools print still load.

A job's least version may name the major alone (`cuda: ">=12"`: CUDA 12.0 or later, exact); the
release shapes refused it. A node's version as its package or tool prints it, a release of three
parts and a build or revision number after '-' (ROCm's /opt/rocm/.info/version "6.3.0-66"; the
Debian revision of libnccl2's "2.21.5-1"), and RCCL's package version with the ROCm release code
after its patch ("2.20.5.60200" for ROCm 6.2.0) were refused too; the first two are now read as
the release before the '-'.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.software import release_number, version_number
from verifier.sources.jobs import load_jobs_text

JOBS = 'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"r", gpus: 8, software: [SW]}\n'

INVENTORY = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    software: {SOFTWARE}
"""


@pytest.mark.parametrize(
    ("software", "requires"),
    [
        # major*1000 + minor, the major alone being minor 0: CUDA 12 -> 12000, ROCm 6 -> 6000.
        ('{cuda: ">=12"}', (("cuda", 12000),)),
        ("{cuda: 11}", (("cuda", 11000),)),
        ('{rocm: ">=6", rccl: ">=2"}', (("rocm", 6000), ("rccl", 2000))),
        ('{cuda: ">= 12", nccl: ">=2"}', (("cuda", 12000), ("nccl", 2000))),
    ],
)
def test_a_minimum_of_the_major_alone_is_read(software: str, requires: tuple[tuple[str, int], ...]) -> None:
    (job,) = load_jobs_text(JOBS.replace("SW", software), "jobs.yaml")
    (option,) = job.stack
    assert option.requires == requires


@pytest.mark.parametrize("software", ['{cuda: ">=122"}', '{nccl: ">=2.21.5-1"}', '{cuda: ">=12-4"}'])
def test_a_minimum_that_is_no_release_is_still_refused(software: str) -> None:
    with pytest.raises(TopologError, match="cannot be a release of"):
        load_jobs_text(JOBS.replace("SW", software), "jobs.yaml")


def test_package_versions_of_a_node_are_read_as_their_release() -> None:
    software = '{cuda: "12.4.1-1", nccl: "2.21.5-1", rocm: "6.3.0-66", rccl: "2.20.5.60200"}'
    facts = inventory_facts(load_inventory_text(INVENTORY.replace("{SOFTWARE}", software), "inv.yaml"))
    # software_version is major*1000 + minor: 12.4 -> 12004, 2.21 -> 2021, 6.3 -> 6003, 2.20 -> 2020.
    assert sorted(facts["software_version"]) == [
        ("n0", "cuda", 12004),
        ("n0", "nccl", 2021),
        ("n0", "rccl", 2020),
        ("n0", "rocm", 6003),
    ]
    # software_release is major*10^6 + minor*10^3 + patch, the revision after '-' left out:
    # 12.4.1 -> 12004001, 2.21.5 -> 2021005, 6.3.0 -> 6003000; RCCL's four parts are no release.
    assert sorted(r for r in facts["software_release"] if r[1] != "driver") == [
        ("n0", "cuda", 12004001),
        ("n0", "nccl", 2021005),
        ("n0", "rocm", 6003000),
    ]


@pytest.mark.parametrize("software", ['{cuda: "12-4"}', '{cuda: "12.4-1"}', '{nccl: "2.21.5-1-1"}'])
def test_a_dash_not_after_three_parts_is_still_refused(software: str) -> None:
    # "12-4" is a package name's CUDA 12.4, not CUDA 12 build 4: never read as 12.
    with pytest.raises(TopologError, match="cannot be a release of"):
        load_inventory_text(INVENTORY.replace("{SOFTWARE}", software), "inv.yaml")


@pytest.mark.parametrize(
    ("text", "version", "release"),
    [
        # dpkg -l's libnccl2 version: release 2.21.5, Debian revision 1, build metadata +cuda12.4.
        ("2.21.5-1+cuda12.4", 2021, 2021005),
        ("2.21.5+cuda12.4", 2021, 2021005),
        # Ubuntu's driver package revision: release 550.54.15 -> 550*10^6 + 54*10^3 + 15.
        ("550.54.15-0ubuntu1", 550054, 550054015),
        # apt's rocm-core version: ROCm 6.2.0 with its version code, build 66, for Ubuntu 22.04.
        ("6.2.0.60200-66~22.04", 6002, None),
        # Pre-releases come before their release: never read as it.
        ("12.4-rc1", None, None),
        ("2.21.5-rc1", None, None),
        ("6.2.0~rc1", None, None),
        # A '-' after fewer than three parts: "12-4" is not CUDA 12 (nor 12.4-1 CUDA 12.4).
        ("12-4", None, None),
        ("12.4-1", None, None),
    ],
)
def test_package_suffixes(text: str, version: int | None, release: int | None) -> None:
    assert version_number(text) == version
    assert release_number(text) == release
