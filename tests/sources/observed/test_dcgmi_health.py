"""`dcgmi health -c` (table and -j): DCGM's health watches. The sample is laid out from NVIDIA/DCGM's own test of
the report (samples/dcgmi-health/README.md); base topolog refuses every such file, so each test here fails on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_health
from verifier.sources.observed.model import DIAG_FAILED
from verifier.sources.observed.sniff import sniff

SAMPLE = Path(__file__).parent / "samples" / "dcgmi-health" / "dcgm-health-tests-3-incidents.txt"
ROOT = Path(__file__).resolve().parents[3]


def _row(left: str, right: str) -> str:
    return f"| {left:<25} | {right:<56} |\n"


def _table(*rows: tuple[str, str]) -> str:
    hline = "+" + "-" * 27 + "+" + "-" * 58 + "+\n"
    title = "| " + "Health Monitor Report".ljust(85) + "|\n"
    return hline + title + hline.replace("-", "=") + "".join(_row(a, b) for a, b in rows) + hline


def test_dcgm_test_sample() -> None:
    # GPU 0: Memory Warning (can still work): nothing. GPU 1: Memory Failure (line 13, its message on lines 14-15
    # joined with a space) -> out of service; its SM Warning is not named.
    text = SAMPLE.read_text()
    assert sniff(text) == dcgmi_health.FORMAT
    obs = dcgmi_health.read(text, "h.txt", "n1")
    (c,) = obs.counters
    assert (c.gpu.index, c.metric, c.source.line) == (1, DIAG_FAILED, 13)
    assert dict(c.labels)["reason"] == (
        "DCGM health check (dcgmi health) says it failed: Memory system Failure: Green can be emerald and "
        "beautiful, but there are shades of green which are sure to disappoint."
    )
    assert obs.files[0].format == "dcgmi-health"


def _json_doc() -> str:
    # The same report as dcgmi -j writes it (DcgmiOutputJson: jsoncpp's styled string, keys sorted).
    doc = {
        "body": {
            "GPU": {
                "children": {
                    "0": {
                        "children": {
                            "Errors": {
                                "children": {"Memory system": {"overflow": ["The car is red?"], "value": "Warning"}}
                            }
                        },
                        "value": "Warning",
                    },
                    "1": {
                        "children": {
                            "Errors": {
                                "children": {
                                    "Memory system": {"overflow": ["Green can be", "emerald."], "value": "Failure"},
                                    "SM system": {"overflow": ["lame."], "value": "Warning"},
                                }
                            }
                        },
                        "value": "Failure",
                    },
                }
            },
            "Overall Health": {"value": "Failure"},
        },
        "header": ["Health Monitor Report"],
    }
    return json.dumps(doc, indent=3, sort_keys=True) + "\n"


def test_json_reads_as_the_table() -> None:
    text = _json_doc()
    assert sniff(text) == dcgmi_health.FORMAT
    (c,) = dcgmi_health.read(text, "h.json", "n1").counters
    assert c.gpu.index == 1
    assert dict(c.labels)["reason"].endswith("Memory system Failure: Green can be emerald.")
    # The line of GPU 1's "Memory system" key (derived from the text, as the reader has no other place marker).
    lines = text.splitlines()
    first_one = next(i for i, line in enumerate(lines) if line.strip().startswith('"1"'))
    memory = next(i for i in range(first_one, len(lines)) if '"Memory system"' in lines[i])
    assert c.source.line == memory + 1


@pytest.mark.parametrize(
    ("system", "words", "judged"),
    [
        ("PCIe system", "Detected more than 8 PCIe replays per minute for GPU 2: 13", True),
        ("Thermal system", "Detected clocks event due to thermal violation", False),
        ("Power system", "Detected clocks event due to power violation", False),
        ("NVLINK system", "GPU 2's NvLink link 4 is currently down", False),
        ("NVLINK system", "Detected a critical NvLink error for GPU 2's link 4", True),
        ("Driver", "", True),
    ],
)
def test_which_failures_take_a_gpu_out(system: str, words: str, judged: bool) -> None:
    rows = [("Overall Health", "Failure"), ("GPU", ""), ("-> 2", "Failure"), ("   -> Errors", "")]
    rows += [(f"      -> {system}", "Failure"), ("", words)] if words else [(f"      -> {system}", "Failure")]
    counters = dcgmi_health.read(_table(*rows), "h.txt", "n1").counters
    assert [c.gpu.index for c in counters] == ([2] if judged else [])


def test_other_entity_groups_are_not_judged() -> None:
    rows = [("Overall Health", "Failure"), ("Switch", ""), ("-> 0", "Failure"), ("   -> Errors", "")]
    rows += [("      -> PCIe system", "Failure"), ("", "fatal")]
    assert dcgmi_health.read(_table(*rows), "h.txt", "n1").counters == ()


def test_healthy_report() -> None:
    obs = dcgmi_health.read(_table(("Overall Health", "Healthy")), "h.txt", "n1")
    assert (obs.counters, obs.hosts) == ((), ("n1",))


@pytest.mark.parametrize(
    ("rows", "line", "words"),
    [
        ((("Overall Health", "Broken"),), 4, "health 'Broken'; expected Healthy, Warning or Failure"),
        ((("GPU", ""), ("-> zero", "Failure")), 5, "expected DCGM's entity id"),
        ((("-> 0", "Failure"),), 4, "under no group"),
        ((("GPU", ""), ("-> 0", "Failure"), ("", "orphan words")), 6, "under no system"),
        ((("GPU", ""), ("-> 0", "Failure"), ("  -> Errors", "")), 6, "at an indent"),
        ((("GPU", ""), ("-> 0", "Failure"), ("   -> Mistakes", "")), 6, "expected '-> Errors'"),
    ],
)
def test_refused_at_its_line(rows: tuple[tuple[str, str], ...], line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        dcgmi_health.read(_table(*rows), "h.txt", "n1")
    (diag,) = err.value.diagnostics
    assert (diag.location.line, words in diag.message) == (line, True), diag.message


def test_verify_takes_the_failed_gpu_out_of_service(tmp_path: Path) -> None:
    # dgx02 of the shipped pod (GPUs by index): DCGM's GPU 1 failed its Memory system -> OBS004 on dgx02/gpu1 at
    # line 13 of the sample, and nothing else.
    (tmp_path / "dgx02").mkdir()
    (tmp_path / "dgx02" / "health.txt").write_text(SAMPLE.read_text())
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories/dgx-h100-pod.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code == 1, err
    found = [f for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert [(f["rule"], f["subjects"]) for f in found] == [("OBS004", ["dgx02/gpu1"])]
    assert "health.txt:13" in found[0]["message"]
