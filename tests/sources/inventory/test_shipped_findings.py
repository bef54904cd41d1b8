"""The shipped inventories carry exactly the faults inventories/README.md documents.

Runs `topolog verify` on each shipped inventory and compares the set of (rule, subjects)
at warning or above with the list below, one entry per finding, each with how it follows
from the inventory. Add an entry here and a line to the README's "Deliberate faults and
what finds them" together.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
INVENTORIES = sorted(p.name for p in (ROOT / "inventories").glob("*.yaml"))

Key = tuple[str, tuple[str, ...]]

EXPECTED: dict[str, set[Key]] = {
    "dgx-h100-pod.yaml": {
        # TOPO005 (rules/topology/): dgx03's override leaves gpu2 - nvsw1 at count 3 of the
        # template's 4 NVLinks, state degraded. The node type declares no fabric manager mode, so
        # the default (ACCESS_LINK_FAILURE_MODE=0) takes gpu2 out of NVLink peer-to-peer: dgx03
        # keeps gpu0, 1, 3..7 as its main domain and gpu2 fell out of the promised one. One
        # error naming the degraded link and the GPU (not SCALE001: no longer a slowed link).
        ("TOPO005", ("dgx03/gpu2<->dgx03/nvsw1", "dgx03/gpu2")),
    },
    "edge-soc.yaml": set(),
    # MEM002: each Grace's LPDDR5X (512,000 MB/s) is read over C2C by its 2 GPUs: share
    # 512000 * 1000 / 1000 / 2 = 256,000 MB/s; each C2C link carries 450,000 >= 256,000. No finding.
    "gb200-nvl72.yaml": set(),
    "mixed-fleet.yaml": {
        # BW003: ConnectX-6 Dx line rate 2 x 100 Gb/s = 25,000 MB/s, but one port is cabled, at
        # 100 Gb/s: it moves 12,500 MB/s; its link is Gen4 x4 = 4 x 1969 = 7,876 MB/s;
        # 12500 * 1000 > 7876 * 1000 (nic_pcie_ratio_permille 1000).
        # The four workstations are stamped from one template line with the same figures: one
        # root cause, one finding naming the four NICs.
        ("BW003", ("rtx-n0/nic0", "rtx-n1/nic0", "rtx-n2/nic0", "rtx-n3/nic0")),
        # BW005: 2 nodes x 8 NICs x 400 Gb/s = 16 x 50,000 = 800,000 MB/s down; uplink one bond
        # of 3.2 Tb/s = 400,000 MB/s; ratio 2000/1000 > 1000 (leaf_oversubscription_permille).
        ("BW005", ("euw-h100-leaf",)),
        ("BW005", ("euw-mi300x-leaf",)),
        # PCIE001: the RTX workstations' x8/x8 is the node type's plan (no override changes it,
        # none marked degraded): no finding. AUTHZ001 is a note, below warning.
    },
}


@pytest.mark.parametrize("inventory", INVENTORIES)
def test_shipped_findings_are_the_documented_faults(inventory: str) -> None:
    result = CliRunner().invoke(
        main, ["verify", str(ROOT / "inventories" / inventory), "--format", "json", "--fail-on", "error"]
    )
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    got = {(f["rule"], tuple(f["subjects"])) for f in report["findings"] if f["severity"] in ("warning", "error")}
    assert got == EXPECTED[inventory]
