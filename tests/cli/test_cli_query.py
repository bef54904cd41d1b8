"""End-to-end `topolog query`, `explain` and `rules` on shipped inventories."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]


pytestmark = pytest.mark.usefixtures("in_repo_root")


_run = run_cli


def test_query_table_sorted() -> None:
    # The edge SoC's links, as written in inventories/edge-soc.yaml: 4 SoC fabric links of
    # 100 GB/s and one PCIe Gen4 x1 link (1.969 GB/s per lane).
    code, out, _ = _run("query", "inventories/edge-soc.yaml", 'link(_, A, B, K, M), K != "cache"')
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["A", "B", "K", "M"]
    assert [line.split() for line in lines[2:-1]] == [
        ["edge-m2-01/die0", "edge-m2-01/lpddr5", "soc", "100000"],
        ["edge-m2-01/ecluster", "edge-m2-01/die0", "soc", "100000"],
        ["edge-m2-01/eth0", "edge-m2-01/die0", "pcie", "1969"],
        ["edge-m2-01/igpu", "edge-m2-01/die0", "soc", "100000"],
        ["edge-m2-01/pcluster", "edge-m2-01/die0", "soc", "100000"],
    ]
    assert lines[-1] == "(5 rows)"


def test_query_derived_relation_json() -> None:
    # One GB200 NVL72 rack is one NVLink domain: all 72 GPUs share the smallest GPU id.
    code, out, _ = _run("query", "inventories/gb200-nvl72.yaml", "nvlink_domain(G, D)", "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["count"] == 72
    assert {row[1] for row in doc["rows"]} == {"tray00/gpu0"}


@pytest.mark.parametrize(
    ("query", "fragment"),
    [
        ("linc(A, B, C, D, E)", "did you mean 'link'"),
        ("link(A, B)", "5 arguments"),
        ("object(X, K), Y > 3", "'Y'"),
        ("object(X,", "syntax error"),
    ],
)
def test_bad_queries_are_exit_2_with_column(query: str, fragment: str) -> None:
    code, out, err = _run("query", "inventories/edge-soc.yaml", query)
    assert code == 2 and out == ""
    assert err.startswith("error: <query>:1:") and fragment in err


def test_explain_containment_proof() -> None:
    code, out, _ = _run("explain", "inventories/dgx-h100-pod.yaml", 'within("dgx00/gpu0", "pod0")')
    assert code == 0
    # gpu0 -> dgx00 -> rack0 -> pod0: three parent facts, within built up one level per step.
    # Each input fact is followed by the inventory line of its first object argument.
    pod = "inventories/dgx-h100-pod.yaml"
    lines = out.splitlines()
    assert lines[:3] == [
        'within("dgx00/gpu0", "pod0")  [rule at rules/topology/lib/containment.dl:6:1]',
        '  within("dgx00/gpu0", "rack0")  [rule at rules/topology/lib/containment.dl:6:1]',
        '    within("dgx00/gpu0", "dgx00")  [rule at rules/topology/lib/containment.dl:5:1]',
    ]
    leaves = [re.fullmatch(r"( *)(parent\(.*\))  \[input at (.*):(\d+):(\d+)\]", line) for line in lines[3:]]
    assert [(m[1], m[2], m[3]) for m in leaves if m] == [
        ("      ", 'parent("dgx00/gpu0", "dgx00")', pod),
        ("    ", 'parent("dgx00", "rack0")', pod),
        ("  ", 'parent("rack0", "pod0")', pod),
    ]
    text = (ROOT / pod).read_text().splitlines()
    assert all(leaves) and leaves[2] is not None
    assert "rack" in text[int(leaves[2][4]) - 1]  # rack0 is written `name: rack{i}`


def test_explain_fact_that_does_not_hold() -> None:
    code, _, err = _run("explain", "inventories/dgx-h100-pod.yaml", 'within("dgx00/gpu0", "rack1")')
    assert code == 2 and "does not hold" in err


def test_rules_docs_are_generated_and_current() -> None:
    code, out, _ = _run("rules")
    assert code == 0
    for check_id in ("TOPO001", "TOPO002", "TOPO003", "TOPO004"):
        assert f"## {check_id}" in out
    assert out == (ROOT / "docs" / "rules.md").read_text(), "regenerate with: topolog rules > docs/rules.md"


def test_query_reads_input_relations_that_no_rule_uses() -> None:
    # verify skips loading relations no rule reads; a query must still see them.
    code, out, _ = _run("query", "inventories/edge-soc.yaml", 'label(X, "speed", V)', "--format", "json")
    assert code == 0
    assert json.loads(out)["rows"] == [["edge-m2-01/eth0", "10GbE"]]


def _leaves(node: dict[str, object]) -> Iterator[dict[str, object]]:
    if node.get("input"):
        yield node
    for premise in node.get("premises", []):  # type: ignore[attr-defined]
        yield from _leaves(premise)


def test_explain_json_locates_every_leaf() -> None:
    code, out, _ = _run("explain", "inventories/dgx-h100-pod.yaml", 'within("dgx00/gpu0", "pod0")', "--format", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["fact"] == 'within("dgx00/gpu0", "pod0")' and doc["at"] == "rules/topology/lib/containment.dl:6:1"
    leaves = list(_leaves(doc))
    assert len(leaves) == 3
    for leaf in leaves:
        assert isinstance(leaf["location"], dict)
        assert leaf["location"]["file"] == "inventories/dgx-h100-pod.yaml" and leaf["location"]["line"] > 0


def test_explain_finding_by_rule_and_subject() -> None:
    code, out, _ = _run("explain", "inventories/mixed-fleet.yaml", "BW003:rtx-n3/nic0")
    assert code == 0
    lines = out.splitlines()
    # The four workstations' NICs are one finding (one template line); the proof is rtx-n3's, as asked.
    assert (
        lines[0].startswith("inventories/mixed-fleet.yaml:")
        and "at NIC rtx-n0/nic0, rtx-n1/nic0, rtx-n2/nic0, rtx-n3/nic0." in lines[0]
    )
    assert re.fullmatch(r"fingerprint [0-9a-f]{32}", lines[1])
    assert lines[2].startswith('nic_pcie_starved("rtx-n3/nic0", ')
    inputs = [line for line in lines if "[input at" in line]  # the threshold fact has no inventory line
    assert inputs and all(re.search(r"\[input at \S+:\d+:\d+\]$", line) for line in inputs)


def test_explain_finding_by_fingerprint_matches_verify() -> None:
    code, out, _ = _run("verify", "inventories/mixed-fleet.yaml", "--format", "json")
    assert code == 0
    findings = json.loads(out)["findings"]
    assert findings and all("proof" in f for f in findings)  # every verify finding carries its proof
    first = findings[0]
    for ref in (first["fingerprint"], first["fingerprint"][:10]):
        code, out, _ = _run("explain", "inventories/mixed-fleet.yaml", ref, "--format", "json")
        assert code == 0
        [explained] = json.loads(out)["findings"]
        assert explained["fingerprint"] == first["fingerprint"]
        assert (explained["rule"], explained["subjects"], explained["message"]) == (
            first["rule"],
            first["subjects"],
            first["message"],
        )
        # The same proof as verify's, with the inventory line of every input fact added.
        strip = json.loads(json.dumps(explained["proof"]))
        for leaf in _leaves(strip):
            location = leaf.pop("location")
            # Only facts not written in the inventory (thresholds from their own file) have no line.
            assert location is not None or str(leaf["fact"]).startswith("threshold(")
        assert strip == first["proof"]


@pytest.mark.parametrize(
    ("ref", "fragment"),
    [
        ("NOPE123:x", "no check NOPE123; the checks are: "),
        ("BW003:no-such-nic", "no BW003 finding has subjects no-such-nic (1 BW003 findings here, e.g."),
        ("deadbeefdeadbeef", "no finding of the checks has a fingerprint starting deadbeefdeadbeef"),
        ("PCIE001:", "name the finding's subjects"),
    ],
)
def test_explain_bad_finding_reference_is_exit_2(ref: str, fragment: str) -> None:
    code, out, err = _run("explain", "inventories/mixed-fleet.yaml", ref)
    assert code == 2 and out == ""
    assert fragment in err


@pytest.mark.parametrize("relation", ["within", "nvlink_domain", "team_gpu", "pcie_below_device"])
def test_query_on_the_rules_it_needs_equals_whole_program(relation: str) -> None:
    # `topolog query` evaluates only the rules the query depends on: the rows must not change.
    from verifier.engine.parser import parse_query
    from verifier.engine.queries import program_for, query_relations
    from verifier.session.session import load_rules, open_evaluation

    program = load_rules()
    arity = program.relations[relation].arity
    query = parse_query(f"{relation}({', '.join(f'V{i}' for i in range(arity))})")
    answers = []
    for prog in (program, program_for(program, query_relations(query))):
        with open_evaluation([Path("inventories/mixed-fleet.yaml")], prog) as model:
            answers.append(model.engine.answer(query))
    assert answers[0] == answers[1]
    assert len(program_for(program, {relation}).rules) < len(program.rules)
