"""Review of R-FP59: a model the catalogue gained this round, defined by an inventory with its own figures.

Before this round inventories had to define L40S, EPYC-7742, QM8700 and the others themselves, each
with figures of its author's choosing; the branch refused every such definition that differed from
the catalogue's by one figure (this round's own realistic dgx-a100.yaml and hgx-b200-ib-fattree.yaml,
as they stood at c7f23ef, exited 2). A grown catalogue must refuse no file that loaded.
"""

from __future__ import annotations

from pathlib import Path

from verifier.sources.inventory.catalog import builtin_models
from verifier.sources.inventory.loader import GAINED_LATER, load_inventory

HEAD = "apiVersion: topolog.dev/v1\nkind: Inventory\ncatalog:\n  models:\n"
BODY = "objects:\n  - {name: n0, kind: node, children: [{name: cpu0, kind: cpu, model: EPYC-7742}]}\n"
# The dgx-a100.yaml of c7f23ef wrote EPYC-7742 with an x16 socket-link spec the catalogue leaves out.
MINE = """\
    - name: EPYC-7742
      vendor: amd
      kind: cpu
      source: "my own notes"
      cores: 64
      pcie: {generation: 4, lanes: 128}
      power: 280 W
      specs: {socket_link_lanes: 16}
"""


def _write(tmp_path: Path, models: str) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(HEAD + models + BODY, encoding="utf-8")
    return path


def test_a_gained_model_with_other_figures_is_the_inventorys_own(tmp_path: Path) -> None:
    # R-FP59 review: an inventory written before the catalogue gained EPYC-7742 may write other
    # figures for it (this round's own realistic dgx-a100.yaml added `socket_link_lanes: 16`; its
    # QM8700 had no breakout count). It loaded before the catalogue had the name, so it still loads
    # and its own figures are the ones used: 280 W written, 280 W read (not the catalogue's 225 W).
    inv = load_inventory([_write(tmp_path, MINE)])
    model = inv.models["EPYC-7742"]
    assert model.loc.file.endswith("inv.yaml")
    assert model.specs["tdp_w"] == 280
    assert model.specs["socket_link_lanes"] == 16


def test_every_gained_name_is_a_builtin_model() -> None:
    # A name in the set that the catalogue lacks would be a slip (a rename): it would guard nothing.
    assert {m.name for m in builtin_models()} >= GAINED_LATER
