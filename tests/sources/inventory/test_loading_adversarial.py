"""Hostile inventories against issue 46's inventory-loading shortcuts (templates.py): a stamp looks
no id up while no object in the table has its node's head (Expander.object_heads); a foreach's
cable ends grown field by field (_formatted) with their positions kept per loop shape (_each_end);
a plan with nothing besides objects and links skips _stamp_rest; Inventory.objects_but as one
comprehension.

Every inventory here was also loaded by the release before these shortcuts (4925fb9), with the
same objects, links, serves, errors (text and place) and objects_but answer, as were some 20,000
generated ones; no case broke. The expected values below are worked out by hand from the text
beside them, so the tests need no other release to run.
"""

from __future__ import annotations

import itertools
import string
from pathlib import Path

import pytest
from cli_helpers import run_cli
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.model import Obj
from verifier.sources.inventory.templates import _each_end, _formatted

# Lines 1-9 of every inventory below; `objects:` is line 10, its first entry line 11.
BOX = """apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
    links:
      - {a: "gpu{g}", b: "nic{g}", kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1}}
objects:
"""
GPU = "kind: gpu, model: H100-SXM5-80GB"


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "t.yaml")
    return [f"{d.location}: {d.message}" for d in err.value.diagnostics]


# --- duplicate ids, made every way: each still reported where it is written ----------------------

TAKEN = {
    # n1's stamp makes n1/gpu0 (box's line 6) with parent n1; the object written after it (line 12)
    # has the same id at the top level (parent None).
    "a plain object after the stamp": (
        f"""  - {{template: box, name: n1}}
  - {{name: n1/gpu0, {GPU}}}
""",
        ["t.yaml:12:5: 'n1/gpu0' is in two parents: 'n1' (at t.yaml:6:9) and None"],
    ),
    # n1/gpu1 is written as a child of rack q (line 14), before node n1 (line 15) is stamped: the
    # head n1 is taken, so the stamp looks its ids up and box's n1/gpu1 (line 6) is reported.
    "an object nested in a rack before the stamp": (
        f"""  - name: q
    kind: rack
    children:
      - {{name: "n1/gpu1", {GPU}}}
  - {{template: box, name: n1}}
""",
        ["t.yaml:6:9: 'n1/gpu1' is in two parents: 'q' (at t.yaml:14:9) and 'n1'"],
    ),
    # The instance's own child gpu0 (line 14) comes after its template's plan made n1/gpu0 (line 6),
    # in the same parent n1: a duplicate; gpu9 is new.
    "an instance's own child named as its template's device": (
        f"""  - template: box
    name: n1
    children:
      - {{name: gpu0, {GPU}}}
      - {{name: gpu9, {GPU}}}
""",
        ["t.yaml:14:9: duplicate id 'n1/gpu0' (first written at t.yaml:6:9)"],
    ),
    # Node r's stamp makes r/gpu0 (parent r); node r/gpu0 (line 12, a top-level node) is that id.
    "a node named as another node's device, after it": (
        """  - {template: box, name: r}
  - {template: box, name: r/gpu0}
""",
        ["t.yaml:12:5: 'r/gpu0' is in two parents: 'r' (at t.yaml:6:9) and None"],
    ),
    # The other order: node r/gpu0 (line 11, head r) is first, so r's stamp looks its ids up and its
    # r/gpu0 (line 6) is the one reported.
    "a node named as another node's device, before it": (
        """  - {template: box, name: r/gpu0}
  - {template: box, name: r}
""",
        ["t.yaml:6:9: 'r/gpu0' is in two parents: None (at t.yaml:11:5) and 'r'"],
    ),
    # Nodes r/n0 and r/n1 (names with a slash, head r); r/n1's stamp made r/n1/nic1 (line 7).
    "an object under a node whose name holds a slash": (
        """  - {template: box, name: "r/n{i}", count: 2}
  - {name: "r/n1/nic1", kind: nic}
""",
        ["t.yaml:12:5: 'r/n1/nic1' is in two parents: 'r/n1' (at t.yaml:7:9) and None"],
    ),
    # Unicode names: nœud1's stamp made nœud1/gpu1 (line 6).
    "a unicode node name": (
        f"""  - {{template: box, name: "nœud{{i}}", count: 2}}
  - {{name: "nœud1/gpu1", {GPU}}}
""",
        ["t.yaml:12:5: 'nœud1/gpu1' is in two parents: 'nœud1' (at t.yaml:6:9) and None"],
    ),
    # Two counted entries: n0, n1 (line 11), then n1, n2, n3 (line 12, start 1): n1 is a duplicate
    # (its stamp not made again), n2 and n3 are new.
    "two counted entries that overlap": (
        """  - {template: box, name: "n{i}", count: 2}
  - {template: box, name: "n{i}", count: 3, start: 1}
""",
        ["t.yaml:12:5: duplicate id 'n1' (first written at t.yaml:11:5)"],
    ),
    # n1's override takes its gpu1 out: the id is free again, and the n1/gpu1 written at line 17
    # loads; n2/gpu1 (line 18) is still n2's (box's line 6).
    "an id an override freed, and one it did not": (
        f"""  - template: box
    name: "n{{i}}"
    count: 3
    overrides:
      n1: {{devices: {{gpu1: {{remove: true}}}}}}
  - {{name: n1/gpu1, {GPU}}}
  - {{name: n2/gpu1, {GPU}}}
""",
        ["t.yaml:17:5: 'n2/gpu1' is in two parents: 'n2' (at t.yaml:6:9) and None"],
    ),
}


@pytest.mark.parametrize("case", list(TAKEN), ids=list(TAKEN))
def test_a_taken_id_is_reported_where_it_is_written(case: str) -> None:
    objects, expected = TAKEN[case]
    assert _errors(BOX + objects) == expected


def test_an_id_an_override_freed_is_taken_by_the_object_written_later() -> None:
    # The last case above without n2/gpu1: nodes n0, n1, n2 with gpu0, gpu1, nic0, nic1 each (in
    # box's order), but n1 without gpu1 (removed), then n1/gpu1 written at the top level (parent
    # None, made by no stamp). n1 is not its plan alone; n0 and n2 are. n1's link gpu1-nic1 went
    # with the GPU.
    text = BOX + TAKEN["an id an override freed, and one it did not"][0].replace(f"  - {{name: n2/gpu1, {GPU}}}\n", "")
    inv = load_inventory_text(text, "t.yaml")
    assert list(inv.objects) == [
        *("n0", "n0/gpu0", "n0/gpu1", "n0/nic0", "n0/nic1"),
        *("n1", "n1/gpu0", "n1/nic0", "n1/nic1"),
        *("n2", "n2/gpu0", "n2/gpu1", "n2/nic0", "n2/nic1"),
        "n1/gpu1",
    ]
    assert inv.objects["n1/gpu1"].parent is None
    assert inv.objects["n1/gpu1"].origin is None
    assert inv.stamped == {"n0": "box", "n2": "box"}
    assert [lk.id for lk in inv.links.values() if lk.a.startswith("n1/")] == ["n1/gpu0<->n1/nic0"]


# --- objects_but after overrides and removals ---------------------------------------------------------

OVERRIDDEN = (
    BOX
    + """  - template: box
    name: "n{i}"
    count: 4
    overrides:
      n1: {devices: {nic0: {remove: true}}, labels: {a: b}}
      n2: {devices: {gpu0: {labels: {x: y}}}}
  - {name: spine, kind: switch}
links:
  - {a: "n{n}/nic{k}", b: spine, kind: ethernet, bandwidth: 100 Gb/s, foreach: {n: 0..3, k: 0..1}}
"""
)


def test_objects_but_keeps_overridden_nodes_in_table_order() -> None:
    # n1 (a NIC removed) and n2 (a GPU relabelled) are not their plan alone: only n0 and n3 are
    # stamped whole. Leaving those two out keeps their node objects and everything else in table
    # order: n0, n1 and its four devices but nic0, n2 and its four, n3, spine.
    inv = load_inventory_text(OVERRIDDEN, "t.yaml")
    assert inv.stamped == {"n0": "box", "n3": "box"}
    assert [o.id for o in inv.objects_but({"n0", "n3"})] == [
        *("n0", "n1", "n1/gpu0", "n1/gpu1", "n1/nic1"),
        *("n2", "n2/gpu0", "n2/gpu1", "n2/nic0", "n2/nic1"),
        *("n3", "spine"),
    ]
    # The cabling: 4 nodes x 2 NICs, less n1/nic0's (removed), in foreach order (n, then k).
    cables = [lk.id for lk in inv.links.values() if lk.b == "spine"]
    assert cables == [f"n{n}/nic{k}<->spine" for n in range(4) for k in range(2) if (n, k) != (1, 0)]
    assert inv.objects["n2/gpu0"].labels["x"] == "y"


# --- foreach formats: each cable end what str.format of its combination gives --------------------------

FORMATS = """apiVersion: topolog.dev/v1
objects:
  - {name: "s{i}", kind: switch, count: 12}
  - {name: "p{i:02d}", kind: switch, count: 2}
  - {name: "x{i:x}", kind: switch, count: 12}
  - {name: "u{{a}}", kind: switch}
  - {name: ü, kind: switch}
links:
  - {a: "p{i:02d}", b: "s{j}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, j: [3]}}
  - {a: "x{i:x}", b: "s{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: [10, 11]}}
  - {a: "s{j}", b: "x{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, j: 4..5}}
  - {a: "s{i}{i}", b: p00, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: [1]}}
  - {a: "s{k}", b: "p{i:02d}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, j: 0..2, k: [7]}}
  - {a: "{w}", b: "s{i}", kind: ethernet, bandwidth: 100 Gb/s, foreach: {w: ["/p01", "u{a}", ü], i: [6]}}
"""


def test_foreach_ends_in_every_format() -> None:
    # Objects: s0..s11; p00, p01 ({i:02d}); x0..x9, xa, xb ({i:x}); u{a} ({{ }} is a literal brace); ü.
    # Links, in the order written, each foreach in product order (its first variable outermost):
    # - p{i:02d} to s{j}, j only 3: p00<->s3, p01<->s3;
    # - x{i:x} to s{i} over 10, 11: xa<->s10, xb<->s11 (one variable in both ends);
    # - s{j} to x{i}, fields out of the loop's order: (i, j) = (0, 4), (0, 5), (1, 4), (1, 5);
    # - s{i}{i} over [1]: s11<->p00 (a variable twice in one end);
    # - s{k} to p{i:02d}, j unused with 3 values: each (i, k) three times, the repeats numbered;
    # - {w} over words: "/p01" is absolute (p01), "u{a}" a value taken as it is (no pattern), ü.
    inv = load_inventory_text(FORMATS, "t.yaml")
    assert list(inv.links) == [
        *("p00<->s3", "p01<->s3"),
        *("xa<->s10", "xb<->s11"),
        *("s4<->x0", "s5<->x0", "s4<->x1", "s5<->x1"),
        "s11<->p00",
        *("s7<->p00", "s7<->p00#2", "s7<->p00#3", "s7<->p01", "s7<->p01#2", "s7<->p01#3"),
        *("p01<->s6", "u{a}<->s6", "ü<->s6"),
    ]
    # Ends of the foreach loops made in one pass (all but the last: a form that starts with a field
    # may or may not be absolute, so {w} is rendered cable by cable) are their objects' own id
    # strings, not a copy per cable.
    for lk in list(inv.links.values())[:-3]:
        assert lk.a is inv.objects[lk.a].id and lk.b is inv.objects[lk.b].id


FOREACH_FAULTS = {
    # {i:X} renders 10 as "A": xA is no object (xa is, from {i:x}); xB is its one more copy. No
    # suggestion: xA shares one of its two characters with xa (difflib's ratio 0.5, under 0.6).
    "an upper-case hex end": (
        """objects:
  - {name: "x{i:x}", kind: switch, count: 12}
  - {name: leaf, kind: switch}
links:
  - {a: "x{i:X}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: [10, 11]}}
""",
        ["t.yaml:6:5: link endpoint 'xA' does not exist (and 1 more copy)"],
    ),
    # w runs over 0 and the word x: {w:02d} cannot format x (reported as such), and s00 is no object
    # (s0 is).
    "a number format over a word": (
        """objects:
  - {name: "s{i}", kind: switch, count: 3}
links:
  - {a: "s{w:02d}", b: s2, kind: ethernet, bandwidth: 100 Gb/s, foreach: {w: [0, x]}}
""",
        [
            "t.yaml:5:5: endpoint 's{w:02d}': {w:02d} formats a number, but w is the text 'x'",
            "t.yaml:5:5: link endpoint 's00' does not exist; did you mean 's0'?",
        ],
    ),
    # foreach values that draw no cable: an empty list and a count of 0 drew nothing while the line
    # stayed (as an empty range and count: 0 are refused). Each is named at its variable's key: the `i` of
    # `foreach: {i: ...}`, column 73 of the cable's line (line 6 with the apiVersion line added).
    "an empty list of values": (
        """objects:
  - {name: "s{i}", kind: switch, count: 3}
  - {name: leaf, kind: switch}
links:
  - {a: "s{i}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: []}}
""",
        [
            "t.yaml:6:73: foreach 'i' of link s{i} - leaf: the list is empty; expected at least one value"
            " (it would make no link)"
        ],
    ),
    "a count of 0": (
        """objects:
  - {name: "s{i}", kind: switch, count: 3}
  - {name: leaf, kind: switch}
links:
  - {a: "s{i}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0}}
""",
        [
            "t.yaml:6:73: foreach 'i' of link s{i} - leaf: count 0 is out of range 1..10000000;"
            " expected at least one value"
        ],
    ),
    # Both ends in one node: n{n}/gpu0 to itself, for n0 and n1: a loop, the second its copy.
    "both ends the same device of one node": (
        """objects:
  - {name: "n{i}", kind: node, count: 2, children: [{name: gpu0, kind: gpu, model: H100-SXM5-80GB}]}
links:
  - {a: "n{n}/gpu0", b: "n{m}/gpu0", kind: nvlink, generation: 4, count: 2, foreach: {n: 0..1, m: 0..1}}
""",
        ["t.yaml:5:5: link 'n0/gpu0<->n0/gpu0' connects 'n0/gpu0' to itself (and 1 more copy)"],
    ),
    # A template's foreach names nvsw0, which its node lacks: one report for both nodes' 3 cables
    # each (g over 0..2; gpu2 is missing too, but the first missing end is what is named).
    "a template's cable to a device it does not have": (
        """templates:
  box:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvlink, generation: 4, count: 2, foreach: {g: 0..2}}
objects:
  - {template: box, name: "n{i}", count: 2}
""",
        ["t.yaml:8:9: link endpoint 'n0/nvsw0' does not exist (and 3 more copies)"],
    ),
}


@pytest.mark.parametrize("case", list(FOREACH_FAULTS), ids=list(FOREACH_FAULTS))
def test_foreach_faults_are_reported_where_written(case: str) -> None:
    text, expected = FOREACH_FAULTS[case]
    assert _errors("apiVersion: topolog.dev/v1\n" + text) == expected


def test_a_top_level_foreach_taking_stamped_links_ids_numbers_its_own() -> None:
    # n0 and n1 are stamped whole; their template links (n{i}/gpu{g}<->n{i}/nic{g}) wait until read.
    # The foreach at line 14 makes n1's two ids again (g outermost, n only 1; fields out of the
    # loop's order): the waiting links are made first, in their places, so the foreach's cables are
    # the ones numbered #2, after them.
    text = (
        BOX
        + """  - {template: box, name: "n{i}", count: 2}
links:
  - {a: "n{n}/gpu{g}", b: "n{n}/nic{g}", kind: pcie, generation: 5, lanes: 16, foreach: {g: 0..1, n: [1]}}
"""
    )
    inv = load_inventory_text(text, "t.yaml")
    assert [(lk.id, lk.origin) for lk in inv.links.values()] == [
        ("n0/gpu0<->n0/nic0", "n0"),
        ("n0/gpu1<->n0/nic1", "n0"),
        ("n1/gpu0<->n1/nic0", "n1"),
        ("n1/gpu1<->n1/nic1", "n1"),
        ("n1/gpu0<->n1/nic0#2", None),
        ("n1/gpu1<->n1/nic1#2", None),
    ]


def test_braces_in_node_names_reach_their_cables() -> None:
    # "n{{{i}}}" names n{0} and n{1}; the cables' ends are written the same way, with nic{j}: each
    # node's two NICs to leaf, in (i, j) order.
    text = (
        BOX
        + """  - {template: box, name: "n{{{i}}}", count: 2}
  - {name: leaf, kind: switch}
links:
  - {a: "n{{{i}}}/nic{j}", b: leaf, kind: ethernet, bandwidth: 100 Gb/s, foreach: {i: 0..1, j: 0..1}}
"""
    )
    inv = load_inventory_text(text, "t.yaml")
    assert inv.stamped == {"n{0}": "box", "n{1}": "box"}
    assert [lk.id for lk in inv.links.values() if lk.b == "leaf"] == [
        "n{0}/nic0<->leaf",
        "n{0}/nic1<->leaf",
        "n{1}/nic0<->leaf",
        "n{1}/nic1<->leaf",
    ]


# --- what a stamp makes besides objects and links (_stamp_rest) ---------------------------------------


def test_serves_and_promises_of_a_template_reach_every_node() -> None:
    # soc's plan has serves (mem serves c0 and c1; l3 serves c1) and promises (the node: nvlink_domain):
    # each of n0, n1, n2 gets them under its own id, but n1's override took c1 out, and with it
    # every serve naming n1/c1.
    text = """apiVersion: topolog.dev/v1
templates:
  soc:
    kind: node
    promises: [nvlink_domain]
    children:
      - {name: "c{i}", kind: cpu, count: 2}
      - {name: mem, kind: memory, type: LPDDR5, size: 24 GB, bandwidth: 100 GB/s, serves: [c0, c1]}
      - {name: l3, kind: cache, level: 3, type: system, size: 8 MiB, serves: [c1]}
objects:
  - template: soc
    name: "n{i}"
    count: 3
    overrides: {n1: {devices: {c1: {remove: true}}}}
"""
    inv = load_inventory_text(text, "t.yaml")
    assert inv.serves == [
        ("n0/mem", "n0/c0"),
        ("n0/mem", "n0/c1"),
        ("n0/l3", "n0/c1"),
        ("n1/mem", "n1/c0"),
        ("n2/mem", "n2/c0"),
        ("n2/mem", "n2/c1"),
        ("n2/l3", "n2/c1"),
    ]
    assert inv.promises == {"n0": ("nvlink_domain",), "n1": ("nvlink_domain",), "n2": ("nvlink_domain",)}
    assert inv.stamped == {"n0": "soc", "n2": "soc"}


def test_a_template_serving_a_missing_device_is_reported_once() -> None:
    # mem serves c9, which soc does not make: one report at mem's line (7), n1's as its copy.
    text = """apiVersion: topolog.dev/v1
templates:
  soc:
    kind: node
    children:
      - {name: "c{i}", kind: cpu, count: 2}
      - {name: mem, kind: memory, type: LPDDR5, size: 24 GB, bandwidth: 100 GB/s, serves: [c0, c9]}
objects:
  - {template: soc, name: "n{i}", count: 2}
"""
    assert _errors(text) == ["t.yaml:7:9: 'serves' names 'n0/c9', which does not exist (and 1 more copy)"]


def test_the_cli_reports_a_taken_id_with_its_place(tmp_path: Path) -> None:
    # The first case of TAKEN through `topolog verify`: exit 2, the file, line and message.
    path = tmp_path / "t.yaml"
    path.write_text(BOX + TAKEN["a plain object after the stamp"][0], encoding="utf-8")
    code, _out, err = run_cli("verify", str(path), "--format", "json")
    assert code == 2
    assert f"{path}:12:5: 'n1/gpu0' is in two parents: 'n1' (at {path}:6:9) and None" in err
    assert "Traceback" not in err


# --- the shortcuts against their slow forms, on generated forms ---------------------------------------

_TEXT = st.text(alphabet="ab/{}:ü-_0", max_size=4)
_INT = st.integers(min_value=-300, max_value=300)
_WORD = st.text(alphabet="xyz{}/ü:", min_size=0, max_size=3)


@st.composite
def _forms(draw: st.DrawFn) -> tuple[str, list[list[int | str]]]:
    """A form as _positional writes one (literal braces doubled, fields {j} or {j:spec}) and the
    values of each loop variable: numbers, or words where no field of it has a spec."""
    n = draw(st.integers(min_value=0, max_value=3))
    words = [draw(st.booleans()) for _ in range(n)]
    sub: list[list[int | str]] = [list(draw(st.lists(_WORD if words[j] else _INT, max_size=3))) for j in range(n)]
    parts: list[str] = []
    for _ in range(draw(st.integers(min_value=0, max_value=4))):
        parts.append(draw(_TEXT).replace("{", "{{").replace("}", "}}"))
        if n:
            j = draw(st.integers(min_value=0, max_value=n - 1))
            spec = "" if words[j] else draw(st.sampled_from(["", "02d", "x", "X", "3", "03x"]))
            parts.append(f"{{{j}:{spec}}}" if spec else f"{{{j}}}")
    parts.append(draw(_TEXT).replace("{", "{{").replace("}", "}}"))
    return "".join(parts), sub


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_forms())
@example(("p{0:02d}/n{1:x}-{2}}}", [[0, 7], [10, -255], ["ü", "{", "/"]]))
@example(("s{0}{{x}}{1:X}", [[1, 2], []]))
def test_formatted_is_str_format_of_every_combination(form_sub: tuple[str, list[list[int | str]]]) -> None:
    # The slow form: str.format per combination, in itertools.product order. Forms with a variable
    # twice or out of order, unused variables and empty value lists are all generated.
    form, loop = form_sub
    # As _each_end passes them: a variable that no field names holds its first value alone.
    used = {int(name) for _text, name, _spec, _conv in string.Formatter().parse(form) if name is not None}
    sub = [values if j in used else values[:1] for j, values in enumerate(loop)]
    assert _formatted(form, sub) == [form.format(*combo) for combo in itertools.product(*sub)]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_forms(), st.data())
def test_each_end_is_every_combination_as_its_object(
    form_sub: tuple[str, list[list[int | str]]], data: st.DataObject
) -> None:
    # _each_end formats only the variables the form uses and spreads them over every combination
    # by positions it keeps per loop shape: against str.format of each combination of the whole
    # loop, where an end that is an object is that object's own id string. The same positions are
    # used again for a second loop of that shape with other values.
    form, loop = form_sub
    positions: dict[tuple[tuple[int, ...], frozenset[int]], list[int]] = {}
    for _round in range(2):
        texts = [form.format(*combo) for combo in itertools.product(*loop)]
        known = data.draw(st.sets(st.sampled_from(texts))) if texts else set()
        # Each object's id a copy of the text (not the same string), so that sharing shows.
        table = {t: Obj(t.encode().decode(), "switch", None, SourceLocation("t.yaml", 1, 1)) for t in known}
        ends, all_known = _each_end(form, loop, table.get, positions)
        assert ends == texts
        assert all_known == all(t in table for t in texts)
        assert all(end is table[end].id for end in ends if end in table)
        loop = [[v + 1 if isinstance(v, int) else v + "z" for v in values] for values in loop]


def test_an_override_removing_the_instance_decommissions_it_and_nothing_beside_it_is_read() -> None:
    # `n1: {remove: true}` takes n1 out with the GPU its template gave it: n0 and n0/gpu0 are left
    # (before round 13 it was refused; before that it was read and n1 stayed). Written with a change
    # beside it, the change would be to nothing: refused at that key, line 9, column 26 in
    # `      n1: {remove: true, state: down}` (6 spaces, `n1: {` to column 11, `remove: true, ` to 25).
    # `remove: false` changes nothing.
    text = """apiVersion: topolog.dev/v1
templates:
  box: {kind: node, children: [{name: gpu0, kind: gpu, model: H100-SXM5-80GB}]}
objects:
  - template: box
    name: "n{i}"
    count: 2
    overrides:
      n1: {remove: %s}
"""
    assert sorted(load_inventory_text(text % "true", "t.yaml").objects) == ["n0", "n0/gpu0"]
    assert _errors(text % "true, state: down") == [
        "t.yaml:9:26: override 'n1' has 'remove: true' and 'state': a removed instance has nothing left to"
        " change; expected 'remove: true' alone (or no 'remove')"
    ]
    assert sorted(load_inventory_text(text % "false", "t.yaml").objects) == ["n0", "n0/gpu0", "n1", "n1/gpu0"]
