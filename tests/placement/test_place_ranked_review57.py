"""Review of 79d24a4: a job with TP groups (a model) is still ranked by the per-domain loop of
_Picker.ranked, which since 79d24a4 reads a domain's one profile from `only` beside the domains of
several profiles listed in `eligible` (before, any domain of several made every domain a list).

tests/placement/fixtures/ranked_columns.yaml: n0, n3 (4 H100s on one NVSwitch, one profile), n1 (the
same with gpu1 labelled: two eligible profiles, listed), n2 (gpu3 down), m0 (two NVLink islands of
two GPUs); $2.00 per GPU-hour, n3 $1.00.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from verifier.placement import place as placement
from verifier.session.place_run import place

HERE = Path(__file__).resolve().parent / "fixtures"
INVENTORY = HERE / "ranked_columns.yaml"

# Llama-3-70B in bf16 as inventories/jobs/serving.yaml: 164,738 MB a replica; TP=2 needs 82,369 MB /
# 0.9 = 91,521 MB > 80,000, TP=4 41,185 MB / 0.9 = 45,761 MB: TP=4 x PP=1, 4 GPUs in one scale-up domain.
MODEL = (
    "{parameters: 70B, weight_precision: bf16, kv_precision: fp16, layers: 80, attention_heads: 64, "
    "kv_heads: 8, head_dim: 128, context: 8192, batch: 4, gpu_memory_utilization: 0.9}"
)
JOBS = f"""apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - {{name: tp4-node, principal: anyone, topology: {{scope: node}}, model: {MODEL}}}
  - {{name: tp4-nvlink, principal: anyone, topology: {{scope: nvlink_domain}}, model: {MODEL}}}
"""

NVSWITCH, PCIE5_X16 = 450_000, 63_008  # a pair on one NVSwitch (450 GB/s), across PCIe Gen5 x16; MB/s
FOUR, FOUR_N3 = 4 * 200_000, 4 * 100_000  # 4 GPUs at $2.00 (n3: $1.00) a GPU-hour, in millicents


def _four(node: str) -> tuple[str, ...]:
    return tuple(f"{node}/gpu{i}" for i in range(4))


def _answers(jobs: Path, rank: str, limit: int) -> dict[str, tuple[int, int, list[tuple[Any, ...]]]]:
    report = place([INVENTORY], [jobs], rank=rank, limit=limit, authorize=False)
    return {
        jp.job.name: (
            jp.candidates,
            jp.hosting,
            [(p.domain, p.bottleneck_mbps, p.cost_millicents_per_hour, p.gpus) for p in jp.placements],
        )
        for jp in report.jobs
    }


@pytest.fixture
def jobs(tmp_path: Path) -> Path:
    path = tmp_path / "tp_jobs.yaml"
    path.write_text(JOBS, encoding="utf-8")
    return path


def test_tp_groups_with_a_node_of_two_profiles_by_hand(jobs: Path) -> None:
    """A layout per domain: a whole TP=4 group in one scale-up domain on n0, n1 (its two profiles
    together) and n3; on m0, whose scale-up domains hold 2, TP=2 x PP=2 (same 41,185 MB a GPU), one
    group per island, the pair gpu0-gpu2 across PCIe Gen5 x16 (3,938 MB/s a lane x 16 = 63,008 MB/s).
    n2 has 3 GPUs in service: no TP=4 group, one TP=2 group of the 2 needed. Scope nvlink_domain: m0's
    islands hold 2 GPUs each, too few. Candidates: the 5 nodes; the 7 NVLink domains (n0-n3's, m0's
    two, n2's gpu3 alone). By bandwidth: 450 GB/s on one node by name, m0 last; by cost: n3, then
    the $2.00 nodes by bandwidth (m0 after them) and name."""
    by_bandwidth = _answers(jobs, "bandwidth", 0)
    assert by_bandwidth["tp4-node"] == (
        5,
        4,
        [
            ("n0", NVSWITCH, FOUR, _four("n0")),
            ("n1", NVSWITCH, FOUR, _four("n1")),
            ("n3", NVSWITCH, FOUR_N3, _four("n3")),
            ("m0", PCIE5_X16, FOUR, _four("m0")),
        ],
    )
    assert by_bandwidth["tp4-nvlink"] == (
        7,
        3,
        [
            ("n0/gpu0", NVSWITCH, FOUR, _four("n0")),
            ("n1/gpu0", NVSWITCH, FOUR, _four("n1")),
            ("n3/gpu0", NVSWITCH, FOUR_N3, _four("n3")),
        ],
    )
    by_cost = _answers(jobs, "cost", 2)
    assert by_cost["tp4-node"] == (5, 4, [("n3", NVSWITCH, FOUR_N3, _four("n3")), ("n0", NVSWITCH, FOUR, _four("n0"))])
    assert by_cost["tp4-nvlink"] == (
        7,
        3,
        [("n3/gpu0", NVSWITCH, FOUR_N3, _four("n3")), ("n0/gpu0", NVSWITCH, FOUR, _four("n0"))],
    )


def test_tp_groups_rank_as_with_every_domain_listed(jobs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loop's answers with `only` beside `eligible` equal those with every domain listed (the
    reading before 79d24a4), both ranks, limits 0, 1 and above the count."""
    cases = [(rank, limit) for rank in placement.RANKS for limit in (0, 1, 9)]
    mixed = [_answers(jobs, rank, limit) for rank, limit in cases]
    read = placement._Picker._eligible

    def listed(self: placement._Picker, *args: Any) -> Any:
        only, eligible, sizes = read(self, *args)
        return {}, {**{d: [p] for d, p in only.items()}, **eligible}, sizes

    monkeypatch.setattr(placement._Picker, "_eligible", listed)
    assert [_answers(jobs, rank, limit) for rank, limit in cases] == mixed
