"""`topolog place` says PLACE002, with the reason, for a job that can never run; PLACE001 stays "not now".

A job that contradicts the catalogue (rules/placement/lib/never.dl `job_never`) fits no node
whatever is up, drained or permitted: `verify --jobs` reports PLACE002 for it, and `place` must
say the same, not "fits nowhere" (PLACE001), which a drain or a permit could change.

Hand derivation on inventories/mixed-fleet.yaml, whose catalogue (model_info, kind gpu) holds
NVIDIA models (A100, H100, H200, B200, RTX-4090, V100) and AMD ones (MI300X, MI325X, MI355X);
verifier/sources/inventory/software.yaml runs cuda and nccl on NVIDIA alone, rocm and rccl on AMD
alone (vendor_software); MIG profiles (mig_profile) are offered by A100 and H100 models only.
hana (inventories/principals.yml) may schedule on the H100 and MI300X nodes.

- both-stacks: one software alternative asks cuda (NVIDIA) and rocm (AMD): two vendors' stacks
  at once, for a job that runs on one kind of accelerator: never (never_option's first rule).
- cuda-on-amd: accepts MI300X (AMD) and asks cuda (NVIDIA): a stack none of its accelerators runs.
- tpu: accepts "TPU-v5p", no model, no family (name prefix) and no vendor of the catalogue.
- mig-on-amd: accepts the vendor amd, whose models offer no MIG profile; 1g.10gb is a profile
  of the catalogue (A100, H100), so the loader takes it and the rules judge it.
- sixteen: 16 GPUs on one node, where the largest node has 8: not now (PLACE001), never is empty.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

REPO = Path(__file__).resolve().parents[2]
MIXED = REPO / "inventories" / "mixed-fleet.yaml"

JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
jobs:
  - name: both-stacks
    principal: User::"hana"
    gpus: 2
    software: {cuda: ">=12.0", rocm: ">=6.0"}
  - name: cuda-on-amd
    principal: User::"hana"
    gpus: 2
    gpu: {accepts: [MI300X]}
    software: {cuda: ">=12.0"}
  - name: tpu
    principal: User::"hana"
    gpus: 2
    gpu: {accepts: [TPU-v5p]}
  - name: mig-on-amd
    principal: User::"hana"
    gpus: 2
    gpu: {accepts: [amd], mig: 1g.10gb}
  - name: sixteen
    principal: User::"hana"
    gpus: 16
    topology: {scope: node}
"""

STACKS = (
    "every software alternative needs another vendor's stack than the accelerators it accepts run, "
    "or two vendors' stacks at once (CUDA on AMD, ROCm on NVIDIA)"
)
NO_MODEL = (
    "the accelerators it accepts (gpu.accepts, a node selector on the GPU product, a Slurm GPU type) "
    "name no model, family or vendor of the catalogue"
)
NO_MIG = "no accelerator model it accepts offers its MIG profile"
NEVER = {"both-stacks": [STACKS], "cuda-on-amd": [STACKS], "tpu": [NO_MODEL], "mig-on-amd": [NO_MIG], "sixteen": []}


@pytest.fixture(scope="module")
def jobs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("never") / "jobs.yaml"
    path.write_text(JOBS)
    return path


def test_text_says_place002_with_the_reason_and_place001_only_for_not_now(jobs: Path) -> None:
    code, out, err = run_cli("place", str(MIXED), str(jobs))
    assert code == 1, err  # a job that never runs is not placeable: exit 1, as PLACE001
    blocks = out.split("job ")[1:]
    said = {block.split(" ", 1)[0]: block for block in blocks}
    for name, reasons in NEVER.items():
        block = said[name]
        if reasons:
            assert f"  error PLACE002: can never run on any node: {reasons[0]}\n" in block
            assert "PLACE001" not in block
        else:
            assert "  error PLACE001: fits nowhere\n" in block and "PLACE002" not in block
    assert out.endswith("0 of 5 jobs placeable (ranked by bandwidth)\n")


def test_json_lists_the_reasons_under_never(jobs: Path) -> None:
    code, out, err = run_cli("place", str(MIXED), str(jobs), "--format", "json", "--why-not")
    assert code == 1, err
    doc = json.loads(out)
    assert {j["job"]: j["never"] for j in doc["jobs"]} == NEVER
    assert all(not j["placeable"] for j in doc["jobs"])
    assert doc["unplaceable"] == list(NEVER)


def test_place_and_verify_name_the_same_reason(jobs: Path) -> None:
    code, out, _err = run_cli("verify", str(MIXED), "--jobs", str(jobs))
    assert code == 1
    found = {
        line.split("Job ", 1)[1].split(" ", 1)[0]: line.split("can never run on any node: ", 1)[1].rsplit(". [", 1)[0]
        for line in out.splitlines()
        if " error PLACE002: " in line
    }
    assert found == {name: reasons[0] for name, reasons in NEVER.items() if reasons}


def test_a_what_if_says_never_too(jobs: Path) -> None:
    # Draining h100-n0 changes nothing for a job that can never run: the what-if says so with the
    # reason (PLACE002), not "fits nowhere, before and after", which a drain elsewhere could change;
    # "sixteen" (not now, not never) keeps that line. The JSON carries the reasons under `never`.
    code, out, err = run_cli("place", str(MIXED), str(jobs), "--drain", "h100-n0")
    assert code == 0, err  # no job loses a placement it had
    heads = {line.split(" ", 2)[1]: line for line in out.splitlines() if line.startswith("job ")}
    for name, reasons in NEVER.items():
        if reasons:
            assert heads[name].endswith(f": can never run on any node (PLACE002: {reasons[0]})")
        else:
            assert heads[name].endswith(": fits nowhere, before and after")
    code, out, _ = run_cli("place", str(MIXED), str(jobs), "--drain", "h100-n0", "--format", "json")
    assert {j["job"]: j["never"] for j in json.loads(out)["jobs"]} == NEVER
