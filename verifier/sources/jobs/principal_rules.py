"""Which principal a scheduler's job acts as: `--principal-from` rules (docs/jobs.md).

A Kubernetes manifest or a Slurm batch script names no topolog principal. Each rule names one
thing the spec does say, and the first rule that finds a value gives the principal:

    namespace          metadata.namespace                     (Kubernetes)
    service-account    the pod template's serviceAccountName  (Kubernetes)
    queue              the kueue.x-k8s.io/queue-name label, a Workload's spec.queueName
    label:KEY          the workload's label KEY               (Kubernetes)
    annotation:KEY     the workload's annotation KEY          (Kubernetes)
    account            #SBATCH --account / -A                 (Slurm)
    partition          #SBATCH --partition / -p               (Slurm)

`RULE=Type` makes the value a principal of that type (`namespace=Team`: namespace ml is
Team::"ml"); without it the principal may be of any type. A job that no rule gives a principal
is refused (exit 2), never placed as nobody: an unauthorized placement would pass a check that
should fail.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from verifier.core.errors import SourceLocation
from verifier.sources.inventory.validate import Problems, did_you_mean, name_problem, one_of
from verifier.sources.principals import principal_id_problem

SOURCES = ("namespace", "service-account", "queue", "label", "annotation", "account", "partition")
"""What a rule may read; `label` and `annotation` take a key (`label:team`)."""
KEYED = ("label", "annotation")
TYPES = ("Team", "User", "ServiceAccount")


class RuleError(ValueError):
    """A rule as written cannot be read (the CLI reports it as a bad option value)."""


@dataclass(frozen=True)
class PrincipalRule:
    source: str  # one of SOURCES
    key: str | None  # the label or annotation key
    type: str | None  # a principal type of TYPES, or None: any type
    text: str  # as written, for messages

    @property
    def fact(self) -> str:
        """The key of the subject facts this rule reads (`label:team`, `account`)."""
        return f"{self.source}:{self.key}" if self.key is not None else self.source


def parse_rule(text: str) -> PrincipalRule:
    """`namespace`, `label:team=Team`, `account=Team` ...; RuleError with what was expected."""
    expected = (
        "expected SOURCE or SOURCE=Type, SOURCE one of "
        f"{one_of(SOURCES)} (label:KEY, annotation:KEY) and Type one of {one_of(TYPES)}"
    )
    body, _, ptype = text.strip().partition("=")
    source, colon, key = body.strip().partition(":")
    source = source.strip()
    if source not in SOURCES:
        raise RuleError(f"unknown principal source {source!r}{did_you_mean(source, SOURCES)}; {expected}")
    if source in KEYED:
        key = key.strip()
        if not colon or not key:
            raise RuleError(f"{source!r} needs a key, such as '{source}:team'; {expected}")
        if (problem := name_problem(key)) is not None:
            raise RuleError(f"{source} key {key!r} {problem}")
    elif colon:
        raise RuleError(f"{source!r} takes no key (':{key}'); {expected}")
    ptype = ptype.strip()
    if "=" in text and ptype not in TYPES:
        raise RuleError(f"principal type {ptype!r} is not one of {one_of(TYPES)}{did_you_mean(ptype, TYPES)}")
    return PrincipalRule(source, key if source in KEYED else None, ptype or None, text.strip())


def parse_rules(texts: Iterable[str]) -> tuple[PrincipalRule, ...]:
    return tuple(parse_rule(t) for t in texts)


def resolve(
    rules: tuple[PrincipalRule, ...],
    facts: Mapping[str, str],
    loc: SourceLocation,
    what: str,
    p: Problems,
) -> tuple[str, str | None] | None:
    """The principal (id, type) of the first rule with a value in `facts`; None (a problem added) otherwise."""
    for rule in rules:
        value = facts.get(rule.fact)
        if value is None:
            continue
        problem = principal_id_problem(value)
        if problem is not None:
            p.add(loc, f"{what}: --principal-from {rule.text} reads {value!r}, which {problem}")
            return None
        return value, rule.type
    said = ", ".join(f"{k} {v!r}" for k, v in sorted(facts.items())) or "nothing a rule can read"
    tried = (
        f"the rules {', '.join(r.text for r in rules)} find no value"
        if rules
        else "no --principal-from rule is given (or principal-from in .topolog.yaml)"
    )
    p.add(
        loc,
        f"{what}: cannot tell which principal it acts as: {tried} (the spec says: {said}); "
        "expected a rule such as --principal-from namespace=Team or --principal-from account=Team",
    )
    return None
