"""A verification evaluates only the rules its checks' reports depend on: the same findings and proofs."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from verifier.checks.verify import collect_results
from verifier.engine.backend import Proof
from verifier.session.inputs import authorization_for, read_inventory
from verifier.session.session import evaluate, load_rules
from verifier.session.side_files import discover

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted((ROOT / "inventories").glob("*.yaml"))


def _findings(path: Path, engine: str, reports_only: bool) -> tuple[list[object], list[tuple[str | int, ...]]]:
    inputs = read_inventory([path], discover([path]))
    program = load_rules()
    with evaluate(
        program, inputs, engine=engine, authorization=authorization_for(inputs), reads_reports_only=reports_only
    ) as ev:
        results, _ = collect_results(ev.engine, ev.checks, ev.inventory, with_proofs=engine == "duckdb")
        helper = ev.engine.query("sched_node_domain")
        shown = [(replace(r.finding, proof=None), _shown(r.finding.proof), r.fingerprint) for r in results]
        return [*shown, sorted(ev.not_applicable)], helper


def _shown(proof: Proof | None) -> object:
    """A proof as reports show it: stages order the search, and no report prints them (fewer rules
    evaluated, fewer stages used: the same proofs under other numbers)."""
    if proof is None:
        return None
    return (proof.relation, proof.row, proof.rule, [_shown(p) for p in proof.premises], proof.absent)


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.stem)
def test_the_reports_and_proofs_are_those_of_the_whole_pack(path: Path, engine: str) -> None:
    whole, helper_whole = _findings(path, engine, reports_only=False)
    sliced, helper_sliced = _findings(path, engine, reports_only=True)
    assert sliced == whole
    # sched_node_domain (rules/import/SCHED001) feeds only the comparison with a scheduler's
    # grouping, and no shipped example has one (no k8s clique label, no Slurm block): the whole
    # pack works it out for every node with GPUs, a verification does not.
    assert helper_sliced == []
    if path.stem in ("dgx-h100-pod", "gb200-nvl72", "mixed-fleet"):
        assert helper_whole != []
