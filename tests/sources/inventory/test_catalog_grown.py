"""An inventory that defines a model the built-in catalogue later gained still loads (R-FP59).

The shipped mixed-fleet inventory defines NVSwitch-Gen2 and EPYC-7742 itself; both are now in the
catalogue. A definition with the catalogue's figures means the same model and is kept (its lines
stay the ones findings point at); one whose figures differ is a variant and still needs a name of
its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory

# EPYC-7742 as the catalogue writes it (AMD product page): 64 cores, 8 x DDR4-3200 = 204.8 GB/s,
# 128 PCIe 4.0 lanes, 225 W, ECC.
SAME = """\
    - name: EPYC-7742
      vendor: amd
      kind: cpu
      source: "my own notes"
      cores: 64
      memory: {type: DDR4, bandwidth: 204.8 GB/s}
      pcie: {generation: 4, lanes: 128}
      power: 225 W
      features: [ecc]
"""

HEAD = "apiVersion: topolog.dev/v1\nkind: Inventory\ncatalog:\n  models:\n"
BODY = "objects:\n  - {name: n0, kind: node, children: [{name: cpu0, kind: cpu, model: EPYC-7742}]}\n"


def _write(tmp_path: Path, models: str) -> Path:
    path = tmp_path / "inv.yaml"
    path.write_text(HEAD + models + BODY, encoding="utf-8")
    return path


def test_the_catalogue_figures_written_again_are_the_same_model(tmp_path: Path) -> None:
    inv = load_inventory([_write(tmp_path, SAME)])
    model = inv.models["EPYC-7742"]
    assert model.loc.file.endswith("inv.yaml")  # the user's lines, as before the catalogue had it
    assert model.specs["cores"] == 64
    assert inv.objects["n0/cpu0"].model == "EPYC-7742"


def test_an_older_builtin_with_other_figures_is_a_variant_that_needs_its_own_name(tmp_path: Path) -> None:
    # EPYC-9654 was built in before this round (no inventory could define it): its name keeps the
    # catalogue's meaning. 280 W instead of its 360 W is another part under the same name.
    text = (
        HEAD
        + "    - name: EPYC-9654\n      vendor: amd\n      kind: cpu\n      source: mine\n"
        + "      cores: 96\n      power: 280 W\n"
        + BODY.replace("EPYC-7742", "EPYC-9654")
    )
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(TopologError) as err:
        load_inventory([path])
    assert "model 'EPYC-9654' is already defined in the built-in catalogue" in str(err.value)
    assert "inv.yaml:5:" in str(err.value)  # the model's entry: line 5 of the file (4 header lines)


def test_the_same_figures_twice_in_inventories_are_still_a_duplicate(tmp_path: Path) -> None:
    # Only the catalogue's own entry may be repeated: two files of one inventory defining the
    # model keep the rule that a name is defined once among the user's files.
    first = _write(tmp_path, SAME)
    second = tmp_path / "more.yaml"
    second.write_text(HEAD + SAME, encoding="utf-8")
    with pytest.raises(TopologError) as err:
        load_inventory([first, second])
    assert "model 'EPYC-7742' is already defined in" in str(err.value)
    assert "inv.yaml" in str(err.value).split("already defined in", 1)[1]


def test_an_inventory_of_its_own_connectx8_keeps_its_figures(tmp_path: Path) -> None:
    # R-FP60: ConnectX-8 joined the catalogue this round (1 port of 800 Gb/s, Gen6 x16). Before,
    # an HGX B300 inventory had to define it; one written as a card of 2 ports of 400 Gb/s loaded
    # then and still loads, with its own 2 ports of 400 Gb/s = 50,000 MB/s each (not the
    # catalogue's 1 port of 800 Gb/s = 100,000 MB/s).
    text = (
        HEAD
        + "    - name: ConnectX-8\n      vendor: nvidia\n      kind: nic\n      source: mine\n"
        + "      ports: {count: 2, speed: 400 Gb/s}\n"
        + "objects:\n  - {name: n0, kind: node, children: [{name: nic0, kind: nic, model: ConnectX-8}]}\n"
    )
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    model = load_inventory([path]).models["ConnectX-8"]
    assert model.loc.file.endswith("inv.yaml")
    assert (model.specs["ports"], model.specs["port_mbps"]) == (2, 50_000)
