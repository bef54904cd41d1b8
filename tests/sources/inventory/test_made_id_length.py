"""Every id the loader makes is held to the id length limit, not only the text written.

The written name of an entry is checked where it is read (specs.py); the ids made of it (a
scope and a name joined, `{i}` rendered, a node template's plan stamped under a node id, a
link id written with `id:`) are checked where they are made (templates.Expander), and refused
with the usual error (file, line of the entry that made them, the length, the limit; exit 2)
on `verify` and on `authorize`, whose lazy path (partial.py) leaves such a fleet to the whole
load.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from fleet_helpers import BOX, HEADER, authorize_cli, place

from verifier.core.errors import TopologError
from verifier.core.limits import Limits, use_limits
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files

LONG = "x" * 1011
LIMIT = "over the limit id_length = 1,024"

# Line 17 is the counted node entry that stamps template box (its `{` at column 9).
# HEADER + BOX: lines 1-10, template box of 2 GPUs and 2 NICs (tests/fleet_helpers.py).
STAMPED = (
    HEADER
    + BOX
    + """\
objects:
  - name: "s{i}"
    kind: rack
    count: 8
    start: START
    children:
      - {template: box, name: "{rack}-LONG-n{i}", count: 2}
"""
)


def stamped(start: int) -> str:
    return STAMPED.replace("START", str(start)).replace("LONG", LONG)


# By hand: racks s{i} for i = start .. start+7; a node is "{rack}-" + 1,011 x + "-n0" (or -n1), its
# GPUs add "/gpu0" (5 characters). With start 990 the racks are s990..s997 (4 characters): the
# longest GPU id, s997-<1011 x>-n0/gpu0, is 4 + 1 + 1,011 + 3 + 5 = 1,024, at the limit. With
# start 996 the racks are s996..s1003: s1000-<1011 x>-n0/gpu0 is 5 + 1 + 1,011 + 3 + 5 = 1,025,
# one past it, in racks s1000..s1003 x nodes n0, n1 = 8 stamped nodes: one error and 7 copies.
AT_LIMIT = f"s997-{LONG}-n0/gpu0"
PAST_LIMIT = f"s1000-{LONG}-n0/gpu0"
assert len(AT_LIMIT) == 1024 and len(PAST_LIMIT) == 1025
REFUSED = f"f.yaml:17:9: id '{PAST_LIMIT}' (made by template 'box') is 1,025 characters long, {LIMIT}"


def test_a_stamped_gpu_id_at_the_limit_is_accepted(tmp_path: Path) -> None:
    path = place(tmp_path, stamped(990), "f.yaml")
    code, out, err = run_cli("verify", str(path), env={"TOPOLOG_CACHE_DIR": ""})
    # Loaded: the box holds 2 GPUs where a DGX-H100 has 8 (NODE003), findings, exit 1; the
    # 1,024-character GPU is named in them.
    assert code == 1, (out, err)
    assert AT_LIMIT in out and "id_length" not in out + err
    # dan (team research) may schedule a GPU of a box labelled tenant research: allowed, exit 0,
    # with and without a cache, the lazy path's answer.
    for cache in ("", str(tmp_path / "cache")):
        code, out, err = authorize_cli(path, AT_LIMIT, cache=cache)
        assert code == 0, (cache, out, err)
    assert partial_inventory(read_files([path]), ["dan", AT_LIMIT, "{}"]) is not None


def test_a_stamped_gpu_id_one_past_the_limit_is_refused(tmp_path: Path) -> None:
    path = place(tmp_path, stamped(996), "f.yaml")
    code, out, err = run_cli("verify", str(path), env={"TOPOLOG_CACHE_DIR": ""})
    assert code == 2, (out, err)
    assert f"error: {tmp_path}/{REFUSED}" in err and "(and 7 more copies)" in err, err
    assert "Traceback" not in err
    # The request names a GPU within the limit (s997's): the lazy path cannot answer from the
    # representatives, the whole load refuses the fleet with the same error.
    within = f"s997-{LONG}-n0/gpu0"
    assert partial_inventory(read_files([path]), ["dan", within, "{}"]) is None
    for cache in ("", str(tmp_path / "cache")):
        code, out, err = authorize_cli(path, within, cache=cache)
        assert code == 2, (cache, out, err)
        assert REFUSED in err and "Traceback" not in err, err


# Not stamped: a node entry with its own children. Line 14 is the GPU entry (column 13), which
# makes the id: s1000-<1011 x>-n0 (1,020) + /gpu0 = 1,025; racks s1000..s1003 x 2 nodes x 2 GPUs
# = 16 such ids: one error, 15 copies.
PLAIN = """\
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - name: "s{i}"
    kind: rack
    count: 8
    start: 996
    children:
      - name: "{rack}-LONG-n{i}"
        kind: node
        model: DGX-H100
        count: 2
        children:
          - name: "gpu{i}"
            kind: gpu
            model: H100-SXM5-80GB
            count: 2
"""


def test_an_id_made_outside_templates_is_held_too() -> None:
    with pytest.raises(TopologError) as err:
        load_inventory_text(PLAIN.replace("LONG", LONG), "f.yaml")
    assert str(err.value) == (
        f"f.yaml:14:13: id '{PAST_LIMIT}' is 1,025 characters long, {LIMIT}; raise it with "
        "--input-limit id_length=VALUE if this input is genuine (and 15 more copies)"
    )


# A link id written with `id:` in the template, `{node}-ll`, resolved inside the node: node id,
# "/", node id, "-ll". Nodes s996-<502 x>-n0 are 4 + 1 + 502 + 3 = 510 characters: 510 + 1 +
# 510 + 3 = 1,024; s1000's are 511: 1,026, in 8 nodes. The objects (at most 511 + 5) fit.
WRITTEN_LINK = STAMPED.replace(
    "objects:\n",
    '    links:\n      - {id: "{node}-ll", a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}\nobjects:\n',
)


def test_a_written_link_id_stamped_past_the_limit_is_refused(tmp_path: Path) -> None:
    mid = "x" * 502
    path = place(tmp_path, WRITTEN_LINK.replace("START", "996").replace("LONG", mid), "f.yaml")
    node = f"s1000-{mid}-n0"
    message = f"f.yaml:19:9: id '{node}/{node}-ll' (made by template 'box') is 1,026 characters long, {LIMIT}"
    within = f"s997-{mid}-n0/gpu0"
    # The representatives (s996, s998: s997 is asked for) make 1,024-character link ids; only the
    # plain racks' are longer: the lazy path must not answer.
    assert partial_inventory(read_files([path]), ["dan", within, "{}"]) is None
    code, out, err = run_cli("verify", str(path), env={"TOPOLOG_CACHE_DIR": ""})
    assert code == 2 and message in err and "(and 7 more copies)" in err, (out, err)
    code, out, err = authorize_cli(path, within)
    assert code == 2 and message in err, (out, err)


def test_a_written_link_id_outside_a_plan_is_refused() -> None:
    # A rack's link written with `id: "{rack}-<1,016 x>"` (1,023 characters written, within):
    # rack s1000000 (start 10**6) makes it 8 + 1 + 1,016 = 1,025 characters; line 10 writes it.
    text = (
        "apiVersion: topolog.dev/v1\n"
        "objects:\n"
        '  - name: "s{i}"\n'
        "    kind: rack\n"
        "    count: 1\n"
        "    start: 1000000\n"
        "    children:\n"
        '      - {name: "{rack}-sw{i}", kind: switch, count: 2}\n'
        "    links:\n"
        f'      - {{id: "{{rack}}-{"x" * 1016}", a: "{{rack}}-sw0", b: "{{rack}}-sw1", kind: ethernet, '
        "bandwidth: 100 Gb/s}\n"
    )
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "f.yaml")
    made = f"s1000000-{'x' * 1016}"
    assert f"f.yaml:10:9: link id '{made}' is 1,025 characters long, {LIMIT}" in str(err.value)


def test_a_lowered_limit_holds_made_ids() -> None:
    # Every written name within 10 characters ("{rack}{i}" is 9), a made id past it: rack "rack0"
    # (5), its node "rack0" + "0" (6), the node's GPU "rack00/gpu0" (11), stamped by template box
    # from the node entry (line 9, its `{` at column 16).
    text = (
        "apiVersion: topolog.dev/v1\n"
        "templates:\n"
        "  box:\n"
        "    kind: node\n"
        '    children: [{name: "gpu{i}", kind: gpu, count: 1}]\n'
        "objects:\n"
        "  - name: rack0\n"
        "    kind: rack\n"
        '    children: [{template: box, name: "{rack}{i}", count: 1}]\n'
    )
    with use_limits(Limits(id_length=11)):
        assert "rack00/gpu0" in load_inventory_text(text, "f.yaml").objects  # 11 characters: within
    with use_limits(Limits(id_length=10)), pytest.raises(TopologError) as err:
        load_inventory_text(text, "f.yaml")
    assert str(err.value) == (
        "f.yaml:9:16: id 'rack00/gpu0' (made by template 'box') is 11 characters long, over the limit "
        "id_length = 10; raise it with --input-limit id_length=VALUE if this input is genuine"
    )
