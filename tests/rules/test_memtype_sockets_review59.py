"""Review 59 of FH's MEM007 and LINK015: real packages that the first versions called wrong.

MEM007 holds a typed memory to its package's catalogue memory type. Some packages carry two
families of memory: HBM on the package beside the DRAM channels. Intel's Xeon CPU Max 9480 has
64 GB of HBM2e in the package and eight DDR5-4800 channels (Intel product page, "Intel Xeon CPU
Max 9480 Processor"; Aurora's nodes run two of its 9470 sibling); a GH200 superchip written as
one package holds the Grace's LPDDR5X and the Hopper's HBM3 (NVIDIA GH200 datasheet). A model
entry names one type, so the other family is not a wrong part: not judged. A GPU package carries
its HBM or GDDR only, so a DDR memory inside a GPU stays a finding.

LINK015 asks for a link between two sockets. An inventory that models each CPU's dies (an EPYC's
I/O die, where its xGMI links leave) may write the socket link between the dies: the sockets are
joined all the same, so no finding.

Expected findings, derived by hand from the inventories below:
- n1: cpu0 (a Xeon-Max-9480, model type DDR5) holds hbm0 HBM2e and dram0 DDR5: HBM beside
  DRAM in a CPU package -> nothing. cpu1 holds dram1 DDR4: DDR 4 against DDR 5 -> MEM007 on
  n1/dram1 only (the rule still judges a generation within the DRAM family).
- n2: package gh0 (model type LPDDR5X) holds lpddr LPDDR5X and hbm HBM3 -> nothing.
- n3: an H100-PCIE-80GB (catalogue HBM2e) holding vram typed DDR5: DDR against HBM in a GPU
  package -> MEM007 on n3/vram.
- b1: two Xeon-8480C, each with one die, the UPI link written die0 - die1 -> no LINK015.
  Node b2 holds two Xeons whose only link joins a die to its own CPU -> LINK015 on b2/cpu0, b2/cpu1
  (a link inside one socket joins no two sockets).
- rack0 holds two EPYC-9654 written loose (no node): separate machines, TOPO003's finding each,
  not two sockets of one board -> no LINK015.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

INVENTORY = """\
apiVersion: topolog.dev/v1
catalog:
  models:
    - name: Xeon-Max-9480
      vendor: intel
      kind: cpu
      source: "Intel Xeon CPU Max 9480 product page: 64 GB HBM2e, 8 channels DDR5-4800"
      memory: {type: DDR5, bandwidth: 307.2 GB/s}
    - name: GH200-package
      vendor: nvidia
      kind: system
      source: "NVIDIA GH200 datasheet: Grace LPDDR5X and Hopper HBM3 in one superchip"
      memory: {type: LPDDR5X, bandwidth: 512 GB/s}
objects:
  - name: n1
    kind: node
    children:
      - name: cpu0
        kind: cpu
        model: Xeon-Max-9480
        children:
          - {name: hbm0, kind: memory, type: HBM2e, size: 64 GB}
          - {name: dram0, kind: memory, type: DDR5, size: 512 GB}
      - name: cpu1
        kind: cpu
        model: Xeon-Max-9480
        children:
          - {name: dram1, kind: memory, type: DDR4, size: 512 GB}
  - name: n2
    kind: node
    children:
      - name: gh0
        kind: socket
        model: GH200-package
        children:
          - {name: lpddr, kind: memory, type: LPDDR5X, size: 480 GB}
          - {name: hbm, kind: memory, type: HBM3, size: 96 GB}
  - name: n3
    kind: node
    children:
      - name: gpu0
        kind: gpu
        model: H100-PCIE-80GB
        children:
          - {name: vram, kind: memory, type: DDR5, size: 80 GB}
  - name: b1
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8480C, children: [{name: die0, kind: die}]}
      - {name: cpu1, kind: cpu, model: Xeon-8480C, children: [{name: die1, kind: die}]}
    links:
      - {a: die0, b: die1, kind: upi, count: 4, bandwidth: 128 GB/s}
  - name: b2
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Xeon-8480C, children: [{name: die0, kind: die}]}
      - {name: cpu1, kind: cpu, model: Xeon-8480C}
    links:
      - {a: die0, b: cpu0, kind: upi, count: 4, bandwidth: 128 GB/s}
  - name: rack0
    kind: rack
    children:
      - {name: mgmt-a, kind: cpu, model: EPYC-9654}
      - {name: mgmt-b, kind: cpu, model: EPYC-9654}
"""


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_hbm_beside_dram_die_socket_links_and_loose_cpus(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    got = {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule in ("MEM007", "LINK015")}
    assert got == {
        ("MEM007", ("n1/dram1",)),
        ("MEM007", ("n3/vram",)),
        ("LINK015", ("b2/cpu0", "b2/cpu1")),
    }
