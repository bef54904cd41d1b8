"""Review 60 of FH's LINK015, LINK017 and MEM008: real systems the round's versions called wrong.

LINK015 reads a node's CPUs also in `socket` objects (round 60). hwloc's import writes each
package as cpu<N> inside a socket<N> object, beside the package's host bridges (kind cpu, no
model), and joins the sockets by one link between the socket objects (verifier/sources/importers/
sockets.py; see `topolog import hwloc` of 32em64t-2n8c2t-pci-wholeio.xml, a two-socket Xeon E5).
An engineer who writes the CPU model on the imported packages has two joined sockets: no finding.

LINK017 reports a PCIe link written between two socket-link CPUs (expected UPI or xGMI). A PCIe
link between the CPUs of two different nodes is no socket link written another kind: it crosses
hosts, LINK018's one finding.

MEM008 asks that an SoC's unified memory serve its GPU. A package of two dies (an Apple M2 Ultra:
two M2 Max dies, each with its CPU clusters, its half of the GPU and its own LPDDR5 controllers)
may write a memory per die that serves its die: each GPU half is served by its die's memory, and
the other die's memory listing none of it leaves nothing out.

Expected findings, derived by hand from the inventories below:
- h0: cpu0 in socket0 and cpu1 in socket1, both Xeon-8570 (catalogue socket_links 4), the UPI link
  written socket0 - socket1 -> the sockets are joined: no LINK015. h1: the same but with no link
  -> LINK015 on h1/cpu0, h1/cpu1 (the check still judges sockets in socket objects).
- a, b: one Xeon-8570 each, joined CPU to CPU by PCIe across the nodes -> LINK018 on that link, and
  no LINK017 (not two sockets of one board). c: two Xeon-8570 of one node joined by PCIe only ->
  LINK017 on c/cpu0<->c/cpu1 (kind upi expected).
- mac0: M2-Ultra-Test (unified_memory) with die0 {pc0, gpu0}, die1 {pc1, gpu1}; mem0 serves
  [die0], mem1 serves [die1]: gpu0 is served by mem0, gpu1 by mem1 -> no MEM008.
- mac1: the same package, mem0 serves [pc0] and mem1 serves [pc1, gpu1]: gpu0 is served by no
  memory of its package -> MEM008 at each memory that lists clients without it, (mac1/mem0,
  mac1/gpu0) and (mac1/mem1, mac1/gpu0); gpu1 is served by mem1, so no finding names gpu1.
- gh0: a GH200 written as one package of a unified-memory model; its GPU's model gives no memory
  figure, but the instance writes its HBM3 (`memory: {size: 96 GB}`, the hbm_mb quantity), and the
  LPDDR5X serves [grace0] only -> the GPU has memory of its own: no MEM008.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

INVENTORY = """\
apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: M2-Ultra-Test, vendor: apple, kind: system, source: "test model", features: [unified_memory]}
    - {name: GH200-Package-Test, vendor: nvidia, kind: system, source: "test model", features: [unified_memory]}
    - {name: GH200-GPU-Test, vendor: nvidia, kind: gpu, source: "test model"}
objects:
  - name: h0
    kind: node
    children:
      - name: "socket{i}"
        kind: socket
        count: 2
        children:
          - {name: "cpu{i}", kind: cpu, model: Xeon-8570}
          - {name: "hb{i}", kind: cpu, labels: {role: host_bridge}}
    links:
      - {a: socket0, b: socket1, kind: upi, bandwidth: 41600 MB/s}
  - name: h1
    kind: node
    children:
      - name: "socket{i}"
        kind: socket
        count: 2
        children:
          - {name: "cpu{i}", kind: cpu, model: Xeon-8570}
  - name: a
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8570}
  - name: b
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8570}
  - name: c
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, model: Xeon-8570, count: 2}
    links:
      - {a: cpu0, b: cpu1, kind: pcie, generation: 5, lanes: 16}
  - name: mac0
    kind: node
    children:
      - name: soc
        kind: socket
        model: M2-Ultra-Test
        children:
          - {name: die0, kind: die, children: [{name: pc0, kind: cpu}, {name: gpu0, kind: gpu}]}
          - {name: die1, kind: die, children: [{name: pc1, kind: cpu}, {name: gpu1, kind: gpu}]}
          - {name: mem0, kind: memory, size: 96 GB, serves: [die0]}
          - {name: mem1, kind: memory, size: 96 GB, serves: [die1]}
    links:
      - {a: die0, b: die1, kind: d2d, bandwidth: 2.5 TB/s}
  - name: mac1
    kind: node
    children:
      - name: soc
        kind: socket
        model: M2-Ultra-Test
        children:
          - {name: die0, kind: die, children: [{name: pc0, kind: cpu}, {name: gpu0, kind: gpu}]}
          - {name: die1, kind: die, children: [{name: pc1, kind: cpu}, {name: gpu1, kind: gpu}]}
          - {name: mem0, kind: memory, size: 96 GB, serves: [pc0]}
          - {name: mem1, kind: memory, size: 96 GB, serves: [pc1, gpu1]}
    links:
      - {a: die0, b: die1, kind: d2d, bandwidth: 2.5 TB/s}
  - name: gh
    kind: node
    children:
      - name: gh0
        kind: socket
        model: GH200-Package-Test
        children:
          - {name: grace0, kind: cpu, model: Grace-72C}
          - {name: gpu0, kind: gpu, model: GH200-GPU-Test, memory: {size: 96 GB, bandwidth: 4 TB/s}}
          - {name: lpddr, kind: memory, size: 480 GB, serves: [grace0]}
    links:
      - {a: grace0, b: gpu0, kind: c2c, bandwidth: 450 GB/s}
links:
  - {a: a/cpu0, b: b/cpu0, kind: pcie, generation: 5, lanes: 16}
"""

RULES = ("LINK015", "LINK017", "LINK018", "MEM008")


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_socket_object_links_cross_host_pcie_and_per_die_memory(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    got = {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule in RULES}
    assert got == {
        ("LINK015", ("h1/cpu0", "h1/cpu1")),
        ("LINK018", ("a/cpu0<->b/cpu0", "a/cpu0", "a", "b/cpu0", "b")),
        ("LINK017", ("c/cpu0<->c/cpu1", "c/cpu0", "c/cpu1")),
        ("MEM008", ("mac1/mem0", "mac1/gpu0")),
        ("MEM008", ("mac1/mem1", "mac1/gpu0")),
    }


# NODE013 beside NODE002. Node type t: two EPYC-9654 (catalogue max_sockets 2) joined by xGMI;
# nodes n0..n3 of it, n2's cpu1 swapped to a Ryzen-9-7950X (max_sockets 1) by an override. The type
# is right (2 sockets of a 2P part); n2 holds a CPU of another model than its type declares ->
# NODE002 on (n2/cpu1, n2), the one cause; no NODE013 (2 CPUs is the type's count, not the Ryzen's
# board: the round's version also reported NODE013 on n2/cpu1 "in node type t").
SWAPPED = """\
apiVersion: topolog.dev/v1
templates:
  t:
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, model: EPYC-9654, count: 2}
    links:
      - {a: cpu0, b: cpu1, kind: xgmi, count: 4, bandwidth: 256 GB/s}
objects:
  - name: r
    kind: rack
    children:
      - {template: t, name: "n{i}", count: 4, overrides: {n2: {devices: {cpu1: {model: Ryzen-9-7950X}}}}}
"""


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_cpu_swapped_by_override_is_node002_alone(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(SWAPPED, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    got = {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule in ("NODE002", "NODE013")}
    assert got == {("NODE002", ("n2/cpu1", "n2"))}
