"""Links written more than once between the same two ends (review R-PF60 of c5e6688).

c5e6688 found two links of one kind between the same ends once for TOPO002 and SCALE010
(rules/topology/lib/links.dl, parallel_link), as a row per ordered pair of such links. An inventory
may write each of a GPU's NVLinks on a line of its own (one NVLink a line, each with its own state,
instead of one line with `count: 5`): k such links between a GPU and a chip are k(k - 1) pairs, 64 a
GPU for 5, 4, 4 and 5 links to four chips. Held to the end of the evaluation, these took about 60 MB
more peak than before c5e6688 at 32,768 GPUs of that shape (whole-process peak 553-567 -> 614-630 MB;
572-574 MB with a row per link), where no pair had a finding. The relation now holds a row per link
that has such a twin; the findings of both checks on such links are unchanged (the cases below).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.session import api

ENGINES = ["memory", "duckdb"]

# One GPU and two chips: K NVLinks written one a line from the GPU to nvsw0, K more written from
# nvsw0's end, and one bonded link of 2 to nvsw1.
PARALLEL = """apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    children:
      - {{name: gpu0, kind: gpu, model: H100-SXM5-80GB}}
      - {{name: "nvsw{{i}}", kind: nvswitch, model: NVSwitch-Gen3, count: 2}}
    links:
      - {{a: gpu0, b: nvsw0, kind: nvswitch, generation: 4, foreach: {{k: 1..{k}}}}}
      - {{a: nvsw0, b: gpu0, kind: nvswitch, generation: 4, foreach: {{k: 1..{k}}}}}
      - {{a: gpu0, b: nvsw1, kind: nvswitch, generation: 4, count: 2}}
"""


def _derived_rows(path: Path, engine: str) -> tuple[dict[str, int], int]:
    with api.load(path, engine=engine) as model:
        rows = {d.name: model.engine.count(d.name) for d in model.program.declarations if not d.is_input}
        return rows, model.engine.count("link")


@pytest.mark.parametrize("engine", ENGINES)
def test_no_relation_grows_with_the_pairs_of_links_written_apart(tmp_path: Path, engine: str) -> None:
    # By hand: K = 8 gives 2 x 8 + 1 = 17 links, K = 16 gives 33: 16 links more, all between gpu0 and
    # nvsw0. A relation of a fixed number of rows per link or per end of a link grows by at most 2
    # rows a link (link_peer: one per end), 32 here. One of a row per ordered pair of the links
    # between gpu0 and nvsw0 grows by 32 x 31 - 16 x 15 = 752 (c5e6688's parallel_link).
    small, large = tmp_path / "k8.yaml", tmp_path / "k16.yaml"
    small.write_text(PARALLEL.format(k=8), encoding="utf-8")
    large.write_text(PARALLEL.format(k=16), encoding="utf-8")
    before, links_before = _derived_rows(small, engine)
    after, links_after = _derived_rows(large, engine)
    assert (links_before, links_after) == (17, 33)
    grown = {name: after[name] - before[name] for name in before if after[name] - before[name] > 32}
    assert grown == {}


def _findings(tmp_path: Path, text: str, engine: str, rule: str) -> list[str]:
    inv = tmp_path / "inv.yaml"
    inv.write_text(text, encoding="utf-8")
    code, out, err = run_cli("verify", str(inv), "--format", "json", "--engine", engine, "--fail-on", "note")
    assert code in (0, 1), err
    return sorted(f["message"] for f in json.loads(out)["findings"] if f["rule"] == rule)


# Three links with their ids set between gpu0 and pcie0 (one written from pcie0's end) and two
# between gpu0 and gpu1 of one figure, one of them another kind (nvlink).
TOPO = """apiVersion: topolog.dev/v1
objects:
  - name: n1
    kind: node
    children:
      - {name: gpu0, kind: gpu}
      - {name: gpu1, kind: gpu}
      - {name: pcie0, kind: pcie_switch}
    links:
      - {id: z9, a: gpu0, b: pcie0, kind: pcie, bandwidth: 32 GB/s}
      - {id: a1, a: pcie0, b: gpu0, kind: pcie, bandwidth: 64 GB/s}
      - {id: m5, a: gpu0, b: pcie0, kind: pcie, bandwidth: 32 GB/s}
      - {id: p1, a: gpu0, b: gpu1, kind: pcie, bandwidth: 16 GB/s}
      - {id: p2, a: gpu1, b: gpu0, kind: nvlink, bandwidth: 100 GB/s}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_topo002_names_each_pair_of_differing_links_once(tmp_path: Path, engine: str) -> None:
    # By hand: of z9 (32 GB/s), a1 (64, written the other way) and m5 (32), the pairs that differ are
    # (a1, m5) and (a1, z9), named smaller id first, each with the ends as the first link writes
    # them; z9 and m5 agree. p1 and p2 are of different kinds: no pair.
    assert _findings(tmp_path, TOPO, engine, "TOPO002") == [
        "links n1/a1 and n1/m5 both join n1/pcie0 and n1/gpu0 over pcie but declare 64000 and 32000 MB/s.",
        "links n1/a1 and n1/z9 both join n1/pcie0 and n1/gpu0 over pcie but declare 64000 and 32000 MB/s.",
    ]


# H100s (5 NVLinks a GPU to a chip at most) with links written apart to one of two chips.
CHIPS = """apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2}
      - {name: "nvsw{i}", kind: nvswitch, model: NVSwitch-Gen3, count: 2}
    links:
      - {a: gpu0, b: nvsw0, kind: nvswitch, generation: 4, count: 2}
      - {a: nvsw0, b: gpu0, kind: nvswitch, generation: 4, count: 2}
      - {a: gpu0, b: nvsw0, kind: nvswitch, generation: 4}
      - {a: gpu1, b: nvsw0, kind: nvswitch, generation: 4, count: 2, foreach: {k: 1..3}}
      - {a: gpu1, b: nvsw1, kind: nvswitch, generation: 4, foreach: {k: 1..5}}
"""


@pytest.mark.parametrize("engine", ENGINES)
def test_scale010_sums_every_link_written_apart_once(tmp_path: Path, engine: str) -> None:
    # By hand: gpu0 to nvsw0 is 2 + 2 + 1 = 5, the board's figure: nothing. gpu1 to nvsw0 is three
    # links of 2 = 6 > 5: one finding; gpu1 to nvsw1 five links of 1 = 5: nothing.
    assert _findings(tmp_path, CHIPS, engine, "SCALE010") == [
        "GPU n0/gpu1 (H100-SXM5-80GB) has 6 NVLinks to NVSwitch chip n0/nvsw0, more than the 5 its board"
        " wires from one GPU to one chip."
    ]
