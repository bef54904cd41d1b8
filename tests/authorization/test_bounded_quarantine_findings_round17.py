"""AUTHZ003 and AUTHZ014 count the quarantined objects they name (HJ, round 17), as AUTHZ017 does
since round 16: their messages listed every object (and AUTHZ003 every principal), so a site that
quarantines hundreds of nodes printed them all in one line. Now the count and the first three by id.
Subjects stay whole (a waiver on `ws7` still matches), and the fingerprint, which only the group
(`label`) makes, is the one baselines written before hold.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

FIXTURES = Path(__file__).resolve().parents[1] / "rules" / "fixtures"


def _inventory() -> str:
    # Rack r0 of tenant render, nodes ws0..ws11 each quarantined, one RTX 4090 each: the fixtures'
    # narrowed forbids leave each open to render and rhea (tenant-own-hardware).
    nodes = "".join(
        f'      - {{name: ws{i}, kind: node, labels: {{quarantine: "true"}}, '
        "children: [{name: gpu0, kind: gpu, model: RTX-4090}]}\n"
        for i in range(12)
    )
    return "apiVersion: topolog.dev/v1\nobjects:\n  - name: r0\n    kind: rack\n    labels: {tenant: render}\n" + (
        "    children:\n" + nodes
    )


def _found(tmp_path: Path, rule: str, engine: str) -> dict[str, object]:
    shutil.copytree(FIXTURES / rule / "policies", tmp_path / "policies")
    shutil.copy(FIXTURES / rule / "principals.yml", tmp_path / "principals.yml")
    (tmp_path / "inv.yaml").write_text(_inventory(), encoding="utf-8")
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    (found,) = [f for f in json.loads(out)["findings"] if f["rule"] == rule]
    return dict(found)


def _by_label(rule: str) -> str:
    # verifier.checks.baseline's recipe for a finding grouped by `label` alone: the label is quoted
    # nowhere in the message and is no subject, so neither subjects nor values count.
    doc = json.dumps([rule, [], []], separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(doc.encode("utf-8")).hexdigest()[:32]


# ws0..ws11 in string order: ws0, ws1, ws10, ws11, ws2, ... ("ws10" < "ws2"): the first three are ws0, ws1, ws10.
OBJECTS = sorted(f"ws{i}" for i in range(12))


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_authz003_counts_objects_and_principals(tmp_path: Path, engine: str) -> None:
    found = _found(tmp_path, "AUTHZ003", engine)
    assert found["message"] == (
        'Quarantined hardware is open: 12 object(s) carry label quarantine "true", the first by id ws0, ws1, ws10, '
        "yet the policies let 2 principal(s) schedule on their GPUs outside an incident, the first by id render, "
        "rhea (permitted by tenant-own-hardware)."
    )
    assert found["subjects"] == [*OBJECTS, "render", "rhea"]  # hardware first, then principals, each sorted
    assert found["fingerprint"] == _by_label("AUTHZ003")


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_authz014_counts_objects(tmp_path: Path, engine: str) -> None:
    found = _found(tmp_path, "AUTHZ014", engine)
    assert found["message"] == (
        'Quarantined hardware opens during an incident: 12 object(s) carry label quarantine "true", the first by '
        "id ws0, ws1, ws10, yet in the context {incident: true} 2 principal(s) not on call may schedule on their "
        "GPUs, the first by id render, rhea (permitted by tenant-own-hardware)."
    )
    assert found["subjects"] == OBJECTS
    assert found["fingerprint"] == _by_label("AUTHZ014")
