"""One link, one GPU, one counter seen in two observation files of one host is one observation.

Two files of one host folder may describe the same GPU (a copy of `nvlink-s.txt` beside it, a second run saved
under another name). Counted row by row, dgx03's GPU 5 (18 NVLinks, 2 inactive) read twice counted 32 active of
36 against the 18 its node declares, and OBS002 disappeared. Where the two files disagree, the worse report
stands, never silently the better one.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from verifier.facts.observed import ObservedSettings, observed_facts
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.observed.load import read_observations

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "dgx-h100-pod.yaml"
SHIPPED = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvlink-s.txt"
NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
GPU5 = "GPU 5: NVIDIA H100 80GB HBM3 (UUID: GPU-6f1c5a2e-4d3b-8c51-9e0f-2b7a5c5d8e31)"


def _links(tmp_path: Path, files: dict[str, str]) -> list[tuple[str | int, ...]]:
    """observed_scaleup_links rows of dgx03/gpu5, the files written in dgx03's folder."""
    host = tmp_path / "observed" / "dgx03"
    host.mkdir(parents=True)
    for name, text in files.items():
        (host / name).write_text(text)
    facts = observed_facts(
        load_inventory([INVENTORY]), read_observations([tmp_path / "observed"]), {}, ObservedSettings(now=NOW)
    )
    return [r for r in facts["observed_scaleup_links"] if r[0] == "dgx03/gpu5"]


def _gpu5(states: dict[int, str]) -> str:
    """GPU 5's `nvidia-smi nvlink -s` block: 18 links at 26.562 GB/s, those named in `states` as given."""
    lines = [GPU5] + [f"\t Link {i}: {states.get(i, '26.562 GB/s')}" for i in range(18)]
    return "\n".join(lines) + "\n"


def test_a_copy_of_the_shipped_file_counts_each_link_once(tmp_path: Path) -> None:
    text = SHIPPED.read_text()
    rows = _links(tmp_path, {"nvlink-s.txt": text, "nvlink-s-copy.txt": text})
    # By hand: GPU 5's block (lines 96-114) lists links 0-17, links 7 and 12 <inactive>: 16 active of 18 reported,
    # the first inactive at line 104 of the first file read (names sorted: nvlink-s-copy.txt before nvlink-s.txt).
    assert [r[1:4] for r in rows] == [("nvlink", 16, 18)]
    assert str(rows[0][4]).endswith("dgx03/nvlink-s-copy.txt:104")


def test_a_link_active_in_one_file_and_inactive_in_the_other_is_inactive(tmp_path: Path) -> None:
    # a.txt: all 18 active; b.txt: link 3 inactive. The worse stands: 17 active of 18, at b.txt's link 3 (line 5:
    # the header is line 1, link 0 line 2).
    rows = _links(tmp_path, {"a.txt": _gpu5({}), "b.txt": _gpu5({3: "<inactive>"})})
    assert [r[1:4] for r in rows] == [("nvlink", 17, 18)]
    assert str(rows[0][4]).endswith("dgx03/b.txt:5")


def test_all_links_inactive_in_one_file_leaves_none_active(tmp_path: Path) -> None:
    # b.txt says GPU 5's links are all inactive (nvidia-smi's one line for such a GPU): whatever a.txt says, GPU 5
    # has no active link (before: a.txt's 18 active rows counted, 18 of 19, and OBS002 stayed silent).
    down = f"{GPU5}\n\t NVML: Unable to retrieve NVLink information as all links are inActive\n"
    rows = _links(tmp_path, {"a.txt": _gpu5({}), "b.txt": down})
    assert [r[1:3] for r in rows] == [("nvlink", 0)]
