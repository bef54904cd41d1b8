"""SARIF 2.1.0 as GitHub code scanning reads it: schema, identity of results, paths, proofs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_helpers import run_cli
from reports.output_helpers import CLEAN_RUN, FLEET_RUN, HERE, ROOT, STRAY, WAIVED_RUN, report_of, waived_report

from verifier.reports import sarif_report
from verifier.reports.explain_report import leaf_locator
from verifier.sources.inventory.loader import load_inventory

FLEET = "inventories/mixed-fleet.yaml"


@pytest.fixture(scope="module")
def validator() -> jsonschema.Draft4Validator:
    schema = json.loads((HERE / "sarif-schema-2.1.0.json").read_text(encoding="utf-8"))
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def _errors(validator: jsonschema.Draft4Validator, doc: object) -> list[str]:
    return sorted(f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(doc))


def _results(sarif_text: str) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = json.loads(sarif_text)["runs"][0]["results"]
    return results


def _where(result: dict[str, Any]) -> tuple[str, str | None, int]:
    physical = result["locations"][0]["physicalLocation"]
    artifact = physical["artifactLocation"]
    return artifact["uri"], artifact.get("uriBaseId"), physical["region"]["startLine"]


@pytest.mark.parametrize(
    "args",
    [WAIVED_RUN, (*WAIVED_RUN, "--proofs"), FLEET_RUN, (*FLEET_RUN, "--proofs"), CLEAN_RUN],
    ids=["waivers", "waivers-proofs", "fleet", "fleet-proofs", "no-findings"],
)
def test_sarif_is_valid_sarif_2_1_0(validator: jsonschema.Draft4Validator, args: tuple[str, ...]) -> None:
    assert _errors(validator, json.loads(report_of(*args, fmt="sarif"))) == []


def test_sarif_schema_rejects_what_code_scanning_would(validator: jsonschema.Draft4Validator) -> None:
    # Proves the validator is live: a level outside SARIF's four, a result without a message and a
    # thread-flow step that is not an object must each fail.
    doc = json.loads(report_of(*WAIVED_RUN, "--proofs", fmt="sarif"))
    results = doc["runs"][0]["results"]
    results[0]["level"] = "fatal"
    del results[1]["message"]
    results[2]["codeFlows"][0]["threadFlows"][0]["locations"].append("rules/x.dl:1")
    messages = _errors(validator, doc)
    assert any("'fatal' is not one of" in m for m in messages)
    assert any("'message' is a required property" in m for m in messages)
    assert any("'rules/x.dl:1' is not of type 'object'" in m for m in messages)


def test_sarif_results_carry_rules_locations_fingerprints_and_suppressions() -> None:
    run = json.loads(report_of(*WAIVED_RUN, fmt="sarif"))["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [
        "TOPO001",
        "TOPO002",
        "TOPO003",
        "TOPO004",
        "TOPO005",
        "TOPO006",
        "WAIVER001",
        "WAIVER002",
    ]
    assert rules[0]["help"]["text"].startswith("Remediation: Connect the GPU")
    results = run["results"]
    for r in results:
        assert rules[r["ruleIndex"]]["id"] == r["ruleId"]
    where = [(r["ruleId"], *_where(r), "suppressions" in r) for r in results]
    # Lines read off tests/golden/stray-devices.yaml and tests/golden/waivers.yaml.
    assert where == [
        ("TOPO001", STRAY, "%SRCROOT%", 10, False),
        ("TOPO001", STRAY, "%SRCROOT%", 15, False),
        ("TOPO003", STRAY, "%SRCROOT%", 6, True),
        ("TOPO003", STRAY, "%SRCROOT%", 10, False),
        ("WAIVER001", "tests/golden/waivers.yaml", "%SRCROOT%", 6, False),
        ("WAIVER002", "tests/golden/waivers.yaml", "%SRCROOT%", 10, False),
    ]
    (waived,) = [r for r in results if "suppressions" in r]
    assert waived["suppressions"][0]["kind"] == "external"
    assert waived["suppressions"][0]["justification"].startswith("Spare NIC on the pod shelf")
    doc = json.loads(report_of(*WAIVED_RUN, fmt="json"))
    json_fps = [f["fingerprint"] for f in doc["findings"] + doc["suppressed"]]
    assert sorted(r["partialFingerprints"]["topolog/v1"] for r in results) == sorted(json_fps)


TWO_NODES = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: two-nodes}
objects:
  - name: "n{i}"
    kind: node
    count: 2
    promises: [nvlink_domain]
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: cpu0, kind: cpu}
    links:
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 5, lanes: 16, foreach: {g: [0, 1]}}
"""


def test_findings_on_one_template_line_keep_their_own_identity(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Two nodes stamped from one line, each promising NVLink between GPUs joined only over
    # PCIe: one BW001 per node, both located on the `gpu{i}` line (10), which differ in what
    # they say (the owner, n0 or n1), so they stay two findings with two identities.
    (tmp_path / "pod.yaml").write_text(TWO_NODES, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    results = _results(report_of("verify", "pod.yaml", fmt="sarif"))
    on_10 = [r for r in results if r["ruleId"] == "BW001" and _where(r) == ("pod.yaml", "%SRCROOT%", 10)]
    assert [r["properties"]["subjects"] for r in on_10] == [["n0/gpu0", "n0/gpu1"], ["n1/gpu0", "n1/gpu1"]]
    fingerprints = [r["partialFingerprints"]["topolog/v1"] for r in on_10]
    assert len(set(fingerprints)) == 2
    assert all(len(fp) == 32 and int(fp, 16) >= 0 for fp in fingerprints)
    # Each is the finding's own fingerprint, as the JSON report and baselines have it.
    doc = json.loads(report_of("verify", "pod.yaml", fmt="json"))
    by_subjects = {tuple(f["subjects"]): f["fingerprint"] for f in doc["findings"]}
    assert fingerprints == [by_subjects[tuple(r["properties"]["subjects"])] for r in on_10]


def test_fingerprints_do_not_move_with_the_lines(tmp_path: Path) -> None:
    # The same inventory with three lines more at the top: every result is 3 lines lower, same identity.
    moved = tmp_path / "mixed-fleet.yaml"
    moved.write_text("# moved\n#\n#\n" + (ROOT / FLEET).read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copy(ROOT / "inventories" / "principals.yml", tmp_path / "principals.yml")
    before = _results(report_of(*FLEET_RUN, fmt="sarif"))
    after = _results(report_of("verify", str(moved), fmt="sarif"))
    # topolog's own key; GitHub's line hash is only for files in the repository (tmp_path is not).
    inventory_lines = [(r["partialFingerprints"]["topolog/v1"], _where(r)[2]) for r in before if _where(r)[0] == FLEET]
    moved_lines = [
        (r["partialFingerprints"]["topolog/v1"], _where(r)[2] - 3) for r in after if _where(r)[0] == moved.as_uri()
    ]
    # 1 BW003 (the four workstations' template line) and 2 BW005 warnings in the inventory;
    # the 3 AUTHZ001 notes are on teams in principals.yml.
    assert len(inventory_lines) == 3
    assert moved_lines == inventory_lines


def _git_work_tree(top: Path, dot_git_file: bool = False) -> Path:
    """A work tree as a walk up finds one: `.git` a folder, or a file as in worktrees and submodules."""
    top.mkdir(parents=True)
    if dot_git_file:
        (top / ".git").write_text("gitdir: /elsewhere/.git/worktrees/top\n", encoding="utf-8")
    else:
        (top / ".git").mkdir()
    inv = top / "infra" / "pods" / "pod.yaml"
    inv.parent.mkdir(parents=True)
    inv.write_text((ROOT / STRAY).read_text(encoding="utf-8"), encoding="utf-8")
    return inv


def _no_work_tree_above(path: Path) -> None:
    assert not any((p / ".git").exists() for p in (path, *path.parents)), "the test needs a tmp outside git"


@pytest.mark.parametrize("dot_git_file", [False, True], ids=["git-folder", "git-file"])
def test_uris_are_relative_to_the_work_tree_top_from_a_subfolder(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    dot_git_file: bool,
) -> None:
    _no_work_tree_above(tmp_path)
    inv = _git_work_tree(tmp_path / "repo", dot_git_file)
    monkeypatch.chdir(tmp_path / "repo" / "infra")
    results = _results(report_of("verify", "pods/pod.yaml", fmt="sarif"))
    assert results
    assert {_where(r)[:2] for r in results} == {("infra/pods/pod.yaml", "%SRCROOT%")}
    # From deeper down, by an absolute path: the same names.
    monkeypatch.chdir(inv.parent)
    results = _results(report_of("verify", str(inv), fmt="sarif"))
    assert {_where(r)[:2] for r in results} == {("infra/pods/pod.yaml", "%SRCROOT%")}


def test_uris_from_outside_any_work_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _no_work_tree_above(tmp_path)
    _git_work_tree(tmp_path / "repo")
    plain = tmp_path / "plain" / "pods" / "pod.yaml"
    plain.parent.mkdir(parents=True)
    plain.write_text((ROOT / STRAY).read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    # A file inside a work tree is named from that tree's top even when topolog runs outside it.
    assert {_where(r)[:2] for r in _results(report_of("verify", "repo/infra/pods/pod.yaml", fmt="sarif"))} == {
        ("infra/pods/pod.yaml", "%SRCROOT%"),
    }
    # No work tree at all: from the current folder.
    assert {_where(r)[:2] for r in _results(report_of("verify", "plain/pods/pod.yaml", fmt="sarif"))} == {
        ("plain/pods/pod.yaml", "%SRCROOT%"),
    }


def test_uri_of_a_file_outside_the_work_tree_is_a_file_uri(tmp_path: Path) -> None:
    # Run from this repository; the inventory lies outside it, under a folder with a space.
    inv = tmp_path / "dir with space" / "pod.yaml"
    inv.parent.mkdir()
    inv.write_text((ROOT / STRAY).read_text(encoding="utf-8"), encoding="utf-8")
    loc = _results(report_of("verify", str(inv), fmt="sarif"))[0]["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"] == {"uri": inv.as_uri()} and "%20" in inv.as_uri()


def _flow(result: dict[str, Any]) -> list[tuple[str, int, int, str]]:
    (flow,) = result["codeFlows"]
    (thread,) = flow["threadFlows"]
    out = []
    for step in thread["locations"]:
        loc = step["location"]
        physical = loc["physicalLocation"]
        region = physical["region"]
        out.append(
            (physical["artifactLocation"]["uri"], region["startLine"], region["startColumn"], loc["message"]["text"])
        )
    return out


RULE_FILE = "rules/topology/TOPO003_device_outside_node.dl"
# rules/topology/TOPO003_device_outside_node.dl: the fact host_device_kind("nic") is line 15 and the rule
# device_outside_node(D, K) :- object(D, K), host_device_kind(K), !in_some_node(D) is line 25;
# stray-nic is written on line 6, column 9 of the inventory.
STRAY_NIC_FLOW = [
    (RULE_FILE, 15, 1, 'host_device_kind("nic") follows by this rule'),
    (
        RULE_FILE,
        25,
        1,
        'device_outside_node("stray-nic", "nic") follows by this rule; absent: in_some_node("stray-nic")',
    ),
    (STRAY, 6, 9, "TOPO003 reports: nic stray-nic is not inside any node."),
]


def _placed(tree: dict[str, Any]) -> dict[str, Any]:
    """A JSON report proof tree with `at` ("file:line:col") and `location` as the SARIF log's places."""
    out = dict(tree)
    if "at" in out:
        file, line, col = out["at"].rsplit(":", 2)
        out["at"] = {"uri": file, "uriBaseId": "%SRCROOT%", "line": int(line), "column": int(col)}
    if out.get("location"):
        loc = out["location"]
        out["location"] = {"uri": loc["file"], "uriBaseId": "%SRCROOT%", "line": loc["line"], "column": loc["col"]}
    if "premises" in out:
        out["premises"] = [_placed(p) for p in out["premises"]]
    return out


def test_proofs_travel_as_code_flows_and_properties() -> None:
    results = _results(report_of(*WAIVED_RUN, "--proofs", fmt="sarif"))
    (stray_nic,) = [r for r in results if r["properties"]["subjects"] == ["stray-nic", "nic"]]
    assert _flow(stray_nic) == STRAY_NIC_FLOW
    doc = json.loads(report_of(*WAIVED_RUN, fmt="json"))
    (as_json,) = [f for f in doc["suppressed"] if f["subjects"] == ["stray-nic", "nic"]]
    # The JSON report's tree, each place named as SARIF names files: from the repository's top.
    assert stray_nic["properties"]["proof"] == _placed(as_json["proof"])
    # Waiver findings have no derivation: neither a flow nor a proof.
    (expired,) = [r for r in results if r["ruleId"] == "WAIVER001"]
    assert "codeFlows" not in expired and "proof" not in expired["properties"]


def test_without_proofs_there_are_no_code_flows() -> None:
    assert all("codeFlows" not in r for r in _results(report_of(*WAIVED_RUN, "--no-proofs", fmt="sarif")))


def test_sarif_carries_proofs_by_default() -> None:
    """Code scanning shows a result's code flow; a proof left out by default would never be seen there."""
    results = [r for r in _results(report_of(*WAIVED_RUN, fmt="sarif")) if not r["ruleId"].startswith("WAIVER")]
    # Rule findings carry their derivation; a waiver's own findings (WAIVER001/2) come from no rule.
    assert results and all("codeFlows" in r and "proof" in r["properties"] for r in results)


def test_a_locator_places_the_input_facts(validator: jsonschema.Draft4Validator) -> None:
    report = waived_report(with_proofs=True)
    text = sarif_report.render(report, locate=leaf_locator(load_inventory([STRAY])))
    assert _errors(validator, json.loads(text)) == []
    (stray_nic,) = [r for r in _results(text) if r["properties"]["subjects"] == ["stray-nic", "nic"]]
    assert _flow(stray_nic) == [(STRAY, 6, 9, 'object("stray-nic", "nic") is an input fact'), *STRAY_NIC_FLOW]
    (leaf,) = stray_nic["properties"]["proof"]["premises"][:1]
    assert leaf == {
        "fact": 'object("stray-nic", "nic")',
        "input": True,
        "location": {"uri": STRAY, "uriBaseId": "%SRCROOT%", "line": 6, "column": 9},
    }


def test_cli_and_api_give_the_same_sarif() -> None:
    # The golden comes from the CLI; the API renderer with no locator must write the same bytes.
    assert sarif_report.render(waived_report(with_proofs=True)) == report_of(*WAIVED_RUN, fmt="sarif")


def test_same_run_gives_byte_identical_sarif(tmp_path: Path) -> None:
    first = report_of(*WAIVED_RUN, "--proofs", fmt="sarif")
    assert run_cli(*WAIVED_RUN, "--proofs", "--format", "sarif")[1] == first  # a fresh run, not remembered
    code, _, err = run_cli(*WAIVED_RUN, "--output", f"sarif={tmp_path / 'r.sarif'}", "--proofs")
    assert code == 1, err
    assert (tmp_path / "r.sarif").read_text(encoding="utf-8") == first
