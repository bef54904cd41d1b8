"""An inventory that copied a built-in model as an earlier release shipped it still loads.

The catalogue gains figures on models it already has (this round: Grace-72C's `c2c_gpus`, read by
LINK016). An inventory that had copied the Grace-72C entry of release c7f23ef word for word wrote
every figure the catalogue still has, and lacks only the new one: that is no variant of the model,
and refusing it ("already defined in the built-in catalogue") broke a file that loaded (R-FH59).
A copy that changes a figure is still a variant that needs its own name.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

HEAD = "apiVersion: topolog.dev/v1\nkind: Inventory\ncatalog:\n  models:\n"
BODY = "objects:\n  - {name: n0, kind: node, children: [{name: cpu0, kind: cpu, model: Grace-72C}]}\n"
# Grace-72C as catalog.yaml wrote it at c7f23ef: no `specs: {c2c_gpus: 2}` yet.
EARLIER = """\
    - name: Grace-72C
      vendor: nvidia
      kind: cpu
      source: "copied from topolog's catalogue"
      cores: 72
      memory: {type: LPDDR5X, size: 480 GB, bandwidth: 512 GB/s}
      scaleup: {kind: c2c, generation: 1, links: 1, bandwidth: 450 GB/s}
      power: 250 W
      features: [ecc, nvlink_c2c]
"""


def _write(tmp_path: Path, models: str) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(HEAD + models + BODY, encoding="utf-8")
    return path


def test_a_copy_of_an_earlier_catalogue_entry_loads(tmp_path: Path) -> None:
    inv = load_inventory([_write(tmp_path, EARLIER)])
    model = inv.models["Grace-72C"]
    # The inventory's own entry is used (its findings point at its lines): 72 cores as written, and
    # no c2c_gpus, which it never wrote.
    assert model.loc.file.endswith("inv.yaml")
    assert model.specs["cores"] == 72 and "c2c_gpus" not in model.specs


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ("cores: 72", "cores: 64"),  # a figure the catalogue has, changed
        ("features: [ecc, nvlink_c2c]", "features: [ecc, nvlink_c2c, fp64]"),  # a feature it lacks
        ("type: LPDDR5X", "type: DDR5"),  # another memory type
    ],
)
def test_a_copy_that_changes_a_figure_is_a_variant(tmp_path: Path, edit: str, why: str) -> None:
    with pytest.raises(TopologError) as err:
        load_inventory([_write(tmp_path, EARLIER.replace(edit, why))])
    assert "model 'Grace-72C' is already defined in the built-in catalogue; give the variant its own name" in str(
        err.value
    )
