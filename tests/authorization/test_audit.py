"""Audit matrix counts, computed by hand for tests/authorization/small, and policy / inventory diffs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from verifier.authorization.audit import audit, diff
from verifier.reports.audit_report import audit_doc as to_json
from verifier.session.api import load_authorization as load_setup

ROOT = Path(__file__).resolve().parents[2]
SMALL = Path(__file__).resolve().parent / "small"

# Rack ra (tenant a): 4 NVLinked H100 (34 FP64 TFLOPS: not HPC-reserved). Rack rb (tenant b,
# quarantined): 2 RTX 4090. Principals: teams a, b, sre; u1 in a; u2 (intern) in b; oc in sre, on call.
NORMAL: dict[str, object] = {}
INCIDENT: dict[str, object] = {"incident": True}
EXPECTED = {
    # tenant-own-hardware gives a and u1 rack ra; rb is quarantined for b and u2; oc has no tenant.
    ("schedule", json.dumps(NORMAL)): {'Team::"a"': {"ra": 4}, 'User::"u1"': {"ra": 4}},
    # During an incident on-call oc may also schedule on the quarantined rack.
    ("schedule", json.dumps(INCIDENT)): {'Team::"a"': {"ra": 4}, 'User::"u1"': {"ra": 4}, 'User::"oc"': {"rb": 2}},
    # sre-drain: sre and its member oc drain anything that is not quarantined.
    ("drain", json.dumps(NORMAL)): {'Team::"sre"': {"ra": 4}, 'User::"oc"': {"ra": 4}},
    ("drain", json.dumps(INCIDENT)): {'Team::"sre"': {"ra": 4}, 'User::"oc"': {"ra": 4, "rb": 2}},
    # No owner label anywhere: nobody administers outside an incident.
    ("administer", json.dumps(NORMAL)): {},
}


def _cells(report_json: dict[str, object], action: str, context: dict[str, object]) -> dict[str, dict[str, int]]:
    rows = report_json["matrix"]
    assert isinstance(rows, list)
    return {r["principal"]: r["gpus"] for r in rows if r["action"] == action and r["context"] == context and r["total"]}


@pytest.mark.parametrize(("key", "expected"), sorted(EXPECTED.items()))
def test_matrix_counts_by_hand(key: tuple[str, str], expected: dict[str, dict[str, int]]) -> None:
    action, context = key
    report = to_json(audit(load_setup([SMALL / "cluster.yaml"]), [action]))
    assert report["groups"] == [{"id": "ra", "gpus": 4}, {"id": "rb", "gpus": 2}]
    assert _cells(report, action, json.loads(context)) == expected


def test_classes_ask_fewer_requests_and_agree_with_asking_everyone() -> None:
    actions = ["schedule", "reserve", "drain", "administer"]
    grouped = audit(load_setup([SMALL / "cluster.yaml"]), actions)
    brute = audit(load_setup([SMALL / "cluster.yaml"]), actions, grouping=False)
    assert grouped.cells == brute.cells
    s = grouped.stats
    # Contexts from the policies: incident absent, false, true.
    assert (s.principals, s.resources, s.actions, s.contexts) == (6, 6, 4, 3)
    assert s.resource_classes == 2  # the H100s of ra look alike, and so do the RTXs of rb
    assert s.requests == s.principal_classes * s.resource_classes * 4 * 3
    assert brute.stats.requests == s.requests_without_classes == 6 * 6 * 4 * 3
    assert s.cedar_calls == 1  # one batch: the PolicySet / Entities handles parsed once


def test_diff_against_another_policy_directory(tmp_path: Path) -> None:
    other = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", other)
    # Lift the quarantine: b's own permit then reaches rack rb (u2, an intern, may use RTX: consumer).
    (other / "quarantine.cedar").unlink()
    result = diff(load_setup([SMALL / "cluster.yaml"]), load_setup([SMALL / "cluster.yaml"], other), ["schedule"])
    by_context = {json.dumps(c.context): c for c in result.changes}
    assert set(by_context) == {"{}", '{"incident": false}', '{"incident": true}'}
    normal = by_context["{}"]
    assert (normal.before, normal.after) == ("DENY", "ALLOW")
    assert normal.decisions == 2 * 2  # Team b and u2, each on 2 GPUs
    assert normal.examples[0]["after"] == ["tenant-own-hardware"]
    assert normal.examples[0]["before"] == ["quarantine-closed"]
    # oncall-incident-access is gone too, but b's tenant permit does not reach oc: oc loses rb.
    incident = [c for c in result.changes if c.context == {"incident": True}]
    assert sorted((c.before, c.after, c.decisions) for c in incident) == [("ALLOW", "DENY", 2), ("DENY", "ALLOW", 4)]


def test_diff_against_another_inventory(tmp_path: Path) -> None:
    inv = tmp_path / "cluster.yaml"
    inv.write_text((SMALL / "cluster.yaml").read_text().replace('quarantine: "true"', 'quarantine: "false"'))
    shutil.copy(SMALL / "principals.yml", tmp_path)
    result = diff(load_setup([SMALL / "cluster.yaml"]), load_setup([inv]), ["schedule"])
    normal = next(c for c in result.changes if c.context == {})
    assert (normal.before, normal.after, normal.decisions) == ("DENY", "ALLOW", 4)
    assert result.only_old == result.only_new == []


def test_no_change_against_the_same_policies() -> None:
    result = diff(
        load_setup([SMALL / "cluster.yaml"]),
        load_setup([SMALL / "cluster.yaml"], ROOT / "policies"),
        ["schedule", "drain"],
    )
    assert result.changes == [] and result.changed == 0
