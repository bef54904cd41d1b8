"""Review R-HI2 (round 16) of c2114825: past NEAREST_IDS ids, a name with no parent still gets its nearest id.

c2114825 compared a mistyped name only with the ids under its own parent once its type held over
NEAREST_IDS (5,000) ids: a node's id has no parent, so at 16,384 nodes (the 131,072-GPU fleet) a
mistyped `Node::"su0000-r0-m3"` was "not compared with each of the 16,384 ids", where the base named
su0000-r0-n3; a GPU of a mistyped node (`su0000-r0-m3/gpu1`) lost its suggestion the same way. The
NEIGHBOUR_IDS (1,000) ids beside the name in sorted order are compared instead of none.

Hand derivation (inventories/mixed-fleet.yaml, NEAREST_IDS and NEIGHBOUR_IDS lowered to 8 so that its 10 nodes and 56
GPUs are "many"). Sorted nodes: a100-n0, a100-n1, h100-n0, h100-n1, mi300x-n0, mi300x-n1, rtx-n0..3.
`a100-m0` sorts first (m < n): the 4 after it are compared (half of 8 each side, none before);
a100-n0 shares 6 of its 7 characters (ratio 12/14), a100-n1 5 (10/14): a100-n0, as the base says
comparing all 10. `a100-m0/gpu1`: no GPU is under a100-m0/, it sorts before a100-n0/gpu0, so
a100-n0/gpu0..gpu3 are compared; a100-n0/gpu1 shares 11 of 12 (22/24), the others 10: a100-n0/gpu1,
the base's answer too (no other GPU id differs from it in one character).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.authorization import facts

POLICY = """@id("r62-typos")
forbid (principal, action, resource)
when { resource == Node::"a100-m0" || resource == Gpu::"a100-m0/gpu1" };
"""


def test_a_name_without_its_parent_is_compared_with_its_sorted_neighbours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inventory = copy_inputs(tmp_path)
    (tmp_path / "policies" / "r62-typos.cedar").write_text(POLICY, encoding="utf-8")
    monkeypatch.setattr(facts, "NEAREST_IDS", 8)
    monkeypatch.setattr(facts, "NEIGHBOUR_IDS", 8)  # 4 each side
    _code, out, err = run_cli("verify", str(inventory), "--format", "text", env={"TOPOLOG_CACHE_DIR": ""})
    text = "\n".join(line for line in out.splitlines() if "r62-typos" in line)
    assert "did you mean 'a100-n0'?" in text, (text, err)
    assert "did you mean 'a100-n0/gpu1'?" in text, (text, err)
    assert "not compared" not in text and "no id of that type is under" not in text, text
