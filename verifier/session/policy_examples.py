"""The request examples in `policies/ALLOW/` and `policies/DENY/`, which CI evaluates.

Each example is a YAML file naming an inventory (relative to the example), a principal, an
action, a resource, an optional context and `decided_by`: the policy ids expected to decide
it (hand-checked; `[]` for a default deny). Every ALLOW must be allowed and every DENY
denied, by exactly those policies, with no evaluation error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from verifier.authorization.evaluate import ACTIONS, Decision, Request
from verifier.authorization.requests import resolve
from verifier.authorization.setup import AuthzSetup
from verifier.core.errors import SourceLocation, TopologError
from verifier.session.api import load_authorization
from verifier.sources.inventory.yaml_source import YList, YMap, load_yaml_file


@dataclass(frozen=True)
class ExampleResult:
    path: Path
    expected: str  # ALLOW or DENY
    decided_by: tuple[str, ...]
    decision: Decision

    @property
    def ok(self) -> bool:
        return (
            self.decision.word == self.expected
            and not self.decision.errors
            and self.decision.reasons == self.decided_by
        )


def run_examples(policy_dir: Path) -> list[ExampleResult]:
    setups: dict[Path, AuthzSetup] = {}
    out: list[ExampleResult] = []
    for expected in ("ALLOW", "DENY"):
        for path in sorted((policy_dir / expected).glob("*.yaml")):
            doc = load_yaml_file(path)
            inventory = (path.parent / str(doc.get("inventory", ""))).resolve()
            if inventory not in setups:
                setups[inventory] = load_authorization([inventory], policy_dir)
            setup = setups[inventory]
            action = doc.get("action")
            if action not in ACTIONS:
                raise TopologError.at(doc.key_loc("action"), f"action must be one of {', '.join(ACTIONS)}")
            context = doc.get("context", {})
            decided = doc.get("decided_by")
            if not isinstance(context, YMap | dict) or not isinstance(decided, YList):
                raise TopologError.at(SourceLocation(str(path)), "needs decided_by: [policy ids] (context: a mapping)")
            request = Request(
                resolve(setup, str(doc.get("principal")), "principal"),
                str(action),
                resolve(setup, str(doc.get("resource")), "resource"),
                dict(context),
            )
            out.append(
                ExampleResult(
                    path, expected, tuple(sorted(str(x) for x in decided)), setup.authorizer.decide_one(request)
                )
            )
    return out
