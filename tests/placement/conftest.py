"""Fixtures of the placement tests."""

from __future__ import annotations

import pytest

from verifier.placement import profile_gpus


@pytest.fixture
def nodes_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The nodes whose GPUs GpusByProfile reads by a query (`_read_node`), in the order read; a
    profile named from its twin (GpusByProfile.twins) adds none."""
    read: list[str] = []
    read_node = profile_gpus.GpusByProfile._read_node

    def spied(self: profile_gpus.GpusByProfile, node: str) -> None:
        read.append(node)
        read_node(self, node)

    monkeypatch.setattr(profile_gpus.GpusByProfile, "_read_node", spied)
    return read
