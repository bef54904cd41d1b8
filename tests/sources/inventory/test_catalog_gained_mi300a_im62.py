"""MI300A joined the built-in catalogue in round 62 (IM): an inventory that defined its own MI300A before
keeps loading with its own figures (GAINED_LATER), instead of being refused as a variant."""

from __future__ import annotations

from pathlib import Path

from verifier.sources.inventory.loader import load_inventory

OWN = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: own}
catalog:
  models:
    - name: MI300A
      vendor: amd
      kind: gpu
      source: own
      power: 600 W
objects:
  - name: n0
    kind: node
    children:
      - {name: gpu0, kind: gpu, model: MI300A}
"""


def test_an_inventorys_own_mi300a_is_kept(tmp_path: Path) -> None:
    p = tmp_path / "own.yaml"
    p.write_text(OWN)
    inv = load_inventory([p])
    # Its own entry (source "own", 600 W) is the one used, not the catalogue's (the data sheet, 550 W).
    assert inv.models["MI300A"].source == "own"
