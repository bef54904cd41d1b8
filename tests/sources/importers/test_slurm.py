"""Slurm topology.conf: tree and block forms, hostlists, and the SLURM rules on an import."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
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


def _findings(tmp_path: Path, *files: Path) -> list[tuple[str, str]]:
    """Import, write the YAML, verify it as a user would: every finding, sorted."""
    from verifier.session.verify_run import verify

    result = import_files("slurm", list(files))
    p = tmp_path / "fabric.yaml"
    p.write_text(to_yaml(result.inventory, "fabric", "test"))
    return sorted((f.rule, f.message) for f in verify([p]).findings)


def test_tree_findings(fx: Path, tmp_path: Path) -> None:
    got = _findings(tmp_path, fx / "topology-tree.conf")
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


def test_superpod_real_tree(fx: Path, tmp_path: Path) -> None:
    # superpod-topology.conf (real, tonystarkiss/slurm-superpod), derived by hand:
    #   s0 Nodes=circe-n[001-016],n[019-020]   s1 circe-n[017-018,021-036]   s2 circe-n[041-058]
    #   s3 circe-n[040,060,062-077]            s4 circe-n[037-039,051,061,078-080]
    # - circe-n051 is in s2 (041-058) and in s4: SLURM001 once.
    # - no Switches= line: five roots, s0 first by name, so s1..s4 each have no common root with s0: SLURM003 x4.
    # - `n[019-020]` next to `circe-n[...]` reads as circe-n019/020 with the prefix dropped, and neither
    #   circe-n019 nor circe-n020 is listed anywhere: SLURM004 x2.
    # - no other switch lists circe-n019/020/059; without slurm.conf nothing says they exist, so no SLURM002.
    # - topology.conf states no speed: no oversubscription finding (BW005) may appear.
    got = _findings(tmp_path, fx / "superpod-topology.conf")
    roots = [
        ("SLURM003", f"Slurm switch s{k} tops a tree with no common root with s0; jobs cannot span their leaves.")
        for k in range(1, 5)
    ]
    assert got == sorted(
        [
            ("SLURM001", "Node circe-n051 is listed under leaf switches s2 and s4."),
            *roots,
            ("SLURM004", "Switch s0 lists node n019, which reads as circe-n019 with its prefix dropped."),
            ("SLURM004", "Switch s0 lists node n020, which reads as circe-n020 with its prefix dropped."),
        ]
    )


def test_superpod_with_slurm_conf(fx: Path, tmp_path: Path) -> None:
    # With its slurm.conf (NodeName=circe-n001..circe-n098), by hand: the switches list
    # circe-n001-018, 021-058 (021-036, 037-039, 040, 041-058) and 060-080 (060, 061, 062-077, 078-080),
    # so circe-n019, 020, 059 and 081-098 (2 + 1 + 18 = 21 nodes) are under no switch: SLURM002 x21.
    # n019/n020 are not nodes of slurm.conf while circe-n019/020 are: SLURM004 x2 still. SLURM001, SLURM003 as above.
    got = _findings(tmp_path, fx / "superpod-topology.conf", fx / "superpod-slurm.conf")
    unlisted = [19, 20, 59, *range(81, 99)]
    assert len(unlisted) == 21
    assert [m for r, m in got if r == "SLURM002"] == [
        f"Node circe-n{i:03d} is listed under no leaf switch of the Slurm topology." for i in unlisted
    ]
    assert sorted({r for r, _ in got}) == ["SLURM001", "SLURM002", "SLURM003", "SLURM004"]
    assert sum(1 for r, _ in got if r == "SLURM004") == 2
    inv = import_files("slurm", [fx / "superpod-topology.conf", fx / "superpod-slurm.conf"]).inventory
    # circe-n093 is in partitions interactive, admin, debug (slurm.conf's order); 095 in ci-nightly, admin, debug.
    assert inv.objects["circe-n093"].labels["slurm_partitions"] == "interactive,admin,debug"
    assert inv.objects["circe-n095"].labels["slurm_partitions"] == "ci-nightly,admin,debug"
    assert sum(1 for _ in inv.of_kind("node")) == 98 + 2  # slurm.conf's 98, and n019/n020 named by topology.conf


def test_topograph_real_tree_is_healthy(fx: Path, tmp_path: Path) -> None:
    # topograph-tree.conf (real, NVIDIA topograph): core switch.3.1 over 6 spines over 12 leaves of 8 nodes.
    # One root, each srv listed once, no prefix mixing: an expert finds nothing. 8 node links per leaf and one
    # uplink at the same *assumed* speed would read as 8:1 oversubscription (BW005) if speeds were judged.
    inv = import_files("slurm", [fx / "topograph-tree.conf"]).inventory
    assert sum(1 for _ in inv.of_kind("switch")) == 1 + 6 + 12
    assert sum(1 for _ in inv.of_kind("node")) == 96
    assert inv.objects["switch.1.1"].labels["slurm_role"] == "leaf" and "role" not in inv.objects["switch.1.1"].labels
    assert _findings(tmp_path, fx / "topograph-tree.conf") == []


def test_topograph_real_block(fx: Path, tmp_path: Path) -> None:
    # topograph-block.conf (real): 12 blocks rack11..rack62 of 8 nodes, BlockSizes=8,16,32. Healthy: no finding.
    inv = import_files("slurm", [fx / "topograph-block.conf"]).inventory
    racks = sorted(o.id for o in inv.of_kind("rack"))
    assert len(racks) == 12 and racks[0] == "rack11" and racks[-1] == "rack62"
    assert inv.objects["srv1101"].parent == "rack11" and inv.objects["srv6208"].parent == "rack62"
    assert {inv.objects[r].labels["block_sizes"] for r in racks} == {"8,16,32"}
    assert _findings(tmp_path, fx / "topograph-block.conf") == []


def test_topology_yaml_several_topologies(fx: Path, tmp_path: Path) -> None:
    # topology-multi.yaml (hand-written from topology.yaml(5)): tree `fabric` (root over s1, s2 of 4 nodes),
    # block `nvl` (b1 = node[1-4], b2 = node[5-8], sizes 4,8) and a flat `plain`. One tree, one block: no prefixes.
    inv = import_files("slurm", [fx / "topology-multi.yaml"]).inventory
    assert sorted(o.id for o in inv.of_kind("switch")) == ["root", "s1", "s2"]
    assert inv.objects["s1"].labels["slurm_topology"] == "fabric"
    assert inv.objects["node4"].parent == "b1" and inv.objects["node5"].parent == "b2"
    assert inv.objects["b1"].labels["block_sizes"] == "4,8"
    assert inv.objects["s2"].loc.line == 11  # `- switch: s2` in the YAML
    assert _findings(tmp_path, fx / "topology-multi.yaml") == []


def test_topology_yaml_two_trees_are_judged_apart(tmp_path: Path) -> None:
    # Two trees over the same nodes: a node under one leaf per tree is not under two leaves (no SLURM001),
    # and each tree has its one root (no SLURM003). Names repeat, so each tree's are prefixed.
    p = tmp_path / "topology.yaml"
    p.write_text(
        "- topology: a\n  tree:\n    switches:\n      - switch: top\n        children: l1\n"
        "      - switch: l1\n        nodes: n[1-2]\n"
        "- topology: b\n  tree:\n    switches:\n      - switch: top\n        children: l1\n"
        "      - switch: l1\n        nodes: n[1-2]\n"
    )
    inv = import_files("slurm", [p]).inventory
    assert sorted(o.id for o in inv.of_kind("switch")) == ["a.l1", "a.top", "b.l1", "b.top"]
    assert _findings(tmp_path, p) == []


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        ("- topology: t\n  tree:\n    switches:\n      - switch: s\n        nodez: n1\n", 5, "unknown key 'nodez'"),
        ("- topology: t\n  tree: {}\n  flat: true\n", 1, "exactly one of tree, block, flat"),
        ("- topology: t\n  block:\n    blocks:\n      - nodes: n1\n", 4, "needs `block: <name>`"),
        ("topology: t\n", 1, "expected a list of topologies"),
    ],
)
def test_topology_yaml_errors(tmp_path: Path, text: str, line: int, needle: str) -> None:
    p = tmp_path / "topology.yaml"
    p.write_text(text)
    with pytest.raises(TopologError) as err:
        import_files("slurm", [p])
    assert any(d.location.line == line and needle in d.message for d in err.value.diagnostics), err.value


def test_slurm_conf_errors(tmp_path: Path) -> None:
    conf = tmp_path / "slurm.conf"
    conf.write_text("NodeName=n[1-2] CPUs=4\nPartitionName=p Nodes=n[1-3]\n")
    with pytest.raises(TopologError) as err:
        import_files("slurm", [conf])
    assert [(d.location.line, d.message) for d in err.value.diagnostics] == [
        (2, "partition p lists node 'n3', which no NodeName= line defines")
    ]


def test_blocks_checked_against_the_inventory(fx: Path, tmp_path: Path) -> None:
    # Slurm blocks laid onto k8s-gb200-inventory.yaml (racks nvl-a = {gb-a0, gb-a1}, nvl-b = {gb-b0, gb-b1},
    # one NVLink domain each). By hand: b1 = gb-a0, gb-a1, gb-b0 and b2 = gb-b1, so nvl-b's domain (named by
    # gb-b0/gpu0) spans blocks b1 and b2: SCHED001; b1 holds nodes of both domains: SCHED002. The inventory's
    # nodes keep their racks; the block is a label on each node.
    from verifier.session.verify_run import VerifyRun, verify

    conf = tmp_path / "topology.conf"
    conf.write_text("BlockName=b1 Nodes=gb-a[0-1],gb-b0\nBlockName=b2 Nodes=gb-b1\nBlockSizes=2\n")
    inv = import_files("slurm", [conf, fx / "k8s-gb200-inventory.yaml"]).inventory
    assert inv.objects["gb-b0"].parent == "nvl-b" and inv.objects["gb-b0"].labels["slurm_block"] == "b1"
    report = verify([conf, fx / "k8s-gb200-inventory.yaml"], VerifyRun(from_kind="slurm"))
    assert sorted((f.rule, f.message) for f in report.findings if f.rule.startswith("SCHED")) == [
        ("SCHED001", "The NVLink domain of gb-b0/gpu0 spans Slurm block b1 and b2."),
        ("SCHED002", "Slurm block b1 joins the NVLink domains of gb-a0/gpu0 and gb-b0/gpu0."),
    ]


@pytest.mark.parametrize("sizes", ["8,.nan,32", "8,16,0", "-3,16", "8,0x10", "1.5", "8,,16"])
def test_block_sizes_that_are_no_counts_of_nodes_are_refused(tmp_path: Path, sizes: str) -> None:
    # BlockSizes= lists numbers of nodes (topology.conf(5)); each of these holds one that is not a
    # positive whole number (not a number, zero, negative, hex, a fraction, an empty entry). The
    # error stands at line 2, where BlockSizes= is written, and names the first such entry.
    conf = tmp_path / "topology.conf"
    conf.write_text(f"BlockName=b1 Nodes=n[1-2]\nBlockSizes={sizes}\n")
    first = next(s for s in sizes.split(",") if not (s.isdigit() and int(s) > 0))
    with pytest.raises(TopologError) as err:
        import_files("slurm", [conf])
    assert [d.location.line for d in err.value.diagnostics] == [2]
    assert f"{first!r} is not a number of nodes" in err.value.diagnostics[0].message
