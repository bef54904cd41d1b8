"""Review R-RT (round 16): a bare-metal host whose driver dropped a GPU is not a silent pass.

A GPU's device minor number stays what the driver gave it at boot when another GPU falls off the bus, is drained
or fails to initialise, while nvidia-smi numbers the GPUs it still sees 0..n-1 (kubernetes-sigs/dra-driver-nvidia-gpu
PR 428: "it wont change if one of the GPUs falls off the bus or is explicitly drained"; microsoft/pai#4344: a
4-GPU node whose GPU at minor number 0 failed RmInitAdapter and whose nvidia-smi reports 3 GPUs). Such a listing
has a minor number at or above its count, the shape of a container's view (model.container_numbered): which one,
the file cannot say. Before this review the GPUs it left out were silently not judged (the base said OBS006 for
them); the review made it one OBS009 warning, and RT2 (round 16) OBS006 again where bus ids tie every GPU shown.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli


def _bus(minor: int) -> str:
    return f"00000000:{0x18 + 0x10 * minor:02X}:00.0"


def _files(tmp_path: Path, declared: int, minors: list[int]) -> tuple[Path, Path]:
    # The inventory declares `declared` GPUs, gpuK at bus _bus(K); the host's driver gave GPU K minor number K at
    # boot. The listing is what nvidia-smi -q prints after the GPUs not in `minors` left the driver: Attached GPUs
    # is the count it still sees, each block keeps its minor number.
    gpus = "".join(
        f"      - {{name: gpu{i}, kind: gpu, labels: {{index: '{i}', pci_bus_id: '{_bus(i)}'}}}}\n"
        for i in range(declared)
    )
    inv = tmp_path / "inv.yaml"
    inv.write_text("apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n" + gpus)
    lines = [
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Sun Dec  6 08:30:00 2026",
        "Driver Version                            : 535.129.03",
        "",
        f"Attached GPUs                             : {len(minors)}",
    ]
    for m in minors:
        lines += [
            f"GPU {_bus(m)}",
            "    Product Name                          : NVIDIA H100 80GB HBM3",
            f"    GPU UUID                              : GPU-6f1c{m}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31",
            f"    Minor Number                          : {m}",
            "    PCI",
            f"        Bus Id                            : {_bus(m)}",
        ]
    folder = tmp_path / "obs" / "n1"
    folder.mkdir(parents=True)
    (folder / "nvidia-smi-q.txt").write_text("\n".join(lines) + "\n")
    return inv, tmp_path / "obs"


def _obs(tmp_path: Path, declared: int, minors: list[int]) -> list[tuple[str, list[str], str]]:
    inv, obs = _files(tmp_path, declared, minors)
    code, out, err = run_cli(
        "verify", str(inv), "--observed", str(obs), "--format", "json", "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code in (0, 1), err
    return sorted(
        (f["rule"], f["subjects"], f["message"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")
    )


@pytest.mark.parametrize(
    ("declared", "minors"),
    [
        (8, [0, 1, 2, 4, 5, 6, 7]),  # GPU 3 dropped: 7 listed, minor 7 >= 7
        (4, [1, 2, 3]),  # microsoft/pai#4344: the GPU at minor 0 failed to initialise, 3 listed, minor 3 >= 3
    ],
)
def test_a_gpu_dropped_from_a_host_is_told(tmp_path: Path, declared: int, minors: list[int]) -> None:
    # Every listed GPU matches its declared GPU by bus id (no fault printed: nothing else to say about them); the
    # declared GPU at the bus id not shown (gpu3, resp. gpu0) is missing from the listing: OBS006, as the base said
    # (RT2, round 16: fail closed; review R-RT62 had one OBS009 warning, 83c359fc nothing at all).
    found = _obs(tmp_path, declared, minors)
    (gone,) = sorted(set(range(declared)) - set(minors))
    assert [(rule, subjects) for rule, subjects, _ in found] == [("OBS006", [f"n1/gpu{gone}"])]


def test_a_whole_listing_is_unchanged(tmp_path: Path) -> None:
    # Minors 0..6 of 7 listed (the dropped GPU held the last number): nothing above the count, a whole listing as
    # before: the declared gpu7 (bus _bus(7)) is not shown, OBS006 on it, and no OBS009.
    found = _obs(tmp_path, 8, [0, 1, 2, 3, 4, 5, 6])
    assert [(rule, subjects) for rule, subjects, _ in found] == [("OBS006", ["n1/gpu7"])]


def test_a_container_of_all_declared_gpus_is_not_short(tmp_path: Path) -> None:
    # An inventory of the two GPUs a container holds (host minors 5 and 6, declared as gpu5 / gpu6 of a node of 7
    # would be short; here the node declares exactly what is shown): 2 listed of 2 declared, no OBS009.
    inv, obs = _files(tmp_path, 7, [5, 6])
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        + "".join(f"      - {{name: gpu{i}, kind: gpu, labels: {{pci_bus_id: '{_bus(i)}'}}}}\n" for i in (5, 6))
    )
    code, out, err = run_cli(
        "verify", str(inv), "--observed", str(obs), "--format", "json", "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code in (0, 1), err
    assert [f["rule"] for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")] == []
