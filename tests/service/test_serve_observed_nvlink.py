"""A GPU observed out of its NVLink domain (OBS002) is judged alike by `place --observed` and `serve`.

Hand derivation, on inventories/mixed-fleet.yaml: each HGX H100 GPU has 18 NVLinks to its node's four
NVSwitch chips (5 + 4 + 4 + 5). The observation written below says h100-n0's GPU 0 has 16 active (links
16 and 17 inactive): under the fabric manager's default the GPU leaves the node's NVLink domain and
reaches its seven peers over its PCIe link, Gen5 x16 to PCIe switch pcie0: 16 lanes x 3,938 MB/s =
63,008 MB/s. portable.yaml (8 GPUs, scope node) then still fits h100-n0, but its bottleneck there is
what gpu0 can send at once: 63,008 MB/s, below h100-n1's 450 GB/s over NVSwitch and the MI300X nodes'
448 GB/s (7 xGMI links of 64 GB/s), so h100-n0 ranks last of the four (without the observation it ranks
first: tests/service/test_serve_admit.py PORTABLE_RANKED).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from service.serve_helpers import ROOT, Server, copy_inputs, serving

JOB = ROOT / "inventories" / "jobs" / "portable.yaml"
RANKED = [("h100-n1", 450_000), ("mi300x-n0", 448_000), ("mi300x-n1", 448_000), ("h100-n0", 63_008)]


def _nvlink_s(inactive: dict[int, set[int]]) -> str:
    """`nvidia-smi nvlink -s` for 8 H100 with 18 links each, as the shipped dgx03 example is written."""
    lines: list[str] = []
    for g in range(8):
        lines.append(f"GPU {g}: NVIDIA H100 80GB HBM3 (UUID: GPU-5e1c{g}a2e-4d3b-8c01-9e0f-2b7a5c0d8e3{g})")
        for link in range(18):
            state = "<inactive>" if link in inactive.get(g, set()) else "26.562 GB/s"
            lines.append(f"\t Link {link}: {state}")
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("serve-observed-nvlink")
    copy_inputs(where)
    host = where / "topolog.observed" / "h100-n0"
    host.mkdir(parents=True)
    (host / "nvlink-s.txt").write_text(_nvlink_s({0: {16, 17}}), encoding="utf-8")
    return where


@pytest.fixture(scope="module")
def server(folder: Path) -> Iterator[Server]:
    with serving(folder) as s:
        yield s


def _ranked(doc: dict[str, Any]) -> list[tuple[str, int]]:
    (only,) = doc["jobs"]
    return [(p["domain"], p["bottleneck_mbps"]) for p in only["placements"]]


def test_place_observed_judges_the_gpu_out_of_its_domain_for_bandwidth_too(folder: Path) -> None:
    code, out, err = run_cli(
        "place",
        str(folder / "mixed-fleet.yaml"),
        str(JOB),
        "--observed",
        str(folder / "topolog.observed"),
        "--format",
        "json",
    )
    assert code == 0, err
    assert _ranked(json.loads(out)) == RANKED


def test_an_admit_answers_as_place_observed_does(server: Server, folder: Path) -> None:
    r = server.post("/v1/admit?limit=4", JOB.read_bytes())
    assert r.status_code == 200, r.text
    doc = r.json()
    assert doc["admitted"] is True
    assert _ranked(doc["placement"]) == RANKED
    code, out, _ = run_cli(
        "place",
        str(folder / "mixed-fleet.yaml"),
        str(JOB),
        "--observed",
        str(folder / "topolog.observed"),
        "--why-not",
        "--limit",
        "4",
        "--format",
        "json",
    )
    assert code == 0
    assert doc["placement"] == json.loads(out)
