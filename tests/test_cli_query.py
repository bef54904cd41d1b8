"""End-to-end `topolog query`, `explain` and `rules` on shipped inventories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli import main

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _run_from_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def _run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout, result.stderr


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
    assert out.splitlines() == [
        'within("dgx00/gpu0", "pod0")  [rule at rules/topology/containment.dl:6:1]',
        '  within("dgx00/gpu0", "rack0")  [rule at rules/topology/containment.dl:6:1]',
        '    within("dgx00/gpu0", "dgx00")  [rule at rules/topology/containment.dl:5:1]',
        '      parent("dgx00/gpu0", "dgx00")  [input]',
        '    parent("dgx00", "rack0")  [input]',
        '  parent("rack0", "pod0")  [input]',
    ]


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
