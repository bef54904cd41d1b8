"""Numbers of thousands of digits, wherever a tool's output or an input file holds a number.

Python refuses to read an integer of more than 4,300 digits (ValueError), so each place that
reads digits must bound them first: such a number is bad input (exit 2, with its place) or a
value the format allows to be unreadable (left out, exit 0), never an internal error. Each
fixture is read with every fifth run of digits (one of five phases) replaced by 5,000 nines,
so that every place that reads a number meets a long one in one of the five runs while the
rest of the file still reads as the tool wrote it.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "sources" / "importers" / "fixtures"
LONG = "9" * 5000
PHASES = 5

IMPORTS = sorted(
    [("nccl-xml", p.name) for p in FIXTURES.glob("*-topo.xml")]
    + [("hwloc", p.name) for p in FIXTURES.glob("*.xml") if not p.name.endswith("-topo.xml")]
    + [
        ("nvidia-smi", n)
        for n in ("dgx-a100-topo-tabs.txt", "gb200-4gpu-numa-lists.txt", "workstation-2gpu-2nic-node.txt")
    ]
    + [("rocm-smi", "mi-4gpu-showtopo.txt"), ("rocm-smi", "rocm-smi-4gpu-pcie-handwritten.txt")]
    + [("amd-smi", "amd-smi-2gpu-pcie-handwritten.txt"), ("amd-smi", "amd-smi-4gpu-xgmi-handwritten.txt")]
    + [("slurm", "topology-tree.conf"), ("slurm", "topology-block.conf"), ("slurm", "superpod-slurm.conf")]
    + [("k8s-labels", "k8s-gb200-nodes-handwritten.json")]
)


def _lengthened(text: str, phase: int) -> str:
    runs = iter(range(1 << 62))
    return re.sub(r"[0-9]+", lambda m: LONG if next(runs) % PHASES == phase else m.group(0), text)


def _assert_handled(code: int, err: str) -> None:
    assert "internal error" not in err and "Traceback" not in err, err[-2000:]
    assert code in (0, 1, 2), err[-2000:]
    if code == 2:
        assert re.search(r"^error: \S+:\d+", err, re.MULTILINE), err[-2000:]


@pytest.mark.parametrize(("kind", "name"), IMPORTS)
def test_a_tool_output_with_long_numbers_is_read_or_refused(
    kind: str, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for phase in range(PHASES):
        (tmp_path / name).write_text(_lengthened(text, phase), encoding="utf-8")
        code, _out, err = run_cli("import", kind, name)
        assert code in (0, 2)
        _assert_handled(code, err)


@pytest.mark.parametrize(
    ("args", "name", "source"),
    [
        (["verify"], "inv.yaml", ROOT / "inventories" / "dgx-h100-pod.yaml"),
        (["verify"], "inv.yaml", ROOT / "inventories" / "mixed-fleet.yaml"),
        (
            ["place", str(ROOT / "inventories" / "mixed-fleet.yaml")],
            "jobs.yaml",
            ROOT / "inventories" / "jobs" / "training.yaml",
        ),
        (
            ["place", str(ROOT / "inventories" / "mixed-fleet.yaml")],
            "jobs.yaml",
            ROOT / "inventories" / "jobs" / "portable.yaml",
        ),
    ],
)
def test_an_input_file_with_long_numbers_is_read_or_refused(
    args: list[str], name: str, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = source.read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    for phase in range(PHASES):
        (tmp_path / name).write_text(_lengthened(text, phase), encoding="utf-8")
        code, _out, err = run_cli(*args, name)
        _assert_handled(code, err)


def test_a_query_literal_past_64_bits_is_refused_at_its_column() -> None:
    # 9223372036854775807 is the largest 64-bit integer; one more does not fit, nor do 5,000 nines.
    # Read exactly by one engine and refused by another before, the literal is refused where it is written.
    pod = str(ROOT / "inventories" / "dgx-h100-pod.yaml")
    code, out, _err = run_cli("query", pod, 'link(L, A, B, "nvswitch", M), M < 9223372036854775807', "--format", "json")
    assert code == 0 and '"count": 256' in out  # every NVSwitch link of the pod: 8 nodes x 8 GPUs x 4 chips
    for literal in ("9223372036854775808", LONG):
        code, _out, err = run_cli("query", pod, f'link(L, A, B, "nvswitch", M), M < {literal}')
        assert code == 2
        assert "<query>:1:35: integer " in err and "does not fit in 64 bits" in err


@pytest.mark.parametrize(
    ("args", "name", "source", "old", "new", "line"),
    [
        # A foreach range with an end of 5,000 digits: no range to expand (line 48: the links of gpu{g} to nvsw0).
        (
            ["verify"],
            "inv.yaml",
            ROOT / "inventories" / "dgx-h100-pod.yaml",
            '{a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 5, foreach: {g: 0..7}}',
            '{a: "gpu{g}", b: nvsw0, kind: nvswitch, generation: 4, count: 5, foreach: {g: 0..' + LONG + "}}",
            48,
        ),
        # A MIG profile of 5,000-digit gigabytes is no profile nvidia-smi writes (notebooks.yaml line 14).
        (
            ["place", str(ROOT / "inventories" / "dgx-h100-pod.yaml")],
            "jobs.yaml",
            ROOT / "inventories" / "jobs" / "notebooks.yaml",
            "mig: 1g.10gb",
            "mig: 1g." + LONG + "gb",
            14,
        ),
        # A minimum version with a patch level of 5,000 digits (training.yaml line 21).
        (
            ["place", str(ROOT / "inventories" / "mixed-fleet.yaml")],
            "jobs.yaml",
            ROOT / "inventories" / "jobs" / "training.yaml",
            'cuda: ">=12.6"',
            'cuda: ">=12.6.' + LONG + '"',
            21,
        ),
    ],
)
def test_a_long_number_in_a_pattern_or_a_version_is_refused_at_its_line(
    args: list[str],
    name: str,
    source: Path,
    old: str,
    new: str,
    line: int,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = source.read_text(encoding="utf-8")
    assert text.count(old) == 1
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text.replace(old, new), encoding="utf-8")
    code, _out, err = run_cli(*args, name)
    _assert_handled(code, err)
    assert code == 2
    assert f"error: {name}:{line}:" in err, err[-1500:]
