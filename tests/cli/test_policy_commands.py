"""End-to-end `topolog policy who|what|compare`: output, formats, exit codes 0 / 1 / 2.

tests/authorization/small (read by hand): rack ra (tenant a: node na0, 4 H100, 34 FP64 TFLOPS), rack
rb (tenant b, quarantined: node nb0, 2 RTX 4090); teams a, b, sre; u1 in a, u2 (intern) in b, oc in
sre, on call. The shipped policies read the context attribute `incident` (tested with `has`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli
from policy_sets import ONE_PERMIT, SPLIT, TWO_GPUS, site_policy_dirs

from verifier.authorization.classes import OTHER_TEXT

ROOT = Path(__file__).resolve().parents[2]
SMALL = "tests/authorization/small/cluster.yaml"
MIXED = "inventories/mixed-fleet.yaml"
CONTEXTS = '{}, {"incident": false}, {"incident": true}'

pytestmark = pytest.mark.usefixtures("in_repo_root")


def test_who_on_a_quarantined_gpu_is_the_on_call_user_during_an_incident() -> None:
    # nb0/gpu0 is in the quarantined rack rb: quarantine-closed forbids everyone unless an incident
    # is declared and the principal is on call: oc alone, whom oncall-incident-access permits
    # (tenant-own-hardware would let b and u2 in, but they are not on call). 6 principals, each its
    # own class (they differ in tenant, role, on call), 3 contexts: 18 requests.
    code, out, err = run_cli("policy", "who", "schedule", "nb0/gpu0", SMALL)
    assert (code, err) == (0, "")
    assert out == (
        'who may schedule on Gpu::"nb0/gpu0"\n'
        "  tests/authorization/small/cluster.yaml with policies and tests/authorization/small/principals.yml\n"
        f"  contexts asked: {CONTEXTS} (every context the policies can tell apart)\n"
        "\n"
        "1 of 6 principals may (6 principal classes, 18 Cedar requests):\n"
        '  User::"oc"  oncall-incident-access ({"incident": true})\n'
    )


def test_who_as_json() -> None:
    # na0/gpu0 (rack ra, tenant a, not quarantined, not FP64-reserved): tenant-own-hardware allows
    # team a and u1 (tenant a) in every context; nobody else has a permit for schedule there.
    code, out, _ = run_cli("policy", "who", "schedule", 'Gpu::"na0/gpu0"', SMALL, "--format", "json")
    assert code == 0
    doc = json.loads(out)
    every = [{"context": c, "policies": ["tenant-own-hardware"]} for c in ({}, {"incident": False}, {"incident": True})]
    assert doc["allowed"] == [
        {"principal": 'Team::"a"', "allowed": every},
        {"principal": 'User::"u1"', "allowed": every},
    ]
    assert doc["coverage"]["complete"] is True
    assert doc["errors"] == []


def test_what_alice_on_the_mixed_fleet_as_text() -> None:
    # alice (team-nlp): schedule and reserve on euw-a100 (16 GPUs) by tenant-own-hardware; the
    # team-nlp MI300X GPUs are forbidden by fp64-reserved-for-hpc; no drain, no administer.
    # 56 GPUs (16 + 16 + 16 + 8) in 6 classes (A100, H100, MI300X, RTX quarantined, RTX of
    # students, RTX of robotics; rtx-n2/gpu1 being down is not read by any policy) x 4 x 3.
    code, out, _ = run_cli("policy", "what", "alice", MIXED)
    assert code == 0
    assert out == (
        'what User::"alice" may do on Gpu resources\n'
        "  inventories/mixed-fleet.yaml with policies and inventories/principals.yml\n"
        f"  contexts asked: {CONTEXTS} (every context the policies can tell apart)\n"
        "\n"
        "schedule:\n"
        "  euw-a100  16 of 16 GPUs  tenant-own-hardware (every context)\n"
        "\n"
        "reserve:\n"
        "  euw-a100  16 of 16 GPUs  tenant-own-hardware (every context)\n"
        "\n"
        "drain:\n"
        "  nothing\n"
        "\n"
        "administer:\n"
        "  nothing\n"
        "\n"
        "72 Cedar requests for 56 resources in 6 classes x 4 actions x 3 contexts\n"
    )


def test_what_as_json_with_one_action_and_context() -> None:
    # oc (sre, on call) drains rack ra by sre-drain outside an incident; rb is quarantined and closed.
    code, out, _ = run_cli(
        "policy",
        "what",
        'User::"oc"',
        SMALL,
        "--action",
        "drain",
        "--context",
        '{"incident": false}',
        "--format",
        "json",
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["allowed"] == [
        {
            "action": "drain",
            "group": "ra",
            "resources": 4,
            "gpus": 4,
            "allowed": [{"context": {"incident": False}, "policies": ["sre-drain"]}],
        }
    ]
    assert doc["coverage"] == {
        "contexts": [{"incident": False}],
        "complete": False,
        "note": "only the context given with --context",
    }


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["who", "schedule", "nope", SMALL],
            "error: RESOURCE: 'nope' is not a GPU, node, rack or pod of the inventory",
        ),
        (["what", "zed", SMALL], "error: PRINCIPAL: 'zed' is not in tests/authorization/small/principals.yml"),
        (["who", "drain", 'User::"u1"', SMALL], 'error: RESOURCE: User::"u1" is not a resource; expected one of'),
        (["what", 'Node::"na0"', SMALL], 'error: PRINCIPAL: Node::"na0" is not a principal; expected one of'),
        (["who", "schedule", "nb0/gpu0", SMALL, "--context", "[1]"], "error: --context: expected a JSON object"),
        (
            ["who", "schedule", "nb0/gpu0", SMALL, "--context", '{"incident": 3}'],
            "error: --context: the request does not match the schema",
        ),
        (["who", "schedule", "nb0/gpu0", "missing.yaml"], "error: missing.yaml: no such file or directory"),
        (["compare", "no-such-dir", SMALL], "error: no-such-dir: no such file or directory"),
    ],
)
def test_bad_input_exits_2_with_a_message(args: list[str], message: str) -> None:
    code, out, err = run_cli("policy", *args)
    assert code == 2
    assert out == ""
    assert err.startswith(message)
    assert "Traceback" not in err


def _policies(tmp_path: Path, name: str, text: str) -> str:
    folder = tmp_path / name
    folder.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", folder / "schema.cedarschema")
    (folder / "policies.cedar").write_text(text, encoding="utf-8")
    return str(folder)


def test_compare_a_permit_split_in_two_is_equivalent(tmp_path: Path) -> None:
    first = _policies(tmp_path, "one", ONE_PERMIT)
    second = _policies(tmp_path, "split", SPLIT)
    code, out, _ = run_cli("policy", "compare", second, SMALL, "--policies", first, "--inventory-only")
    assert code == 0
    assert "  equivalent for every principal and resource of this inventory\n" in out
    assert "schema-wide analysis: not asked (--inventory-only)\n" in out
    assert out.endswith("\nequivalent\n")


def test_compare_finds_the_request_one_condition_changes(tmp_path: Path) -> None:
    # The policies read no context: {} is the only context. First allows team a and u1 (both in
    # Team::"a") to schedule on whatever has tenant a: rack ra, node na0, its 4 GPUs (and its
    # NVLink domain). The second also needs gpus >= 2, which a Gpu (gpus = 1) never has: the 4 GPUs
    # x 2 principals = 8 decisions differ (na0, ra and the domain hold 4 GPUs: alike). Sorted by
    # action, principal, resource, the first is Team::"a" on Gpu::"na0/gpu0".
    first = _policies(tmp_path, "one", ONE_PERMIT)
    second = _policies(tmp_path, "two", TWO_GPUS)
    code, out, _ = run_cli(
        "policy", "compare", second, SMALL, "--policies", first, "--inventory-only", "--format", "json"
    )
    assert code == 1
    doc = json.loads(out)
    inv = doc["inventory"]
    assert (doc["equivalent"], inv["equivalent"], inv["decisionsDiffering"]) == (False, False, 8)
    assert inv["differences"][0] == {
        "action": "schedule",
        "principal": 'Team::"a"',
        "resource": 'Gpu::"na0/gpu0"',
        "context": "{}",
        "first": "allow",
        "second": "deny",
        "first_policies": ["a-schedules-own"],
        "second_policies": [],
    }
    # Every counterexample is a GPU of na0 with team a or u1 (3 examples per change kept).
    assert {(d["principal"], d["resource"]) for d in inv["differences"]} <= {
        (p, f'Gpu::"na0/gpu{i}"') for p in ('Team::"a"', 'User::"u1"') for i in range(4)
    }


def test_compare_text_names_the_analysis_and_the_counterexample(tmp_path: Path) -> None:
    first = _policies(tmp_path, "one", ONE_PERMIT)
    second = _policies(tmp_path, "two", TWO_GPUS)
    code, out, _ = run_cli("policy", "compare", second, SMALL, "--policies", first, "--inventory-only")
    assert code == 1
    assert "inventory analysis: tests/authorization/small/cluster.yaml: 6 principals x " in out
    assert "  DIFFERENT: 8 decisions differ; the first, sorted:\n" in out
    assert (
        '  Team::"a" schedule Gpu::"na0/gpu0" context {}: first ALLOW (a-schedules-own), second DENY (no policy)\n'
        in out
    )
    assert out.endswith("\nnot equivalent\n")


def test_compare_schema_wide_says_which_analysis_answered(tmp_path: Path) -> None:
    # The first and the TWO_GPUS sets (derived in tests/authorization/analysis/test_questions_compare.py):
    # 8 decisions differ in the inventory, and 15 counterexamples (3 principal types x 5 resource
    # types) schema-wide.
    first = _policies(tmp_path, "one", ONE_PERMIT)
    second = _policies(tmp_path, "two", TWO_GPUS)
    code, out, _ = run_cli("policy", "compare", second, SMALL, "--policies", first)
    assert code == 1
    assert "  DIFFERENT: 8 decisions differ; the first, sorted:\n" in out
    assert "schema-wide analysis (SMT): every entity and context the schema allows\n" in out
    assert "  DIFFERENT: 15 counterexample(s), one per action and entity types:\n" in out


def test_compare_refuses_a_policy_set_the_schema_wide_analysis_does_not_cover(tmp_path: Path) -> None:
    first = _policies(tmp_path, "one", ONE_PERMIT)
    second = _policies(
        tmp_path, "decimal", ONE_PERMIT.replace('"a" };', '"a" && decimal("1.5").lessThan(decimal("2.0")) };')
    )
    code, out, err = run_cli("policy", "compare", second, SMALL, "--policies", first)
    assert (code, out) == (2, "")
    assert "policy 'a-schedules-own' is outside what the schema-wide analysis covers: the decimal() function" in err
    # Without the solver the inventory answers: for this inventory the decimal test is always true.
    code, out, _ = run_cli("policy", "compare", second, SMALL, "--policies", first, "--inventory-only")
    assert code == 0


def test_compare_the_shipped_policies_with_a_copy_is_equivalent(tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "policies", copy, ignore=shutil.ignore_patterns("ALLOW", "DENY", "*.py"))
    code, out, _ = run_cli("policy", "compare", str(copy), MIXED)
    assert code == 0
    assert "  equivalent for every principal and resource of this inventory\n" in out
    assert "  equivalent for every entity the schema allows\n" in out
    assert out.endswith("\nequivalent\n")


def test_compare_an_fp64_threshold_raised_past_the_mi300x(tmp_path: Path) -> None:
    # fp64.cedar with `fp64_tflops >= 100` in both policies: the MI300X (81 TFLOPS) is no longer
    # reserved. Sorted by action, reserve comes before schedule (drain and administer do not
    # change). The smallest principal whose decision changes: service accounts are forbidden
    # both ways, Team::"foundation-models" has no permit either way, Team::"hpc" loses
    # hpc-fp64-hardware. The smallest resource: Gpu::"mi300x-n0/gpu0". Contexts sort as JSON text:
    # '{"incident": false}' < '{"incident": true}' < '{}'.
    copy = tmp_path / "next"
    shutil.copytree(ROOT / "policies", copy, ignore=shutil.ignore_patterns("ALLOW", "DENY", "*.py"))
    fp64 = copy / "fp64.cedar"
    fp64.write_text(fp64.read_text(encoding="utf-8").replace(">= 50", ">= 100"), encoding="utf-8")
    code, out, _ = run_cli("policy", "compare", str(copy), MIXED, "--inventory-only", "--format", "json")
    assert code == 1
    first = json.loads(out)["inventory"]["differences"][0]
    assert first == {
        "action": "reserve",
        "principal": 'Team::"hpc"',
        "resource": 'Gpu::"mi300x-n0/gpu0"',
        "context": '{"incident": false}',
        "first": "allow",
        "second": "deny",
        "first_policies": ["hpc-fp64-hardware"],
        "second_policies": [],
    }


def _answers(env: dict[str, str]) -> list[str]:
    """who / what / compare on the mixed fleet, each in a process of its own (no in-memory cache)."""
    questions = [
        ["who", "schedule", "mi300x-n0/gpu0", MIXED],
        ["who", "drain", 'Node::"rtx-n0"', MIXED],
        ["what", "olga", MIXED],
        ["compare", "policies", MIXED, "--inventory-only"],
    ]
    out = []
    for q in questions:
        done = subprocess.run(
            [sys.executable, "-m", "verifier.cli.main", "--quiet", "policy", *q, "--format", "json"],
            capture_output=True,
            text=True,
            check=False,
            env={**os.environ, **env},
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stderr
        out.append(done.stdout)
    return out


def test_answers_are_the_same_with_the_cache_cold_warm_and_off(tmp_path: Path) -> None:
    # The cache (verifier/core/cache.py) keeps validated policy bundles, entity graphs and
    # evaluations: an answer read back from it must be the answer computed without it.
    cold = _answers({"TOPOLOG_CACHE_DIR": str(tmp_path / "cache")})
    warm = _answers({"TOPOLOG_CACHE_DIR": str(tmp_path / "cache")})
    off = _answers({"TOPOLOG_CACHE_DIR": ""})
    assert cold == warm == off
    assert any((tmp_path / "cache").rglob("*")), "the cache was written: the warm run read it back"


def test_compare_inventory_only_asks_a_text_equal_to_no_literal(tmp_path: Path) -> None:
    # First: drain allowed when context.site is set and not "lab"; second: never. They differ for any
    # site but "lab". The inventory comparison (audit --against's contexts) asks site absent, "lab" and
    # one text equal to no literal of the policies (classes.OTHER_TEXT): there the first allows and the
    # second denies, so --inventory-only finds the difference itself (exit 1), as the schema-wide
    # analysis does. Asking the literal alone (as before) found nothing: "equivalent" would have passed.
    first, second = site_policy_dirs(tmp_path)
    for flags in (["--inventory-only"], []):
        code, out, err = run_cli("policy", "compare", second, SMALL, "--policies", first, *flags)
        assert code == 1, err
        assert f'{{"site": "{OTHER_TEXT}"}}' in out
        assert "first ALLOW (x), second DENY (no policy)" in out
