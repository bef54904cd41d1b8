"""Node-class summaries on disk: a hit is the same rows without networkx, anything else is worked out again."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.core import cache
from verifier.facts import class_cache, graph
from verifier.facts.graph import graph_facts
from verifier.sources.inventory.loader import load_inventory_text

ROOT = Path(__file__).resolve().parents[2]

# Two nodes of one template: one class. gpu0-gpu1 through the NVSwitch (max-flow 450 GB/s);
# gpu2 only over PCIe Gen4 x16 to cpu0: 31,504 MB/s, nvidia-smi's PHB (same root complex).
NODES = """\
apiVersion: topolog.dev/v1
templates:
  box:
    kind: node
    children:
      - {name: cpu0, kind: cpu}
      - {name: "gpu{i}", kind: gpu, count: 3}
      - {name: nvsw0, kind: nvswitch}
    links:
      - {a: "gpu{g}", b: nvsw0, kind: nvswitch, bandwidth: 450 GB/s, foreach: {g: [0, 1]}}
      - {a: "gpu{g}", b: cpu0, kind: pcie, generation: 4, lanes: 16, foreach: {g: [0, 1, 2]}}
objects:
  - {template: box, name: "n{i}", count: 2}
"""
EXPECTED = [
    ("n0/gpu0", "n0/gpu1", "NV", 450000),
    ("n0/gpu0", "n0/gpu2", "PHB", 31504),
    ("n0/gpu1", "n0/gpu2", "PHB", 31504),
    ("n1/gpu0", "n1/gpu1", "NV", 450000),
    ("n1/gpu0", "n1/gpu2", "PHB", 31504),
    ("n1/gpu1", "n1/gpu2", "PHB", 31504),
]


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    where = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV_DIR, str(where))
    return where


def _pairs(text: str = NODES) -> list[tuple[str | int, ...]]:
    return sorted(graph_facts(load_inventory_text(text, "t.yaml"), {"gpu_pair_bottleneck"})["gpu_pair_bottleneck"])


def test_a_second_run_reads_the_classes_back_without_working_them_out(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _pairs() == EXPECTED
    assert len(list(folder.glob(f"{class_cache.KIND}-*"))) == 1

    def no_class(*_args: object) -> None:
        raise AssertionError("worked out again although the cache holds this class")

    monkeypatch.setattr(graph, "_NodeClass", no_class)
    assert _pairs() == EXPECTED


def test_a_changed_node_is_worked_out_again(folder: Path) -> None:
    assert _pairs() == EXPECTED
    # The NVSwitch links at 300 GB/s: a stale entry would still say 450,000 MB/s.
    narrower = _pairs(NODES.replace("bandwidth: 450 GB/s", "bandwidth: 300 GB/s"))
    assert [r for r in narrower if r[2] == "NV"] == [
        ("n0/gpu0", "n0/gpu1", "NV", 300000),
        ("n1/gpu0", "n1/gpu1", "NV", 300000),
    ]
    assert len(list(folder.glob(f"{class_cache.KIND}-*"))) == 2


def test_another_question_is_another_entry(folder: Path) -> None:
    inv = load_inventory_text(NODES, "t.yaml")
    # Only PCIe paths asked for, then the pairs: the first entry holds no pairs, so it must not answer the second.
    graph_facts(inv, {"pcie_path"})
    assert _pairs() == EXPECTED
    assert len(list(folder.glob(f"{class_cache.KIND}-*"))) == 2


def test_an_entry_for_other_shapes_is_a_miss(folder: Path) -> None:
    shape = ((("gpu0", "gpu", None, 0),), ())
    key = class_cache.classes_key([shape], {"gpu_nic_path"})
    assert key is not None  # the cache is on (the `folder` fixture)
    class_cache.remember_classes(key, [shape], [{"gpu_nic_path": []}])
    assert class_cache.cached_classes(key, [shape]) == [{"gpu_nic_path": []}]
    other = ((("gpu1", "gpu", None, 1),), ())
    assert class_cache.cached_classes(key, [other]) is None


def test_the_cache_off_gives_the_same_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cache.ENV_DIR, "")
    assert _pairs() == EXPECTED


def _imports_networkx(cache_dir: Path, *options: str) -> bool:
    args = ["topolog", "verify", "inventories/dgx-h100-pod.yaml", "--format", "json", *options]
    script = (
        "import sys\n"
        "from verifier.cli.main import run\n"
        f"sys.argv = {args!r}\n"
        "try:\n"
        "    run()\n"
        "except SystemExit:\n"
        "    pass\n"
        # networkx is registered at once as a lazy module (verifier/core/lazy.py); its
        # subpackages appear only once it really runs.
        "print('networkx.algorithms' in sys.modules, file=sys.stderr)\n"
    )
    if not options:  # a stale compiled pack is parsed, and stratifying imports networkx
        script += "print('verifier.engine.parser' in sys.modules, file=sys.stderr)\n"
    env = {**os.environ, cache.ENV_DIR: str(cache_dir)}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, check=False, timeout=300
    )
    lines = done.stderr.strip().splitlines()
    if not options:
        if lines[-1] == "True":
            pytest.skip("shipped_program.json is not current (test_shipped_program fails): the pack was parsed")
        lines.pop()
    assert lines[-1] in ("True", "False"), done.stderr
    return lines[-1] == "True"


def test_verify_does_not_import_networkx_cold_or_warm(tmp_path: Path) -> None:
    # The shipped pack is read compiled and the pod's node class is worked out in plain Python
    # (verifier.facts.small_graph), so neither the first run (empty cache) nor the second imports it.
    assert not _imports_networkx(tmp_path / "cache")
    assert not _imports_networkx(tmp_path / "cache")
    # The detection sees it when it is paid: a rule set that is not the compiled pack is parsed,
    # and stratifying it uses networkx.
    own = ("--no-shipped-rules", "--rules", "rules/schema.dl", "--rules", "rules/topology")
    assert _imports_networkx(tmp_path / "other", *own)


def test_the_cache_off_works_out_no_entry_name(monkeypatch: pytest.MonkeyPatch) -> None:
    # With the cache off nothing is read or written, so no entry is named: no code digest is read
    # and no shape printed (a cold run's few milliseconds); the rows are still worked out.
    monkeypatch.setenv(cache.ENV_DIR, "")
    assert class_cache.classes_key([((("gpu0", "gpu", None, 0),), ())], {"gpu_nic_path"}) is None
    assert _pairs() == EXPECTED
