"""AUTHZ004's nearest id is not sought among every id of a fleet-sized type (HI2, round 16).

At 131,072 GPUs, difflib over every GPU id took 6-12 s per unknown name in a policy, at every verify
and at every revision `serve` prepares (on the admit thread, so admissions waited). Past NEAREST_IDS
ids (5,000; lowered to 8 here, so that the mixed fleet's 56 GPUs and 10 nodes are "many"), only the
ids under the name's own parent are compared.

Hand derivation (inventories/mixed-fleet.yaml): a100-n0 holds gpu0..gpu7. `a100-n0/gpu9` against
those eight: each shares 11 of 12 characters (ratio 22/24), a tie difflib breaks to the greatest id,
a100-n0/gpu7 (as it does over all 56: the other nodes' GPUs share fewer). `a100-m0/gpu1`: no id
starts with `a100-m0/`; the 8 ids beside it in sorted order (NEIGHBOUR_IDS, lowered to 8 too) are
compared instead (review R-HI2: it sorts first, so a100-n0/gpu0..gpu3; a100-n0/gpu1 shares 11 of 12).
`Node::"zz-n9"` has no parent, the 10 nodes are over 8, and the 4 beside it (it sorts last:
rtx-n0..rtx-n3) share under 0.6 of it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import run_cli
from service.serve_helpers import copy_inputs

from verifier.authorization import facts

POLICY = """@id("hi2-typos")
forbid (principal, action, resource)
when { resource == Gpu::"a100-n0/gpu9" || resource == Gpu::"a100-m0/gpu1" || resource == Node::"zz-n9" };
"""


def test_nearest_is_sought_under_the_parent_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inventory = copy_inputs(tmp_path)
    (tmp_path / "policies" / "hi2-typos.cedar").write_text(POLICY, encoding="utf-8")
    compared: list[int] = []
    from verifier.core.suggest import closest as real

    def counted(word: str, choices: list[str], **_kwargs: object) -> str | None:
        compared.append(len(list(choices)))
        return real(word, choices)

    monkeypatch.setattr(facts, "NEAREST_IDS", 8)
    monkeypatch.setattr(facts, "NEIGHBOUR_IDS", 8)  # 4 each side
    monkeypatch.setattr(facts, "closest", counted)
    _code, out, err = run_cli("verify", str(inventory), "--format", "text", env={"TOPOLOG_CACHE_DIR": ""})
    said = [line for line in out.splitlines() if "AUTHZ004" in line or "hi2-typos names" in line]
    text = "\n".join(said)
    # a100-n0's eight GPUs; the four sorted after a100-m0/gpu1, the four before zz-n9.
    assert sorted(compared) == [4, 4, 8], (compared, text, err)
    # One finding for the policy, its nearest texts joined in the message's parentheses.
    assert 'names Gpu, Node::"a100-m0/gpu1, a100-n0/gpu9, zz-n9", which does not exist' in text, text
    for nearest in (
        "did you mean 'a100-n0/gpu7'?",
        "did you mean 'a100-n0/gpu1'?",
        "not compared with each of the 10 ids of that type",
    ):
        assert nearest in text, (nearest, text)
