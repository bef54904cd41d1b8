"""verifier.facts.observed: observations matched to declared GPUs, and what a stale file may not say.

Observations are built here as the readers would build them (verifier/sources/observed/model.py);
every expected row is derived by hand from them and the two-GPU node below.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from verifier.core.errors import SourceLocation
from verifier.facts.observed import ObservedSettings, observed_facts
from verifier.sources.inventory.loader import load_inventory
from verifier.sources.observed.model import (
    GpuObservation,
    GpuRef,
    Observations,
    ObservedFile,
    ScaleupLinkObservation,
)

INVENTORY = """apiVersion: topolog.dev/v1
objects:
  - name: n1
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
"""
NOW = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)
THRESHOLDS = {"observed_max_age_s": 86_400}


def _gpu(file: str, line: int, index: int, when: datetime, **fields: object) -> GpuObservation:
    return GpuObservation(
        SourceLocation(file, line, 5),
        when,
        "n1",
        "nvidia",
        index=index,
        uuid=f"GPU-{index}",
        **fields,  # type: ignore[arg-type]
    )


def _facts(tmp_path: Path, obs: Observations) -> dict[str, list[tuple[str | int, ...]]]:
    path = tmp_path / "inv.yaml"
    path.write_text(INVENTORY)
    return observed_facts(load_inventory([path]), obs, THRESHOLDS, ObservedSettings(now=NOW))


def test_a_stale_file_is_reported_and_nothing_else_of_it_trusted(tmp_path: Path) -> None:
    old = datetime(2026, 12, 4, 9, 0, tzinfo=UTC)  # 172,800 s before NOW: over the 86,400 s threshold
    fresh = datetime(2026, 12, 6, 8, 0, tzinfo=UTC)  # 3,600 s: trusted
    obs = Observations(
        gpus=(
            _gpu("old.xml", 7, 0, old, remapped_rows_failed=True),
            _gpu("new.xml", 7, 0, fresh, pcie_width_current=8, pcie_width_max=16),
        ),
        files=(
            ObservedFile("new.xml", "nvidia-smi-q-xml", "n1", fresh),
            ObservedFile("old.xml", "nvidia-smi-q-xml", "n1", old),
        ),
        hosts=("n1",),
    )
    rows = _facts(tmp_path, obs)
    assert rows["observed_stale"] == [("n1", "old.xml", "2026-12-04T09:00:00Z", 172_800, 86_400)]
    assert rows["observed_node"] == [("n1", "new.xml"), ("n1", "old.xml")]
    assert rows["observed_listing"] == [("n1", "new.xml")]  # the stale listing proves nothing missing
    assert rows["observed_flag"] == []  # the stale file's failed remapping is not trusted
    assert rows["observed_gpu"] == [("n1/gpu0", "index", "new.xml:7:5")]
    assert rows["observed_pcie_width"] == [("n1/gpu0", 8, 16, "new.xml:7:5")]


def test_links_counted_per_gpu_with_the_first_inactive_line(tmp_path: Path) -> None:
    def link(number: int, state: str, line: int) -> ScaleupLinkObservation:
        speed = 26_562 if state == "active" else None
        return ScaleupLinkObservation(
            SourceLocation("s.txt", line), None, GpuRef("n1", "GPU-1", None, 1), number, state, speed, "nvlink"
        )

    # GPU 1 (matched by index: the node declares no UUID): links 0-3 on lines 9-12, 1 and 3 inactive.
    obs = Observations(
        links=(link(0, "active", 9), link(1, "inactive", 10), link(2, "active", 11), link(3, "inactive", 12)),
        files=(ObservedFile("s.txt", "nvidia-smi-nvlink-s", "n1", None),),
        hosts=("n1",),
    )
    rows = _facts(tmp_path, obs)
    assert rows["observed_scaleup_links"] == [("n1/gpu1", "nvlink", 2, 4, "s.txt:10")]
    assert rows["observed_listing"] == []  # nvlink -s lists links, not every GPU the driver sees
    assert rows["observed_unmatched"] == []


def test_an_unknown_host_and_an_unmatched_gpu(tmp_path: Path) -> None:
    obs = Observations(
        gpus=(_gpu("n1.xml", 42, 5, NOW),),  # index 5: n1 declares gpu0 and gpu1 only
        files=(
            ObservedFile("n1.xml", "nvidia-smi-q-xml", "n1", NOW),
            ObservedFile("ghost.xml", "nvidia-smi-q-xml", "ghost", NOW),
        ),
        hosts=("ghost", "n1"),
    )
    rows = _facts(tmp_path, obs)
    assert rows["observed_unknown_host"] == [("ghost", "ghost.xml")]
    assert rows["observed_unmatched"] == [("n1", "GPU 5 (GPU-5)", "index 5 is not declared in n1", "n1.xml:42:5")]
