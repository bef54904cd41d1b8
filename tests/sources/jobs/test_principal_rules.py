"""`--principal-from` rules (verifier/sources/jobs/principal_rules.py)."""

from __future__ import annotations

import pytest

from verifier.core.errors import SourceLocation
from verifier.sources.inventory.validate import Problems
from verifier.sources.jobs.principal_rules import PrincipalRule, RuleError, parse_rule, parse_rules, resolve

HERE = SourceLocation("job.yaml", 3, 1)


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("namespace", PrincipalRule("namespace", None, None, "namespace")),
        ("namespace=Team", PrincipalRule("namespace", None, "Team", "namespace=Team")),
        (
            "label:team.example.com/owner=Team",
            PrincipalRule("label", "team.example.com/owner", "Team", "label:team.example.com/owner=Team"),
        ),
        (
            "service-account=ServiceAccount",
            PrincipalRule("service-account", None, "ServiceAccount", "service-account=ServiceAccount"),
        ),
        ("account", PrincipalRule("account", None, None, "account")),
    ],
)
def test_rules_read(text: str, rule: PrincipalRule) -> None:
    assert parse_rule(text) == rule


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("namepsace", "unknown principal source 'namepsace'; did you mean 'namespace'?"),
        ("label", "'label' needs a key"),
        ("account:x", "'account' takes no key"),
        ("namespace=Group", "principal type 'Group' is not one of"),
    ],
)
def test_bad_rules_say_what_was_expected(text: str, expected: str) -> None:
    with pytest.raises(RuleError) as err:
        parse_rule(text)
    assert expected in str(err.value)


def test_first_rule_with_a_value_wins() -> None:
    rules = parse_rules(["label:team=Team", "namespace=User"])
    p = Problems()
    # No label team: the namespace rule gives User::"alice".
    assert resolve(rules, {"namespace": "alice"}, HERE, "Pod p", p) == ("alice", "User")
    assert resolve(rules, {"namespace": "alice", "label:team": "nlp"}, HERE, "Pod p", p) == ("nlp", "Team")
    assert not p


def test_no_value_and_bad_value_are_problems() -> None:
    p = Problems()
    assert resolve(parse_rules(["account"]), {"partition": "gpu"}, HERE, "job j", p) is None
    assert resolve(parse_rules(["account"]), {"account": 'a"b'}, HERE, "job j", p) is None
    messages = [str(d) for d in p.diagnostics()]
    assert messages[0].startswith(
        "job.yaml:3:1: job j: cannot tell which principal it acts as: the rules account find no value"
    )
    assert "--principal-from account reads 'a\"b', which holds a quote" in messages[1]
