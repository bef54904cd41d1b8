"""Review R-RT2 (round 16): a renumbered nvidia-smi listing whose minor numbers are the declared indexes.

A host whose driver keeps each GPU's device minor number while nvidia-smi numbers what it sees from 0 (a GPU fallen
off the bus, or excluded for good) prints minor numbers past its count. OBS014 (RT2) drains such a node where the
inventory declares GPU indexes only, and a listing of as many GPUs as declared is matched by position. Two real
shapes were misread:
- the GPU that fell off is already declared `state: down` (awaiting repair): the minor number missing is exactly
  its index, yet the whole node was drained (OBS014) though its declaration says which GPU is gone;
- a host that left GPU 0 out and declares gpu1..gpu7 (indexes 1-7, the device numbers): by position the first GPU
  shown was an undeclared index 0 (OBS005), each fault landed on the GPU below its own and gpu7 was missing
  (OBS006), on the base too.
Where the minor numbers shown are declared indexes, each distinct, and every declared GPU no minor number names is
declared down, each GPU is the declared GPU of its minor number.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from cli_helpers import run_cli


def _bus(minor: int) -> str:
    return f"00000000:{0x18 + 0x10 * minor:02X}:00.0"


def _obs(
    tmp_path: Path, gpus: Sequence[tuple[int, str | None]], minors: list[int], pending: int, extra: str | None = None
) -> list[tuple[str, str]]:
    # The inventory declares one GPU per (index, state), by its `index` label only (no uuid, serial or bus id). The
    # listing is nvidia-smi -q on the host: Attached GPUs = the blocks shown, each with its device minor number; the
    # block of minor `pending` has a pending row remapping (a GPU out of service, OBS004 where it is tied).
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i, state in gpus:
        attrs = f", state: {state}" if state else ""
        lines.append(f"      - {{name: gpu{i}, kind: gpu, model: H100-SXM5-80GB{attrs}, labels: {{index: '{i}'}}}}")
    tmp_path.mkdir(parents=True, exist_ok=True)
    inv = tmp_path / "inv.yaml"
    inv.write_text("\n".join(lines) + "\n")
    smi = [
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Sun Dec  6 08:30:00 2026",
        "Driver Version                            : 535.129.03",
        "",
        f"Attached GPUs                             : {len(minors)}",
    ]
    for m in minors:
        smi += [
            f"GPU {_bus(m)}",
            "    Product Name                          : NVIDIA H100 80GB HBM3",
            f"    GPU UUID                              : GPU-6f1c{m}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31",
            f"    Minor Number                          : {m}",
        ]
        if m == pending:
            smi += [
                "    Remapped Rows",
                "        Correctable Error                 : 0",
                "        Uncorrectable Error               : 1",
                "        Pending                           : Yes",
                "        Remapping Failure Occurred        : No",
            ]
    folder = tmp_path / "obs" / "n1"
    folder.mkdir(parents=True)
    (folder / "nvidia-smi-q.txt").write_text("\n".join(smi) + "\n")
    if extra is not None:
        (folder / "dcgmi-diag.json").write_text(extra)
    code, out, err = run_cli(
        "verify", str(inv), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code in (0, 1), err
    return sorted(
        (f["rule"], ",".join(f["subjects"])) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")
    )


def test_a_gpu_declared_down_is_the_one_missing(tmp_path: Path) -> None:
    # 8 declared, gpu3 `state: down`; the driver lost GPU 3, the others kept minors 0-2 and 4-7 (7 shown, minor 7 >=
    # 7: renumbered). The one minor number missing, 3, is the index of the one GPU declared down, so minor 5's
    # pending remapping is gpu5's (OBS004), gpu3 is left to its declaration (no OBS006), no OBS014: the node's
    # other GPUs stay in service. RT2's HEAD: one OBS014 (node drained); base: OBS004 on gpu4 (position 4 = minor
    # 5) and OBS006 on gpu7.
    gpus = [(i, "down" if i == 3 else None) for i in range(8)]
    assert _obs(tmp_path, gpus, [0, 1, 2, 4, 5, 6, 7], pending=5) == [("OBS004", "n1/gpu5")]


def test_another_tools_gpu_number_is_the_listings_position(tmp_path: Path) -> None:
    # As above (gpu3 declared down, minors 0-2 and 4-7), no remapping pending; dcgmi diag -j (DCGM 3.x, no serials)
    # fails its GPU 3. DCGM numbers the GPUs NVML sees as nvidia-smi does, 0..6: its GPU 3 is the fourth block,
    # minor 4, so gpu4 is out of service (OBS004). Base: put on gpu3, declared down, so nothing was said.
    result = {"gpu_id": "3", "status": "Fail", "warnings": [{"warning": "GPU 3 had a memory error."}]}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [result]}]}]}}  # fmt: skip
    gpus = [(i, "down" if i == 3 else None) for i in range(8)]
    found = _obs(tmp_path, gpus, [0, 1, 2, 4, 5, 6, 7], pending=-1, extra=json.dumps(doc, indent=2))
    assert found == [("OBS004", "n1/gpu4")]


def test_a_query_gpu_index_beside_is_the_listings_position(tmp_path: Path) -> None:
    # As above (gpu3 declared down, minors 0-2 and 4-7), no remapping in the -q listing; beside it nvidia-smi
    # --query-gpu=index,uuid,remapped_rows.pending prints NVML's numbers 0..6 with the same UUIDs, and pending
    # Yes on index 4, the UUID of minor 5 (GPU-6f1c5a2e...): gpu5 is out of service (OBS004). By its index, gpu4.
    gpus = [(i, "down" if i == 3 else None) for i in range(8)]
    _obs(tmp_path, gpus, [0, 1, 2, 4, 5, 6, 7], pending=-1)
    rows = ["index, uuid, remapped_rows.pending"]
    for position, minor in enumerate([0, 1, 2, 4, 5, 6, 7]):
        rows.append(f"{position}, GPU-6f1c{minor}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31, {'Yes' if minor == 5 else 'No'}")
    (tmp_path / "obs" / "n1" / "query.csv").write_text("\n".join(rows) + "\n")
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code == 1, err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"] in ("OBS004", "OBS014")]
    assert found == [("OBS004", ["n1/gpu5"])]


def test_a_query_gpu_index_beside_an_obs014_listing_is_evidence(tmp_path: Path) -> None:
    # No GPU declared down (minors 0-2 and 4-7: OBS014 for n1); --query-gpu beside it as above, pending on its
    # index 4 (query.csv line 6: header, then indexes 0..4). That index is NVML's, renumbered too: no OBS004 on
    # gpu4 (1d2348f4 put it there), the remapping is named in the OBS014 with its file:line.
    gpus = [(i, None) for i in range(8)]
    _obs(tmp_path, gpus, [0, 1, 2, 4, 5, 6, 7], pending=-1)
    rows = ["index, uuid, remapped_rows.pending"]
    for position, minor in enumerate([0, 1, 2, 4, 5, 6, 7]):
        rows.append(f"{position}, GPU-6f1c{minor}a2e-4d3b-8c01-9e0f-2b7a5c0d8e31, {'Yes' if minor == 5 else 'No'}")
    (tmp_path / "obs" / "n1" / "query.csv").write_text("\n".join(rows) + "\n")
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule"] in ("OBS004", "OBS014")]
    assert [(f["rule"], f["subjects"]) for f in found] == [("OBS014", ["n1"])]
    assert "a row remapping is pending (at " in found[0]["message"] and "query.csv:6)" in found[0]["message"]


def test_indexes_from_one_are_matched_by_minor_number(tmp_path: Path) -> None:
    # GPU 0 left out for good; the inventory declares gpu1..gpu7 with indexes 1-7, and the listing shows minors 1-7
    # (7 shown, minor 7 >= 7). Minor 5's remapping is gpu5's; all 7 declared are shown. Base and RT2's HEAD:
    # OBS004 on gpu4, OBS005 for the first GPU (index 0 not declared) and OBS006 on gpu7.
    gpus = [(i, None) for i in range(1, 8)]
    assert _obs(tmp_path, gpus, list(range(1, 8)), pending=5) == [("OBS004", "n1/gpu5")]


def test_indexes_from_zero_stay_by_position(tmp_path: Path) -> None:
    # Control: gpu0..gpu6 declared (nvidia-smi's own numbers on that host), minors 1-7: minor 5 is nvidia-smi's
    # fifth GPU, position 4, so gpu4 (RT2's reading, unchanged).
    gpus = [(i, None) for i in range(7)]
    assert _obs(tmp_path, gpus, list(range(1, 8)), pending=5) == [("OBS004", "n1/gpu4")]


def test_a_gap_that_is_not_the_gpu_declared_down_still_drains(tmp_path: Path) -> None:
    # Control: gpu5 declared down but minor 3 is the one missing (and minor 5 is shown): the listing does not
    # agree with the declaration, which declared GPU each block is stays unknown: OBS014, as RT2 made it. Likewise
    # with no GPU declared down.
    down5 = [(i, "down" if i == 5 else None) for i in range(8)]
    assert _obs(tmp_path, down5, [0, 1, 2, 4, 5, 6, 7], pending=5) == [("OBS014", "n1")]
    none_down = [(i, None) for i in range(8)]
    assert _obs(tmp_path / "b", none_down, [0, 1, 2, 4, 5, 6, 7], pending=5) == [("OBS014", "n1")]


def test_two_renumbered_listings_of_a_node_are_one_finding(tmp_path: Path) -> None:
    # No GPU declared down; the folder holds the same renumbered listing twice (minors 0-2 and 4-7, a later copy
    # too): one cause, one OBS014 for n1 (RT2's HEAD: one per file, each naming both files' faults), naming the
    # second file and the pending remapping of minor 5 once per file it is read from (two lines: two reports).
    gpus = [(i, None) for i in range(8)]
    _obs(tmp_path, gpus, [0, 1, 2, 4, 5, 6, 7], pending=5)
    folder = tmp_path / "obs" / "n1"
    (folder / "nvidia-smi-q-later.txt").write_text((folder / "nvidia-smi-q.txt").read_text())
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert [(f["rule"], f["subjects"]) for f in found] == [("OBS014", ["n1"])]
    message = found[0]["message"]
    assert "nvidia-smi-q-later.txt (and " in message and "nvidia-smi-q.txt, renumbered too)" in message
    assert message.count("a row remapping is pending") == 2


def test_a_diag_failure_by_bare_number_beside_a_tied_listing_is_an_error(tmp_path: Path) -> None:
    # 8 declared with index and bus id; the host lost GPU 3 (minors 0-2, 4-7, 7 shown: renumbered, every GPU tied by
    # bus id, so gpu3 is OBS006). dcgmi diag -j (3.x, no serials) fails its GPU 0 with a memory error. Fail closed:
    # some error finding must carry that failure (OBS004 on a GPU, or a node error). Now: an OBS005 warning.
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i in range(8):
        lines.append(f"      - {{name: gpu{i}, kind: gpu, labels: {{index: '{i}', pci_bus_id: '{_bus(i)}'}}}}")
    (tmp_path / "inv.yaml").write_text("\n".join(lines) + "\n")
    smi = ["==============NVSMI LOG==============", "", "Driver Version                            : 535.129.03"]
    smi.append("Attached GPUs                             : 7")
    for m in (0, 1, 2, 4, 5, 6, 7):
        smi += [f"GPU {_bus(m)}", f"    Minor Number                          : {m}"]
    folder = tmp_path / "obs" / "n1"
    folder.mkdir(parents=True)
    (folder / "nvidia-smi-q.txt").write_text("\n".join(smi) + "\n")
    result = {"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "GPU 0 had a memory error."}]}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [result]}]}]}}  # fmt: skip
    (folder / "dcgmi-diag.json").write_text(json.dumps(doc, indent=2))
    code, out, err = run_cli(
        "verify", str(tmp_path / "inv.yaml"), "--observed", str(tmp_path / "obs"), "--format", "json",
        "--observed-now", "2026-12-06T09:00:00Z",
    )  # fmt: skip
    assert code == 1, err
    errors = [f for f in json.loads(out)["findings"] if f["severity"] == "error" and "memory error" in f["message"]]
    assert errors, [f["rule"] for f in json.loads(out)["findings"]]
    # OB63: the failure is OBS014's evidence on n1 (which GPU DCGM's 0 is cannot be told: no GPU of n1 is placed),
    # gpu3 (the bus id not shown) is still OBS006, and the bare number is no OBS005 warning beside them.
    found = json.loads(out)["findings"]
    rules = sorted((f["rule"], f["subjects"]) for f in found if f["rule"].startswith("OBS"))
    assert rules == [("OBS006", ["n1/gpu3"]), ("OBS014", ["n1"])]
    assert "GPU 0 of its tool: diagnostic failed" in errors[0]["message"]
    # Placement takes none of n1's GPUs: a one-GPU job finds no place (before: any of the 7 GPUs shown).
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text("apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {name: one, principal: research, gpus: 1}\n")
    code, out, err = run_cli(
        "place", str(tmp_path / "inv.yaml"), str(jobs), "--observed", str(tmp_path / "obs"),
        "--observed-now", "2026-12-06T09:00:00Z", "--no-authorization", "--format", "json",
    )  # fmt: skip
    assert code in (0, 1), err
    assert {j["job"]: j["placements"] for j in json.loads(out)["jobs"]} == {"one": []}
