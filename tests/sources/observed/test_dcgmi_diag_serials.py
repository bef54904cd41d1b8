"""`dcgmi diag -j`: a failed GPU is named by the board serial DCGM prints beside its id, not by its id alone.

DCGM numbers the GPUs it is given: run in a container given some of the host's GPUs (`--gpus`,
NVIDIA_VISIBLE_DEVICES) it numbers them from 0, so its GPU 0 can be the host's GPU 1. -j output names each id's
board: 3.x `"GPU Device Serials": {"0": "..."}` beside `DCGM GPU Diagnostic` (HelperJsonBuildOutput in NVIDIA/DCGM
dcgmi/Diag.cpp), 4.x `entity_groups` of GPU entities with `entity_id` and `serial_num` (NVIDIA/DCGM
testing/python3/dcgm_diag_schema.json). Before, the id was the host's index: the fault was put on gpu0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgmi_diag

SERIAL_GPU1 = "1650421000123"
"""The serial the inventory below declares for n1/gpu1 (gpu0's is 1650421000122)."""


def _doc3(serials: object) -> dict[str, object]:
    result = {"gpu_id": "0", "status": "Fail", "warnings": [{"warning": "GPU 0 had a memory error."}]}
    tests = [{"name": "GPU Memory", "results": [result]}]
    return {
        "DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": tests}]},
        "GPU Device Serials": serials,
    }


def _doc4(serial: str) -> dict[str, object]:
    result = {
        "entity_group": "GPU",
        "entity_group_id": 1,
        "entity_id": 0,
        "status": "Fail",
        "warnings": [{"warning": "GPU 0 had a memory error.", "error_severity": 2}],
    }
    tests = [{"name": "memory", "results": [result], "test_summary": {"status": "Fail"}}]
    return {
        "DCGM Diagnostic": {"test_categories": [{"category": "Hardware", "tests": tests}]},
        "entity_groups": [
            {
                "entity_group": "GPU",
                "entity_group_id": 1,
                "entities": [{"entity_id": 0, "device_id": "2330", "serial_num": serial}],
            }
        ],
        "metadata": {"version": "4.2.3"},
    }


def test_the_failed_gpu_carries_its_serial() -> None:
    for doc in (_doc3({"0": SERIAL_GPU1}), _doc4(SERIAL_GPU1)):
        (obs,) = dcgmi_diag.read(json.dumps(doc, indent=2), "diag.json", "n1").counters
        assert (obs.gpu.index, obs.gpu.serial) == (0, SERIAL_GPU1)
    (obs,) = dcgmi_diag.read(json.dumps(_doc3({}), indent=2), "diag.json", "n1").counters
    assert (obs.gpu.index, obs.gpu.serial) == (0, None)  # no serial printed: the id alone


@pytest.mark.parametrize("serials", [[SERIAL_GPU1], {"0": 5}, {"x": SERIAL_GPU1}])
def test_serials_not_in_dcgm_shape_are_refused(serials: object) -> None:
    with pytest.raises(TopologError, match=r"diag\.json:1: "):
        dcgmi_diag.read(json.dumps(_doc3(serials)), "diag.json", "n1")


def test_verify_puts_the_fault_on_the_board_with_that_serial(tmp_path: Path) -> None:
    # The node declares gpu0 and gpu1 with serials; DCGM's GPU 0 (a container given the host's GPU 1) is serial
    # 1650421000123, gpu1's: OBS004 names n1/gpu1, not n1/gpu0.
    (tmp_path / "obs" / "n1").mkdir(parents=True)
    (tmp_path / "obs" / "n1" / "dcgmi-diag.json").write_text(json.dumps(_doc3({"0": SERIAL_GPU1}), indent=2))
    inventory = tmp_path / "inv.yaml"
    inventory.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n    children:\n"
        "      - {name: gpu0, kind: gpu, labels: {index: '0', serial: '1650421000122'}}\n"
        f"      - {{name: gpu1, kind: gpu, labels: {{index: '1', serial: '{SERIAL_GPU1}'}}}}\n"
    )
    code, out, err = run_cli("verify", str(inventory), "--observed", str(tmp_path / "obs"), "--format", "json")
    assert code == 1, err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert found == [("OBS004", ["n1/gpu1"])]
