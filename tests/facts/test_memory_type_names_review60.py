"""Review 60 of FH's memory_type_reading: DDR names as written on server memory, with the module form.

Server memory is bought and listed as "DDR5-4800 RDIMM", "DDR4-3200 ECC UDIMM", "DDR5 MRDIMM", and
with the JEDEC speed bin after the data rate ("DDR4-3200AA", "DDR5-4800B"): the module form and the
bin say nothing of the generation, which the letters and digit before them state exactly. The
round's version read none of these, so a DDR4 RDIMM under a DDR5-only part went unjudged.

Expected values read off the names by hand: family = the letters before the generation digit,
generation = that digit; a module form is a DIMM's, so only DDR takes one (LPDDR is soldered, HBM
stacked: "LPDDR5X RDIMM" reads as nothing); a bin is one or two letters (three is no bin).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.facts.inventory import memory_type_reading
from verifier.session.verify_run import VerifyRun, verify


@pytest.mark.parametrize(
    ("name", "reading"),
    [
        ("DDR5-4800 RDIMM", ("DDR", 5)),
        ("DDR5 RDIMM", ("DDR", 5)),
        ("DDR4-3200 ECC UDIMM", ("DDR", 4)),
        ("ddr4-2933 lrdimm", ("DDR", 4)),
        ("DDR5 MRDIMM", ("DDR", 5)),
        ("DDR4-3200AA", ("DDR", 4)),
        ("DDR5-4800B", ("DDR", 5)),
        ("DDR5 SO-DIMM", ("DDR", 5)),
    ],
)
def test_module_and_bin_names_read(name: str, reading: tuple[str, int]) -> None:
    assert memory_type_reading(name) == reading


@pytest.mark.parametrize("name", ["LPDDR5X RDIMM", "HBM3 RDIMM", "DDR4-3200AAA", "DDR5-4800 ABC", "DDR5 DIMM X"])
def test_other_module_names_read_as_nothing(name: str) -> None:
    assert memory_type_reading(name) is None


# n0: a Xeon-8480C (catalogue memory type DDR5) with a DDR4-3200 RDIMM (DDR generation 4 against
# 5: MEM007) and a DDR5-4800 RDIMM (generation 5: nothing).
INVENTORY = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    children:
      - name: cpu0
        kind: cpu
        model: Xeon-8480C
        children:
          - {name: dimm0, kind: memory, type: "DDR4-3200 RDIMM", size: 64 GB}
          - {name: dimm1, kind: memory, type: "DDR5-4800 RDIMM", size: 64 GB}
"""


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_ddr4_rdimm_under_ddr5_part(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY, encoding="utf-8")
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    got = {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule == "MEM007"}
    assert got == {("MEM007", ("n0/dimm0",))}
