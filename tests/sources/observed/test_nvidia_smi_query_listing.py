"""`nvidia-smi --query-gpu` CSV as a listing of its host's GPUs (verify --observed on dgx02 of the shipped pod, whose
eight GPUs are matched by index). Without this listing rule, a query file proves no GPU missing or short (no OBS006,
no OBS009), so each test fails before it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]


def _findings(tmp_path: Path, text: str) -> list[tuple[str, list[str], str]]:
    (tmp_path / "dgx02").mkdir()
    (tmp_path / "dgx02" / "gpus.csv").write_text(text)
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories/dgx-h100-pod.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code in (0, 1), err
    found = json.loads(out)["findings"]
    return sorted((f["rule"], f["subjects"], f["message"]) for f in found if f["rule"].startswith("OBS"))


def _rows(indexes: range, count: int | None) -> str:
    header = "index, count, pcie.link.width.current" if count is not None else "index, pcie.link.width.current"
    rows = [f"{i}, {count}, 16" if count is not None else f"{i}, 16" for i in indexes]
    return "\n".join([header, *rows]) + "\n"


def test_counted_whole_listing_short_of_the_declaration_fails_closed(tmp_path: Path) -> None:
    # count 7, rows for GPUs 0-6: the listing is whole (7 of 7 the driver counts), dgx02 declares gpu0-gpu7 by index
    # only. NVML numbers the 7 GPUs it sees from 0, so which declared GPU is gone is not known (gpu3 dropped would
    # make rows 3-6 gpu4-gpu7): one OBS014 for dgx02 (OB63; before: OBS006 for dgx02/gpu7, a guess).
    found = _findings(tmp_path, _rows(range(7), 7))
    assert [(rule, subjects) for rule, subjects, _m in found] == [("OBS014", ["dgx02"])]
    assert "numbered 0, 1, 2, 3, 4, 5, 6 by NVML (the 7 GPUs its driver counts" in found[0][2]


@pytest.mark.parametrize(
    ("count", "words"),
    [
        (8, "shows 7 of the 8 GPUs the driver of dgx02 counts"),
        (
            None,
            "shows 7 of the 8 GPUs dgx02 declares (nvidia-smi-query-gpu prints no count of its host's GPUs): a "
            "selection (-i)",
        ),
    ],
)
def test_fewer_rows_is_one_warning_and_no_gpu_missing(tmp_path: Path, count: int | None, words: str) -> None:
    # 7 rows (GPUs 0-6): with count 8, fewer than the driver counts; without count, fewer than the 8 declared. Either
    # way a selection or a GPU the tool cannot read: one OBS009 for dgx02, no OBS006.
    found = _findings(tmp_path, _rows(range(7), count))
    assert [(rule, subjects) for rule, subjects, _m in found] == [("OBS009", ["dgx02"])]
    assert words in found[0][2]


def test_uncounted_listing_of_all_declared_gpus_is_whole_and_clean(tmp_path: Path) -> None:
    # 8 rows, GPUs 0-7, all x16 on their declared x16 links: nothing to report.
    assert _findings(tmp_path, _rows(range(8), None)) == []


def test_rows_by_uuid_alone_name_no_gpu_missing(tmp_path: Path) -> None:
    # The pod declares no GPU UUIDs, so rows naming GPUs by UUID alone match nothing (each OBS005, 8 of them) and,
    # without an index, the file proves no declared GPU missing: no OBS006.
    uuids = [f"GPU-{i:08x}-0000-0000-0000-000000000000" for i in range(8)]
    found = _findings(tmp_path, "uuid, pcie.link.width.current\n" + "".join(f"{u}, 16\n" for u in uuids))
    assert sorted({rule for rule, _s, _m in found}) == ["OBS005"]
    assert len(found) == 8
