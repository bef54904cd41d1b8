"""A link written on its own (no foreach) to a decommissioned node is an error naming the removal.

Round 13 left it out without a word, as the cables a foreach writes to every node are (those go
with the node, rightly). But a single link names its end by hand: a cable still written in the
file for a node that was sent back is a stale line the operator must see, as a `parent:` naming
the removed node already is.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.inventory.loader import load_inventory_text

# n0 and n1 (count 2), n1 removed by its override on line 7; a leaf switch. Links:
# line 11: a foreach cabling every node to the leaf (n1's cable goes with n1: no error);
# line 12: one link by hand from n1 to the leaf (the stale cable: the error, at 12:5);
# line 13: one link by hand from n0 to the leaf (n0 is kept: no error).
TEXT = """apiVersion: topolog.dev/v1
objects:
  - name: "n{i}"
    kind: node
    count: 2
    labels: {role: compute}
    overrides: {n1: {remove: true}}
  - {name: leaf, kind: switch}
  - {name: spare, kind: switch}
links:
  - {a: "n{n}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..1}}
  - {a: n1, b: spare, kind: ethernet, bandwidth: 100 Gb/s}
  - {a: n0, b: spare, kind: ethernet, bandwidth: 100 Gb/s}
"""


def test_a_hand_written_link_to_a_removed_node_is_refused_at_its_line() -> None:
    with pytest.raises(TopologError) as err:
        load_inventory_text(TEXT, "t.yaml")
    assert [f"{d.location}: {d.message}" for d in err.value.diagnostics] == [
        "t.yaml:12:5: link endpoint 'n1' does not exist; an override removed it ('remove: true'):"
        " expected nothing to name it"
    ]


def test_without_the_stale_link_the_foreach_cabling_just_leaves_the_node_out() -> None:
    lines = TEXT.splitlines(keepends=True)
    inv = load_inventory_text("".join(lines[:11] + lines[12:]), "t.yaml")
    # Objects: n0, leaf, spare (n1 removed). Links: n0-leaf (the foreach's, n1's left out), n0-spare.
    assert sorted(inv.objects) == ["leaf", "n0", "spare"]
    assert sorted((lk.a, lk.b) for lk in inv.links.values()) == [("n0", "leaf"), ("n0", "spare")]


ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"


def test_a_what_if_on_a_removed_node_names_the_removal_not_a_neighbour(tmp_path: Path) -> None:
    # dgx05 of dgx-h100-pod removed by its override. Round 13 answered "did you mean 'dgx07'?"
    # (one letter away), sending the operator to a node that is up. Now each what-if on it, or on
    # what it held, or on a cable of its NIC, says the override removed it. dgx15 (never in the
    # pod) still gets a suggestion: only removed ids lose it.
    text = POD.read_text(encoding="utf-8")
    anchor = "            overrides:\n"
    assert text.count(anchor) == 1
    path = tmp_path / "pod.yaml"
    path.write_text(text.replace(anchor, anchor + "              dgx05: {remove: true}\n"), encoding="utf-8")
    (tmp_path / "principals.yml").write_bytes((ROOT / "inventories" / "principals.yml").read_bytes())
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        'apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: j, principal: Team::"research", gpus: 8}\n',
        encoding="utf-8",
    )
    removed = "an override removed it ('remove: true')"
    for what_if, said in (
        (["--fail", "dgx05"], f"fail dgx05: the inventory has no object 'dgx05': {removed}"),
        (["--drain", "dgx05"], f"drain dgx05: the inventory has no object 'dgx05': {removed}"),
        (["--fail", "dgx05/gpu3"], f"fail dgx05/gpu3: the inventory has no object 'dgx05/gpu3': {removed}"),
        (
            ["--fail-link", "dgx05/nic0<->leaf0"],
            "the inventory has no link 'dgx05/nic0<->leaf0': an override removed 'dgx05/nic0' ('remove: true')",
        ),
    ):
        code, _out, err = run_cli("verify", str(path), "--jobs", str(jobs), *what_if)
        assert code == 2, what_if
        assert said in err and "did you mean" not in err and "Traceback" not in err, (what_if, err)
    code, _out, err = run_cli("verify", str(path), "--jobs", str(jobs), "--fail", "dgx15")
    assert code == 2 and "the inventory has no object 'dgx15'" in err and "did you mean" in err


def test_a_link_in_a_template_body_goes_with_the_device_removed() -> None:
    # The node template links its gpu1 to its nic, one link written on its own in the body: it is
    # written for every node. Node n1 removes its gpu1 by an override: that node's copy of the
    # link goes with gpu1 (the template cannot be edited for one node), no error.
    # Objects: n0, n0/gpu0, n0/gpu1, n0/nic; n1, n1/gpu0, n1/nic (n1/gpu1 removed) = 7.
    # Links: n0/gpu1<->n0/nic only.
    text = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nic, kind: nic}
    links:
      - {a: gpu1, b: nic, kind: pcie, generation: 5, lanes: 16}
objects:
  - name: "n{i}"
    template: box
    count: 2
    overrides: {n1: {devices: {gpu1: {remove: true}}}}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert sorted(inv.objects) == ["n0", "n0/gpu0", "n0/gpu1", "n0/nic", "n1", "n1/gpu0", "n1/nic"]
    assert sorted((lk.a, lk.b) for lk in inv.links.values()) == [("n0/gpu1", "n0/nic")]
