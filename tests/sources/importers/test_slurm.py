"""Slurm topology.conf: tree and block forms, hostlists, and the SLURM rules on an import."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.checks.verify import verify
from verifier.core.errors import TopologError
from verifier.core.resources import shipped_rules_dir
from verifier.sources.importers import import_files
from verifier.sources.importers.hostlist import HostlistError, expand
from verifier.sources.importers.yaml_out import to_yaml


def test_hostlists() -> None:
    assert expand("n[001-003]") == ["n001", "n002", "n003"]
    assert expand("n[1,3,5-6]") == ["n1", "n3", "n5", "n6"]
    assert expand("r[1-2]-n[01-02]") == ["r1-n01", "r1-n02", "r2-n01", "r2-n02"]
    assert expand("a,b[1-2],c") == ["a", "b1", "b2", "c"]
    for bad in ("n[3-1]", "n[1-", "n[x]", "a,,b"):
        with pytest.raises(HostlistError):
            expand(bad)


def test_tree(fx: Path) -> None:
    inv = import_files("slurm", [fx / "topology-tree.conf"]).inventory
    assert sorted(o.id for o in inv.of_kind("switch")) == ["leaf1", "leaf2", "lonely", "spine"]
    # n001-n008 and gpu-a1, gpu-a3, gpu-a4; n004 appears twice but is one node.
    assert sum(1 for _ in inv.of_kind("node")) == 11
    members = [lk for lk in inv.links.values() if lk.labels.get("slurm_member") == "node"]
    assert len(members) == 4 + 5 + 3
    assert inv.objects["leaf2"].labels["slurm_link_speed"] == "100"
    assert inv.objects["leaf2"].loc.line == 3


def test_tree_findings(fx: Path, tmp_path: Path) -> None:
    result = import_files("slurm", [fx / "topology-tree.conf"])
    p = tmp_path / "fabric.yaml"
    p.write_text(to_yaml(result.inventory, "fabric", "test"))
    report = verify([p], [shipped_rules_dir()])
    got = sorted((f.rule, f.message) for f in report.findings if f.rule.startswith("SLURM"))
    assert got == [
        ("SLURM001", "Node n004 is listed under leaf switches leaf1 and leaf2."),
        ("SLURM003", "Slurm switch spine tops a tree with no common root with lonely; jobs cannot span their leaves."),
    ]


def test_block(fx: Path) -> None:
    inv = import_files("slurm", [fx / "topology-block.conf"]).inventory
    assert sorted(o.id for o in inv.of_kind("rack")) == ["block1", "block2"]
    assert inv.objects["node18"].parent == "block1" and inv.objects["node19"].parent == "block2"
    assert sum(1 for _ in inv.of_kind("node")) == 36
    assert inv.objects["block1"].labels["block_sizes"] == "9,18"


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("SwitchName=s0 Nodes=n[1-2]\nSwitchName=s1 Switches=s9\n", 2, "'s9'"),
        ("SwitchName=s0 Nodez=n1\n", 1, "unknown key 'Nodez'"),
        ("# c\n\nSwitchName=s0 Nodes=n[2-1]\n", 3, "goes down"),
        ("SwitchName=s0 Nodes=n1\nSwitchName=s0 Nodes=n2\n", 2, "defined twice"),
        ("hello world\n", 1, "not Key=Value"),
    ],
)
def test_errors_have_lines(tmp_path: Path, text: str, line: int, needle: str) -> None:
    p = tmp_path / "topology.conf"
    p.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("slurm", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value
