"""Review of NODE012 (round 57): a node whose parts are power-capped, and written so, is held to the
parts' own figures, not their catalogue models' rated power.

The fixture cases (tests/rules/fixtures/NODE012) run both engines on small nodes; this one seeds the
shipped pod, where the check read 8 H100 at 700 W for GPUs the inventory says run at 300 W.
"""

from __future__ import annotations

from pathlib import Path

from seeded_faults import POD, Fault, check_fault

_DGX_POWER = "    power: 10.2 kW                  # DGX H100 datasheet: ~10.2 kW max system power\n"
_DGX_GPUS = '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8}\n'


def _between(text: str) -> str:
    """The DGX type's lines from its power to its GPU line, as the shipped pod writes them."""
    start = text.index(_DGX_POWER)
    return text[start : text.index(_DGX_GPUS, start) + len(_DGX_GPUS)]


def test_a_power_capped_dgx_written_with_its_caps_is_no_node012(tmp_path: Path) -> None:
    # The DGX type's 8 H100 written at a 300 W cap (the catalogue's 700 W is their maximum) and the
    # node at 3 kW. Its parts as written: 8 x 300 W + 2 Xeon-8480C x 350 W (catalogue) = 3100 W;
    # 3000 x 1000 = 3,000,000 >= 3100 x 500 = 1,550,000 (node_power_parts_min_permille) and
    # <= 3100 x 4000: no finding. Read at the catalogue's 700 W the parts were 6300 W and
    # 3,000,000 < 3,150,000 a NODE012 warning on each of the 8 DGX nodes.
    old = _between(POD.read_text(encoding="utf-8"))
    new = old.replace(_DGX_POWER, "    power: 3 kW\n").replace(
        _DGX_GPUS, '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 8, power: 300 W}\n'
    )
    check_fault(Fault(POD, old, new, frozenset()), tmp_path)
