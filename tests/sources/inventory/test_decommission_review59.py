"""Review of the decommission (2e9c1c4): a node taken out of its counted range and put back under
the same name (dgx05 sent back to the vendor, its replacement racked as dgx05 again, written as an
entry of its own since an override cannot change a template).

The removed ids stayed in the expander's removed set after the new dgx05 was made, so every link
written later to the new node (the top-level leaf cabling, foreach n 0..7, r 0..7) was silently
left out as if it ended on the removed one: the new dgx05 had no cable, and verify raised LINK010
"dgx05 is off the fabric", a finding no engineer reading the file would sign.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.inventory.loader import load_inventory
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"

# Put back at the top level, after pod0 and before the top-level `links:` that cable every NIC.
REPLACEMENT = {
    "single": "  - {name: dgx05, template: dgx-h100, parent: rack1}   # the replacement unit\n",
    "counted": "  - {name: 'dgx{i:02d}', template: dgx-h100, parent: rack1, start: 5, count: 1}\n",
    # A counted entry with no parent (nodes not in a rack yet): its first instance (dgx04, also
    # removed for this case) makes the plan, the next (dgx05) is stamped whole from it, not made
    # object by object: the put-back must be seen there too.
    "loose": "  - {name: 'dgx{i:02d}', template: dgx-h100, start: 4, count: 2}\n",
}


def _pod_with_dgx05_replaced(tmp_path: Path, how: str) -> Path:
    text = POD.read_text(encoding="utf-8")
    anchor, top_links = "            overrides:\n", "\nlinks:\n"
    assert text.count(anchor) == 1 and text.count(top_links) == 1
    gone = "              dgx05: {remove: true}   # back to the vendor\n"
    if how == "loose":
        gone += "              dgx04: {remove: true}\n"
    text = text.replace(anchor, anchor + gone)
    text = text.replace(top_links, "\n" + REPLACEMENT[how] + top_links)
    out = tmp_path / "pod.yaml"
    out.write_text(text, encoding="utf-8")
    return out


def test_a_node_put_back_under_a_removed_name_is_cabled(tmp_path: Path) -> None:
    for how in REPLACEMENT:
        inv = load_inventory([_pod_with_dgx05_replaced(tmp_path, how)])
        # The shipped pod again, by hand: 1 pod + 2 racks + 8 nodes x 29 + 8 leaves + 4 spines = 247
        # objects; 8 x 53 node links + 64 NIC cables + 32 leaf-spine links = 520 links.
        assert len(inv.objects) == 247, how
        assert len(inv.links) == 520, how
        # The new dgx05's 8 NICs, each cabled to its rail's leaf (r 0..7).
        cables = sorted((lk.a, lk.b) for lk in inv.links.values() if lk.a.startswith("dgx05/nic") and "leaf" in lk.b)
        assert cables == [(f"dgx05/nic{r}", f"leaf{r}") for r in range(8)], how
        assert inv.objects["dgx05"].parent == (None if how == "loose" else "rack1"), how
        if how == "loose":
            assert inv.objects["dgx04"].parent is None
            assert len([lk for lk in inv.links.values() if lk.a.startswith("dgx04/nic") and "leaf" in lk.b]) == 8


def test_verify_finds_the_replaced_node_on_the_fabric(tmp_path: Path) -> None:
    path = _pod_with_dgx05_replaced(tmp_path, "single")
    for engine in ("duckdb", "memory"):
        code, out, err = run_cli("verify", str(path), "--engine", engine, "--format", "json")
        # As the shipped pod: the one finding is dgx03's degraded NVLink bond (TOPO005), no LINK010.
        assert code == 1, err
        rules = sorted(f["rule"] for f in json.loads(out)["findings"])
        assert rules == ["TOPO005"], (engine, rules)


# A fleet with no `{seq}` and no `parent:` (which partial.py leaves to the whole load): node05 of
# 8 removed at the top level, and a node05 of another template written after it.
PUT_BACK_FLEET = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: put-back}
templates:
  box:
    kind: node
    children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}]
  big-box:
    kind: node
    children: [{name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}]
objects:
  - template: box
    name: "node{i:02d}"
    count: 8
    overrides:
      node05: {remove: true}
  - {template: big-box, name: node05}
"""


def test_authorize_partial_load_leaves_a_put_back_node_to_the_whole_load(tmp_path: Path) -> None:
    # authorize's partial load (partial.py) refused any removal (the whole load is the one that
    # takes it into account); a put-back empties the removed set, so it must say so on its own.
    path = tmp_path / "fleet.yaml"
    path.write_text(PUT_BACK_FLEET, encoding="utf-8")
    assert partial_inventory(read_files([path]), ["node05/gpu0"]) is None
    inv = load_inventory([path])
    # 7 boxes of 1 + 2 objects and a big box of 1 + 4: 21 + 5 = 26; node05 has 4 GPUs.
    assert len(inv.objects) == 26
    assert sorted(o for o in inv.objects if o.startswith("node05/")) == [f"node05/gpu{g}" for g in range(4)]
