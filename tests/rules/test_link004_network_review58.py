"""Review 58 of R-FP's LINK004 change: a `network` label written on only one tier hides no leaf.

LINK004 now looks for the spines of a leaf's own network. dgx-h100-pod.yaml cables every rail leaf
(leaf0..leaf7) to every spine (spine0..spine3) with `foreach: {l: 0..7, s: 0..3}`; the seeded fault
cables leaf0..leaf6 only, so leaf7 keeps its 8 host links (dgx00..dgx07's nic7) and has no uplink.
An operator who labels the compute leaves `network: compute` and not the spines (or the spines and
not the leaves) still has one compute fabric whose spines leaf7 lacks: the spines are cabled to the
other compute leaves. Expected, by hand: exactly one added finding, LINK004 on leaf7 (LINK011 leaves
a leaf without any uplink to LINK004). Both engines must agree.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify

POD = Path(__file__).resolve().parents[2] / "inventories" / "dgx-h100-pod.yaml"
_UPLINKS = "    foreach: {l: 0..7, s: 0..3}"
_LEAF_LABELS = 'labels: {role: leaf, rail: "{i}"}'
_SPINE_LABELS = "labels: {role: spine}"


def _findings(path: Path, engine: str) -> frozenset[tuple[str, tuple[str, ...]]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return frozenset((r.finding.rule, r.finding.subjects) for r in report.results)


def _seed(text: str, tier: str) -> str:
    assert text.count(_UPLINKS) == 1 and text.count(_LEAF_LABELS) == 1 and text.count(_SPINE_LABELS) == 1
    text = text.replace(_UPLINKS, "    foreach: {l: 0..6, s: 0..3}")
    if tier == "leaves":
        return text.replace(_LEAF_LABELS, 'labels: {role: leaf, rail: "{i}", network: compute}')
    return text.replace(_SPINE_LABELS, "labels: {role: spine, network: compute}")


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
@pytest.mark.parametrize("tier", ["leaves", "spines"])
def test_a_label_on_one_tier_only_still_finds_the_leaf_without_uplink(tier: str, engine: str, tmp_path: Path) -> None:
    text = POD.read_text(encoding="utf-8")
    pristine = tmp_path / "pristine.yaml"
    pristine.write_text(text, encoding="utf-8")
    seeded = tmp_path / "seeded.yaml"
    seeded.write_text(_seed(text, tier), encoding="utf-8")
    before, after = _findings(pristine, engine), _findings(seeded, engine)
    assert before <= after
    assert after - before == {("LINK004", ("leaf7",))}
