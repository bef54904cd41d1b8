"""Review R-RT (round 61) of RT's readers: fail-open cases found past its own fixtures.

- amd-smi: a listing of two or more GPUs with a gap (GPU 3's entry gone, the others keeping their numbers) was
  taken for a `-g` selection, so the GPU it lacks was never missing (no OBS006; base 42fed5f named it).
- dcgmi diag -j: the table's monitor/config word list overruled -j's own `error_severity` (2, isolate, or 4,
  triage: no OBS004), and it matched anywhere in a message (a triage "internal error" quoting a CUDA API error).
- dcgmi diag -j serials: a serial that the host's nvidia-smi listing shows at no GPU, while it shows another
  board at DCGM's number, was still tied by that number to the declared GPU (a board blamed that DCGM did not
  test); DCGM's words for a serial it could not read (`<<<NOT_SUPPORTED>>>`, dcgm_structs.h) were a serial.
- dcgm-exporter sample times: a time in seconds (ten digits) was read as milliseconds, dating today's scrape to
  January 1970 (stale: nothing judged), instead of refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import SourceLocation, TopologError
from verifier.sources.observed import amd_smi, dcgm, dcgmi_diag
from verifier.sources.observed.identity import resolve_ref
from verifier.sources.observed.model import GpuObservation, GpuRef

ROOT = Path(__file__).resolve().parents[3]
STATIC = ROOT / "inventories" / "observed" / "mixed-fleet" / "mi300x-n0" / "amd-smi-static.json"
SCRAPE = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "dcgm-exporter.prom"
PASS_442 = (Path(__file__).parent / "samples" / "dcgmi-diag" / "dcgm-4.4.2-a30-pass.txt").read_text()


@pytest.mark.parametrize(
    ("numbers", "whole"),
    [([0], False), ([3], False), ([0, 1], True), ([0, 2], True), ([0, 1, 2, 4, 5, 6, 7], True), ([1, 2], True)],
)
def test_two_or_more_gpus_are_a_whole_listing_gaps_included(numbers: list[int], whole: bool) -> None:
    assert amd_smi.whole_listing(numbers) is whole


def test_a_listing_without_gpu_3_is_told_not_judged(tmp_path: Path) -> None:
    # inventories/mixed-fleet.yaml: mi300x-n0 declares gpu0-gpu7 (matched by index). The shipped static listing
    # (GPUs 0-7) without GPU 3's object: GPUs 0, 1, 2, 4, 5, 6, 7 seen, 7 of 8. amd-smi numbers the GPUs it sees
    # from 0 (a GPU gone shifts the others), so a gap is a selection (`-g 0 1 2 4 5 6 7`); round 16 (RT62): a
    # listing of fewer GPUs than declared, from a tool that prints no count, judges none missing and says so:
    # one OBS009 for mi300x-n0 (review R-RT's OBS006 gpu3 before; the brief's fail-safe for `-g 0 1`).
    static = json.loads(STATIC.read_text())
    (tmp_path / "mi300x-n0").mkdir()
    kept = [g for g in static if g["gpu"] != 3]
    (tmp_path / "mi300x-n0" / "static.json").write_text(json.dumps(kept, indent=4))
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories" / "mixed-fleet.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code == 0, err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert found == [("OBS009", ["mi300x-n0"])]


def _doc4(words: str, severity: int | None) -> str:
    warning: dict[str, object] = {"warning": words}
    if severity is not None:
        warning["error_severity"] = severity
    result = {"entity_group": "GPU", "entity_group_id": 1, "entity_id": 0, "status": "Fail", "warnings": [warning]}
    tests = [{"name": "memory", "results": [result], "test_summary": {"status": "Fail"}}]
    return json.dumps({"DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": tests}]}}, indent=2)


@pytest.mark.parametrize("severity", [2, 4, None])
@pytest.mark.parametrize(
    "words",
    ["GPU 0 Error using CUDA API cuMemAlloc", "More than 0 single-bit ECC error(s) detected in GPU 0 Volatile SBEs: 9"],
)
def test_json_severity_is_not_overruled_by_the_tables_words(words: str, severity: int | None) -> None:
    # -j says isolate (2), triage (4) or nothing (read as a fault, docs/observed.md): GPU 0 fails, whatever the words.
    assert [c.gpu.index for c in dcgmi_diag.read(_doc4(words, severity), "d.json", "n1").counters] == [0]


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |\n"


def test_a_table_message_quoting_monitor_words_inside_a_triage_one_is_a_fault() -> None:
    # DCGM_FR_INTERNAL "There was an internal error during the test: '%s'" is triage (dcgm_errors.c); the words
    # it quotes are not its own rank. The real 4.4.2 A30 table with memory failing on GPU0 under that message.
    words = "GPU 0 There was an internal error during the test: 'Error using CUDA API cuMemcpy'"
    cut = [words[k : k + 45] for k in range(0, len(words), 45)]
    rows = _row("memory", "Fail") + _row("", "GPU0: Fail") + _row("Warning", cut[0])
    rows += "".join(_row("", piece) for piece in cut[1:])
    text = PASS_442.replace(_row("memory", "Pass") + _row("", "GPU0: Pass"), rows)
    assert [c.gpu.index for c in dcgmi_diag.read(text, "diag.txt", "n1").counters] == [0]


def _listed(index: int, serial: str | None) -> GpuObservation:
    return GpuObservation(SourceLocation("smi.xml", 1), None, "n1", "nvidia", index=index, serial=serial)


def test_a_serial_the_listing_shows_nowhere_is_not_tied_by_dcgms_number() -> None:
    # The host lists GPU 0 = S0 and GPU 1 = S1; DCGM's GPU 0 is board SX: not GPU 0 (another board there), so no
    # index is stated for it. Where the listing shows no board at that number (a listing of GPU 1 alone), the
    # number still stands, as before.
    host = [_listed(0, "S0"), _listed(1, "S1")]
    values = resolve_ref(GpuRef(host="n1", index=0, serial="SX"), host)
    assert (values["serial"], values["index"]) == ("SX", None)
    values = resolve_ref(GpuRef(host="n1", index=0, serial="SX"), [_listed(1, "S1")])
    assert (values["serial"], values["index"]) == ("SX", 0)


def test_verify_does_not_blame_gpu0_for_a_board_the_host_does_not_list(tmp_path: Path) -> None:
    # n1 declares gpu0, gpu1 by index; its nvidia-smi listing: GPU 0 serial S0, GPU 1 serial S1; dcgmi -j: GPU 0
    # (serial SX) failed memory. SX is neither board: OBS005 (matches nothing declared) on n1, no OBS004 on gpu0.
    smi = (ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx01" / "nvidia-smi.xml").read_text()
    head, rest = smi.split("<gpu id=", 1)
    block, tail = "<gpu id=" + rest.rsplit("</gpu>", 1)[0] + "</gpu>", rest.rsplit("</gpu>", 1)[1]
    second = (
        block.replace("00000000:18:00.0", "00000000:19:00.0")
        .replace("<pci_bus>18</pci_bus>", "<pci_bus>19</pci_bus>")
        .replace("1652323019999", "S1")
        .replace("GPU-0a1b2c3d-0001-4e5f-8a9b-0c1d2e3f4a50", "GPU-0a1b2c3d-0001-4e5f-8a9b-0c1d2e3f4a51")
        .replace("<minor_number>0</minor_number>", "<minor_number>1</minor_number>")
    )
    first = block.replace("1652323019999", "S0")
    listing = head.replace("<attached_gpus>1</attached_gpus>", "<attached_gpus>2</attached_gpus>")
    (tmp_path / "obs" / "n1").mkdir(parents=True)
    (tmp_path / "obs" / "n1" / "nvidia-smi.xml").write_text(listing + first + "\n" + second + tail)
    result = {"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "GPU 0 had a memory error."}]}
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [{"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [result]}]}]
        },
        "GPU Device Serials": {"0": "SX"},
    }
    (tmp_path / "obs" / "n1" / "dcgmi-diag.json").write_text(json.dumps(doc, indent=2))
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        "      - {name: gpu0, kind: gpu, labels: {index: '0'}}\n      - {name: gpu1, kind: gpu, labels: {index: '1'}}\n"
    )
    _, out, err = run_cli(
        "verify",
        str(inventory),
        "--observed",
        str(tmp_path / "obs"),
        "--observed-now",
        "2026-11-01T09:00:00Z",
        "--format",
        "json",
    )
    # (dgx01's listing carries faults of its own, OBS004 on both boards: only the diagnostic's finding is asked.)
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if "dcgmi-diag" in f["message"]]
    assert found == [("OBS005", ["n1"])], err


@pytest.mark.parametrize("serial", ["<<<NOT_SUPPORTED>>>", "<<<NULL>>>", "N/A"])
def test_dcgms_words_for_no_serial_are_no_serial(serial: str) -> None:
    result = {"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "GPU 0 had a memory error."}]}
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [{"category": "Hardware", "tests": [{"name": "GPU Memory", "results": [result]}]}]
        },
        "GPU Device Serials": {"0": serial},
    }
    (obs,) = dcgmi_diag.read(json.dumps(doc, indent=2), "diag.json", "n1").counters
    assert (obs.gpu.index, obs.gpu.serial) == (0, None)


@pytest.mark.parametrize("stamp", ["1796371200", "0", "999999999999"])
def test_a_sample_time_in_seconds_is_refused_not_read_as_1970(stamp: str) -> None:
    # 1,796,371,200 is 2026-12-04T08:00:00Z in seconds; as milliseconds it is 1970-01-21. The first 13-digit
    # millisecond count, 10**12, is 2001-09-09: anything below is refused at its line (3: the first XID sample).
    lines = SCRAPE.read_text().splitlines()
    lines[2] += f" {stamp}"
    with pytest.raises(TopologError, match=r"dcgm\.prom:3: .*13 digits"):
        dcgm.read("\n".join(lines) + "\n", "dcgm.prom", "dgx03")


def test_a_fresh_sample_is_judged_beside_an_old_one_of_the_same_file(tmp_path: Path) -> None:
    # dgx03's scrape: line 3 (GPU 0, XID 95) stamped 2026-12-04T08:00Z, line 4 (GPU 1, XID 0) three days older;
    # judged at 09:00Z with the default observed_max_age_s of 86,400. The file is stale at its oldest sample
    # (OBS007, warning), but GPU 0's own sample is one hour old: its XID 95 is judged (OBS004 on dgx03/gpu0). Before,
    # the old sample made the whole file unjudged: OBS007 alone. (1,796,371,200,000 ms is 2026-12-04T08:00:00Z.)
    stamp = 1796371200000
    lines = SCRAPE.read_text().splitlines()
    lines[2] += f" {stamp}"
    lines[3] += f" {stamp - 3 * 86_400_000}"
    (tmp_path / "dgx03").mkdir()
    (tmp_path / "dgx03" / "dcgm-exporter.prom").write_text("\n".join(lines) + "\n")
    _, out, err = run_cli(
        "verify",
        str(ROOT / "inventories" / "dgx-h100-pod.yaml"),
        "--observed",
        str(tmp_path),
        "--observed-now",
        "2026-12-04T09:00:00Z",
        "--format",
        "json",
    )
    found = sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))
    assert found == [("OBS004", ["dgx03/gpu0"]), ("OBS007", ["dgx03"])], err


def test_one_serial_printed_for_two_ids_names_neither_board() -> None:
    # GPUs 0 and 1 both fail, and DCGM prints serial "0" for both: matching by it would put both failures on
    # the one board the host lists with serial 0. Each keeps its id and no serial.
    results = [
        {"gpu_id": str(k), "status": "Fail", "warnings": [{"warning": f"GPU {k} had a memory error."}]} for k in (0, 1)
    ]
    doc = {
        "DCGM GPU Diagnostic": {
            "test_categories": [{"category": "Hardware", "tests": [{"name": "GPU Memory", "results": results}]}]
        },
        "GPU Device Serials": {"0": "0", "1": "0"},
    }
    found = dcgmi_diag.read(json.dumps(doc, indent=2), "diag.json", "n1").counters
    assert [(c.gpu.index, c.gpu.serial) for c in found] == [(0, None), (1, None)]
