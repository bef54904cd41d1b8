"""The shipped policies: every ALLOW/ example is allowed and every DENY/ example denied, by the
hand-checked policies each example names; loading refuses invalid policy sets (exit 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from verifier.authorization.policies import load_policies, split_statements
from verifier.core.errors import TopologError
from verifier.session.policy_examples import run_examples

ROOT = Path(__file__).resolve().parents[2]
POLICIES = ROOT / "policies"


def test_every_example_decides_as_its_folder_says() -> None:
    results = run_examples(POLICIES)
    assert {r.expected for r in results} == {"ALLOW", "DENY"}
    assert len(results) == len(list(POLICIES.glob("ALLOW/*.yaml"))) + len(list(POLICIES.glob("DENY/*.yaml")))
    wrong = [f"{r.path.name}: {r.decision}" for r in results if not r.ok]
    assert wrong == []


def test_shipped_policies_load_with_their_ids() -> None:
    bundle = load_policies(POLICIES)
    assert sorted(bundle.policies) == [
        "fp64-reserved-for-hpc",
        "hpc-fp64-hardware",
        "interns-consumer-only",
        "node-drainer-drains",
        "oncall-incident-access",
        "owners-administer",
        "quarantine-closed",
        "service-accounts-never-schedule",
        "sre-drain",
        "tenant-own-hardware",
    ]
    assert bundle.effect("quarantine-closed") == "forbid"
    assert bundle.policies["quarantine-closed"].loc.line == 4  # the @id line, not the comment above


def _policy_dir(tmp_path: Path, text: str) -> Path:
    d = tmp_path / "p"
    d.mkdir()
    shutil.copy(POLICIES / "schema.cedarschema", d)
    (d / "a.cedar").write_text(text)
    return d


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # Reads an attribute the schema does not have: refused with the policy id and cedarpy's reason.
        (
            '// c\n@id("typo")\npermit(principal, action, resource) when { resource.tenat == "a" };',
            "a.cedar:2: policy 'typo' is not valid against the schema: for policy `policy0`, attribute `tenat`",
        ),
        # Reads an optional context attribute without `has`: would error at evaluation time.
        (
            '@id("ctx")\nforbid(principal, action, resource) when { context.incident };',
            "a.cedar:1: policy 'ctx' is not valid against the schema: for policy `policy0`, unable to guarantee",
        ),
        (
            '@id("ok")\npermit(principal, action, resource);\n\npermit(principal, action, resource);',
            'a.cedar:4: policy has no @id("...") annotation',
        ),
        (
            '@id("x")\npermit(principal, action, resource);\n@id("x")\nforbid(principal, action, resource);',
            "a.cedar:3: policy id 'x' is already used at",
        ),
        (
            '@id("ok")\npermit(principal, action, resource);\n@id("bad")\npermit(principal, action, resource) when {;',
            "a.cedar:3: policy does not parse",
        ),
    ],
)
def test_invalid_policies_are_refused(tmp_path: Path, text: str, expected: str) -> None:
    with pytest.raises(TopologError) as err:
        load_policies(_policy_dir(tmp_path, text))
    assert expected in str(err.value)


def test_statements_split_outside_strings_and_comments() -> None:
    text = (
        '// a; comment\n@id("a;b")\npermit(principal, action, resource)\n  when { "x;" == "x;" };\n'
        '@id("c") forbid(principal, action, resource);'
    )
    assert [(line, s.count(";")) for line, s in split_statements(text)] == [(2, 5), (5, 1)]  # 2 statements, not 6
