"""The memory-hierarchy relations of rules/memory/ on shipped inventories, values by hand.

Figures come from the inventories: edge-soc.yaml (Apple M2: caches in KiB/MiB become
decimal KB, e.g. 128 KiB = 131 KB, 16 MiB = 16777 KB; LPDDR5 24 GB at 100 GB/s) and
gb200-nvl72.yaml (Grace LPDDR5X 480 GB at 512 GB/s; B200 186 GB HBM3e at 8 TB/s from the
catalogue). Both engines must give the same rows.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EDGE = "inventories/edge-soc.yaml"
ENGINES = ["duckdb", "pydatalog"]


pytestmark = pytest.mark.usefixtures("in_repo_root")


def _rows(inventory: str, query: str, engine: str) -> list[list[object]]:
    result = CliRunner().invoke(main, ["query", inventory, query, "--format", "json", "--engine", engine])
    assert result.exit_code == 0, result.output
    rows: list[list[object]] = json.loads(result.stdout)["rows"]
    return rows


@pytest.mark.parametrize("engine", ENGINES)
def test_mem_path_of_a_performance_core_and_the_gpu(engine: str) -> None:
    n = "edge-m2-01/"
    assert _rows(EDGE, 'mem_path("edge-m2-01/p0", L, S, K, B, T)', engine) == [
        [1, n + "p0-l1d", 131, 0, 0],  # 128 KiB
        [1, n + "p0-l1i", 197, 0, 0],  # 192 KiB
        [2, n + "l2-p", 16777, 0, 0],  # 16 MiB, the P cluster's L2
        [3, n + "slc", 8389, 0, 0],  # 8 MiB system-level cache, served to pcluster
        [4, n + "lpddr5", 24_000_000, 100_000, 0],  # memory one level below the SLC
    ]
    assert _rows(EDGE, 'mem_path("edge-m2-01/igpu", L, S, K, B, T)', engine) == [
        [3, n + "slc", 8389, 0, 0],
        [4, n + "lpddr5", 24_000_000, 100_000, 0],
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_cache_sharing_and_unified_memory(engine: str) -> None:
    n = "edge-m2-01/"
    assert _rows(EDGE, "shared_cache(C, L, N)", engine) == [[n + "l2-e", 2, 4], [n + "l2-p", 2, 4], [n + "slc", 3, 8]]
    assert _rows(EDGE, "cross_cluster_cache(C, N)", engine) == [[n + "slc", 2]]
    assert _rows(EDGE, f'core_cache("{n}l2-e", L, X, T, K)', engine) == [
        [2, f"{n}e{i}", "efficiency", "little"] for i in range(4)
    ]
    assert _rows(EDGE, "unified_memory_share(M, C, G, B)", engine) == [
        [n + "lpddr5", n + "ecluster", n + "igpu", 100_000],
        [n + "lpddr5", n + "pcluster", n + "igpu", 100_000],
    ]
    # The operator's budgets in the inventory: GPU 60 GB/s, P 25 + E 10 GB/s on the CPU side.
    assert _rows(EDGE, "side_demand_or_zero(M, S, V)", engine) == [
        [n + "lpddr5", "cpu", 35_000],
        [n + "lpddr5", "gpu", 60_000],
    ]


# One GB200 compute tray as gb200-nvl72.yaml's template declares it (2 Grace with their LPDDR5X,
# 4 Blackwells, NVLink-C2C from each Grace to its two GPUs), without the rack, the NVLink switch
# trays, the NICs and the fabric: the same memory and C2C figures, a fraction of the facts.
ONE_TRAY = """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata:
  name: gb200-one-tray
templates:
  gb200-compute-tray:
    kind: node
    children:
      - name: grace{i}
        kind: cpu
        model: Grace-72C
        count: 2
        children:
          - {name: "lpddr{i}", kind: memory, type: LPDDR5X, size: 480 GB, bandwidth: 512 GB/s}
      - {name: "gpu{i}", kind: gpu, model: B200-GB200-186GB, count: 4}
    links:
      - {a: grace0, b: "gpu{g}", kind: c2c, bandwidth: 450 GB/s, foreach: {g: [0, 1]}}
      - {a: grace1, b: "gpu{g}", kind: c2c, bandwidth: 450 GB/s, foreach: {g: [2, 3]}}
objects:
  - {template: gb200-compute-tray, name: tray00}
"""


def _gb200_tray00(inv: str, engine: str) -> None:
    assert _rows(inv, 'main_memory(D, M, K, B), node_of(D, "tray00")', engine) == [
        [f"tray00/gpu{g}", f"tray00/gpu{g}", 186_000_000, 8_000_000] for g in range(4)
    ] + [
        ["tray00/grace0", "tray00/lpddr0", 480_000_000, 512_000],
        ["tray00/grace1", "tray00/lpddr1", 480_000_000, 512_000],
    ]
    # NVLink-C2C: 450 GB/s per direction into Grace's 512 GB/s LPDDR5X, which both Blackwells of
    # the Grace read at once: each one's share is 512 / 2 = 256 GB/s (unified_memory_load_permille
    # 1000), below the link's 450, so the link does not cap the GPU and MEM002 reports nothing.
    assert _rows(inv, 'remote_read(M, "tray00/gpu2", L, K, B)', engine) == [
        ["tray00/lpddr1", "tray00/grace1<->tray00/gpu2", "c2c", 450_000]
    ]
    assert _rows(inv, 'memory_read_share("tray00/lpddr1", MB, T, C, S)', engine) == [[512_000, 1000, 2, 256_000]]
    assert _rows(inv, 'link_slower_than_memory(L, K, "tray00/gpu2", M, B, S, MB, T, C)', engine) == []


@pytest.mark.parametrize("engine", ENGINES)
def test_one_gb200_tray_memory_and_c2c(engine: str, tmp_path: Path) -> None:
    inv = tmp_path / "gb200-one-tray.yaml"
    inv.write_text(ONE_TRAY)
    _gb200_tray00(str(inv), engine)


# The whole rack on the reference engine (pydatalog, ~3 s a query) is in the slow run; the one
# tray above proves the same rows on both engines by default.
@pytest.mark.parametrize("engine", ["duckdb", pytest.param("pydatalog", marks=pytest.mark.slow)])
def test_gb200_memory_and_c2c(engine: str) -> None:
    _gb200_tray00("inventories/gb200-nvl72.yaml", engine)


def test_unified_memory_threshold_is_read(tmp_path: Path) -> None:
    # The edge SoC's budgets (95000 MB/s) fit 100000 MB/s, but not 900 per-mille of it (90000).
    override = tmp_path / "t.yaml"
    override.write_text("unified_memory_load_permille: 900\n")
    result = CliRunner().invoke(main, ["verify", EDGE, "--thresholds", str(override), "--format", "json"])
    findings = [f for f in json.loads(result.stdout)["findings"] if f["rule"] == "MEM003"]
    assert [f["message"] for f in findings] == [
        "unified memory edge-m2-01/lpddr5 is asked for 60000 MB/s by GPUs plus 35000 MB/s by CPUs"
        " = 95000 MB/s, above the 90000 MB/s allowed of its 100000 MB/s."
    ]


@pytest.mark.parametrize("engine", ENGINES)
def test_a_cache_that_holds_a_core_serves_that_core_only(engine: str, tmp_path: Path) -> None:
    # hwloc nests each POWER8 core under its own L3 (tests/sources/importers/fixtures/
    # power8gpudistances.xml, a real lstopo output, lines 11-28: four L3Cache objects of cache_size 8388608 B, each
    # holding one Core, inside one Package). Imported, the L3s are children of cpu0 and parents of
    # the cores: core0 (the first Core, under the first L3) uses l3cache0 alone, 8388608 B = 8389 KB,
    # then the package's NUMA node (local_memory 68556816384 B = 68,557,000 KB after rounding to MB),
    # not its three neighbours' private L3s as well.
    real = ROOT / "tests" / "sources" / "importers" / "fixtures" / "power8gpudistances.xml"
    imported = tmp_path / "p8.yaml"
    done = CliRunner().invoke(main, ["import", "hwloc", str(real), "-o", str(imported)])
    assert done.exit_code == 0, done.output
    n = "power8gpudistances/"
    assert _rows(str(imported), f'mem_path("{n}core0", L, S, K, B, T)', engine) == [
        [3, n + "l3cache0", 8389, 0, 0],
        [4, n + "numa0", 68_557_000, 0, 0],
    ]
