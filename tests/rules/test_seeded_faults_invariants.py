"""Seeded faults of policies and jobs (issue 40 item 5): one edit to a copy of the shipped files.

Each case copies mixed-fleet.yaml with what topolog finds beside it (principals.yml, a copy of
the shipped policies/) and the shipped job files (inventories/jobs/*.yaml), makes ONE text edit
in one of those files, and verifies the copy with its jobs (`topolog verify mixed-fleet.yaml
--jobs jobs/`), pristine and seeded side by side: the difference must be exactly the (rule,
subjects) pairs the case derives by hand. Refusals (exit 2) name the file and line instead.

Facts of the pristine copy that the derivations use (inventories/mixed-fleet.yaml,
inventories/principals.yml, policies/):
- rtx-n0 and rtx-n1 carry quarantine: "true" (their overrides); the RTX workstations' type
  labels tenant students, rtx-n2's override tenant robotics; each workstation has 2 RTX 4090s
  (consumer, no FP64).
- Principals of tenant students: team students, team interns (through students), user ivan
  (through interns, role intern). interns-consumer-only forbids interns only data-centre GPUs.
- quarantine-closed forbids every action on quarantined hardware unless on call in an incident;
  tenant-own-hardware permits schedule and reserve on hardware of the principal's tenant.
- The jobs: chat-8b-serving (students, accepts RTX-4090, CUDA >= 12.4) fits rtx-n3;
  cfd-fp64 (hpc, 8 FP64 GPUs on one node, excludes quarantine "true") fits an MI300X node;
  notebooks-mig (research, 12 x 1g.10gb) fits nowhere here (research has no hardware in this
  fleet: PLACE001 before and after every edit).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import run_cli
from seeded_faults import MIXED, POD, ROOT, Added

from verifier.core.errors import TopologError
from verifier.session.verify_run import VerifyRun, verify
from verifier.sources.jobs.principal_rules import parse_rules

POLICIES = ROOT / "policies"
JOBS = ROOT / "inventories" / "jobs"


@dataclass(frozen=True)
class Edit:
    file: str  # relative to the copied tree: mixed-fleet.yaml, policies/<f>.cedar, jobs/<f>.yaml
    old: str
    new: str
    added: Added


def _tree(root: Path) -> Path:
    """mixed-fleet.yaml, principals.yml, policies/ and jobs/ copied under `root` (the inventory's path)."""
    root.mkdir(parents=True)
    shutil.copy(MIXED, root / MIXED.name)
    shutil.copy(MIXED.parent / "principals.yml", root / "principals.yml")
    (root / "policies").mkdir()
    for f in [POLICIES / "schema.cedarschema", *sorted(POLICIES.glob("*.cedar"))]:
        shutil.copy(f, root / "policies" / f.name)
    (root / "jobs").mkdir()
    for f in sorted(JOBS.glob("*.yaml")):
        shutil.copy(f, root / "jobs" / f.name)
    return root / MIXED.name


def _findings(inventory: Path) -> Added:
    report = verify([inventory], VerifyRun(jobs=(inventory.parent / "jobs",)))
    return frozenset((r.finding.rule, r.finding.subjects) for r in report.results)


def _seed(edit: Edit, tmp_path: Path) -> Path:
    inventory = _tree(tmp_path / "seeded")
    target = inventory.parent / edit.file
    text = target.read_text(encoding="utf-8")
    assert text.count(edit.old) == 1, "the text the fault replaces is in the file once"
    target.write_text(text.replace(edit.old, edit.new), encoding="utf-8")
    return inventory


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Added:
    return _findings(_tree(tmp_path_factory.mktemp("invariants") / "pristine"))


_QUARANTINE_RTX = ("rtx-n0", "rtx-n1")

FAULTS: dict[str, Edit] = {
    # The forbid narrowed to reserve, drain and administer: schedule is left to tenant-own-hardware,
    # which lets the students tenant (students, interns, ivan) onto rtx-n0 and rtx-n1 again. One
    # finding: both labelled nodes, the three principals.
    "policy: the quarantine forbid no longer covers schedule": Edit(
        "policies/quarantine.cedar",
        "forbid (principal, action, resource)\nwhen { resource.quarantined }",
        'forbid (principal, action in [Action::"reserve", Action::"drain", Action::"administer"], resource)\n'
        "when { resource.quarantined }",
        frozenset({("AUTHZ003", (*_QUARANTINE_RTX, "interns", "ivan", "students"))}),
    ),
    # The forbid narrowed to users: teams asking as themselves (students, interns) schedule on the
    # quarantined nodes; ivan, a user, is still forbidden.
    "policy: the quarantine forbid narrowed to users": Edit(
        "policies/quarantine.cedar",
        "forbid (principal, action, resource)\nwhen { resource.quarantined }",
        "forbid (principal is User, action, resource)\nwhen { resource.quarantined }",
        frozenset({("AUTHZ003", (*_QUARANTINE_RTX, "interns", "students"))}),
    ),
    # The FP64 forbid's exception names Team::"hcp", which the principals file lacks (hpc is the
    # team): Cedar accepts it and the exception never matches. Nothing else added: hpc loses the
    # MI300X nodes, but a team permitted no GPU gets no AUTHZ001 (it reports teams with some).
    # cfd-fp64 then fits nowhere (PLACE001): hpc may no longer schedule on FP64 hardware.
    "policy: the FP64 exception names a team that does not exist": Edit(
        "policies/fp64.cedar",
        'unless { principal in Team::"hpc" };',
        'unless { principal in Team::"hcp" };',
        frozenset({("AUTHZ004", ("fp64-reserved-for-hpc",)), ("PLACE001", ("cfd-fp64",))}),
    ),
    # The quarantine forbid widened to a node rtx-n4, which the fleet lacks (rtx-n0..rtx-n3):
    # a hardware name that silently never matches.
    "policy: the quarantine forbid names a node that does not exist": Edit(
        "policies/quarantine.cedar",
        "when { resource.quarantined }\nunless",
        'when { resource.quarantined || resource in Node::"rtx-n4" }\nunless',
        frozenset({("AUTHZ004", ("quarantine-closed",))}),
    ),
    # owners-administer gains an exception for members of team "studnets" (a typo of students),
    # written as a string that `principal.teams` would hold: a team name all the same, and one the
    # principals file lacks. Decisions are unchanged (no principal is in it), so only AUTHZ004.
    "policy: a teams.contains literal names a team that does not exist": Edit(
        "policies/operations.cedar",
        "principal.teams.contains(resource.owner) };",
        'principal.teams.contains(resource.owner) && !principal.teams.contains("studnets") };',
        frozenset({("AUTHZ004", ("owners-administer",))}),
    ),
    # chat-8b-serving retargeted to MI300X (AMD) with its CUDA-only stack kept: CUDA runs only on
    # NVIDIA, so no node can ever meet it: PLACE002 (and not PLACE001, which steps aside).
    "job: CUDA on AMD": Edit(
        "jobs/inference.yaml",
        "accepts: [RTX-4090]",
        "accepts: [MI300X]",
        frozenset({("PLACE002", ("chat-8b-serving",))}),
    ),
    # chat-8b-serving keeps its RTX 4090s (NVIDIA) but asks for ROCm: never.
    "job: ROCm on NVIDIA": Edit(
        "jobs/inference.yaml",
        '- {cuda: ">=12.4"}',
        '- {rocm: ">=6.1"}',
        frozenset({("PLACE002", ("chat-8b-serving",))}),
    ),
    # RTX-5090 is no model of the catalogue (nor of mixed-fleet's own models) and no prefix of
    # one, nor a vendor: the job accepts nothing that exists.
    "job: a GPU model the catalogue lacks": Edit(
        "jobs/inference.yaml",
        "accepts: [RTX-4090]",
        "accepts: [RTX-5090]",
        frozenset({("PLACE002", ("chat-8b-serving",))}),
    ),
    # cfd-fp64's exclusion mistyped: quarantine "yes" where the fleet writes "true" (rtx-n0/n1).
    # Its placement is unchanged (the quarantined nodes have no FP64 GPUs anyway).
    "job: an exclude value no object carries": Edit(
        "jobs/hpc.yaml",
        'quarantine: "true"',
        'quarantine: "yes"',
        frozenset({("PLACE003", ("cfd-fp64",))}),
    ),
    # 16 GPUs on one node where the largest node of the fleet has 8: "fits nowhere" (PLACE001,
    # whose message names the closest node's 8 GPUs).
    "job: more GPUs on one node than any node has": Edit(
        "jobs/hpc.yaml",
        "gpus: 8",
        "gpus: 16",
        frozenset({("PLACE001", ("cfd-fp64",))}),
    ),
}

NON_FAULTS: dict[str, Edit] = {
    # The same forbid with every action listed: what it closes is unchanged.
    "policy: the quarantine forbid with its actions listed": Edit(
        "policies/quarantine.cedar",
        "forbid (principal, action, resource)\nwhen { resource.quarantined }",
        'forbid (principal, action in [Action::"schedule", Action::"reserve", Action::"drain", '
        'Action::"administer"], resource)\nwhen { resource.quarantined }',
        frozenset(),
    ),
    # sre-drain granted to infra-eu (a team that exists, inside sre) instead of sre.
    "policy: a permit naming another existing team": Edit(
        "policies/operations.cedar",
        'permit (principal in Team::"sre", action == Action::"drain", resource);',
        'permit (principal in Team::"infra-eu", action == Action::"drain", resource);',
        frozenset(),
    ),
    # The H100 nodes' stack upgraded consistently: driver 560.35.03 (CUDA 12.6 needs 560.28.03,
    # NVIDIA's release notes), CUDA 12.6, NCCL 2.23.4; finetune-portable still asks CUDA >= 12.4.
    "inventory: a consistent stack upgrade": Edit(
        MIXED.name,
        'software: {driver: "550.90.07", cuda: "12.4", nccl: "2.21.5",',
        'software: {driver: "560.35.03", cuda: "12.6", nccl: "2.23.4",',
        frozenset(),
    ),
    # A smaller but real model: 3B parameters instead of 8B still fits one RTX 4090 per replica.
    "job: a smaller model": Edit(
        "jobs/inference.yaml",
        "parameters: 8B",
        "parameters: 3B",
        frozenset(),
    ),
    # A real MIG profile of the H100/A100-80GB (3g.40gb, 2 a GPU): notebooks-mig still fits nowhere
    # here for want of research hardware (PLACE001 before and after), and is not "never".
    "job: another real MIG profile": Edit(
        "jobs/notebooks.yaml",
        "mig: 1g.10gb",
        "mig: 3g.40gb",
        frozenset(),
    ),
}


@pytest.mark.parametrize("name", sorted(FAULTS) + sorted(NON_FAULTS))
def test_a_seeded_invariant_fault_adds_exactly_its_findings(name: str, pristine: Added, tmp_path: Path) -> None:
    edit = FAULTS.get(name) or NON_FAULTS[name]
    after = _findings(_seed(edit, tmp_path))
    assert pristine <= after, "the edit takes no finding away"
    assert after - pristine == edit.added


def test_an_unknown_mig_profile_is_refused_at_its_line(tmp_path: Path) -> None:
    # notebooks.yaml line 14, column 7 is `mig: 1g.10gb`; 1g.11gb is no profile of any model (the
    # catalogue's: 1g.10gb .. 7g.80gb on the 80 GB A100/H100, 1g.5gb .. 7g.40gb on the A100-40GB,
    # 1g.12gb .. 7g.94gb on the H100 NVL).
    inventory = _seed(Edit("jobs/notebooks.yaml", "mig: 1g.10gb", "mig: 1g.11gb", frozenset()), tmp_path)
    with pytest.raises(TopologError) as err:
        _findings(inventory)
    (diag,) = err.value.diagnostics
    assert (Path(diag.location.file).name, diag.location.line, diag.location.col) == ("notebooks.yaml", 14, 7)
    assert "MIG profile '1g.11gb' is offered by no GPU model" in diag.message
    # (1g.10gb+me, the slice with the media engines, one a GPU, follows its plain profile.)
    assert "H100-SXM5-80GB: 1g.10gb, 1g.10gb+me, 1g.20gb, 2g.20gb, 3g.40gb, 4g.40gb, 7g.80gb" in diag.message
    assert "A100-SXM4-40GB: 1g.5gb, 1g.5gb+me, 1g.10gb, 2g.10gb, 3g.20gb, 4g.20gb, 7g.40gb" in diag.message
    code, _, err_text = run_cli("verify", str(inventory), "--jobs", str(inventory.parent / "jobs"))
    assert code == 2
    assert "notebooks.yaml:14:7" in err_text


def test_findings_are_located_at_the_policy_and_job_lines(tmp_path: Path) -> None:
    # fp64.cedar: the forbid's @id("fp64-reserved-for-hpc") is on line 12 (the file's second
    # statement, after a 4-line comment, the first policy's 6 lines and a blank line).
    inventory = _seed(FAULTS["policy: the FP64 exception names a team that does not exist"], tmp_path)
    report = verify([inventory], VerifyRun(jobs=(inventory.parent / "jobs",)))
    (authz,) = [r for r in report.results if r.finding.rule == "AUTHZ004"]
    loc = authz.finding.location
    assert loc is not None and (Path(loc.file).name, loc.line) == ("fp64.cedar", 12)
    assert 'Team::"hcp"' in authz.finding.message and "did you mean 'hpc'?" in authz.finding.message


def test_a_node_selector_on_a_gpu_product_that_does_not_exist_is_never(tmp_path: Path) -> None:
    # The shipped Kueue job (inventories/jobs/schedulers/kueue-pretrain.yaml) selects
    # nvidia.com/gpu.product NVIDIA-H100-80GB-HBM3 (GPU Feature Discovery's name of the H100 SXM5);
    # NVIDIA-H300-80GB-HBM3 names no model, so the job accepts nothing that exists: PLACE002 on
    # pretrain-rack, where the pristine manifest is placed on dgx-h100-pod (rack0 or rack1).
    shipped = JOBS / "schedulers" / "kueue-pretrain.yaml"
    text = shipped.read_text(encoding="utf-8")
    assert text.count("NVIDIA-H100-80GB-HBM3") == 1
    manifests = {"pristine": text, "seeded": text.replace("NVIDIA-H100-80GB-HBM3", "NVIDIA-H300-80GB-HBM3")}
    found: dict[str, Added] = {}
    for name, manifest in manifests.items():
        path = tmp_path / name / shipped.name
        path.parent.mkdir()
        path.write_text(manifest, encoding="utf-8")
        run = VerifyRun(jobs=(path,), principal_from=parse_rules(["namespace=Team"]))
        found[name] = frozenset((r.finding.rule, r.finding.subjects) for r in verify([POD], run).results)
    assert found["pristine"] <= found["seeded"]
    assert found["seeded"] - found["pristine"] == {("PLACE002", ("pretrain-rack",))}
