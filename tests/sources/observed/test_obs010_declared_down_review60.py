"""Review R-RT (round 60): a node declared down whose driver lost a GPU it ties to no declared GPU is left to its
declaration, as cbf2417 leaves a GPU declared down (or on a node declared down) to it for OBS004 and OBS006.

OBS010's fixture (tests/rules/fixtures/OBS010/fail.*): n1's file is only a lost GPU's line (0000:09:00.0, no index;
n1 declares no pci_bus_id), so OBS010 names n1. With n1 declared `state: down`, the operator already took the node
out of service: the lost GPU is why, not a second error that fails CI on an inventory that tells the truth.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

CASE = Path(__file__).resolve().parents[2] / "rules" / "fixtures" / "OBS010"


def _obs010(inventory: Path) -> list[list[str]]:
    code, out, err = run_cli(
        "verify", str(inventory), "--observed", str(CASE / "fail.observed"), "--observed-now", "2026-12-06T09:00:00Z",
        "--format", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    return [f["subjects"] for f in json.loads(out)["findings"] if f["rule"] == "OBS010"]


def test_a_node_declared_down_is_left_to_its_declaration(tmp_path: Path) -> None:
    text = (CASE / "fail.yaml").read_text()
    assert _obs010(CASE / "fail.yaml") == [["n1"]]
    down = tmp_path / "inv.yaml"
    # n1 is the fixture's first node: its `kind: node` line is the first one.
    down.write_text(text.replace("    kind: node\n", "    kind: node\n    state: down\n", 1))
    assert _obs010(down) == []
    # drained is not down: the node is still in the inventory's service, its lost GPU is news.
    drained = tmp_path / "drained.yaml"
    drained.write_text(text.replace("    kind: node\n", "    kind: node\n    state: drained\n", 1))
    assert _obs010(drained) == [["n1"]]
