"""End-to-end `topolog authorize` and `topolog audit`: output, exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli
from policy_sets import site_policy_dirs

from verifier.authorization.classes import OTHER_TEXT
from verifier.authorization.relations import AUTHZ_RELATIONS
from verifier.engine.parser import parse_program

ROOT = Path(__file__).resolve().parents[2]
MIXED = "inventories/mixed-fleet.yaml"
SMALL = "tests/authorization/small/cluster.yaml"


pytestmark = pytest.mark.usefixtures("in_repo_root")


_run = run_cli


def test_authorize_allow_names_the_deciding_policy() -> None:
    code, out, _ = _run(
        "authorize", MIXED, "--principal", "alice", "--action", "schedule", "--resource", "a100-n0/gpu0"
    )
    assert code == 0
    assert out == ('ALLOW  User::"alice" schedule Gpu::"a100-n0/gpu0"\n  decided by: tenant-own-hardware (permit)\n')


def test_authorize_deny_exits_1() -> None:
    code, out, _ = _run(
        "authorize",
        MIXED,
        "--principal",
        'User::"ivan"',
        "--action",
        "schedule",
        "--resource",
        'Gpu::"a100-n0/gpu0"',
        "--format",
        "json",
    )
    assert code == 1
    doc = json.loads(out)
    assert doc["decision"] == "DENY"
    assert doc["policies"] == [{"effect": "forbid", "id": "interns-consumer-only"}]


def test_authorize_default_deny_says_so() -> None:
    code, out, _ = _run("authorize", MIXED, "--principal", "bob", "--action", "reserve", "--resource", "a100-n0")
    assert code == 1 and "no policy permits it (default deny)" in out


def test_authorize_evaluation_error_is_a_deny_and_a_finding() -> None:
    code, out, _ = _run(
        "authorize",
        "tests/rules/fixtures/AUTHZ002/fail.yaml",
        "--principal",
        "sim",
        "--action",
        "schedule",
        "--resource",
        "n0/gpu0",
    )
    assert code == 1
    assert out.startswith('DENY  Team::"sim" schedule Gpu::"n0/gpu0"\n  finding: policy power-cap failed;')


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--principal", "nobody"], "--principal 'nobody' is not in inventories/principals.yml"),
        (["--resource", "euw-spine0"], "--resource 'euw-spine0' is not a GPU, node, rack or pod"),
        (["--resource", 'Gpu::"nope"'], "no such entity"),
        # A type written in lower case names no entity type at all: said so, with the type meant.
        (
            ["--resource", 'gpu::"a100-n0/gpu0"'],
            "'gpu' is no entity type; expected one of: Team, User, ServiceAccount, Gpu, Node, Rack, Pod, "
            "NvlinkDomain; did you mean 'Gpu'?",
        ),
        (["--context", "[1]"], '--context: expected a JSON object such as {"incident": true}'),
        (["--context", "{incident: true}"], "--context: not JSON"),
        (["--context", '{"incident": "yes"}'], "the request does not match the schema"),
        (["--policies", "tests/authorization/small"], "no schema.cedarschema in the policy directory"),
    ],
)
def test_authorize_bad_input_exits_2(args: list[str], message: str) -> None:
    base = {"--principal": "alice", "--action": "schedule", "--resource": "a100-n0/gpu0"}
    for flag, value in zip(args[::2], args[1::2], strict=True):
        base[flag] = value
    code, _, err = _run("authorize", MIXED, *(x for kv in base.items() for x in kv))
    assert code == 2
    assert message in err


def test_audit_text_and_json_are_deterministic() -> None:
    code, out, _ = _run("audit", SMALL, "--action", "schedule", "--teams")
    assert code == 0
    assert 'Team::"a"         4       -      4' in out
    assert "principal    ra (4)  rb (2)  total" in out
    code, first, _ = _run("audit", MIXED, "--format", "json")
    assert code == 0 and first == _run("audit", MIXED, "--format", "json")[1]
    stats = json.loads(first)["stats"]
    assert stats["requests"] < stats["requests_without_classes"]


def test_audit_against_a_policy_directory(tmp_path: Path) -> None:
    other = tmp_path / "pol"
    other.mkdir()
    for p in (ROOT / "policies").glob("*.ceda*"):
        (other / p.name).write_text(p.read_text())
    (other / "interns.cedar").unlink()
    code, out, _ = _run("audit", MIXED, "--against", str(other), "--action", "schedule", "--fail-on-change")
    # Without the interns policy nothing changes on mixed-fleet: ivan's tenant (students) has
    # consumer GPUs only (the RTX workstations, two of them quarantined).
    assert code == 0 and "0 decisions changed" in out
    (other / "fp64.cedar").unlink()
    code, out, _ = _run("audit", MIXED, "--against", str(other), "--action", "schedule", "--fail-on-change")
    assert code == 1
    # hpc, carol and hana (hpc member) lose the 16 MI300X GPUs: 48; team-nlp and alice (their
    # tenant) gain them: 32 (hana's tenant is team-vision); per context.
    assert "schedule (context {}): ALLOW -> DENY: 48 decisions" in out
    assert "schedule (context {}): DENY -> ALLOW: 32 decisions" in out
    assert "240 decisions changed" in out  # 80 in each of the 3 contexts


def test_audit_against_asks_a_text_equal_to_no_literal(tmp_path: Path) -> None:
    # First: anyone may drain anything while context.site is set and is not "lab"; second: nobody. The
    # two differ only for a site other than "lab", which no policy names: the audit asks site absent,
    # "lab" and one text equal to no literal (classes.OTHER_TEXT). By hand, on the small cluster:
    # 6 principals (teams a, b, sre; users oc, u1, u2) x 6 GPUs (na0's 4, nb0's 2) = 36 decisions,
    # ALLOW -> DENY in that one context; none in the others. Asking "lab" alone found 0 changes.
    first, second = site_policy_dirs(tmp_path)
    code, out, _ = _run("audit", SMALL, "--policies", first, "--against", second, "--fail-on-change")
    assert code == 1
    assert f'drain (context {{"site": "{OTHER_TEXT}"}}): ALLOW -> DENY: 36 decisions' in out
    assert "36 decisions changed" in out


def test_authz_relations_are_declared() -> None:
    path = ROOT / "rules" / "schema.dl"
    program = parse_program(path.read_text(encoding="utf-8"), str(path))
    declared = {d.name: d.arity for d in program.declarations if d.is_input}
    assert set(declared) >= AUTHZ_RELATIONS


def test_team_findings_are_located_in_the_principals_file() -> None:
    code, out, _ = _run("verify", "tests/rules/fixtures/AUTHZ001/fail.yaml")
    authz = [line for line in out.splitlines() if " AUTHZ001: " in line]
    # render and training are written on lines 5 and 6 of the fixture's principals.yml.
    assert [line.split(": note")[0] for line in authz] == [
        "tests/rules/fixtures/AUTHZ001/principals.yml:5:5",
        "tests/rules/fixtures/AUTHZ001/principals.yml:6:5",
    ]
    assert code == 1  # the fixture's GPUs also reach no NIC (TOPO001 errors); only the places matter here
