"""NODE014 against the power limits a real part takes (review of round 61's NODE014).

NODE014 reports a GPU declaring more power than any part of its catalogue model runs at, and its
remediation sends the engineer to `nvidia-smi -q -d POWER`'s Max Power Limit. For a GeForce RTX
4090 that figure is above the catalogue's 450 W: an `nvidia-smi -q` capture of an RTX 4090
(Device Id 0x268410DE, NVIDIA's own board, Sub System Id 0x16F410DE) in the public README of
github.com/T-K-233/Diffusion-Benchmark prints

    Default Power Limit : 450.00 W
    Max Power Limit     : 600.00 W

so a node whose 4090s are written at 600 W (the cap they were raised to, `nvidia-smi -pl 600`)
declares a limit the part takes: no finding. The round's rule compared with the 450 W default
(catalogue `power:`) and reported 600 > 450. 650 W is above even the part's own maximum limit:
650 > 600, still NODE014's (the rule must still fire on this model).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.session.verify_run import VerifyRun, verify


def _inventory(tmp_path: Path, watts: int) -> Path:
    path = tmp_path / "rtx.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\n"
        "objects:\n"
        "  - name: w0\n"
        "    kind: node\n"
        "    children:\n"
        "      - {name: cpu0, kind: cpu, model: Ryzen-9-7950X}\n"
        f'      - {{name: "gpu{{i}}", kind: gpu, model: RTX-4090, count: 2, power: {watts} W}}\n',
        encoding="utf-8",
    )
    return path


def _node014(path: Path, engine: str) -> set[tuple[str, ...]]:
    report = verify([path], VerifyRun(authorize=False, engine=engine))
    return {r.finding.subjects for r in report.results if r.finding.rule == "NODE014"}


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_rtx_4090_at_its_max_power_limit_is_no_finding(tmp_path: Path, engine: str) -> None:
    # 600 W is the RTX 4090's Max Power Limit (capture above): 600 is not above 600.
    assert _node014(_inventory(tmp_path, 600), engine) == set()


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_rtx_4090_above_its_max_power_limit_is_reported(tmp_path: Path, engine: str) -> None:
    # 650 > 600: both GPUs of the one template line, one finding naming both.
    assert _node014(_inventory(tmp_path, 650), engine) == {("w0/gpu0", "w0/gpu1")}


def _swapped(tmp_path: Path) -> Path:
    # A node type of two H100 SXM5 GPUs written at 700 W (their rating); n1's override names gpu1 an
    # H100 PCIe (catalogue 350 W) and keeps the type's 700 W. One edit, one cause: NODE002 reports
    # the model differing from the type's; the 700 W over the PCIe card's 350 W follows from it.
    path = tmp_path / "swap.yaml"
    path.write_text(
        "apiVersion: topolog.dev/v1\n"
        "templates:\n"
        "  t:\n"
        "    kind: node\n"
        "    children:\n"
        '      - {name: "gpu{i}", kind: gpu, model: H100-SXM5-80GB, count: 2, power: 700 W}\n'
        "objects:\n"
        '  - template: t\n    name: "n{i}"\n    count: 3\n'
        "    overrides:\n      n1: {devices: {gpu1: {model: H100-PCIE-80GB}}}\n",
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize("engine", ["duckdb", "memory"])
def test_gpu_model_swapped_under_the_types_power_is_node002_alone(tmp_path: Path, engine: str) -> None:
    report = verify([_swapped(tmp_path)], VerifyRun(authorize=False, engine=engine))
    found = {(r.finding.rule, r.finding.subjects) for r in report.results if r.finding.rule in ("NODE002", "NODE014")}
    assert found == {("NODE002", ("n1/gpu1", "n1"))}
