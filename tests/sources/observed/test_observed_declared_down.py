"""A GPU the inventory declares down is left to its declaration by OBS004 and OBS006, and a node whose driver lost
a GPU it ties to no declared GPU (OBS010) offers placement none of its GPUs.

- Declared down: the operator already took the GPU (or its node) out of service, and placement skips it; its
  tool saying it is faulty (OBS004) or no longer listing it (OBS006, a board pulled for RMA) is why, not a second
  error that fails CI on an inventory that says the truth.
- OBS010: which GPU is lost is not known and its remedy (a GPU reset or a restart of the machine) takes the node's
  work down; before, placement still put jobs on the node (on the lost GPU, for all it knew). Fail closed.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "rules" / "fixtures"
N1_XML = FIXTURES / "OBS004" / "pass.observed" / "n1" / "nvidia-smi.xml"  # 2 of 2 attached GPUs, all healthy
NOW = ("--observed-now", "2026-12-06T09:00:00Z")


def _inventory(tmp_path: Path, third: str) -> Path:
    # The fixture file lists GPU-...a000 and GPU-...b001 (attached 2: a whole listing); a third declared GPU
    # is not in it.
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        "      - {name: gpu0, kind: gpu, labels: {uuid: GPU-1b2c3d4e-0000-4000-8000-00000000a000}}\n"
        "      - {name: gpu1, kind: gpu, labels: {uuid: GPU-1b2c3d4e-0000-4000-8000-00000000b001}}\n"
        f"      - {{name: gpu2, kind: gpu{third}, labels: {{uuid: GPU-1b2c3d4e-0000-4000-8000-00000000c002}}}}\n"
    )
    (tmp_path / "obs" / "n1").mkdir(parents=True, exist_ok=True)
    (tmp_path / "obs" / "n1" / "nvidia-smi.xml").write_text(N1_XML.read_text())
    return inv


def _rules(tmp_path: Path, inv: Path, rule: str) -> list[list[str]]:
    code, out, err = run_cli("verify", str(inv), "--observed", str(tmp_path / "obs"), *NOW, "--format", "json")
    assert code in (0, 1), err
    return [f["subjects"] for f in json.loads(out)["findings"] if f["rule"] == rule]


def test_a_missing_gpu_declared_down_is_its_declarations(tmp_path: Path) -> None:
    # gpu2 is declared but not listed: OBS006 on it, unless it is declared down (itself, or its node).
    assert _rules(tmp_path, _inventory(tmp_path, ""), "OBS006") == [["n1/gpu2"]]
    assert _rules(tmp_path, _inventory(tmp_path, ", state: down"), "OBS006") == []
    inv = _inventory(tmp_path, "")
    inv.write_text(inv.read_text().replace("    kind: node\n", "    kind: node\n    state: down\n"))
    assert _rules(tmp_path, inv, "OBS006") == []


def test_a_faulty_gpu_declared_down_is_its_declarations(tmp_path: Path) -> None:
    # The listing's gpu1 (line 42 of the fixture's file) with a failed row remapping: OBS004, unless declared down.
    text = N1_XML.read_text()
    failed = "<remapped_row_failure>No</remapped_row_failure>"
    assert text.count(failed) == 2
    at = text.rindex(failed)
    broken = text[:at] + failed.replace("No", "Yes") + text[at + len(failed) :]
    inv = _inventory(tmp_path, ", state: down")
    (tmp_path / "obs" / "n1" / "nvidia-smi.xml").write_text(broken)
    assert _rules(tmp_path, inv, "OBS004") == [["n1/gpu1"]]
    inv.write_text(inv.read_text().replace("{name: gpu1, kind: gpu,", "{name: gpu1, kind: gpu, state: down,"))
    assert _rules(tmp_path, inv, "OBS004") == []


def test_a_node_with_an_untied_lost_gpu_hosts_no_job(tmp_path: Path) -> None:
    # OBS010's fixture: n1's file is only a lost GPU's line (no index, no declared bus id); n2 lists gpu0 and
    # says gpu1 (index printed) is lost. A 2-GPU node job: n1 held it before (both its GPUs looked free), n2
    # cannot (gpu1 out of service); now neither does.
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        "  - {name: pair, principal: research, gpus: 2, topology: {scope: node}}\n"
        "  - {name: one, principal: research, gpus: 1, topology: {scope: node}}\n"
    )
    case = FIXTURES / "OBS010"
    code, out, err = run_cli(
        "place", str(case / "fail.yaml"), str(jobs), "--observed", str(case / "fail.observed"), *NOW,
        "--no-authorization", "--format", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    placed = {j["job"]: [p["gpus"] for p in j["placements"]] for j in json.loads(out)["jobs"]}
    # `one` fits only n2/gpu0 (n1 drained, n2/gpu1 lost); `pair` fits nowhere.
    assert placed == {"pair": [], "one": [["n2/gpu0"]]}


def test_blocks_left_without_an_index_by_an_untied_lost_gpu_are_one_finding(tmp_path: Path) -> None:
    # n1 declares 3 GPUs by index only. Its file: a lost GPU named by bus id alone (0000:09:00.0), then the blocks
    # of 3A and 18 (the A10 sample's block, bus changed, remapping not pending), out of bus order: no index can
    # be given to any of them. One cause, one finding: OBS010; before, also one OBS005 per block (3 findings).
    a10 = ROOT / "tests" / "sources" / "observed" / "samples" / "nvidia-smi-q" / "a10-535.129.03-remap-pending.txt"
    text = a10.read_text().replace("Pending                           : Yes", "Pending                           : No")
    head, block = text.split("GPU 00000000:07:00.0\n", 1)
    head = head.replace(
        "Attached GPUs                             : 1", "Attached GPUs                             : 3"
    )

    def at(bus: str) -> str:
        return f"GPU 00000000:{bus}:00.0\n" + block.replace("00000000:07:00.0", f"00000000:{bus}:00.0")

    lost = "Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error\n"
    (tmp_path / "obs" / "n1").mkdir(parents=True)
    (tmp_path / "obs" / "n1" / "nvidia-smi-q.txt").write_text(lost + head + at("3A") + "\n" + at("18"))
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n"
        '    children:\n      - {name: "gpu{i}", kind: gpu, count: 3}\n'
    )
    code, out, err = run_cli(
        "verify", str(inv), "--observed", str(tmp_path / "obs"), "--observed-now", "2024-09-25T12:00:00Z",
        "--format", "json",
    )  # fmt: skip
    assert code == 1, err
    assert sorted(f["rule"] for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")) == ["OBS010"]
    # Where the node declares UUIDs and the blocks' UUID (GPU-73d12ef7-...) is none of them, each block is a GPU
    # that is not the declared one (a swapped board): still OBS005, beside OBS010.
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        + "".join(
            f"      - {{name: gpu{i}, kind: gpu, labels: {{uuid: GPU-00000000-0000-4000-8000-00000000000{i}}}}}\n"
            for i in range(3)
        )
    )
    code, out, err = run_cli(
        "verify", str(inv), "--observed", str(tmp_path / "obs"), "--observed-now", "2024-09-25T12:00:00Z",
        "--format", "json",
    )  # fmt: skip
    assert code == 1, err
    found = sorted(f["rule"] for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))
    assert found == ["OBS005", "OBS005", "OBS010"]
