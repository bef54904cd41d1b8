"""A 131,072-GPU fleet written with templates loads and becomes facts in seconds (-m slow)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.slow
def test_131k_gpus(tmp_path: Path) -> None:
    text = (ROOT / "inventories" / "dgx-h100-pod.yaml").read_text(encoding="utf-8")
    text = (
        text.replace('count: 2\n        labels: {row: "A"}', 'count: 4096\n        labels: {row: "A"}')
        .replace("dgx{seq:02d}", "dgx{seq:05d}")
        .replace("dgx{n:02d}", "dgx{n:05d}")
        .replace("n: 0..7, r: 0..7", "n: 0..16383, r: 0..7")
        .replace("dgx03:", "dgx00003:")
    )
    path = tmp_path / "big.yaml"
    path.write_text(text, encoding="utf-8")
    start = time.process_time()
    inv = load_inventory([path])
    facts = inventory_facts(inv)
    cpu = time.process_time() - start
    assert inv.count("gpu") == 131_072
    assert len(facts["link"]) == 16_384 * 53 + 16_384 * 8 + 32
    assert cpu < 15, cpu
