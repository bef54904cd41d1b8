"""NODE007 and NODE014 on one override (review of round 61's NODE014).

A node type writes its H100 SXM5 GPUs at 700 W (the model's rating, catalogue power 700 W) and an
override writes one node's gpu1 at 1,000 W (a B200's figure). One thing was written wrong, once:
NODE014 reports it (1000 > 700, the part cannot run there) and NODE007, which compares the node
with its type (1000 != 700), stays silent, as it does for the figures MEM001 and MEM005 judge
against the catalogue. Before, both reported it.

An override at 500 W (a cap below the rating, 500 <= 700) is no NODE014 finding, so NODE007 still
reports the node differing from its type (500 != 700).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify


def _inventory(tmp_path: Path, watts: int) -> Path:
    path = tmp_path / "h.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\n"
        "templates:\n"
        "  t:\n"
        "    kind: node\n"
        "    children:\n"
        '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2, power: 700 W}\n'
        "objects:\n"
        '  - template: t\n    name: "n{i}"\n    count: 2\n'
        f"    overrides:\n      n1: {{devices: {{gpu1: {{power: {watts} W}}}}}}\n",
        encoding="utf-8",
    )
    return path


def _findings(path: Path, engine: str) -> set[tuple[str, tuple[str, ...]]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule in ("NODE007", "NODE014")}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_power_above_rating_in_an_override_is_one_finding(tmp_path: Path, engine: str) -> None:
    assert _findings(_inventory(tmp_path, 1000), engine) == {("NODE014", ("n1/gpu1",))}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_power_cap_below_rating_in_an_override_is_still_node007(tmp_path: Path, engine: str) -> None:
    assert _findings(_inventory(tmp_path, 500), engine) == {("NODE007", ("n1/gpu1", "n1"))}
