"""Hostile and subtly broken fleets: `authorize` without a cache answers as the whole load does.

verifier/sources/inventory/partial.py expands only the instances of a counted top-level entry
that a request names, plus two representatives, and takes every other (plain) instance to be a
representative with its name written in; verifier/authorization/lazy.py decides from that.
Each case below is one attempt to make the plain instances differ from that picture (a fault
in one far instance, ids that collide only for some names, an index written two ways, cables
checked per axis, anchors, several files, policies and principals naming far entities). The
truth is the inventory loaded whole: the lazy answer (exit, decision, reasons, or the refusal's
message) must be the same, and where the case says by hand that the whole load refuses, both
refuse. Two cases broke the lazy path before its fix (an instance index written with another
format than in the name: `{i:03d}` beside `{i}`, `{i:X}` beside `{i:x}`); they also run from
the CLI.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from fleet_helpers import BOX, HEADER, POLICIES, PRINCIPALS, Request, authorize_cli, lazy, pod_fleet, whole

from verifier.sources.inventory.partial import partial_inventory
from verifier.sources.inventory.raw_files import read_files

IB = "kind: infiniband, bandwidth: 400 Gb/s"
DAN: list[Request] = [("dan", "schedule", "p0-r0-n0/gpu0", {})]

# 8 pods p0..p7 x 2 racks x 2 nodes (template box: 2 GPUs, 2 NICs), 2 leaves a pod, one spine;
# overrides in p0 and p3. A request about p0 expands p0 and p3 (override keys), p1 and p2 are
# the representatives, p4..p7 plain.
FLEET = pod_fleet(8)
TOP = "\nlinks:\n"
POD_LINK = '      - {a: "{pod}-leaf0", b: /spine0,'
SPINE = "  - {name: spine0,"


def fleet(*edits: tuple[str, str], base: str = FLEET) -> str:
    """`base` with each (old, new) replaced; old must be written exactly once."""
    for old, new in edits:
        assert base.count(old) == 1, old
        base = base.replace(old, new)
    return base


def pods(name: str, count: int, start: int, leaf: str, extra: str = "") -> str:
    """Pods named `name` (count, start) of 2 racks x 2 box nodes and one switch named `leaf`."""
    return (
        HEADER
        + BOX
        + f"""\
objects:
  - name: "{name}"
    kind: pod
    count: {count}
    start: {start}
    children:
      - name: "{{pod}}-r{{i}}"
        kind: rack
        count: 2
        children:
          - {{template: box, name: "{{rack}}-n{{i}}", count: 2}}
      - {{name: "{leaf}", kind: switch, model: QM9700}}
  - {{name: spine0, kind: switch, model: QM9700}}
{extra}"""
    )


# Racks s0..s7 of two box nodes each, as a YAML anchor `unit` (names s, not u: "u1" is in "gpu1").
UNITS = (
    HEADER
    + BOX
    + """\
objects:
  - &unit
    name: "s{i}"
    kind: rack
    count: 8
    children:
      - {template: box, name: "{rack}-n{i}", count: 2}
"""
)
S0: list[Request] = [("dan", "schedule", "s0-n0/gpu0", {})]
# The same racks inside one uncounted region pod.
REGION = (
    HEADER
    + BOX
    + """\
objects:
  - name: region
    kind: pod
    children:
      - name: "s{i}"
        kind: rack
        count: 8
        children:
          - {template: box, name: "{rack}-n{i}", count: 2}
"""
)
LONG = "x" * 1011  # s996-<1011 x>-n0/gpu0 is 1,024 characters: the id length limit

# (id, files, requests, whole load refuses (worked out by hand), policy added, principals text)
Case = tuple[str, dict[str, str], list[Request], bool, str | None, str | None]
CASES: list[Case] = [
    ("base fleet of 8 pods", {"f.yaml": FLEET}, DAN, False, None, None),
    # the index written {i:03d} beside a name {i}: pod 100's leaf is 100-100, not the 100-0100 of the
    # representatives 96, 97 ("96-096") with the name written in: the cable's end does not exist
    (
        "pad: a cable to 100-0100",
        {"f.yaml": pods("{i}", 8, 96, "{pod}-{i:03d}", f"links:\n  - {{a: 100-0100, b: spine0, {IB}}}\n")},
        [("dan", "schedule", "98-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # same fleet: a top-level switch takes the id of pod 101's leaf, 101-101 (a duplicate)
    (
        "pad: a switch named 101-101",
        {"f.yaml": pods("{i}", 8, 96, "{pod}-{i:03d}", "  - {name: 101-101, kind: switch}\n")},
        [("dan", "schedule", "98-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # same fleet whole: nothing wrong, pod 98 is dan's research tenant's
    (
        "pad: unbroken",
        {"f.yaml": pods("{i}", 8, 96, "{pod}-{i:03d}")},
        [("dan", "schedule", "98-r0-n0/gpu0", {}), ("dan", "schedule", "103-r1-n1/gpu1", {})],
        False,
        None,
        None,
    ),
    # {i:X} beside a name {i:x}, pods 0x10..0x20: 0x1a's leaf is 1a-1A (equal cases for 0x10..0x19
    # and 0x20, so neither the representatives 10, 11 nor the last pod 20 shows it): a switch 1a-1A
    # is a duplicate
    (
        "hex case: a switch named 1a-1A",
        {"f.yaml": pods("{i:x}", 17, 16, "{pod}-{i:X}", "  - {name: 1a-1A, kind: switch}\n")},
        [("dan", "schedule", "12-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # same fleet: a cable to 1a-1a, which only writing the name into a representative's id makes
    (
        "hex case: a cable to 1a-1a",
        {"f.yaml": pods("{i:x}", 17, 16, "{pod}-{i:X}", f"links:\n  - {{a: 1a-1a, b: spine0, {IB}}}\n")},
        [("dan", "schedule", "12-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # {i:x} in both: pod 1a's leaf is 1a-1a, so a switch of that name is a duplicate
    (
        "hex: a switch named 1a-1a",
        {"f.yaml": pods("{i:x}", 17, 16, "{pod}-{i:x}", "  - {name: 1a-1a, kind: switch}\n")},
        [("dan", "schedule", "12-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # {i:x} beside a name {i}: 10-a is pod 10's leaf (a duplicate)
    (
        "hex leaf of decimal pods: a switch named 10-a",
        {"f.yaml": pods("{i}", 12, 0, "{pod}-{i:x}", "  - {name: 10-a, kind: switch}\n")},
        [("dan", "schedule", "0-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # pods a0..a11 with a switch "{pod}0": a1's switch is a10, the id of pod a10
    (
        "a1 + 0 is a10",
        {"f.yaml": pods("a{i}", 12, 0, "{pod}0")},
        [("dan", "schedule", "a3-r0-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    # a top-level switch named like the plain pod p6's rack p6-r0 (a duplicate)
    (
        "a switch taking a plain rack's id",
        {"f.yaml": fleet((SPINE, "  - {name: p6-r0, kind: rack}\n" + SPINE))},
        DAN,
        True,
        None,
        None,
    ),
    # ... like the plain pod p6's node p6-r0-n1 (a stamped node: its id is still written out)
    (
        "an object taking a plain node's id",
        {"f.yaml": fleet((SPINE, "  - {name: p6-r0-n1, kind: node}\n" + SPINE))},
        DAN,
        True,
        None,
        None,
    ),
    # ... like a GPU inside the plain node p6-r0-n0 (what the node's plan holds)
    (
        "an object taking a plain GPU's id",
        {"f.yaml": fleet((SPINE, "  - {name: p6-r0-n0/gpu0, kind: gpu, model: H100-SXM5-80GB}\n" + SPINE))},
        DAN,
        True,
        None,
        None,
    ),
    # every pod's leaf 0 cabled to p5's leaf 0: p5's own copy joins p5-leaf0 to itself
    (
        "pods cabled to a plain pod's leaf (self-link there)",
        {"f.yaml": fleet((POD_LINK, f'      - {{a: "{{pod}}-leaf0", b: /p5-leaf0, {IB}}}\n' + POD_LINK))},
        DAN,
        True,
        None,
        None,
    ),
    # every pod's leaf 1 cabled to p5's leaf 0: allowed (no link joins an object to itself)
    (
        "pods cabled to a plain pod's leaf",
        {"f.yaml": fleet((POD_LINK, f'      - {{a: "{{pod}}-leaf1", b: /p5-leaf0, {IB}}}\n' + POD_LINK))},
        DAN,
        False,
        None,
        None,
    ),
    # NVLink from every pod's leaf to the shared spine: the loader takes it; the lazy path leaves it to it
    (
        "pods' NVLink to the spine",
        {
            "f.yaml": fleet(
                (POD_LINK, '      - {a: "{pod}-leaf1", b: /spine0, kind: nvlink, bandwidth: 400 Gb/s}\n' + POD_LINK)
            )
        },
        DAN,
        False,
        None,
        None,
    ),
    # a top-level NVLink joining GPUs of the plain pods p5 and p6 (one NVLink domain across pods)
    (
        "NVLink joining two plain pods",
        {
            "f.yaml": fleet(
                (
                    TOP,
                    TOP
                    + '  - {a: "p{p}-r0-n0/gpu0", b: "p{q}-r0-n0/gpu1", kind: nvlink, bandwidth: 400 Gb/s,'
                    + " foreach: {p: 5..5, q: 6..6}}\n",
                )
            )
        },
        [*DAN, ("dan", "schedule", 'NvlinkDomain::"p5-r0-n0/gpu0"', {})],
        False,
        None,
        None,
    ),
    # the top-level cabling names NIC 2 of every pod's node r1-n1: the template makes NICs 0..1
    (
        "top cable to NIC 2",
        {
            "f.yaml": fleet(
                (
                    '/nic1", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..7}}',
                    '/nic2", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..7}}',
                )
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    # a cable from a plain pod's GPU to the spine: odd but loadable
    (
        "top cable from a plain GPU",
        {
            "f.yaml": fleet(
                (
                    '/nic1", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 0..7}}',
                    '/gpu1", b: spine0, kind: infiniband, bandwidth: 400 Gb/s, foreach: {p: 6..6}}',
                )
            )
        },
        DAN,
        False,
        None,
        None,
    ),
    # every leaf 1 cabled to the spine twice (a second entry): parallel cables are allowed
    (
        "cables written twice",
        {"f.yaml": fleet((TOP, TOP + f'  - {{a: "p{{p}}-leaf1", b: spine0, {IB}, foreach: {{p: 0..7}}}}\n'))},
        DAN,
        False,
        None,
        None,
    ),
    # ... three times, by an axis x that no end uses
    (
        "cables tripled by an unused axis",
        {"f.yaml": fleet((TOP, TOP + f'  - {{a: "p{{p}}-leaf1", b: spine0, {IB}, foreach: {{p: 0..7, x: 0..2}}}}\n'))},
        DAN,
        False,
        None,
        None,
    ),
    # the pod axis one too far: there is no p8
    (
        "top cable to p8",
        {"f.yaml": fleet(("foreach: {p: 0..7, l: 0..1}", "foreach: {p: 0..8, l: 0..1}"))},
        DAN,
        True,
        None,
        None,
    ),
    # the pod axis from -1: there is no p-1
    (
        "top cable to p-1",
        {"f.yaml": fleet(("foreach: {p: 0..7, l: 0..1}", "foreach: {p: -1..7, l: 0..1}"))},
        DAN,
        True,
        None,
        None,
    ),
    # the pods written p05..p07 at the top: they are p5..p7
    (
        "top cable to zero-padded pods",
        {
            "f.yaml": fleet(
                (
                    '{a: "p{p}-leaf{l}", b: spine0, ' + IB + ", foreach: {p: 0..7, l: 0..1}}",
                    '{a: "p{p:02d}-leaf{l}", b: spine0, ' + IB + ", foreach: {p: 5..7, l: 0..1}}",
                )
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    # leaf 0 of p4..p7 to leaf 1 of p4..p7: different objects for every pair
    (
        "top cables between plain pods' leaves",
        {
            "f.yaml": fleet(
                (TOP, TOP + f'  - {{a: "p{{p}}-leaf0", b: "p{{q}}-leaf1", {IB}, foreach: {{p: 4..7, q: 4..7}}}}\n')
            )
        },
        DAN,
        False,
        None,
        None,
    ),
    # a rack's label holding its pod's name, the pod's index, its own id
    (
        "label holding the pod's name",
        {"f.yaml": fleet(("        kind: rack\n", '        kind: rack\n        labels: {owner: "{pod}"}\n'))},
        DAN,
        False,
        None,
        None,
    ),
    (
        "label holding the pod's index",
        {"f.yaml": fleet(("    kind: pod\n", '    kind: pod\n    labels: {zone: "z{i}"}\n'))},
        DAN,
        False,
        None,
        None,
    ),
    # `{rack}` is set for a rack's children, not in its own labels: the loader refuses it
    (
        "label holding the rack's id",
        {"f.yaml": fleet(("        kind: rack\n", '        kind: rack\n        labels: {zone: "{rack}"}\n'))},
        DAN,
        True,
        None,
        None,
    ),
    # an override of the far pod p6's node gives it a model no catalogue has
    (
        "override: unknown model in a far node",
        {
            "f.yaml": fleet(
                ("p3-r1-n0:\n                labels: {tenant: team-nlp}", "p6-r1-n0:\n                model: NOPE")
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    # ... a quarantine label that is not a Bool
    (
        "override: bad Bool label in a far node",
        {
            "f.yaml": fleet(
                (
                    "p3-r1-n0:\n                labels: {tenant: team-nlp}",
                    "p6-r1-n0:\n                labels: {quarantine: maybe}",
                )
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    # an override of the far pod p6 itself: a bad Bool label; a good label; a pod p8 that is not
    # there; a bad state; a good one
    (
        "override: bad Bool label on a far pod",
        {
            "f.yaml": fleet(
                ("    count: 8\n", '    count: 8\n    overrides:\n      p6: {labels: {quarantine: "maybe"}}\n')
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    (
        "override: a far pod's tenant",
        {"f.yaml": fleet(("    count: 8\n", "    count: 8\n    overrides:\n      p6: {labels: {tenant: research}}\n"))},
        DAN,
        False,
        None,
        None,
    ),
    (
        "override: no pod p8",
        {"f.yaml": fleet(("    count: 8\n", "    count: 8\n    overrides:\n      p8: {labels: {tenant: research}}\n"))},
        DAN,
        True,
        None,
        None,
    ),
    (
        "override: a far pod's state bogus",
        {"f.yaml": fleet(("    count: 8\n", "    count: 8\n    overrides:\n      p6: {state: bogus}\n"))},
        DAN,
        True,
        None,
        None,
    ),
    (
        "override: a far pod down",
        {"f.yaml": fleet(("    count: 8\n", "    count: 8\n    overrides:\n      p6: {state: down}\n"))},
        [*DAN, ("dan", "schedule", "p6-r0-n0/gpu0", {})],
        False,
        None,
        None,
    ),
    # two files: the top-level cabling alone in the second
    (
        "two files: cabling in the second",
        {"a.yaml": FLEET.split(TOP)[0] + "\n", "b.yaml": HEADER + "links:\n" + FLEET.split(TOP)[1]},
        DAN,
        False,
        None,
        None,
    ),
    # ... the second holds a rack with the id of the plain p6's rack
    (
        "two files: a plain rack's id taken",
        {"a.yaml": FLEET, "b.yaml": HEADER + "objects:\n  - {name: p6-r1, kind: rack}\n"},
        DAN,
        True,
        None,
        None,
    ),
    # ... a counted entry whose names p4-leaf1..p11-leaf1 take the plain pods' leaves
    (
        "two files: a counted entry over plain leaves",
        {
            "a.yaml": FLEET,
            "b.yaml": HEADER + 'objects:\n  - {name: "p{i}-leaf1", kind: switch, model: QM9700, count: 8, start: 4}\n',
        },
        DAN,
        True,
        None,
        None,
    ),
    # ... a cable to NIC 3 of the plain node p6-r0-n0 (it has NICs 0..1), and one to its NIC 0
    (
        "two files: cable to a missing far NIC",
        {"a.yaml": FLEET, "b.yaml": HEADER + f"links:\n  - {{a: p6-r0-n0/nic3, b: spine0, {IB}}}\n"},
        DAN,
        True,
        None,
        None,
    ),
    (
        "two files: cable to a far NIC",
        {"a.yaml": FLEET, "b.yaml": HEADER + f"links:\n  - {{a: p6-r0-n0/nic0, b: spine0, {IB}}}\n"},
        DAN,
        False,
        None,
        None,
    ),
    # ... the node template in the second file; the same template in both (refused)
    (
        "two files: template in the second",
        {"a.yaml": FLEET.replace(BOX, ""), "b.yaml": HEADER + BOX},
        DAN,
        False,
        None,
        None,
    ),
    ("two files: template written twice", {"a.yaml": FLEET, "b.yaml": HEADER + BOX}, DAN, True, None, None),
    # YAML anchors: the unit entry merged again as v0..v7, again from s6 (s6, s7 twice), from s8, as is
    ("anchor: units", {"f.yaml": UNITS}, S0, False, None, None),
    ("anchor: merged as v{i}", {"f.yaml": UNITS + '  - <<: *unit\n    name: "v{i}"\n'}, S0, False, None, None),
    ("anchor: merged from s6", {"f.yaml": UNITS + "  - <<: *unit\n    start: 6\n"}, S0, True, None, None),
    ("anchor: merged from s8", {"f.yaml": UNITS + "  - <<: *unit\n    start: 8\n"}, S0, False, None, None),
    ("anchor: aliased as is", {"f.yaml": UNITS + "  - *unit\n"}, S0, True, None, None),
    # the counted racks nested in a region pod (not a top-level entry: expanded whole)
    (
        "counted racks in a region",
        {"f.yaml": REGION},
        S0,
        False,
        None,
        None,
    ),
    # two counted entries: x0..x11 and x10..x13 share x10, x11; x0..x11 and y0..y3 share nothing
    (
        "two counted entries colliding",
        {
            "f.yaml": fleet(
                (
                    SPINE,
                    '  - {name: "x{i}", kind: rack, count: 12}\n  - {name: "x1{i}", kind: rack, count: 4}\n' + SPINE,
                )
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    (
        "two counted entries",
        {
            "f.yaml": fleet(
                (SPINE, '  - {name: "x{i}", kind: rack, count: 12}\n  - {name: "y{i}", kind: rack, count: 4}\n' + SPINE)
            )
        },
        DAN,
        False,
        None,
        None,
    ),
    # ids one character longer than the limit from s1000 on (s996..s1003), and none past it (s990..s997):
    # s1000-<1011 x>-n0/gpu0 is 6 + 1,011 + 3 + 5 = 1,025 characters, so the whole load refuses
    (
        "ids past the limit from s1000 on",
        {
            "f.yaml": UNITS.replace("    count: 8\n", "    count: 8\n    start: 996\n").replace(
                '"{rack}-n{i}"', f'"{{rack}}-{LONG}-n{{i}}"'
            )
        },
        [("dan", "schedule", f"s997-{LONG}-n0/gpu0", {})],
        True,
        None,
        None,
    ),
    (
        "ids at the limit",
        {
            "f.yaml": UNITS.replace("    count: 8\n", "    count: 8\n    start: 990\n").replace(
                '"{rack}-n{i}"', f'"{{rack}}-{LONG[:-1]}-n{{i}}"'
            )
        },
        [("dan", "schedule", f"s990-{LONG[:-1]}-n0/gpu0", {})],
        False,
        None,
        None,
    ),
]

TWELVE = pod_fleet(12)
"""FLEET with 12 pods: p1 is part of p10 and p11."""
OVERRIDDEN = "              p3-r1-n0:\n                labels: {tenant: team-nlp}"
CASES += [
    # names that are not ASCII; a uid whose id is written with a JSON escape (\u03c0 for the first
    # letter) is not the entity's uid (requests.resolve writes the uid back): refused both ways
    (
        "non-ASCII pod names",
        {"f.yaml": pods("\u03c0od{i}", 8, 0, "{pod}-leaf")},
        [("dan", "schedule", "\u03c0od0-r0-n0/gpu0", {}), ("dan", "schedule", 'Gpu::"\u03c0od6-r0-n0/gpu0"', {})],
        False,
        None,
        None,
    ),
    (
        "non-ASCII pod name written escaped",
        {"f.yaml": pods("\u03c0od{i}", 8, 0, "{pod}-leaf")},
        [("dan", "schedule", 'Gpu::"\\u03c0od6-r0-n0/gpu0"', {})],
        True,
        None,
        None,
    ),
    # the fewest pods a partial inventory is made for (4: p0 asked, p1 p2 representatives, p3 plain)
    (
        "4 pods",
        {"f.yaml": pods("p{i}", 4, 0, "{pod}-leaf")},
        [*DAN, ("dan", "schedule", "p3-r0-n0/gpu1", {})],
        False,
        None,
        None,
    ),
    # ... and a switch taking the only plain pod's switch id p3-leaf
    (
        "4 pods, the plain one's id taken",
        {"f.yaml": pods("p{i}", 4, 0, "{pod}-leaf", "  - {name: p3-leaf, kind: switch}\n")},
        DAN,
        True,
        None,
        None,
    ),
    # an override of a link p6-r1-n0 does not have (nic0 - nic9)
    (
        "override of a missing link in a far node",
        {
            "f.yaml": fleet(
                (
                    OVERRIDDEN,
                    "              p6-r1-n0:\n                links:\n"
                    "                  - {a: nic0, b: nic9, state: down}",
                )
            )
        },
        DAN,
        True,
        None,
        None,
    ),
    # an override removing GPU 1 of the far node p6-r1-n0 (p6 is then expanded: its key names it)
    (
        "override removing a far GPU",
        {
            "f.yaml": fleet(
                (
                    OVERRIDDEN,
                    "              p6-r1-n0:\n                devices:\n                  gpu1: {remove: true}",
                )
            )
        },
        [*DAN, ("dan", "schedule", "p6-r1-n0", {})],
        False,
        None,
        None,
    ),
    # requests naming p1 (also in p10, p11), p10 (holds p1), Pod::"p11" and the plain pod p7
    (
        "12 pods, names inside names",
        {"f.yaml": TWELVE},
        [("dan", "schedule", r, {}) for r in ("p1-r0-n0/gpu0", "p10-r0", 'Pod::"p11"', "p7-r1-n1/gpu1")],
        False,
        None,
        None,
    ),
]

BROKEN_PEOPLE = PRINCIPALS.read_text().replace("{id: dan, teams: [research]", "{id: dan, teams: [nosuch]")
"""dan in a team that is not there: the principals file is refused."""
BAD_POLICY = '@id("x")\nforbid (principal, action, resource) when { nope };\n'
P8 = ("foreach: {p: 0..7, l: 0..1}", "foreach: {p: 0..8, l: 0..1}")
CASES += [
    # a broken principals file on a sound fleet; with a fleet broken far away (no p8) the
    # inventory's problem is reported first, as when it is loaded whole
    ("principals refused", {"f.yaml": FLEET}, DAN, True, None, BROKEN_PEOPLE),
    ("principals refused, far fault first", {"f.yaml": fleet(P8)}, DAN, True, None, BROKEN_PEOPLE),
    # a policy that does not parse; with the far fault too
    ("policy refused", {"f.yaml": FLEET}, DAN, True, BAD_POLICY, None),
    ("policy refused, far fault first", {"f.yaml": fleet(P8)}, DAN, True, BAD_POLICY, None),
    # a team literal that is a far pod's name: names a team (no such team: nothing forbidden)
    (
        "policy: a team literal like a far pod",
        {"f.yaml": FLEET},
        DAN,
        False,
        '@id("x")\nforbid (principal, action, resource) when { principal.teams.contains("p6") };\n',
        None,
    ),
]

# Pods p4..p11 and a second counted entry whose objects take the ids of GPUs inside their nodes
# (stamped from the template, never made for a plain pod): duplicates, whichever instances of
# either entry are plain. A request about p4 (asked in both entries: "p4-r0-n0/gpu0" holds p4).
FROM_4 = pods("p{i}", 8, 4, "{pod}-leaf")
P4: list[Request] = [("dan", "schedule", "p4-r0-n0/gpu1", {})]
GPU = "kind: gpu, model: H100-SXM5-80GB"
CASES += [
    (
        "GPUs p0..p11-r0-n0/gpu0 of their own",
        {"f.yaml": FROM_4 + f'  - {{name: "p{{i}}-r0-n0/gpu0", {GPU}, count: 12}}\n'},
        P4,
        True,
        None,
        None,
    ),
    (
        "racks p0..p11-r0-n0 holding a gpu0",
        {
            "f.yaml": FROM_4
            + f'  - {{name: "p{{i}}-r0-n0", kind: rack, count: 12, children: [{{name: "{{rack}}/gpu0", {GPU}}}]}}\n'
        },
        P4,
        True,
        None,
        None,
    ),
    (
        "one GPU p9-r0-n0/gpu0 of its own",
        {"f.yaml": FROM_4 + f'  - {{name: "p9-r0-n0/gpu0", {GPU}}}\n'},
        P4,
        True,
        None,
        None,
    ),
]

NV = fleet(
    (
        '      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2}\n',
        '      - {name: "nic{i}", kind: nic, model: ConnectX-7, count: 2}\n'
        "    links:\n      - {a: gpu0, b: gpu1, kind: nvlink, bandwidth: 400 Gb/s}\n",
    )
)
"""FLEET with the two GPUs of each node joined by NVLink (one domain per node)."""
MANY: list[Request] = [
    ("dan", "schedule", "p0-r0-n0/gpu0", {}),
    ("olga", "drain", "p0-r0-n1", {"incident": True}),
    ("dan", "schedule", 'NvlinkDomain::"p0-r0-n0/gpu0"', {}),
    ("dan", "schedule", 'NvlinkDomain::"p6-r0-n0/gpu0"', {}),
    ("node-drainer", "drain", "p6-r1-n0", {}),
    ("dan", "schedule", 'Pod::"p7"', {}),
    ('Team::"research"', "schedule", "p5-r0", {}),
    ("ivan", "schedule", "p0-r0-n0/gpu1", {}),
]
# Policies naming far entities: their attributes and memberships must be the real ones.
POLICY_CASES: list[tuple[str, str]] = [
    # p6-r1 holds 2 nodes of 2 GPUs = 4: every request is forbidden
    ("a far rack's GPU count", 'forbid (principal, action, resource) when { Rack::"p6-r1".gpus == 4 };'),
    # p6-r1-n0 is not quarantined (no override there): this forbids nothing
    ("a far node's quarantine", 'forbid (principal, action, resource) when { Node::"p6-r1-n0".quarantined };'),
    # the GPU is in its pod p6: everything forbidden; it is not in p5: nothing
    ("a far GPU in its pod", 'forbid (principal, action, resource) when { Gpu::"p6-r1-n0/gpu0" in Pod::"p6" };'),
    ("a far GPU in another pod", 'forbid (principal, action, resource) when { Gpu::"p6-r1-n0/gpu0" in Pod::"p5" };'),
    # gpu1 shares gpu0's NVLink domain (their node's link): nothing forbidden
    (
        "a far GPU's NVLink domain",
        'forbid (principal, action, resource) unless { Gpu::"p6-r1-n0/gpu1" in NvlinkDomain::"p6-r1-n0/gpu0" };',
    ),
    # p7's tenant is research (the template's label): dan reaches hardware of that tenant
    (
        "a far pod's tenant",
        "permit (principal, action, resource)"
        ' when { resource.tenant == Pod::"p7".tenant && principal.role == "engineer" };',
    ),
    # there is no gpu7 in p6-r1-n0: the condition is false (an entity that is not there)
    ("a missing far GPU", 'forbid (principal, action, resource) when { Gpu::"p6-r1-n0/gpu7" in Node::"p6-r1-n0" };'),
]
# A team named p6 (like a far pod), dan a member: the policy reads the pod p6's real count (8).
TEAM_P6 = (
    PRINCIPALS.read_text()
    .replace("  - {id: sre}\n", "  - {id: sre}\n  - {id: p6, tenant: research}\n")
    .replace("  - {id: dan, teams: [research], role: engineer}", "  - {id: dan, teams: [research, p6], role: engineer}")
)
CASES += [(f"policy: {what}", {"f.yaml": NV}, MANY, False, f'@id("x")\n{text}\n', None) for what, text in POLICY_CASES]
CASES.append(
    (
        "principals: a team named like a far pod",
        {"f.yaml": NV},
        [*MANY, ('Team::"p6"', "schedule", "p6-r0-n0/gpu0", {})],
        False,
        '@id("x")\nforbid (principal, action, resource) when { principal in Team::"p6" && Pod::"p6".gpus == 8 };\n',
        TEAM_P6,
    )
)


def _place(
    tmp_path: Path, files: dict[str, str], policy: str | None, principals: str | None
) -> tuple[list[Path], Path]:
    if principals is None:
        shutil.copy(PRINCIPALS, tmp_path / "principals.yml")
    else:
        (tmp_path / "principals.yml").write_text(principals)
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(tmp_path / name)
    policies = POLICIES
    if policy is not None:
        policies = tmp_path / "policies"
        shutil.copytree(POLICIES, policies)
        (policies / "adversarial.cedar").write_text(policy)
    return paths, policies


@pytest.mark.parametrize(
    ("what", "files", "requests", "refused", "policy", "principals"), CASES, ids=[c[0] for c in CASES]
)
def test_the_lazy_answer_is_the_whole_loads(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    what: str,
    files: dict[str, str],
    requests: list[Request],
    refused: bool,
    policy: str | None,
    principals: str | None,
) -> None:
    monkeypatch.setenv("TOPOLOG_CACHE_DIR", "")
    paths, policies = _place(tmp_path, files, policy, principals)
    for request in requests:
        truth = whole(paths, request, policies=policies)
        assert (truth[0] == "refused") == refused, (what, truth)
        assert lazy(paths, request, policies=policies) == truth, (what, request)


# The fleets that the lazy path answered wrongly before the fix (it found no fault in them).
BROKE_BEFORE = [c for c in CASES if c[0].startswith(("pad: a", "hex case:"))]


@pytest.mark.parametrize("case", BROKE_BEFORE, ids=[c[0] for c in BROKE_BEFORE])
def test_an_index_written_two_ways_is_not_answered_partially(tmp_path: Path, case: Case) -> None:
    what, files, requests, _refused, _policy, _principals = case
    paths, _ = _place(tmp_path, files, None, None)
    who, action, resource, _context = requests[0]
    # The partial inventory is not made: the whole load, which refuses, answers.
    assert partial_inventory(read_files(paths), [who, resource, "{}"]) is None, what
    for cache in ("", str(tmp_path / "cache")):
        code, out, err = authorize_cli(paths, resource, cache=cache, principal=who, action=action)
        assert code == 2, (what, cache, out, err)
        assert "f.yaml:" in err and "Traceback" not in err, (what, err)


def test_the_same_fleet_unbroken_is_still_answered_partially(tmp_path: Path) -> None:
    # {i:x} both in the pods' names and their leaves (pods 10..20 hex): one way of writing the
    # index, so the representatives 10 and 11 stand for the plain pods and the fleet is answered
    # from a partial inventory; dan (team research) may schedule the box's GPU (tenant research).
    paths, _ = _place(tmp_path, {"f.yaml": pods("{i:x}", 17, 16, "{pod}-{i:x}")}, None, None)
    part = partial_inventory(read_files(paths), ["dan", "12-r0-n0/gpu0", "{}"])
    assert part is not None
    assert "1a-1a" in part.plain_ids and "1a-1a" not in part.inventory.objects
    code, out, err = authorize_cli(paths[0], "12-r0-n0/gpu0")
    assert code == 0, (out, err)
