"""Files are one inventory when they declare the same metadata.name (verifier/sources/inventory/clusters.py)."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.inventory.clusters import cluster_files

ROOT = Path(__file__).resolve().parent.parent.parent.parent
EDGE = (ROOT / "inventories" / "edge-soc.yaml").read_text()


def _write(tmp: Path, name: str, text: str) -> Path:
    path = tmp / name
    path.write_text(text)
    return path


def _named(name: str | None, body: str = "objects: []\n", kind: str = "Inventory") -> str:
    meta = f"metadata:\n  owner: x\n  name: {name}\n" if name is not None else ""
    return f"apiVersion: topolog.dev/v1\nkind: {kind}\n{meta}{body}"


def test_grouped_by_declared_name_catalogues_shared_unnamed_together(tmp_path: Path) -> None:
    a1 = _write(tmp_path, "a1.yaml", _named("a"))
    b = _write(tmp_path, "b.yaml", _named("b"))
    a2 = _write(tmp_path, "a2.yaml", _named("a"))
    cat = _write(tmp_path, "cat.yaml", _named(None, "catalog: {models: []}\n", kind="Catalog"))
    u1 = _write(tmp_path, "u1.yaml", _named(None))
    u2 = _write(tmp_path, "u2.yaml", "objects: []\n")  # no header at all: unnamed
    broken = _write(tmp_path, "broken.yaml", "metadata: [unclosed\n")  # the loader reports it
    groups = cluster_files([a1, b, a2, cat, u1, u2, broken])
    # In order of each cluster's first file; the catalogue joins every cluster where it was given.
    assert [(g.name, [p.name for p in g.paths]) for g in groups] == [
        ("a", ["a1.yaml", "a2.yaml", "cat.yaml"]),
        ("b", ["b.yaml", "cat.yaml"]),
        (str(u1), ["cat.yaml", "u1.yaml", "u2.yaml", "broken.yaml"]),  # unnamed: called by its first file
    ]


def test_name_after_other_keys_and_flow_style_is_found(tmp_path: Path) -> None:
    late = _write(
        tmp_path,
        "late.yaml",
        "apiVersion: topolog.dev/v1\nobjects:\n  - {name: x, kind: node}\n"
        "metadata: {owner: me, labels: {name: not-this}, name: late}\nkind: Inventory\n",
    )
    other = _write(tmp_path, "other.yaml", _named("other"))
    assert [g.name for g in cluster_files([late, other])] == ["late", "other"]


def test_verify_two_clusters_reports_each_and_refuses_merge(tmp_path: Path) -> None:
    """Two copies of edge-soc.yaml share every id: as two clusters both pass, as one they collide."""
    a = _write(tmp_path, "a.yaml", EDGE)
    b = _write(tmp_path, "b.yaml", EDGE.replace("  name: edge-soc\n", "  name: edge-soc-b\n", 1))
    code, out, _err = run_cli("verify", str(a), str(b))
    assert code == 0, out
    assert "0 findings" in out
    b.write_text(EDGE)
    code, _out, err = run_cli("verify", str(a), str(b))
    assert code == 2 and "duplicate id 'edge-m2-01'" in err


def test_single_inventory_commands_refuse_several_clusters(tmp_path: Path) -> None:
    a = _write(tmp_path, "a.yaml", EDGE)
    b = _write(tmp_path, "b.yaml", EDGE.replace("  name: edge-soc\n", "  name: edge-soc-b\n", 1))
    code, _out, err = run_cli("query", str(a), str(b), 'object(X, "gpu")')
    assert code == 2
    assert "these files describe 2 clusters" in err and "edge-soc-b" in err
