"""NODE013 and a board's side processors written as CPUs (review of round 61's NODE013, FH2).

Round 61 counts every CPU model as a host socket unless its only PCIe root is narrower than x16
and it has no socket figures. A BMC or a DPU's Arm complex written straight in the node with a
model of the inventory's own that gives no PCIe figure (what an engineer writes: a name, a
vendor, a core count) was counted as a third socket of a two-socket EPYC or Xeon box, and
NODE013 (an error) said the EPYCs sat in a 3-socket board. Socket-to-socket links, and so
multi-socket boards, are Intel's (UPI) and AMD's (xGMI) (rules/links/lib/endpoints.dl,
socket_link_vendor); an ASPEED BMC or an NVIDIA BlueField Arm complex is of neither vendor and
has no socket figures, so it is no socket of the board: each node below holds 2 sockets, not
above the 2 of EPYC-9654 or Xeon-8570 (catalogue max_sockets 2) -> no NODE013.

Guard: a Ryzen 9 7950X (max_sockets 1) beside an Intel CPU of the inventory's own figureless
model is two host sockets: 2 > 1 -> NODE013 on the Ryzen (cpu0) alone (the Xeon W model has no
max_sockets, so it is never the capped CPU).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

BMC = """apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: AST2600, vendor: aspeed, kind: cpu, source: "ASPEED AST2600 BMC SoC", cores: 2}
objects:
  - name: n0
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, model: EPYC-9654, count: 2}
      - {name: bmc, kind: cpu, model: AST2600}
    links:
      - {a: cpu0, b: cpu1, kind: xgmi, count: 4, bandwidth: 256 GB/s}
"""

DPU_ARM = """apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: BF3-Arm, vendor: nvidia, kind: cpu, source: "BlueField-3 Arm complex", cores: 16}
objects:
  - name: n0
    kind: node
    children:
      - {name: "cpu{i}", kind: cpu, model: Xeon-8570, count: 2}
      - {name: dpuarm, kind: cpu, model: BF3-Arm}
    links:
      - {a: cpu0, b: cpu1, kind: upi, count: 4, generation: 2, bandwidth: 160 GB/s}
"""

RYZEN_AND_XEON = """apiVersion: topolog.dev/v1
catalog:
  models:
    - {name: Xeon-W-2295, vendor: intel, kind: cpu, source: "own model, no figures", cores: 18}
objects:
  - name: n0
    kind: node
    children:
      - {name: cpu0, kind: cpu, model: Ryzen-9-7950X}
      - {name: cpu1, kind: cpu, model: Xeon-W-2295}
"""


def _node013(tmp_path: Path, text: str, engine: str) -> set[tuple[str, ...]]:
    path = tmp_path / "inv.yaml"
    path.write_text(text, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {r.finding.subjects for r in report.results if r.finding.rule == "NODE013"}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
@pytest.mark.parametrize("text", [BMC, DPU_ARM], ids=["aspeed-bmc", "bluefield-arm"])
def test_a_side_processor_of_another_vendor_is_no_socket(tmp_path: Path, text: str, engine: str) -> None:
    assert _node013(tmp_path, text, engine) == set()


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_an_intel_cpu_beside_a_ryzen_is_a_second_socket(tmp_path: Path, engine: str) -> None:
    assert _node013(tmp_path, RYZEN_AND_XEON, engine) == {("n0/cpu0",)}
