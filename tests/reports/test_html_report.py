"""The html report and `topolog draw`: the page's structure, the drawing's classes, SVG, determinism.

The page is checked through the JSON it embeds (what the script draws): every finding is
there with its subjects, and each subject that is hardware points at an element of the
drawing. What the browser does with it is tests/browser/'s.
"""

from __future__ import annotations

import fnmatch
import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run_cli
from reports.output_helpers import ROOT

from verifier.reports.drawing.dot import View, dot_path, dot_text
from verifier.reports.drawing.model import build
from verifier.reports.html_report import asset
from verifier.sources.inventory.loader import load_inventory

DGX = "inventories/dgx-h100-pod.yaml"
SCALE001_LINK = "dgx03/gpu2<->dgx03/nvsw1"
needs_dot = pytest.mark.skipif(dot_path() is None, reason="Graphviz's dot is not installed (apt-get install graphviz)")


def page_json(text: str) -> dict[str, Any]:
    match = re.search(r'<script type="application/json" id="topolog-data">(.*?)</script>', text, re.S)
    assert match is not None
    data: dict[str, Any] = json.loads(match.group(1))
    return data


def html_of(tmp_path: Path, *args: str, name: str = "r.html") -> tuple[int, str]:
    out = tmp_path / name
    code, _, err = run_cli("verify", *args, "--output", f"html={out}")
    assert code in (0, 1), err
    return code, out.read_text(encoding="utf-8")


def test_every_finding_and_its_subjects_are_on_the_page(tmp_path: Path) -> None:
    _, text = html_of(tmp_path, "inventories/mixed-fleet.yaml")
    data = page_json(text)
    _, out, _ = run_cli("verify", "inventories/mixed-fleet.yaml", "--format", "json")
    expected = [(f["rule"], f["severity"], f["subjects"], f["message"]) for f in json.loads(out)["findings"]]
    findings = data["findings"]
    assert isinstance(findings, list)
    assert [(f["rule"], f["severity"], f["subjects"], f["message"]) for f in findings] == expected
    nodes = {n["data"]["id"] for n in data["nodes"]}
    edges = {e["data"]["id"] for e in data["edges"]}
    rules = set()
    for f in findings:
        assert set(f["targets"]) <= nodes | edges
        assert f["location"].startswith("inventories/mixed-fleet.yaml:") or f["rule"] == "AUTHZ001"
        assert f["proof"] is not None  # an html report carries proofs, as json and sarif do
        rules.add(f["rule"])
        if f["rule"] in ("BW003", "BW005"):
            # They name NICs (BW003) and leaf switches (BW005). A finding's subject is never
            # folded into a representative: each is drawn as itself, under its own id.
            assert f["targets"] == sorted(f["subjects"])
        else:
            # AUTHZ001 names teams, which are not hardware: on the page, not on the drawing.
            assert f["rule"] == "AUTHZ001" and f["targets"] == []
    assert rules == {"BW003", "BW005", "AUTHZ001"}  # the file's faults (inventories/README.md)


def test_a_link_finding_points_at_the_wire_between_its_two_ends(tmp_path: Path) -> None:
    _, text = html_of(tmp_path, DGX)
    data = page_json(text)
    (finding,) = data["findings"]
    # TOPO005 names the degraded link and the GPU it takes out of NVLink: the GPU's box and the wire.
    assert finding["subjects"] == [SCALE001_LINK, "dgx03/gpu2"]
    gpu, wire = finding["targets"]
    assert gpu == "dgx03/gpu2"
    (edge,) = [e["data"] for e in data["edges"] if e["data"]["id"] == wire]
    # The link as written: GPU 2 to NVSwitch 1 of dgx03, 3 of 4 NVLink 4 links at 25 GB/s each.
    assert {edge["source"], edge["target"]} == {"dgx03/gpu2", "dgx03/nvsw1"}
    assert edge["mbps"] == 75_000 and edge["kind"] == "nvswitch"
    info = data["info"][wire]
    assert info["links"] == [SCALE001_LINK] and info["state"] == "degraded"
    # 75 GB/s is the narrowest scale-up link (the others run 4 x 25 or 5 x 25 GB/s): the bottleneck.
    assert info["bottleneck"] is True
    (scale_up,) = [c for c in data["classes"] if c["id"] == "scale-up"]
    assert scale_up["wires"] == [wire] and scale_up["mbps"] == 75_000


def test_alike_parts_are_drawn_once_with_a_count() -> None:
    inv = load_inventory([ROOT / DGX])
    drawing = build(inv, [SCALE001_LINK])
    counted = sorted((b.id, b.count) for b in drawing.boxes if b.count > 1)
    # rack0 holds dgx00..dgx03; dgx03 holds the finding's link, so it is drawn alone and
    # dgx00..dgx02 (alike) as dgx00 x3; rack1's dgx04..dgx07 are alike: dgx04 x4. The racks
    # differ (one holds dgx03). The four spines are alike (same model, role, links); the
    # eight leaves differ by their rail label.
    assert counted == [("dgx00", 3), ("dgx04", 4), ("spine0", 4)]
    # Boxes: pod0, rack0, rack1, 8 leaves, 1 spine = 12, plus 3 nodes drawn whole at 29
    # objects each (node, 2 CPUs, 2 DRAM, 8 GPUs, 4 NVSwitches, 4 PCIe switches, 8 NICs) = 99.
    assert len(drawing.boxes) == 12 + 3 * 29
    # Wires: 53 links inside each drawn node (32 GPU-NVSwitch, 16 GPU/NIC-PCIe, 4 PCIe-CPU,
    # 1 UPI) = 159; a NIC-leaf wire per rail from each drawn node = 24; a leaf-spine wire per
    # leaf to the one spine drawn = 8. Total 191, standing for all 520 links of the file.
    assert len(drawing.wires) == 159 + 24 + 8
    assert sum(w.count for w in drawing.wires) == 520
    assert drawing.drawn["dgx01/gpu5"] == "dgx00/gpu5" and drawing.drawn["dgx07"] == "dgx04"
    assert [(d.host, d.gpus) for d in drawing.domains] == [("dgx00", 8), ("dgx03", 8), ("dgx04", 8)]


def test_the_drawing_does_not_grow_with_the_fleet(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.verify_bench import Layout, inventory_yaml
    finally:
        sys.path.remove(str(ROOT))
    sizes = {}
    for gpus in (512, 1024):  # 2 and 4 scalable units: the first holds the outliers, the rest are alike
        path = tmp_path / f"fleet-{gpus}.yaml"
        path.write_text(inventory_yaml(Layout(gpus)), encoding="utf-8")
        drawing = build(load_inventory([path]))
        sizes[gpus] = (len(drawing.boxes), len(drawing.wires))
        pods = sorted((b.id, b.count) for b in drawing.boxes if b.obj.kind == "pod")
        assert pods == [("su0000", 1), ("su0001", gpus // 256 - 1)]
    assert sizes[512] == sizes[1024]


def test_inventory_text_cannot_close_the_script(tmp_path: Path) -> None:
    hostile = "</script><script>alert(1)</script><!--"
    inv = tmp_path / "inv.yaml"
    note = json.dumps(hostile)
    inv.write_text(
        "apiVersion: topolog.dev/v1\nkind: Inventory\nmetadata: {name: t}\nobjects:\n"
        f"  - {{name: n0, kind: node, labels: {{note: {note}}}, children: [{{name: gpu0, kind: gpu}}]}}\n",
        encoding="utf-8",
    )
    out = tmp_path / "t.html"
    code, _, err = run_cli("draw", str(inv), "-o", str(out))
    assert code == 0, err
    text = out.read_text(encoding="utf-8")
    assert "alert(1)" not in text.replace("alert(1)\\u003c", "")  # only inside the escaped JSON
    assert text.count("</script>") == 3  # the data, cytoscape.js and the page's script
    assert page_json(text)["info"]["n0"]["labels"] == {"note": hostile}


def test_the_page_is_self_contained_and_byte_identical(tmp_path: Path) -> None:
    _, first = html_of(tmp_path, DGX, name="a.html")
    _, second = html_of(tmp_path, DGX, name="b.html")
    assert first == second
    assert "default-src 'none'" in first  # the browser refuses every fetch the page might try
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)=", first)
    assert asset("cytoscape.min.js") in first


def test_the_assets_travel_in_the_wheel() -> None:
    # tests/test_packaging.py builds the wheel; this is the cheap check of what makes them go in it.
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "verifier.reports.drawing" in setuptools["packages"]
    patterns = setuptools["package-data"]["verifier"]
    assets = sorted(p.relative_to(ROOT / "verifier").as_posix() for p in (ROOT / "verifier/reports/assets").iterdir())
    assert assets == [
        "reports/assets/README.md",
        "reports/assets/cytoscape.LICENSE",
        "reports/assets/cytoscape.min.js",
        "reports/assets/topology.css",
        "reports/assets/topology.js",
    ]
    assert all(any(fnmatch.fnmatch(a, p) for p in patterns) for a in assets)


@needs_dot
def test_svg_of_a_node_and_of_the_fabric(tmp_path: Path) -> None:
    node = tmp_path / "node.svg"
    code, _, err = run_cli("draw", DGX, "-o", str(node), "--node", "dgx05")
    assert code == 0, err
    text = node.read_text(encoding="utf-8")
    assert text.lstrip().startswith("<?xml") and "<svg" in text and "Generated by graphviz" not in text
    # dgx05 is alike dgx04..dgx07 but asked for, so drawn as itself: its 8 GPUs, nothing of dgx04.
    assert all(f'id="dgx05/gpu{i}"' in text for i in range(8)) and "dgx04" not in text
    fabric = tmp_path / "fabric.svg"
    code, _, err = run_cli("draw", DGX, "-o", str(fabric), "--fabric")
    assert code == 0, err
    text = fabric.read_text(encoding="utf-8")
    assert 'id="leaf0"' in text and 'id="dgx00"' in text and "gpu0" not in text
    again = tmp_path / "again.svg"
    run_cli("draw", DGX, "-o", str(again), "--fabric")
    assert again.read_bytes() == fabric.read_bytes()


def test_fabric_view_folds_nodes_and_keeps_their_fabric_links() -> None:
    drawing = build(load_inventory([ROOT / DGX]))
    text = dot_text(drawing, View(fabric=True), detailed=False)
    edges = re.findall(r'^  "([^"]+)" -- "([^"]+)"', text, re.M)
    # Even with no finding, dgx03 (its degraded NVLink) is an outlier: rack0 draws dgx00 x3 and
    # dgx03, rack1 dgx04 x4. Each node's 8 NICs fold into 8 node-leaf edges (24), plus one
    # edge from each of the 8 leaves to the one spine drawn.
    nodes = ("dgx00", "dgx03", "dgx04")
    expected = [(n, f"leaf{r}") for n in nodes for r in range(8)] + [(f"leaf{r}", "spine0") for r in range(8)]
    assert sorted(edges) == sorted(expected)


def test_draw_names_what_is_wrong(tmp_path: Path) -> None:
    code, _, err = run_cli("draw", DGX, "--node", "dgx1", "--format", "dot")
    assert code == 2 and f"{DGX}: --node dgx1: no such object; did you mean dgx01?" in err
    code, _, err = run_cli("draw", DGX, "--node", "dgx00/gpu0", "--format", "dot")
    assert code == 2 and "not a node, rack, pod or fleet" in err
    code, _, err = run_cli("draw", "missing.yaml", "-o", str(tmp_path / "x.html"))
    assert code == 2 and "missing.yaml" in err and "Traceback" not in err


def test_svg_without_graphviz_says_what_to_install(tmp_path: Path) -> None:
    # A fresh interpreter whose PATH has no dot: exit 2 and the package to install, no traceback.
    env = {"PATH": str(tmp_path), "HOME": str(tmp_path)}
    code = "from verifier.cli.main import run; run()"
    done = subprocess.run(
        [sys.executable, "-c", code, "draw", DGX, "-o", str(tmp_path / "x.svg")],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert "Graphviz's dot program is not on PATH" in done.stderr and "apt-get install graphviz" in done.stderr
    assert "Traceback" not in done.stderr and not (tmp_path / "x.svg").exists()


def test_output_html_without_format_is_hinted() -> None:
    code, _, err = run_cli("verify", DGX, "--output", "report.html")
    assert code == 2 and "--output html=report.html" in err
    code, _, err = run_cli("verify", DGX, "--output", "htm=report.html")
    assert code == 2 and "did you mean html=report.html?" in err
