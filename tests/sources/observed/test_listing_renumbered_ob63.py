"""OB63: GPU listings numbered from 0 by their tool and short of the node's declaration, judged alike everywhere.

- `nvidia-smi --query-gpu=index,count,...` prints NVML's indexes and the count of GPUs its driver sees, and no device
  minor number (`nvidia-smi --help-query-gpu`: "index: Zero based index of the GPU. Can change at each boot.";
  "count: The number of NVIDIA GPUs in the system"). On a host whose driver dropped a GPU the indexes close the gap,
  so `count` 7 of 8 declared names no GPU: by index alone it is OBS014 (node error, placement drains), as -q's
  renumbered listing is; tied by pci.bus_id it is judged GPU by GPU.
- A `-i` selection on such a host: OBS014 no longer calls the minor numbers it was not asked for missing.
- `topolog reconcile` says of a short or renumbered listing what verify says (it said nothing, or guessed by index).
The CSV shape (`, ` separated, a header naming the fields) is the real one the reader's tests cite
(tests/sources/observed/test_nvidia_smi_query.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
NOW = ("--observed-now", "2026-12-06T09:00:00Z")


def _bus(i: int) -> str:
    return f"00000000:{0x18 + 0x10 * i:02X}:00.0"


def _query(rows: list[tuple[int, int | None]], count: int, pending: int | None = None) -> str:
    # rows: (index, declared GPU whose bus id the row prints, or None for no bus id column).
    with_bus = any(b is not None for _i, b in rows)
    header = "index, count, " + ("pci.bus_id, " if with_bus else "") + "remapped_rows.pending"
    lines = [header]
    for index, bus in rows:
        cells = [str(index), str(count), *([_bus(bus)] if bus is not None else []), "Yes" if index == pending else "No"]
        lines.append(", ".join(cells))
    return "\n".join(lines) + "\n"


def _inventory(tmp_path: Path, with_bus: bool) -> Path:
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i in range(8):
        bus = f", pci_bus_id: '{_bus(i)}'" if with_bus else ""
        lines.append(f"      - {{name: gpu{i}, kind: gpu, model: H100-SXM5-80GB, labels: {{index: '{i}'{bus}}}}}")
    inv = tmp_path / "inv.yaml"
    inv.write_text("\n".join(lines) + "\n")
    return inv


def _verify(inv: Path, obs: Path) -> list[tuple[str, list[str], str]]:
    code, out, err = run_cli("verify", str(inv), "--observed", str(obs), *NOW, "--format", "json")
    assert code in (0, 1), err
    found = json.loads(out)["findings"]
    return sorted((f["rule"], f["subjects"], f["message"]) for f in found if f["rule"].startswith("OBS"))


def _write(tmp_path: Path, host: str, name: str, text: str) -> Path:
    (tmp_path / "obs" / host).mkdir(parents=True, exist_ok=True)
    (tmp_path / "obs" / host / name).write_text(text)
    return tmp_path / "obs"


def test_a_counted_query_short_of_the_declaration_by_index_is_one_node_error(tmp_path: Path) -> None:
    # dgx02 declares gpu0-gpu7 by index only; the query shows indexes 0-6 with count 7 and a pending remapping on
    # index 3 (CSV line 5: header + rows 0, 1, 2, 3). Whichever GPU dropped, NVML renumbered the rest: index 3 is gpu3
    # or gpu4. One OBS014 naming the fault as evidence (before: OBS004 dgx02/gpu3 and OBS006 dgx02/gpu7, guesses).
    obs = _write(tmp_path, "dgx02", "gpus.csv", _query([(i, None) for i in range(7)], 7, pending=3))
    found = _verify(POD, obs)
    assert [(r, s) for r, s, _m in found] == [("OBS014", ["dgx02"])]
    assert "numbered 0, 1, 2, 3, 4, 5, 6 by NVML (the 7 GPUs its driver counts" in found[0][2]
    assert "GPU 3 of its listing: a row remapping is pending (at " in found[0][2]
    assert "gpus.csv:5)" in found[0][2]


def test_a_counted_query_selection_short_of_the_declaration_names_nothing_missing(tmp_path: Path) -> None:
    # `-i 0,2,5` with count 7 on dgx02 (8 declared): the driver sees 7 (one gone, or a container), and the 3 rows are
    # NVML's renumbered indexes: OBS014, saying the selection's numbers (before: OBS009, a warning).
    obs = _write(tmp_path, "dgx02", "gpus.csv", _query([(0, None), (2, None), (5, None)], 7))
    found = _verify(POD, obs)
    assert [(r, s) for r, s, _m in found] == [("OBS014", ["dgx02"])]
    assert "shows 3 of the 8 GPUs dgx02 declares, numbered 0, 2, 5 by NVML (a selection (-i) of the 7" in found[0][2]


def test_a_counted_query_tied_by_bus_id_is_judged_gpu_by_gpu(tmp_path: Path) -> None:
    # Control (as the base): n1 declares bus ids; GPU 3 (bus 0x48) dropped, NVML's indexes 0-6 carry the buses of
    # gpu0-2 and gpu4-7, index 4 (bus 0x68 = gpu5) has a pending remapping: OBS004 on gpu5, OBS006 on gpu3.
    inv = _inventory(tmp_path, with_bus=True)
    rows: list[tuple[int, int | None]] = [(i, i if i < 3 else i + 1) for i in range(7)]
    obs = _write(tmp_path, "n1", "gpus.csv", _query(rows, 7, pending=4))
    assert [(r, s) for r, s, _m in _verify(inv, obs)] == [("OBS004", ["n1/gpu5"]), ("OBS006", ["n1/gpu3"])]


def _smi_q(minors: list[int], attached: int) -> str:
    smi = [
        "==============NVSMI LOG==============",
        "",
        "Timestamp                                 : Sun Dec  6 08:30:00 2026",
        "Driver Version                            : 535.129.03",
        "",
        f"Attached GPUs                             : {attached}",
    ]
    for m in minors:
        smi += [
            f"GPU {_bus(m)}",
            "    Product Name                          : NVIDIA H100 80GB HBM3",
            f"    Minor Number                          : {m}",
        ]
    return "\n".join(smi) + "\n"


def test_a_selection_on_a_host_that_dropped_a_gpu_names_no_minor_missing(tmp_path: Path) -> None:
    # `nvidia-smi -q -i 6` on a host whose driver dropped one of 8 (Attached GPUs 7): one block, minor 7 (>= 7: the
    # device numbers are the host's, nvidia-smi's are not). Still OBS014 (the driver sees 7 of 8), but minors 0-6
    # were not asked for: before, "missing from their sequence: 0, 1, 2, 3, 4, 5, 6".
    inv = _inventory(tmp_path, with_bus=False)
    obs = _write(tmp_path, "n1", "nvidia-smi-q.txt", _smi_q([7], attached=7))
    found = _verify(inv, obs)
    assert [(r, s) for r, s, _m in found] == [("OBS014", ["n1"])]
    assert (
        "with device minor numbers 7 (a selection (-i) of the 7 GPUs its driver counts, so the numbers it"
        in (found[0][2])
    )
    assert "missing from their sequence" not in found[0][2]


def _reconcile(inv: Path, obs: Path) -> tuple[int, list[str]]:
    code, out, err = run_cli("reconcile", str(inv), "--observed", str(obs))
    assert code in (0, 1), err
    return code, [line for line in out.splitlines() if ": A " in line]


def test_reconcile_says_what_verify_says_of_a_renumbered_query(tmp_path: Path) -> None:
    # The first test's file: verify's OBS014 is reconcile's one line for dgx02 (before: "dgx02/gpu7 ... not in the
    # GPU listing", the same guess as OBS006).
    obs = _write(tmp_path, "dgx02", "gpus.csv", _query([(i, None) for i in range(7)], 7, pending=3))
    code, lines = _reconcile(POD, obs)
    assert code == 1 and len(lines) == 1, lines
    assert lines[0].startswith("dgx02: GPU listing: A 8 GPUs declared")
    assert "B 7 of the 8 GPUs it declares, numbered 0, 1, 2, 3, 4, 5, 6 by NVML" in lines[0]


def test_reconcile_says_what_verify_says_of_a_renumbered_q_listing(tmp_path: Path) -> None:
    # -q on n1 (indexes only) with minors 0-2, 4-7 (Attached 7): one line naming minor 3 missing from the sequence,
    # not one "not declared" line per GPU shown (each has no index: which declared GPU it is, is not known).
    inv = _inventory(tmp_path, with_bus=False)
    obs = _write(tmp_path, "n1", "nvidia-smi-q.txt", _smi_q([0, 1, 2, 4, 5, 6, 7], attached=7))
    code, lines = _reconcile(inv, obs)
    assert code == 1 and len(lines) == 1, lines
    assert "with device minor numbers 0, 1, 2, 4, 5, 6, 7 (missing from their sequence: 3)" in lines[0]


def _diag(gpu: int) -> str:
    # dcgmi diag -j (3.x layout, as test_nvidia_smi_renumbered_review62.py): GPU `gpu` fails the memory test.
    result = {"gpu_id": str(gpu), "status": "Fail", "warnings": [{"warning": f"GPU {gpu} had a memory error."}]}
    doc = {"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
        {"name": "GPU Memory", "results": [result]}]}]}}  # fmt: skip
    return json.dumps(doc, indent=2)


def test_a_count_short_by_the_gpus_declared_down_is_matched_in_bus_order(tmp_path: Path) -> None:
    # n1 declares gpu3 `state: down`; count 7 = the 7 in service, indexes 0-6 all shown: NVML numbers the 7 in bus
    # order, so index i is the i-th in service: 0-2 -> gpu0-2, 3 -> gpu4, 5 -> gpu6. The pending remapping of index 3
    # is OBS004 on gpu4, dcgmi's GPU 5 (NVML's number too) fails -> OBS004 on gpu6; no OBS006, no OBS014. (Base:
    # the remapping put on the down gpu3 (silent), DCGM's failure on gpu5, OBS006 on the healthy gpu7.)
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i in range(8):
        down = ", state: down" if i == 3 else ""
        lines.append(f"      - {{name: gpu{i}, kind: gpu, model: H100-SXM5-80GB{down}, labels: {{index: '{i}'}}}}")
    (tmp_path / "inv.yaml").write_text("\n".join(lines) + "\n")
    _write(tmp_path, "n1", "gpus.csv", _query([(i, None) for i in range(7)], 7, pending=3))
    obs = _write(tmp_path, "n1", "dcgmi-diag.json", _diag(5))
    found = _verify(tmp_path / "inv.yaml", obs)
    assert [(r, s) for r, s, _m in found] == [("OBS004", ["n1/gpu4"]), ("OBS004", ["n1/gpu6"])]


def test_a_selection_of_a_count_short_by_the_gpus_declared_down_is_matched_too(tmp_path: Path) -> None:
    # As above, `-i 0,3,5` (NVML's own indexes, count 7): 3 -> gpu4 (pending remapping, CSV line 3), and the
    # selection is OBS009's (3 of the 7 counted), not OBS014's. (Without the shift: OBS014, 7 healthy GPUs drained.)
    lines = ["apiVersion: topolog.dev/v1", "objects:", "  - name: n1", "    kind: node", "    children:"]
    for i in range(8):
        down = ", state: down" if i == 3 else ""
        lines.append(f"      - {{name: gpu{i}, kind: gpu, model: H100-SXM5-80GB{down}, labels: {{index: '{i}'}}}}")
    (tmp_path / "inv.yaml").write_text("\n".join(lines) + "\n")
    obs = _write(tmp_path, "n1", "gpus.csv", _query([(0, None), (3, None), (5, None)], 7, pending=3))
    found = _verify(tmp_path / "inv.yaml", obs)
    assert [(r, s) for r, s, _m in found] == [("OBS004", ["n1/gpu4"]), ("OBS009", ["n1"])]
    assert "gpus.csv:3)" in found[0][2]


def test_a_bare_gpu_number_beside_a_renumbered_query_is_evidence(tmp_path: Path) -> None:
    # No GPU declared down (indexes only): the query is OBS014, and dcgmi's GPU 5 failure (NVML's 5, which declared
    # GPU not known) is named in it, not put on gpu5 (base: OBS004 n1/gpu5, and OBS006 n1/gpu7).
    inv = _inventory(tmp_path, with_bus=False)
    _write(tmp_path, "n1", "gpus.csv", _query([(i, None) for i in range(7)], 7))
    obs = _write(tmp_path, "n1", "dcgmi-diag.json", _diag(5))
    found = _verify(inv, obs)
    assert [(r, s) for r, s, _m in found] == [("OBS014", ["n1"])]
    assert "GPU 5 of its tool: diagnostic failed: " in found[0][2]


def test_an_index_beside_a_tied_renumbered_listing_is_no_declared_index(tmp_path: Path) -> None:
    # n1 declares bus ids; -q shows minors 0-2, 4-7 (tied by bus id: gpu3 is OBS006). A query CSV of the host with
    # indexes only (no count) and a pending remapping on index 3: NVML's 3 is the GPU of minor 4 here (or a
    # container's), not declared gpu3, so the fault is OBS014's evidence (before: OBS004 put on gpu3, beside its
    # OBS006). A row without a fault says nothing (before: matched to the declared GPU of that index). Its 2
    # rows of the 8 declared, with no count, are OBS009's selection warning as before.
    inv = _inventory(tmp_path, with_bus=True)
    _write(tmp_path, "n1", "nvidia-smi-q.txt", _smi_q([0, 1, 2, 4, 5, 6, 7], attached=7))
    obs = _write(tmp_path, "n1", "gpus.csv", "index, remapped_rows.pending\n3, Yes\n5, No\n")
    found = _verify(inv, obs)
    rules = [(r, s) for r, s, _m in found]
    # Review R-OB63: the row without a fault (index 5) is no OBS005: the tied listing judges every GPU already.
    assert rules == [("OBS006", ["n1/gpu3"]), ("OBS009", ["n1"]), ("OBS014", ["n1"])]
    assert "GPU 3: a row remapping is pending (at " in found[2][2]
