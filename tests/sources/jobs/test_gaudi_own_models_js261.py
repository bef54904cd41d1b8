"""`habana.ai/gaudi: N` on an inventory that files its Gaudi under its own catalog entry, named by
part number (`HL-325L`, `HL-225`) rather than by the built-in catalogue's `Gaudi3-HL-325L`.

Before, one `habana.ai/gaudi` unit accepted only the family words `Gaudi2` and `Gaudi3` (name
prefixes), so such a node's Gaudis were "0 GPUs of an accepted model" and a valid job fit nowhere.
What makes a model a Gaudi is what its entry says: Intel's kind `hpu` (the built-in catalogue files
Gaudi 2 and Gaudi 3 so). An Intel model of kind `gpu` is never taken for one, whatever its name.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

RULES = parse_rules(["namespace=Team"])

# One Pod of 8 Gaudi accelerators, the shape of Intel's Gaudi pods (redhat-cop/agnosticd,
# ansible/roles_ocp_workloads/ocp4_workload_habana_post_rhods_setup/README.md: limits
# `habana.ai/gaudi`; HabanaAI/habana-k8s-device-plugin registers that one resource name).
GAUDI_POD = """apiVersion: v1
kind: Pod
metadata: {name: g8, namespace: research}
spec:
  containers:
    - name: c
      image: vault.habana.ai/gaudi-docker/1.18.0/ubuntu22.04/habanalabs/pytorch-installer-2.4.0
      resources:
        limits:
          habana.ai/gaudi: "8"
"""

# Three nodes of 8 accelerators each, every model the inventory's own:
# - g3: HL-325L, vendor intel, kind hpu (a Gaudi 3 OAM by its part number)
# - g2: HL-225, vendor intel, kind hpu (a Gaudi 2)
# - max: HL-338, vendor intel, kind gpu: a part number alone, filed as a GPU, could be any Intel GPU
#   (Intel's Data Center GPU Max is kind gpu), so it must not be taken for a Gaudi.
OWN_MODELS = """apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: own-gaudi}
catalog:
  models:
    - name: HL-325L
      vendor: intel
      kind: hpu
      source: "Intel Gaudi 3 AI accelerator white paper (2024), HL-325L OAM"
      memory: {type: HBM2e, size: 128 GB, bandwidth: 3.7 TB/s}
      features: [roce, ecc, hbm]
    - name: HL-225
      vendor: intel
      kind: hpu
      source: "Intel Habana Gaudi2 white paper (2022)"
      memory: {type: HBM2e, size: 96 GB, bandwidth: 2.46 TB/s}
      features: [roce, ecc, hbm]
    - name: HL-338
      vendor: intel
      kind: gpu
      source: "an Intel accelerator filed by part number as a GPU"
      memory: {type: HBM2e, size: 128 GB, bandwidth: 3.7 TB/s}
      features: [ecc, hbm]
objects:
  - {name: g3, kind: node, children: [{name: "a{i}", kind: gpu, model: HL-325L, count: 8}]}
  - {name: g2, kind: node, children: [{name: "a{i}", kind: gpu, model: HL-225, count: 8}]}
  - {name: max, kind: node, children: [{name: "a{i}", kind: gpu, model: HL-338, count: 8}]}
"""


def test_a_gaudi_request_accepts_the_gaudi_family() -> None:
    # One word, the family, for every generation: the job reader does not know the inventory.
    (job,) = read_jobs_text(GAUDI_POD, "gaudi.yaml", RULES)
    assert (job.gpus, job.accepts) == (8, ("Gaudi",))


@pytest.mark.parametrize("engine", ["memory", "duckdb"])
def test_an_inventorys_own_gaudi_by_part_number_is_placed(tmp_path: Path, engine: str) -> None:
    # 8 per pod, scope node: g3 (8 HL-325L, hpu) and g2 (8 HL-225, hpu) each hold it -> 2 placements;
    # max (8 HL-338, kind gpu) is no Gaudi -> its why-not is the accepted model, 0 of 8.
    # Before: 0 placements (every node "0 GPUs of an accepted model (Gaudi2, Gaudi3)"), exit 1.
    inventory, spec = tmp_path / "own.yaml", tmp_path / "gaudi.yaml"
    inventory.write_text(OWN_MODELS)
    spec.write_text(GAUDI_POD)
    code, out, err = run_cli(
        "place", str(inventory), str(spec), "--format", "json", "--why-not", "--no-authorization",
        "--principal-from", "namespace=Team", "--engine", engine,
    )  # fmt: skip
    assert code == 0, err
    (job,) = json.loads(out)["jobs"]
    placed = sorted({gpu.split("/")[0] for p in job["placements"] for gpu in p["gpus"]})
    assert placed == ["g2", "g3"]
    (why,) = job["why_not"]
    assert (why["domain"], why["have"], why["need"]) == ("max", 0, 8)
    assert why["message"] == "max: 0 GPUs of an accepted model (Gaudi), job needs 8"
