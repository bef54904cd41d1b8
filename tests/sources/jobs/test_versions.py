"""Version numbers: major*1000 + minor, in node facts (software_version) and job needs."""

from __future__ import annotations

import pytest

from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory.loader import load_inventory_text
from verifier.sources.inventory.software import version_number


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("12.4", 12004),
        ("12.10", 12010),
        ("6.1", 6001),
        ("6.1.2", 6001),
        ("535.104.05", 535104),
        ("12", 12000),
        (" 2.18.6 ", 2018),
        ("2.999", 2999),
    ],
)
def test_encoding(text: str, number: int) -> None:
    assert version_number(text) == number


@pytest.mark.parametrize("text", ["containerd 1.7.13", "amdgpu 6.7.0", "v12.4", "12.", "12.4-rc1", "", "1.1000"])
def test_unparsable_versions_have_no_number(text: str) -> None:
    assert version_number(text) is None


def test_software_version_facts() -> None:
    inv = load_inventory_text(
        """
apiVersion: topolog.dev/v1
kind: Inventory
objects:
  - name: n0
    kind: node
    software: {driver: "amdgpu 6.7.0", rocm: "6.1.2", cuda: "12.10", os: "Ubuntu 22.04"}
""",
        "inv.yaml",
    )
    facts = inventory_facts(inv)
    assert facts["software_version"] == [("n0", "rocm", 6001), ("n0", "cuda", 12010)]
    assert ("n0", "os", "Ubuntu 22.04") in facts["software"]
