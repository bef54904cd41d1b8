"""Ids inside a node, as docs/inventory-format.md states them ("Names inside a node", `name`).

An object nested in a node is `<node>/<name>` however deep it sits; an object placed with
`parent:` keeps its name as its id. Two sockets of one node that both name a child `core0` are
one id twice: the load stops with file:line (never a silent merge).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.inventory import load_inventory_text

SOCKETS = """\
apiVersion: topolog.dev/v1
templates:
  socket:
    kind: cpu
    children:
      - {name: "core{i}", kind: core, count: 2}
  box:
    kind: node
    children:
      - {template: socket, name: "cpu{i}", count: 2}
objects:
  - {template: box, name: "n{i}", count: 2}
"""


def _parents(text: str) -> dict[str, str | None]:
    inv = load_inventory_text(text, "t.yaml")
    return {o.id: o.parent for o in inv.objects.values() if o.kind == "core"}


def test_a_socket_template_used_twice_in_a_node_collides_at_its_line(tmp_path: Path) -> None:
    # cpu0 and cpu1 each make core0 and core1; both are n0/core0, n0/core1 (the socket adds
    # nothing to the id). The core line is line 6; the template's plan is named <box>.
    with pytest.raises(TopologError) as err:
        load_inventory_text(SOCKETS, "t.yaml")
    (diag,) = err.value.diagnostics
    assert diag.location.line == 6
    assert diag.message.startswith("'<box>/core0' is in two parents: '<box>/cpu0' (at t.yaml:6:9) and '<box>/cpu1'")
    path = tmp_path / "inv.yaml"
    path.write_text(SOCKETS)
    code, _out, err_text = run_cli("verify", str(path))
    assert code == 2
    assert f"{path}:6:9: '<box>/core0' is in two parents" in err_text


def test_each_socket_with_a_start_of_its_own_names_its_cores_apart() -> None:
    # cpu0's cores start at 0 (core0, core1), cpu1's at 2 (core2, core3); two nodes n0, n1.
    text = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: cpu0, kind: cpu, children: [{name: "core{i}", kind: core, count: 2}]}
      - {name: cpu1, kind: cpu, children: [{name: "core{i}", kind: core, count: 2, start: 2}]}
objects:
  - {template: box, name: "n{i}", count: 2}
"""
    assert _parents(text) == {f"n{n}/core{c}": f"n{n}/cpu{c // 2}" for n in range(2) for c in range(4)}


def test_seq_numbers_cores_across_every_expansion() -> None:
    # The core entry is expanded 4 times (2 nodes x 2 sockets), 2 cores each: seq runs 0..7,
    # n0's sockets taking 0..3 and n1's 4..7.
    text = SOCKETS.replace('"core{i}"', '"core{seq}"')
    assert _parents(text) == {f"n{s // 4}/core{s}": f"n{s // 4}/cpu{s % 4 // 2}" for s in range(8)}


def test_parent_is_a_full_id_so_a_name_made_of_it_repeats_the_node() -> None:
    # {parent} of a core is its socket's id, n0/cpu1; inside node n0 the name n0/cpu1-core0 gets
    # n0/ in front once more.
    text = SOCKETS.replace('"core{i}"', '"{parent}-core{i}"')
    assert "n0/n0/cpu1-core0" in _parents(text)


def test_an_object_placed_by_parent_keeps_its_name_as_its_id() -> None:
    # gpu0 is written at the top level with parent n0: its id is gpu0, not n0/gpu0. n0/gpu1 is
    # written with the node's prefix, so it is the id a nested GPU would have. n1/gpu0 is nested.
    text = """\
apiVersion: topolog.dev/v1
objects:
  - {name: n0, kind: node}
  - {name: gpu0, kind: gpu, parent: n0, model: H100-SXM5-80GB}
  - {name: n0/gpu1, kind: gpu, parent: n0, model: H100-SXM5-80GB}
  - {name: n1, kind: node, children: [{name: gpu0, kind: gpu, model: H100-SXM5-80GB}]}
"""
    inv = load_inventory_text(text, "t.yaml")
    gpus = {o.id: o.parent for o in inv.objects.values() if o.kind == "gpu"}
    assert gpus == {"gpu0": "n0", "n0/gpu1": "n0", "n1/gpu0": "n1"}
