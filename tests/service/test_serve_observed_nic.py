"""A NIC port observed down (OBS103) is judged alike by `place --observed` and `serve`'s admit.

Hand derivation, on inventories/mixed-fleet.yaml and the shipped ibstat of mi300x-n0
(inventories/observed/mixed-fleet/mi300x-n0/ibstat.txt): each MI300X node has 8 GPUs and 8
ConnectX-7 NICs, GPUs 2k, 2k+1 and NICs 2k, 2k+1 under PCIe switch k, every NIC cabled to
euw-mi300x-leaf at 400 Gb/s = 50,000 MB/s; a GPU's fabric share is its switch's 2 NICs over its 2
GPUs: 50,000 MB/s. The NICs carry no `name` label, so `mlx5_k` is nick. ibstat says mlx5_5's port
is `Down`/`Polling` while nic5's cable is declared working (OBS103): GPUs 4 and 5, whose nearest
NICs (switch 2's, nic4 and nic5) include it, count a fabric share of 0 (rules/observed/lib/
out_of_service.dl). A job of 8 GPUs on one node needing 400 Gb/s each then finds 6 on mi300x-n0
and 8 on mi300x-n1. carol is in team hpc only, which policies/fp64.cedar gives the MI300X nodes
alone, so mi300x-n1 is the one placement, its bottleneck 7 xGMI links of 64 GB/s: 448,000 MB/s.
Without the observation both MI300X nodes place it.

`serve` must answer so too, on its prepared evaluation (verifier/service/placing.py) and on the
path that places from scratch (a rail-aligned job: verifier/service/gate.py), reading the
revision's own copy of the observations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import ROOT, copy_inputs

from verifier.service.config import ServeConfig
from verifier.service.gate import admit_doc
from verifier.service.revision import OBSERVED_DIR, Revision, build_revision

IBSTAT = ROOT / "inventories" / "observed" / "mixed-fleet" / "mi300x-n0" / "ibstat.txt"
JOB = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: allreduce-node
    principal: User::"carol"
    gpus: 8
    topology:
      scope: node
      min_network_bandwidth: 400 Gb/s
"""
RAIL_JOB = JOB.replace("      min_network_bandwidth", "      rail_aligned: true\n      min_network_bandwidth")


def _ranked(doc: object) -> list[tuple[str, int]]:
    assert isinstance(doc, dict)
    (only,) = doc["jobs"]
    return [(p["domain"], p["bottleneck_mbps"]) for p in only["placements"]]


def _revision(folder: Path, observed: bool) -> Revision:
    inventory = copy_inputs(folder)
    if observed:
        host = folder / OBSERVED_DIR / "mi300x-n0"
        host.mkdir(parents=True)
        shutil.copy(IBSTAT, host / "ibstat.txt")
    return build_revision(ServeConfig((inventory,)))


def _place(folder: Path, job: Path, observed: bool) -> dict[str, Any]:
    more = ["--observed", str(folder / OBSERVED_DIR)] if observed else []
    code, out, err = run_cli(
        "place", str(folder / "mixed-fleet.yaml"), str(job), *more, "--why-not", "--format", "json"
    )
    assert code == 0, err
    doc: dict[str, Any] = json.loads(out)
    return doc


@pytest.mark.parametrize("text", [JOB, RAIL_JOB], ids=["prepared", "from-scratch"])
def test_an_admit_leaves_out_gpus_whose_nic_port_is_observed_down(tmp_path: Path, text: str) -> None:
    job = tmp_path / "job.yaml"
    job.write_text(text)
    revision = _revision(tmp_path / "served", observed=True)
    doc = admit_doc(revision, text.encode())
    assert doc["admitted"] is True, doc
    assert _ranked(doc["placement"]) == [("mi300x-n1", 448_000)]
    # The same answer as `place --observed` on the same files, why-not included.
    assert doc["placement"] == _place(tmp_path / "served", job, observed=True)
    if text is JOB:
        assert revision.placing.describe()["admits"] == 1  # answered by the prepared evaluation
    else:
        assert revision.placing.describe()["admits"] == 0  # rail alignment: placed from scratch


def test_without_the_observation_both_mi300x_nodes_place_it(tmp_path: Path) -> None:
    revision = _revision(tmp_path, observed=False)
    doc = admit_doc(revision, JOB.encode())
    assert _ranked(doc["placement"]) == [("mi300x-n0", 448_000), ("mi300x-n1", 448_000)]
