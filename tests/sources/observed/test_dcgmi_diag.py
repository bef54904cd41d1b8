"""`dcgmi diag` (table and -j JSON): a GPU that failed a hardware test, named by the test's message, is OBS004.

Real samples: samples/dcgmi-diag/ (README.md there cites each thread). Before, every such file was refused as
"not a format topolog reads observations from" (exit 2).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_diag
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples" / "dcgmi-diag"
PASS_442 = SAMPLES / "dcgm-4.4.2-a30-pass.txt"
FAILS_331 = SAMPLES / "dcgm-3.3.1-gpu0-fails-excerpt.txt"
NO_NVLINK_246 = SAMPLES / "dcgm-2.4.6-a100-no-nvlink-excerpt.txt"
SKIP_JSON = SAMPLES / "dcgm-3.x-t400-skip-excerpt.json"


def _failed(text: str) -> list[tuple[int | None, int | None, str]]:
    obs = dcgmi_diag.read(text, "diag.txt", "n1")
    return [(c.gpu.index, c.source.line, dict(c.labels)["reason"]) for c in obs.counters]


@pytest.mark.parametrize("path", [PASS_442, FAILS_331, NO_NVLINK_246, SKIP_JSON])
def test_every_real_sample_is_sniffed(path: Path) -> None:
    assert sniff(path.read_text()) == dcgmi_diag.FORMAT


def test_real_passing_and_skipped_runs_fail_no_gpu() -> None:
    assert _failed(PASS_442.read_text()) == []
    assert _failed(SKIP_JSON.read_text()) == []


def test_real_331_gpu0_fails_memory_and_diagnostic_gpu1_is_not_judged() -> None:
    # By hand: GPU Memory is `Pass - GPU: 1` / `Fail - GPU: 0` and its Warning (line 8) names GPU 0, cut over
    # lines 8-12 every 45 characters ("... Reset GPU. R" + "estart DCGM ..."); it is DCGM_FR_CUDA_API ("Error using
    # CUDA API %s"), which DCGM ranks monitor ("can perform workload"): no fault of its own. Diagnostic is `Fail - All`,
    # its only Warning (line 15) names GPU 0: "API call %s failed" (DCGM_FR_API_FAIL, ranked triage): GPU 0's fault.
    # GPU 1 failed with it (DCGM fails the whole group) and no message says why, so it is not judged. Targeted
    # Stress `Fail - All` has no message in the excerpt: nothing. One observation of GPU 0, at line 15.
    diagnostic = (
        "GPU 0 API call cuMemGetInfo failed: 'context is destroyed' Check DCGM and system logs for errors. "
        "Reset GPU. Restart DCGM. Rerun diagnostics."
    )
    assert _failed(FAILS_331.read_text()) == [
        (0, 15, f"DCGM diagnostic (dcgmi diag) failed on it: Diagnostic: {diagnostic}")
    ]


def test_real_246_pcie_fail_for_nvlinks_a_host_does_not_have_is_no_gpu_fault() -> None:
    # DCGM#49: PCIe `Fail - All` whose message is only "GPU 0's NvLink link N is currently down": the NVLink
    # readers judge links against the inventory; this names no GPU fault.
    assert _failed(NO_NVLINK_246.read_text()) == []


def _442(memory_rows: str) -> str:
    text = PASS_442.read_text()
    old = _row("memory", "Pass") + _row("", "GPU0: Pass")
    assert text.count(old) == 1
    return text.replace(old, memory_rows)


def _row(name: str, value: str) -> str:
    return f"| {name:<25} | {value:<46} |\n"


def test_a_4x_entity_fail_with_its_message_is_the_gpus() -> None:
    # The 4.4.2 sample (Hardware header at line 12) with memory failing (line 13) on GPU0 (line 14) and a
    # Warning naming GPU 0 (line 15).
    text = _442(_row("memory", "Fail") + _row("", "GPU0: Fail") + _row("Warning", "GPU 0 had a memory error."))
    assert _failed(text) == [(0, 15, "DCGM diagnostic (dcgmi diag) failed on it: memory: GPU 0 had a memory error.")]
    # The same Fail with no message naming a GPU: nothing says what failed on it, it is not judged.
    assert _failed(_442(_row("memory", "Fail") + _row("", "GPU0: Fail"))) == []
    # A Warning beside a GPU that passed is not a failure.
    passed = _row("memory", "Pass") + _row("", "GPU0: Pass") + _row("Warning", "GPU 0 ran slower than usual.")
    assert _failed(_442(passed)) == []


def test_software_checks_are_not_the_gpus() -> None:
    # A Deployment `software` Fail (persistence mode off, as NVIDIA/NVSentinel#772 logs it) is configuration.
    text = PASS_442.read_text().replace(
        _row("software", "Pass") + _row("", "GPU0: Pass"),
        _row("software", "Fail") + _row("", "GPU0: Fail") + _row("Warning", "Persistence mode for GPU 0 is disab")
        + _row("", "led."),
    )  # fmt: skip
    assert "Persistence" in text
    assert _failed(text) == []


@pytest.mark.parametrize(
    ("rows", "line", "words"),
    [
        (_row("memory", "Broken") + _row("", "GPU0: Pass"), 13, "'Broken'; expected Pass, Fail, Skip or Warn"),
        (_row("memory", "Pass") + _row("", "GPU0: Running"), 14, "'Running'; expected Pass, Fail, Skip or Warn"),
        (_row("memory", "Pass") + "| memory | Pass\n", 14, "not a row of the dcgmi diag table"),
    ],
)
def test_a_result_that_cannot_be_read_is_refused_at_its_line(rows: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        dcgmi_diag.read(_442(rows), "diag.txt", "n1")
    assert f"diag.txt:{line}:" in str(err.value) and words in str(err.value)


def test_an_unknown_test_is_refused_only_where_it_failed() -> None:
    passing = _442(_row("hbm scrub", "Pass") + _row("", "GPU0: Pass"))
    assert _failed(passing) == []
    failing = _442(_row("hbm scrub", "Fail") + _row("", "GPU0: Fail") + _row("Warning", "GPU 0 bad."))
    with pytest.raises(TopologError, match=r"diag\.txt:13: .*'hbm scrub' failed and is not a test"):
        dcgmi_diag.read(failing, "diag.txt", "n1")


def test_a_table_cut_short_or_another_after_it_is_refused() -> None:
    text = PASS_442.read_text()
    with pytest.raises(TopologError, match="does not end"):
        dcgmi_diag.read("".join(text.splitlines(keepends=True)[:-1]), "diag.txt", "n1")
    with pytest.raises(TopologError, match=r"diag\.txt:19: text after the dcgmi diag table"):
        dcgmi_diag.read(text + text, "diag.txt", "n1")


def _json4(result: dict[str, object]) -> str:
    """A DCGM 4.x document in the shape of NVIDIA/DCGM's dcgm_diag_schema.json, one test of one result."""
    doc = {
        "DCGM Diagnostic": {
            "test_categories": [
                {
                    "category": "Hardware",
                    "tests": [{"name": "memory", "results": [result], "test_summary": {"status": "Fail"}}],
                }
            ]
        },
        "metadata": {"version": "4.2.3"},
    }
    return json.dumps(doc, indent=2)


def test_4x_json_gpu_result_with_its_warning() -> None:
    # indent=2: line 1 `{`, 2 `"DCGM Diagnostic": {`, 3 `"test_categories": [`, 4 `{`, 5 category, 6 `"tests": [`,
    # 7 `{`, 8 name, 9 `"results": [`, 10 `{`, 11 entity_group, 12 entity_id, 13 status.
    result = {"entity_group": "GPU", "entity_id": 1, "status": "Fail", "warnings": [{"warning": "bad page"}]}
    assert _failed(_json4(result)) == [(1, 13, "DCGM diagnostic (dcgmi diag) failed on it: memory: GPU 1 bad page")]
    # A CPU entity's failure is no GPU's; a status not in the four is refused at its line.
    assert _failed(_json4({**result, "entity_group": "CPU"})) == []
    with pytest.raises(TopologError, match=r"diag\.txt:13: diagnostic result 'Running'"):
        dcgmi_diag.read(_json4({**result, "status": "Running"}), "diag.txt", "n1")
    with pytest.raises(TopologError, match="the diagnostic did not run"):
        dcgmi_diag.read(json.dumps({"DCGM Diagnostic": {"runtime_error": "no GPUs"}}), "diag.txt", "n1")


def test_4x_json_failure_ranked_monitor_or_config_is_no_gpu_fault() -> None:
    # dcgm_errors.h: error_severity 1 is DCGM_ERROR_MONITOR ("can perform workload, but needs to be
    # monitored"), 5 DCGM_ERROR_CONFIG, 2 DCGM_ERROR_ISOLATE ("GPU should be isolated"); DCGM's own
    # JSON test (testing/python3/tests/test_dcgmi.py) shows a thermal warning as a result carrying
    # error_severity 1. A result whose every message is ranked 1 or 5 takes no GPU out; one ranked 2,
    # or a mix, or a message without a rank, does (line 13: the result's status, as above).
    def result(*ranks: object) -> dict[str, object]:
        warnings = [{"warning": f"issue {i}", "error_severity": r} for i, r in enumerate(ranks)]
        return {"entity_group": "GPU", "entity_id": 1, "status": "Fail", "warnings": warnings}

    assert _failed(_json4(result(1))) == []
    assert _failed(_json4(result(1, 5))) == []
    assert [(g, line) for g, line, _ in _failed(_json4(result(2)))] == [(1, 13)]
    assert [(g, line) for g, line, _ in _failed(_json4(result(1, 2)))] == [(1, 13)]
    # A rank written as text or true is not DCGM's integer: not read as a rank, so the failure counts.
    assert [(g, line) for g, line, _ in _failed(_json4(result("1")))] == [(1, 13)]
    assert [(g, line) for g, line, _ in _failed(_json4(result(True)))] == [(1, 13)]


def _verify(tmp_path: Path, text: str, gpu0_state: str = "") -> tuple[int, list[tuple[list[str], str]], str]:
    (tmp_path / "obs" / "n1").mkdir(parents=True, exist_ok=True)
    (tmp_path / "obs" / "n1" / "dcgmi-diag.txt").write_text(text)
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        f"      - {{name: gpu0, kind: gpu, labels: {{index: '0'}}{gpu0_state}}}\n"
        "      - {name: gpu1, kind: gpu, labels: {index: '1'}}\n"
    )
    code, out, err = run_cli("verify", str(inventory), "--observed", str(tmp_path / "obs"), "--format", "json")
    found = json.loads(out)["findings"] if out.strip() else []
    return code, sorted((f["subjects"], f["message"]) for f in found if f["rule"] == "OBS004"), err


def test_verify_reports_the_failed_gpu_only(tmp_path: Path) -> None:
    code, found, err = _verify(tmp_path, FAILS_331.read_text())
    assert code == 1, err
    assert [s for s, _ in found] == [["n1/gpu0"]]
    assert "Diagnostic: GPU 0 API call cuMemGetInfo failed" in found[0][1]
    assert "dcgmi-diag.txt:15)" in found[0][1]


def test_verify_leaves_a_gpu_declared_down_to_its_declaration(tmp_path: Path) -> None:
    _, found, _ = _verify(tmp_path, FAILS_331.read_text(), ", state: down")
    assert found == []


def test_3x_json_gpu_id_string_fail_with_its_warning() -> None:
    # The T400 sample with its GPU Memory result failed with DCGM 3.x's warning object. By hand: lines 1-5 open
    # the root and its list, 6-21 the Integration category (PCIe's status at 16), 22 `{`, 23 category, 24 tests,
    # 25 `[`, 26 `{`, 27 name, 28 results, 29 `[`, 30 `{`, 31 gpu_id, 32 status. The message does not name the
    # GPU, the result does: it is GPU 0's.
    text = SKIP_JSON.read_text()
    old = '\t\t\t\t\t\t\t\t"gpu_id" : "0",\n\t\t\t\t\t\t\t\t"status" : "Skip"\n'
    assert text.count(old) == 4 and text.splitlines()[31].strip() == '"status" : "Skip"'
    first, rest = text.split(old, 2)[:2], text.split(old, 2)[2]
    failed = old.replace('"Skip"\n', '"Fail",\n') + '\t\t\t\t\t\t\t\t"warnings" : [{"warning" : "memory error"}]\n'
    text = first[0] + old + first[1] + failed + rest
    assert _failed(text) == [(0, 32, "DCGM diagnostic (dcgmi diag) failed on it: GPU Memory: GPU 0 memory error")]
