"""Review of f79c051: `--fail` of an NVSwitch chip under the fabric manager's NVSWITCH_FAILURE_MODE.

NVIDIA's Fabric Manager user guide, "Supported High Availability Modes": a failed GPU-NVSwitch access
link is answered by ACCESS_LINK_FAILURE_MODE (0, the default: the GPU leaves NVLink peer-to-peer),
whatever NVSWITCH_FAILURE_MODE says; NVSWITCH_FAILURE_MODE=1 disables a failed chip (and its peer on a
two-baseboard system) and keeps the GPUs at less bandwidth, but "if multiple NVSwitch failures occur,
FM will fall back to NVSWITCH_FAILURE_MODE=0" (the fabric left uninitialized). Every expected value is
derived by hand from the inventory written here.
"""

from __future__ import annotations

import pytest

from verifier.facts.graph import graph_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.scenario import apply_scenario, scenario_from

# Two nodes of one type whose fabric manager runs nvswitch_failure_mode 1 (access_link_failure_mode
# left at the default 0): four GPUs, three chips, every GPU with 6 NVLink 4 links to every chip.
BOARD = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: board}
templates:
  board:
    kind: node
    labels: {tenant: research, zone: us-east-1a}
    attrs: {nvswitch_failure_mode: 1}
    children:
      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 4}
      - {name: "nvsw{i}", kind: nvswitch, model: NVSwitch-Gen3, count: 3}
    links:
      - {a: "gpu{g}", b: "nvsw{s}", kind: nvswitch, generation: 4, count: 6, foreach: {g: 0..3, s: 0..2}}
objects:
  - {template: board, name: "n{i}", count: 2DOWN}
"""

# n0 untouched: its four GPUs are one domain, named after its first GPU.
N0 = [(f"n0/gpu{g}", "n0/gpu0") for g in range(4)]


def _domains_failed(*, fail: tuple[str, ...] = (), fail_links: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    text = BOARD.replace("DOWN", "")
    inv = apply_scenario(load_inventory_text(text, "board.yaml"), scenario_from(fail=fail, fail_links=fail_links))
    return sorted(tuple(r) for r in graph_facts(inv, ["scaleup_domain"])["scaleup_domain"])  # type: ignore[misc]


def _domains_written(*chips: str) -> list[tuple[str, str]]:
    devices = ", ".join(f"{c}: {{state: down}}" for c in chips)
    text = BOARD.replace("DOWN", f", overrides: {{n1: {{devices: {{{devices}}}}}}}")
    inv = load_inventory_text(text, "board.yaml")
    return sorted(tuple(r) for r in graph_facts(inv, ["scaleup_domain"])["scaleup_domain"])  # type: ignore[misc]


def test_a_failed_access_link_under_switch_mode_1_still_takes_its_gpu_out_of_nvlink() -> None:
    # `--fail-link n1/gpu0<->n1/nvsw1` is an access-link failure: ACCESS_LINK_FAILURE_MODE (0 here)
    # answers it, not NVSWITCH_FAILURE_MODE, so n1/gpu0 leaves NVLink (its own domain); gpu1..gpu3
    # still meet over all three chips (domain n1/gpu1).
    expected = [*N0, ("n1/gpu0", "n1/gpu0"), *[(f"n1/gpu{g}", "n1/gpu1") for g in (1, 2, 3)]]
    assert _domains_failed(fail_links=("n1/gpu0<->n1/nvsw1",)) == expected


def test_one_failed_chip_under_switch_mode_1_keeps_the_board_one_domain() -> None:
    # One chip of three failed: disabled, the GPUs meet over nvsw0 and nvsw2: n1 stays one domain,
    # failed (`--fail`) or written down alike.
    expected = [*N0, *[(f"n1/gpu{g}", "n1/gpu0") for g in range(4)]]
    assert _domains_failed(fail=("n1/nvsw1",)) == expected
    assert _domains_written("nvsw1") == expected


@pytest.mark.xfail(
    strict=True,
    reason="the fabric manager falls back to NVSWITCH_FAILURE_MODE=0 when several chips of a board fail "
    "(FM user guide, NVSwitch Failure); verifier/facts/graph.py fm_isolated_gpus and "
    "rules/topology/lib/platform.dl apply mode 1 per chip, and scenario.py _kept_by_fabric keeps every "
    "failed chip's links, so two failed chips still leave the board one NVLink domain",
)
def test_two_failed_chips_under_switch_mode_1_fall_back_to_mode_0() -> None:
    # nvsw0 and nvsw1 of n1 failed: two NVSwitch failures, the fabric manager falls back to mode 0
    # and leaves n1's fabric uninitialized: each of n1's four GPUs is a domain of its own (n0 whole).
    expected = [*N0, *[(f"n1/gpu{g}", f"n1/gpu{g}") for g in range(4)]]
    assert _domains_written("nvsw0", "nvsw1") == expected
    assert _domains_failed(fail=("n1/nvsw0", "n1/nvsw1")) == expected
