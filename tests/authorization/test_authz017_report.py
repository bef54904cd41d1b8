"""AUTHZ017's report (round 14): a count of the quarantined objects and the first three by id.

The report was a row per trainee and quarantined object, each message naming every object (466
trainees on call x 200 quarantined nodes: 93,000 rows, each message naming every node). Now each
trainee's distinct objects are counted and the first three by id are named.

Fleet (tenant lab, which no principal has; policies: the shipped quarantine, interns, tenants and
schema; interns.cedar reads `consumer`, so an RTX-4090 and an H100 are of different classes):
- rack r0: nodes q3, q1, q4, q2 (quarantined, one RTX-4090 each: class "consumer, quarantined"),
  node m0 (quarantined, an RTX-4090 and an H100: two classes, consumer differs) and node b0 (not
  quarantined);
- rack r1 (quarantined as a whole, one node of RTX-4090s): one object, r1.
Objects: q1..q4 and r1 (one class each: 5) + m0 (two classes: 1) = 6; by id m0 < q1 < q2 < q3 < q4 < r1,
so the first three are m0, q1, q2. Outside an incident nobody may schedule on them (no permit for lab;
the quarantine forbid); during one oncall-incident-access lets every on-call principal in, but
interns-consumer-only still keeps ian (intern) off m0's H100: ian reaches m0 through its RTX-4090 only,
cole (contractor) through both of its classes, and each counts m0 once: 6 for both (7 would be m0
counted once per class).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: r0
    kind: rack
    labels: {tenant: lab}
    children:
      - {name: q3, kind: node, labels: {quarantine: "true"}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: q1, kind: node, labels: {quarantine: "true"}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: q4, kind: node, labels: {quarantine: "true"}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - {name: q2, kind: node, labels: {quarantine: "true"}, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
      - name: m0
        kind: node
        labels: {quarantine: "true"}
        children:
          - {name: gpu0, kind: gpu, model: RTX-4090}
          - {name: gpu1, kind: gpu, model: H100-SXM5-80GB}
      - {name: b0, kind: node, children: [{name: gpu0, kind: gpu, model: RTX-4090}]}
  - name: r1
    kind: rack
    labels: {tenant: lab, quarantine: "true"}
    children:
      - {name: w0, kind: node, children: [{name: "gpu{i}", kind: gpu, model: RTX-4090, count: 2}]}
"""

PRINCIPALS = """apiVersion: topolog.dev/v1
kind: Principals
teams:
  - {id: render, tenant: render}
users:
  - {id: rhea, teams: [render], role: engineer, on_call: true}
  - {id: ian, teams: [render], role: intern, on_call: true}
  - {id: cole, teams: [render], role: contractor, on_call: true}
"""


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_objects_counted_and_first_three_named(tmp_path: Path, engine: str) -> None:
    (tmp_path / "policies").mkdir()
    for name in ("schema.cedarschema", "tenants.cedar", "quarantine.cedar", "interns.cedar"):
        (tmp_path / "policies" / name).write_bytes((ROOT / "policies" / name).read_bytes())
    (tmp_path / "principals.yml").write_text(PRINCIPALS)
    (tmp_path / "inv.yaml").write_text(INVENTORY)
    code, out, err = run_cli("verify", str(tmp_path / "inv.yaml"), "--format", "json", "--engine", engine)
    assert code in (0, 1), err
    found = sorted((f["subjects"], f["message"]) for f in json.loads(out)["findings"] if f["rule"] == "AUTHZ017")
    # rhea (engineer) on the rota is the design; ian and cole are reported, one finding each.
    assert found == [
        (
            [who],
            f"{who} (role {role}) is on the incident rota: during an incident oncall-incident-access lets it "
            "schedule on 6 quarantined object(s), the first by id m0, q1, q2 (Cedar, context {incident: true}), "
            "hardware closed to it otherwise.",
        )
        for who, role in (("cole", "contractor"), ("ian", "intern"))
    ]
