"""`topolog policy check`: POLICY001-POLICY005 in verify's reports, answers derived by hand."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
POD = "inventories/dgx-h100-pod.yaml"
SMALL = "tests/authorization/small/cluster.yaml"

# The shipped policies (policies/) on the DGX H100 pod with inventories/principals.yml. The pod: 64
# H100-SXM5-80GB (full-rate FP64 at 34 TFLOPS, ECC: not consumer) in nodes labelled tenant research,
# no quarantine and no owner label anywhere (metadata.owner is no label).
# - hpc-fp64-hardware, fp64-reserved-for-hpc (fp64.cedar:4, :12) need fp64_tflops >= 50: apply to nothing.
# - quarantine-closed, oncall-incident-access (quarantine.cedar:4, :9) need a quarantined resource: nothing.
# - owners-administer (operations.cedar:22) needs resource.owner != "": nothing.
# - interns-consumer-only (interns.cedar:3): ivan (intern, tenant students) on non-consumer GPUs; no permit
#   gives him research's hardware (tenant-own needs tenant research), so denied anyway: redundant, no permit.
# - node-drainer-drains (operations.cedar:3): node-drainer is in sre, and sre-drain permits every drain
#   (no forbid applies here): redundant, sre-drain deciding the same.
# - service-accounts-never-schedule (operations.cedar:10): ci-runner (tenant team-nlp) and node-drainer
#   (no tenant) get no schedule/reserve permit on research's hardware: redundant, no permit.
# - tenant-own-hardware allows research (team and dan), sre-drain allows sam, olga and the sre team: both decide.
# The schema-wide analysis finds nothing in the shipped policies, so every finding is the inventory's.
# Examples: the first request asked that satisfies the policy: principal classes by uid (ServiceAccount
# < Team < User), actions schedule, reserve, drain, administer, context {} (incident absent) first,
# resource classes by their smallest uid (Gpu::"dgx00/gpu0": the 64 GPUs look alike to every policy).
IDLE = (
    "applies to nothing in this inventory: no principal of the principals file satisfies it, with any action "
    "and context, on any GPU, node, rack, pod or NVLink domain."
)
NO_PERMIT = "as the requests it applies to are denied anyway: no permit applies to them"
POD_FINDINGS = [
    ("POLICY002", "fp64-reserved-for-hpc", "policies/fp64.cedar", 12, f"Policy fp64-reserved-for-hpc {IDLE}"),
    ("POLICY002", "hpc-fp64-hardware", "policies/fp64.cedar", 4, f"Policy hpc-fp64-hardware {IDLE}"),
    ("POLICY002", "oncall-incident-access", "policies/quarantine.cedar", 9, f"Policy oncall-incident-access {IDLE}"),
    ("POLICY002", "owners-administer", "policies/operations.cedar", 22, f"Policy owners-administer {IDLE}"),
    ("POLICY002", "quarantine-closed", "policies/quarantine.cedar", 4, f"Policy quarantine-closed {IDLE}"),
    (
        "POLICY004",
        "interns-consumer-only",
        "policies/interns.cedar",
        3,
        "Policy interns-consumer-only is redundant in this inventory: removing it changes no decision, "
        f'{NO_PERMIT} (e.g. User::"ivan" schedule Gpu::"dgx00/gpu0" context {{}}).',
    ),
    (
        "POLICY004",
        "node-drainer-drains",
        "policies/operations.cedar",
        3,
        "Policy node-drainer-drains is redundant in this inventory: removing it changes no decision, as without it "
        'the requests it applies to are decided by sre-drain (e.g. ServiceAccount::"node-drainer" drain '
        'Gpu::"dgx00/gpu0" context {}).',
    ),
    (
        "POLICY004",
        "service-accounts-never-schedule",
        "policies/operations.cedar",
        10,
        "Policy service-accounts-never-schedule is redundant in this inventory: removing it changes no decision, "
        f'{NO_PERMIT} (e.g. ServiceAccount::"ci-runner" schedule Gpu::"dgx00/gpu0" context {{}}).',
    ),
]


def _findings(stdout: str) -> list[tuple[str, str, str, int, str]]:
    doc = json.loads(stdout)
    return sorted(
        (f["rule"], *f["subjects"], f["location"]["file"], f["location"]["line"], f["message"]) for f in doc["findings"]
    )


def test_shipped_pod_by_hand() -> None:
    code, out, _ = run_cli("policy", "check", POD, "--format", "json")
    assert code == 0  # notes only, under the default --fail-on warning
    assert _findings(out) == sorted(POD_FINDINGS)
    doc = json.loads(out)
    # Only the policy checks are run and reported: the rest of the pack is verify's.
    assert [c["id"] for c in doc["checks"]] == ["POLICY001", "POLICY002", "POLICY003", "POLICY004", "POLICY005"]


def test_fail_on_note_and_sarif_locations(tmp_path: Path) -> None:
    sarif = tmp_path / "policies.sarif"
    code, out, _ = run_cli("policy", "check", POD, "--fail-on", "note", "--output", f"sarif={sarif}")
    assert code == 1
    assert "8 findings (0 error, 0 warning, 8 note) from 5 checks" in out
    results = json.loads(sarif.read_text(encoding="utf-8"))["runs"][0]["results"]
    located = sorted(
        (
            r["ruleId"],
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in results
    )
    assert located == sorted((rule, file, line) for rule, _, file, line, _ in POD_FINDINGS)


# A hand-made policy set on tests/authorization/small (rack ra: tenant a, 4 H100 on node na0, NVLinked;
# rack rb: tenant b, quarantined, 2 RTX-4090 on node nb0; principals a, b, sre teams, u1 in a, u2 an
# intern in b, oc in sre on call), showing every rule. Line numbers are those of each @id below.
HANDMADE = """@id("tenant-own")
permit (principal, action == Action::"schedule", resource)
when { principal.tenant != "" && resource.tenant == principal.tenant };

@id("quarantine-closed")
forbid (principal, action, resource) when { resource.quarantined };

@id("contradiction")
permit (principal, action == Action::"schedule", resource)
when { resource.fp64_tflops > 100 && resource.fp64_tflops < 50 };

@id("fp64-hpc")
permit (principal, action == Action::"reserve", resource)
when { resource.fp64 && resource.fp64_tflops >= 50 };

@id("b-on-quarantined")
permit (principal in Team::"b", action == Action::"schedule", resource)
when { resource.quarantined };

@id("interns-no-h100")
forbid (principal, action == Action::"schedule", resource)
when { principal.role == "intern" && resource.model == "H100-SXM5-80GB" };

@id("oc-administers")
permit (principal == User::"oc", action == Action::"administer", resource)
when { resource.gpus * 4611686018427387904 > 0 };
"""


def test_handmade_set_shows_every_rule(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", policies)
    (policies / "set.cedar").write_text(HANDMADE, encoding="utf-8")
    code, out, _ = run_cli("policy", "check", SMALL, "--policies", str(policies), "--format", "json")
    assert code == 1  # warnings, under the default --fail-on warning
    found = {(rule, subject): (line, message) for rule, subject, _, line, message in _findings(out)}
    # Schema-wide (the solver chooses the example entity, so only what precedes it is derived here):
    # - contradiction: fp64_tflops > 100 and < 50 at once holds for no resource. POLICY001 only: it is
    #   dead here too, and neither POLICY002 nor POLICY004 repeats the one root cause.
    # - b-on-quarantined: every request it satisfies has a quarantined resource, which
    #   quarantine-closed forbids, for any entity (interns-no-h100 too, for an intern on an H100).
    # - oc-administers: gpus * 2^62 overflows a Long for gpus >= 2 (or <= -3).
    # In this inventory:
    # - fp64-hpc: H100 34 and RTX-4090 1 FP64 TFLOPS (no full-rate FP64): nothing reaches 50.
    # - interns-no-h100: u2, the only intern, is tenant b and not in Team a: no permit on ra's H100s.
    # tenant-own (u1 and Team a on ra; nothing else allows them) and quarantine-closed (u2 and Team b
    # on rb, which tenant-own would allow) decide: no finding.
    assert sorted(found) == [
        ("POLICY001", "contradiction"),
        ("POLICY002", "fp64-hpc"),
        ("POLICY003", "b-on-quarantined"),
        ("POLICY004", "interns-no-h100"),
        ("POLICY005", "oc-administers"),
    ]
    assert found[("POLICY001", "contradiction")] == (
        8,
        "Policy contradiction can never apply: no request with any principal, resource and context the schema "
        "allows satisfies it, so it decides nothing in any inventory.",
    )
    assert found[("POLICY002", "fp64-hpc")] == (12, f"Policy fp64-hpc {IDLE}")
    line, message = found[("POLICY003", "b-on-quarantined")]
    assert line == 16
    assert message.startswith(
        "Permit b-on-quarantined never allows anything for any entity the schema allows: every request that "
        "satisfies it is forbidden by interns-no-h100, quarantine-closed (e.g. "
    )
    assert found[("POLICY004", "interns-no-h100")] == (
        20,
        f"Policy interns-no-h100 is redundant in this inventory: removing it changes no decision, {NO_PERMIT} "
        '(e.g. User::"u2" schedule Gpu::"na0/gpu0" context {}).',
    )
    line, message = found[("POLICY005", "oc-administers")]
    assert line == 24
    assert message.startswith(
        "Policy oc-administers may raise an error and deny the request: `resource.gpus * 4611686018427387904` "
        "may overflow a Long, e.g. for "
    )


def test_without_principals_is_bad_input(tmp_path: Path) -> None:
    inventory = tmp_path / "cluster.yaml"
    shutil.copy(ROOT / SMALL, inventory)
    code, out, err = run_cli("policy", "check", str(inventory))
    assert code == 2
    assert out == ""
    assert "no principals file to analyse the policies over the inventory's principals" in err
    assert "--principals FILE" in err


def test_help_has_an_example() -> None:
    code, out, _ = run_cli("policy", "check", "--help")
    assert code == 0
    assert "topolog policy check inventories/dgx-h100-pod.yaml" in out


def test_inventory_only_reports_the_inventorys_findings(tmp_path: Path) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", policies)
    (policies / "set.cedar").write_text(HANDMADE, encoding="utf-8")
    code, out, _ = run_cli(
        "policy", "check", SMALL, "--policies", str(policies), "--inventory-only", "--format", "json"
    )
    assert code == 1
    # Without the schema-wide analysis: POLICY001 and POLICY005 are not run; contradiction is now what
    # the inventory shows of it (applies to nothing here), b-on-quarantined is shadowed in this
    # inventory (Team b and u2 on rb, always forbidden by quarantine-closed; the first request asked:
    # Team::"b" < User::"u2", schedule, the RTX class Gpu::"nb0/gpu0"), and oc-administers (satisfied
    # by oc on every GPU, gpus 1) decides: nothing else allows oc to administer.
    assert [c["id"] for c in json.loads(out)["checks"]] == ["POLICY002", "POLICY003", "POLICY004"]
    assert [(rule, subject, line) for rule, subject, _, line, _ in _findings(out)] == [
        ("POLICY002", "contradiction", 8),
        ("POLICY002", "fp64-hpc", 12),
        ("POLICY003", "b-on-quarantined", 16),
        ("POLICY004", "interns-no-h100", 20),
    ]
    shadowed = next(f for f in _findings(out) if f[0] == "POLICY003")
    assert shadowed[4] == (
        "Permit b-on-quarantined never allows anything in this inventory: every request that satisfies it is "
        'forbidden by quarantine-closed (e.g. Team::"b" schedule Gpu::"nb0/gpu0" context {}).'
    )


def test_a_policy_outside_the_schema_wide_analysis_is_refused(tmp_path: Path) -> None:
    # decimal() is an extension function, which the SMT encoding does not cover: exit 2 naming the
    # policy's file and line, never a partial answer. --inventory-only still answers.
    policies = tmp_path / "policies"
    policies.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", policies)
    text = HANDMADE + (
        '\n@id("decimal-gate")\npermit (principal, action == Action::"reserve", resource)\n'
        'when { decimal("1.5").lessThan(decimal("2.0")) };\n'
    )
    (policies / "set.cedar").write_text(text, encoding="utf-8")
    code, out, err = run_cli("policy", "check", SMALL, "--policies", str(policies))
    assert (code, out) == (2, "")
    assert f"{policies / 'set.cedar'}:28: policy 'decimal-gate' is outside what the schema-wide analysis covers" in err
    code, _, _ = run_cli("policy", "check", SMALL, "--policies", str(policies), "--inventory-only")
    assert code == 1


def test_several_clusters_are_refused() -> None:
    # A policy can be dead in one cluster and alive in the other: one finding per policy needs one cluster.
    code, out, err = run_cli("policy", "check", POD, "inventories/gb200-nvl72.yaml")
    assert (code, out) == (2, "")
    assert "these files describe 2 clusters" in err
    assert "the policy analysis judges the policies over one cluster's principals and hardware" in err


def test_a_forbid_kept_as_defence_in_depth_is_waived(tmp_path: Path) -> None:
    waivers = tmp_path / "waivers.yaml"
    waivers.write_text(
        "waivers:\n"
        "  - rule: POLICY004\n"
        "    subject: service-accounts-never-schedule\n"
        "    reason: Defence in depth, kept should a tenant ever be given to a service account.\n"
        "    expires: 2030-01-01\n",
        encoding="utf-8",
    )
    code, out, _ = run_cli(
        "policy", "check", POD, "--waivers", str(waivers), "--today", "2026-12-06", "--format", "json"
    )
    assert code == 0
    doc = json.loads(out)
    # The pod's eight findings (test_shipped_pod_by_hand): seven reported, the waived one apart, with its waiver.
    assert len(doc["findings"]) == 7
    assert "service-accounts-never-schedule" not in {s for f in doc["findings"] for s in f["subjects"]}
    assert [(f["rule"], f["subjects"], f["waiver"]["expires"]) for f in doc["suppressed"]] == [
        ("POLICY004", ["service-accounts-never-schedule"], "2030-01-01")
    ]


# The shipped policies on inventories/mixed-fleet.yaml with inventories/principals.yml. The fleet: the
# acme fleet object carries owner: infra-eu (inherited by all); nodes a100-n0/1 (tenant team-nlp, A100:
# FP64 19.5 TFLOPS, ECC), h100-n0/1 (team-vision), mi300x-n0/1 (team-nlp, MI300X: full-rate FP64 >= 50
# TFLOPS), rtx-n0..3 (students, RTX 4090: consumer; rtx-n0/1 quarantined, rtx-n2 lent to robotics).
# - interns-consumer-only (interns.cedar:3): ivan (intern, tenant students) on non-consumer hardware:
#   a100/h100 are other tenants' (no permit applies); on the MI300X, fp64-reserved-for-hpc forbids him
#   too (he is not in hpc). So denied anyway: by that forbid on some requests, for lack of a permit on
#   the rest. The message says so in words. First request: ivan schedule Gpu::"a100-n0/gpu0" {}.
# - node-drainer-drains (operations.cedar:3): node-drainer is in sre; sre-drain permits every drain,
#   and on the quarantined rtx-n0/1 quarantine-closed forbids it (node-drainer is not on call):
#   both decide alike without it, the one allowing, the other denying, and the message says which.
# - service-accounts-never-schedule is NOT redundant here: ci-runner (tenant team-nlp) would be
#   allowed by tenant-own-hardware on a100-n0. owners-administer: olga and infra-eu administer (no
#   other permit gives administer outside an incident). hpc-fp64-hardware: carol (tenant hpc) on the
#   MI300X, no tenant permit. The quarantine pair and the FP64 forbid decide on rtx-n0 / the MI300X.
# The schema-wide analysis finds nothing (docs/policy-analysis.md): two notes in all.
def test_shipped_mixed_fleet_by_hand() -> None:
    code, out, _ = run_cli("policy", "check", "inventories/mixed-fleet.yaml", "--format", "json")
    assert code == 0
    assert _findings(out) == [
        (
            "POLICY004",
            "interns-consumer-only",
            "policies/interns.cedar",
            3,
            "Policy interns-consumer-only is redundant in this inventory: removing it changes no decision, as "
            "without it the requests it applies to are decided by fp64-reserved-for-hpc on some, and on the rest "
            'by the lack of any permit (e.g. User::"ivan" schedule Gpu::"a100-n0/gpu0" context {}).',
        ),
        (
            "POLICY004",
            "node-drainer-drains",
            "policies/operations.cedar",
            3,
            "Policy node-drainer-drains is redundant in this inventory: removing it changes no decision, as without "
            "it the requests it applies to are decided by sre-drain, which allows them, except where "
            'quarantine-closed denies them (e.g. ServiceAccount::"node-drainer" drain Gpu::"a100-n0/gpu0" context {}).',
        ),
    ]
