"""Hostile and bad input to every `topolog policy` subcommand: exit 2, the file or option and what was
expected, never a traceback, and never a gate that opens because a policy file went unread.

Each case runs the four subcommands on the same policy folder: they load it as `verify` and
`authorize` do (verifier/authorization/policies.py), so each refusal is the one `authorize` gives.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
SMALL = "tests/authorization/small/cluster.yaml"
MIXED = "inventories/mixed-fleet.yaml"

pytestmark = pytest.mark.usefixtures("in_repo_root")


def _shipped_copy(folder: Path) -> Path:
    folder.mkdir()
    for f in (ROOT / "policies").iterdir():
        if f.suffix in (".cedar", ".cedarschema"):
            shutil.copy(f, folder / f.name)
    return folder


def _every_subcommand(policies: Path) -> list[list[str]]:
    """The four subcommands on `policies` (compare: as OTHER, against the shipped set)."""
    return [
        ["check", SMALL, "--policies", str(policies)],
        ["who", "schedule", "na0/gpu0", SMALL, "--policies", str(policies)],
        ["what", "u1", SMALL, "--policies", str(policies)],
        ["compare", str(policies), SMALL, "--policies", str(ROOT / "policies")],
    ]


def _refused(args: list[str], *expected: str) -> str:
    code, out, err = run_cli("policy", *args)
    assert code == 2, (args, out, err)
    assert out == ""
    assert "Traceback" not in err
    for text in expected:
        assert text in err, (args, err)
    return err


def test_an_empty_policy_folder_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    for args in _every_subcommand(empty):
        _refused(args, f"{empty}: no schema.cedarschema in the policy directory")


def test_policies_without_a_schema_are_refused(tmp_path: Path) -> None:
    folder = _shipped_copy(tmp_path / "noschema")
    (folder / "schema.cedarschema").unlink()
    for args in _every_subcommand(folder):
        _refused(args, f"{folder}: no schema.cedarschema")


def test_a_schema_alone_is_refused_not_read_as_deny_everything(tmp_path: Path) -> None:
    folder = tmp_path / "schemaonly"
    folder.mkdir()
    shutil.copy(ROOT / "policies" / "schema.cedarschema", folder / "schema.cedarschema")
    for args in _every_subcommand(folder):
        _refused(args, f"{folder}: no *.cedar policy files")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs need POSIX")
def test_a_policy_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    # Reading a FIFO would block or read nothing: either way a policy could go unread.
    folder = _shipped_copy(tmp_path / "fifo")
    os.mkfifo(folder / "late.cedar")
    for args in _every_subcommand(folder):
        _refused(args, f"{folder / 'late.cedar'}: cannot read policy file: it is not a regular file")


def test_a_link_to_a_file_that_is_no_policy_is_refused_with_its_line(tmp_path: Path) -> None:
    folder = _shipped_copy(tmp_path / "link")
    (folder / "notes.cedar").symlink_to(ROOT / "inventories" / "principals.yml")
    # principals.yml starts with a `#` comment line, which Cedar cannot parse: line 1.
    for args in _every_subcommand(folder):
        _refused(args, f"{folder / 'notes.cedar'}:1: policy does not parse")


def test_a_forbid_in_a_subfolder_counts_for_every_subcommand_as_for_authorize(tmp_path: Path) -> None:
    # The gate must not open: a forbid one folder down is read by authorize, so who/what/check/compare
    # must read it too. u1 (team a, tenant a) schedules na0/gpu0 (tenant a) by tenant-own-hardware; a
    # forbid on u1 in a subfolder takes that away.
    folder = _shipped_copy(tmp_path / "sub")
    (folder / "more").mkdir()
    (folder / "more" / "u1.cedar").write_text(
        '@id("no-u1")\nforbid (principal == User::"u1", action, resource);\n', encoding="utf-8"
    )
    code, out, _ = run_cli(
        "authorize", SMALL, "--principal", "u1", "--action", "schedule", "--resource", "na0/gpu0",
        "--policies", str(folder),
    )  # fmt: skip
    assert code == 1 and "no-u1" in out
    code, out, _ = run_cli(
        "policy", "who", "schedule", "na0/gpu0", SMALL, "--policies", str(folder), "--format", "json"
    )
    assert code == 0
    assert 'User::"u1"' not in json.dumps(json.loads(out)["allowed"])
    code, out, _ = run_cli("policy", "what", "u1", SMALL, "--policies", str(folder), "--format", "json")
    assert code == 0
    assert all(not a["allowed"] for a in json.loads(out)["allowed"])
    code, out, _ = run_cli("policy", "compare", str(folder), SMALL, "--inventory-only")
    assert code == 1 and "not equivalent" in out
    # The same id in the folder and its subfolder: refused, naming both places.
    shutil.copy(folder / "tenants.cedar", folder / "more" / "tenants.cedar")
    for args in _every_subcommand(folder):
        _refused(args, "policy id 'tenant-own-hardware' is already used at")


@pytest.mark.parametrize(
    ("context", "message"),
    [
        ("[1]", "--context: expected a JSON object such as"),
        ('"incident"', "--context: expected a JSON object such as"),
        ("{bad", "--context: not JSON"),
        ('{"incident": 1}', "the request does not match the schema"),
        ('{"incident": "yes"}', "the request does not match the schema"),
        ('{"incident": null}', "error: --context:"),
        ('{"stranger": true}', "record attribute `stranger` should not exist according to the schema"),
        ('{"incident": 99999999999999999999999}', "does not fit in 64 bits (a Cedar Long); expected a whole number"),
        ('{"incident": NaN}', "NaN is not JSON"),
        ('{"incident": true, "incident": false}', "key 'incident' is given twice in one object"),
    ],
)
def test_a_bad_context_is_refused_by_who_and_what(context: str, message: str) -> None:
    _refused(["who", "schedule", "na0/gpu0", SMALL, "--context", context], "error: --context:", message)
    _refused(["what", "u1", SMALL, "--context", context], "error: --context:", message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        # Unicode ids: looked up as written, never folded onto an ASCII one.
        (["what", 'User::"ålice"', MIXED], 'error: PRINCIPAL: User::"ålice": no such entity'),
        (["what", "ålice", MIXED], "error: PRINCIPAL: 'ålice' is not in inventories/principals.yml"),
        (["who", "schedule", 'Gpu::"a100-n0/gpü0"', MIXED], 'error: RESOURCE: Gpu::"a100-n0/gpü0": no such entity'),
        (["who", "schedule", "", MIXED], "error: RESOURCE: '' is not a GPU, node, rack or pod of the inventory"),
        (["who", "schedule", 'Gpu::"a100-n0/gpu0', MIXED], "error: RESOURCE:"),
        (["who", "schedule", 'Bogus::"x"', MIXED], "error: RESOURCE: Bogus::\"x\": 'Bogus' is no entity type"),
        # A uid of the wrong kind, each way round.
        (["who", "drain", 'Team::"sre"', MIXED], 'error: RESOURCE: Team::"sre" is not a resource; expected one'),
        (["what", 'Rack::"euw-rtx"', MIXED], 'error: PRINCIPAL: Rack::"euw-rtx" is not a principal; expected one'),
        (["what", "alice", MIXED, "--principals", "missing.yml"], "error: missing.yml: no such file or directory"),
        (["check", MIXED, "--principals", MIXED], "inventories/mixed-fleet.yaml:8:1: expected 'kind: Principals'"),
    ],
)
def test_unknown_or_mistyped_ids_and_files_are_refused(args: list[str], message: str) -> None:
    _refused(args, message)


def test_compare_refuses_a_second_schema_that_differs(tmp_path: Path) -> None:
    other = _shipped_copy(tmp_path / "other")
    schema = other / "schema.cedarschema"
    text = schema.read_text(encoding="utf-8")
    schema.write_text(text.replace("action schedule, reserve,", "action schedule, inspect, reserve,"), encoding="utf-8")
    _refused(["compare", str(other), MIXED], f"{schema}: the schema differs from policies/schema.cedarschema")


def test_check_writes_every_format_and_refuses_a_folder_or_an_input_as_output(tmp_path: Path) -> None:
    for fmt in ("text", "json", "sarif", "junit", "github", "markdown"):
        code, out, err = run_cli("policy", "check", MIXED, "--format", fmt, "--inventory-only")
        assert code == 0 and out and "Traceback" not in err, fmt
    # json and sarif parse; the two notes of the mixed fleet (test_policy_check.py) are in both.
    code, out, _ = run_cli("policy", "check", MIXED, "--format", "sarif", "--inventory-only")
    assert sorted(r["ruleId"] for r in json.loads(out)["runs"][0]["results"]) == ["POLICY004", "POLICY004"]
    _refused(["check", MIXED, "--output", f"sarif={tmp_path}"], "is a directory; name a file in it")
    _refused(["check", MIXED, "--output", "json=inventories/principals.yml"], "is an input of this run")
    code, _, err = run_cli("policy", "check", MIXED, "--output", "pdf=x.pdf")
    assert code == 2 and "unknown report format 'pdf'" in err
    for sub in (["who", "schedule", "na0/gpu0", SMALL], ["what", "u1", SMALL]):
        code, _, err = run_cli("policy", *sub, "--format", "sarif")
        assert code == 2 and "'sarif' is not one of 'text', 'json'" in err


def _with_context(folder: Path, attribute: str, policies: str) -> Path:
    """A policy folder: the shipped schema with one more context attribute, and `policies` in policies.cedar."""
    folder.mkdir()
    schema = (ROOT / "policies" / "schema.cedarschema").read_text(encoding="utf-8")
    wider = schema.replace("context: { incident?: Bool }", f"context: {{ incident?: Bool, {attribute} }}")
    assert wider != schema
    (folder / "schema.cedarschema").write_text(wider, encoding="utf-8")
    (folder / "policies.cedar").write_text(policies, encoding="utf-8")
    return folder


def test_a_context_read_the_enumeration_cannot_cover_is_refused_by_every_subcommand(tmp_path: Path) -> None:
    # `context.tag like "a*" && context.tag like "*b"` holds for "ab", a text no enumerated context
    # holds (no literal is compared with tag). Before the refusal, `policy check --inventory-only`
    # asked tag as a boolean and `who` answered "nobody" for drain: wrong, u1 may drain in context
    # {"tag": "ab"}.
    folder = _with_context(
        tmp_path / "tags",
        "tag?: String",
        '@id("own")\npermit (principal, action == Action::"schedule", resource)\n'
        'when { principal.tenant != "" && resource.tenant == principal.tenant };\n\n'
        '@id("ab-tags")\npermit (principal, action == Action::"drain", resource)\n'
        'when { context has tag && context.tag like "a*" && context.tag like "*b" };\n',
    )
    where = f"{folder / 'policies.cedar'}:5: policy ab-tags reads `context.tag` with `like`"
    _refused(["check", SMALL, "--policies", str(folder), "--inventory-only"], where)
    _refused(["who", "drain", "na0/gpu0", SMALL, "--policies", str(folder)], where, "--context")
    _refused(["what", "u1", SMALL, "--policies", str(folder)], where, "--context")
    other = _shipped_copy(tmp_path / "other")
    shutil.copy(folder / "schema.cedarschema", other / "schema.cedarschema")
    _refused(["compare", str(other), SMALL, "--policies", str(folder), "--inventory-only"], where)
    # One context given by hand is answered: "ab" is like "a*" and like "*b", so ab-tags allows every
    # principal of the small inventory (6: teams a, b, sre; users u1, u2, oc) to drain.
    code, out, _ = run_cli(
        "policy", "who", "drain", "na0/gpu0", SMALL, "--policies", str(folder), "--context", '{"tag": "ab"}',
        "--format", "json",
    )  # fmt: skip
    assert code == 0
    assert [e["principal"] for e in json.loads(out)["allowed"]] == [
        'Team::"a"', 'Team::"b"', 'Team::"sre"', 'User::"oc"', 'User::"u1"', 'User::"u2"',
    ]  # fmt: skip


def test_a_bound_at_the_largest_long_is_asked_within_the_long_range(tmp_path: Path) -> None:
    # `context.n >= 9223372036854775807` (2**63 - 1, the largest Long): its sides are 2**63 - 2 (false)
    # and 2**63 - 1 (true); 2**63 is no Long and is not asked, and asking it made `policy check` fail (exit 2, "cannot
    # evaluate the request") and `who` list failed requests. By hand: big-n allows every principal to
    # drain when n is 2**63 - 1, no other policy exists, so it is live, needed and cannot raise: no
    # finding; `who drain` names all 6 principals, in that one context.
    folder = _with_context(
        tmp_path / "huge",
        "n?: Long",
        '@id("big-n")\npermit (principal, action == Action::"drain", resource)\n'
        "when { context has n && context.n >= 9223372036854775807 };\n",
    )
    code, out, err = run_cli("policy", "check", SMALL, "--policies", str(folder), "--fail-on", "note")
    assert (code, err) == (0, "")
    assert "0 findings" in out
    code, out, err = run_cli("policy", "who", "drain", "na0/gpu0", SMALL, "--policies", str(folder), "--format", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    # The literal and its sides (2**63 - 2, 2**63 - 1), and theirs again (2**63 - 3): absent first.
    assert doc["coverage"]["contexts"] == [{}, {"n": 2**63 - 3}, {"n": 2**63 - 2}, {"n": 2**63 - 1}]
    assert doc["coverage"]["complete"] is True
    assert doc["errors"] == []
    assert len(doc["allowed"]) == 6
    assert {a["context"]["n"] for e in doc["allowed"] for a in e["allowed"]} == {2**63 - 1}
