"""memory_type_reading: the memory type names MEM007 judges, read as JEDEC family and generation.

Expected values are read off the names by hand: the family is the letters before the generation
digit, an X (LPDDR, GDDR) or E (HBM) suffix keeps the generation, a data rate after a hyphen or a
space is read past for DDR and LPDDR only; anything else reads as nothing (None), never a guess.
"""

from __future__ import annotations

import pytest

from verifier.facts.inventory import memory_type_reading


@pytest.mark.parametrize(
    ("name", "reading"),
    [
        ("DDR5", ("DDR", 5)),
        ("ddr4", ("DDR", 4)),
        ("DDR4-3200", ("DDR", 4)),
        ("DDR5 4800", ("DDR", 5)),
        ("DDR5-4800 MT/s", ("DDR", 5)),
        ("LPDDR5x", ("LPDDR", 5)),
        ("lpddr4x-4266", ("LPDDR", 4)),
        ("GDDR6X", ("GDDR", 6)),
        ("Hbm3e", ("HBM", 3)),
        ("HBM2E", ("HBM", 2)),
        ("HBM4", ("HBM", 4)),
    ],
)
def test_names_read_as_family_and_generation(name: str, reading: tuple[str, int]) -> None:
    assert memory_type_reading(name) == reading


@pytest.mark.parametrize(
    "name",
    # hwloc's type; no DDR5X, LPDDR6, GDDR7X or HBM4E in JEDEC's standards; a space inside the
    # name; a data rate on HBM (its stacks are not sold by MT/s grade); DDR2 (before the table).
    ["DRAM", "DDR5X", "LPDDR6", "GDDR7X", "HBM4E", "DDR 5", "HBM3-6400", "DDR2", "", "DDR5-48"],
)
def test_other_names_read_as_nothing(name: str) -> None:
    assert memory_type_reading(name) is None
