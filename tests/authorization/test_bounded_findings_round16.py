"""AUTHZ017 counts the quarantined objects it names (round 16): its message listed every one, so a
site quarantining hundreds of nodes printed them all, once per trainee on the rota. Now the count and
the first three by id, as AUTHZ014 names principals.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

FIXTURE = Path(__file__).resolve().parents[1] / "rules" / "fixtures" / "AUTHZ017"


def _inventory(quarantined: int) -> str:
    # Rack r0 (tenant lab, no principal's) of `quarantined` nodes ws0.. each quarantined, as the
    # AUTHZ017 fixture's ws0: during an incident the shipped on-call permit opens each to ian.
    nodes = "".join(
        f'      - {{name: ws{i}, kind: node, labels: {{quarantine: "true"}}, '
        "children: [{name: gpu0, kind: gpu, model: RTX-4090}]}\n"
        for i in range(quarantined)
    )
    return "apiVersion: topolog.dev/v1\nobjects:\n  - name: r0\n    kind: rack\n    labels: {tenant: lab}\n" + (
        "    children:\n" + nodes
    )


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_many_quarantined_objects_are_counted(tmp_path: Path, engine: str) -> None:
    shutil.copytree(FIXTURE / "policies", tmp_path / "policies")
    shutil.copy(FIXTURE / "principals.yml", tmp_path / "principals.yml")
    (tmp_path / "inv.yaml").write_text(_inventory(12), encoding="utf-8")
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    found = [f for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ017"]
    # One finding (ian, the intern on call; rhea the engineer is the design): 12 objects ws0..ws11,
    # the first three by id in string order ws0, ws1, ws10 ("ws10" < "ws2").
    assert len(found) == 1, found
    message = found[0]["message"]
    assert "schedule on 12 quarantined object(s), the first by id ws0, ws1, ws10 (Cedar" in message, message
    assert "ws2" not in message


def test_a_look_alike_id_in_a_policy_names_its_odd_letter(tmp_path: Path) -> None:
    # The AUTHZ017 fixture's principals hold ian; the policy names "ian" with a Cyrillic a (U+0430).
    # "did you mean 'ian'?" printed beside 'ian' tells a reader nothing: the letter is named.
    shutil.copytree(FIXTURE / "policies", tmp_path / "policies")
    shutil.copy(FIXTURE / "principals.yml", tmp_path / "principals.yml")
    (tmp_path / "policies" / "x.cedar").write_text(
        '@id("ian-anywhere")\npermit (principal == User::"i\u0430n", action == Action::"schedule", resource);\n',
        encoding="utf-8",
    )
    (tmp_path / "inv.yaml").write_text(_inventory(1), encoding="utf-8")
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json")
    assert code in (0, 1), err
    (found,) = [f for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ004"]
    assert "did you mean 'ian'? it looks the same but holds U+0430 CYRILLIC SMALL LETTER A" in found["message"]
