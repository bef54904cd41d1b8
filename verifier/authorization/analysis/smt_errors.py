"""The one refusal of the schema-wide analysis: a policy it does not encode is named, never guessed at."""

from __future__ import annotations

from verifier.core.errors import Diagnostic, SourceLocation, TopologError


class OutsideAnalysis(TopologError):
    """A policy (or schema) uses a construct the symbolic encoding does not cover (exit 2).

    Raised rather than answering: an analysis that skipped the construct could call a live
    policy dead, or two different policy sets equivalent.
    """

    @classmethod
    def construct(cls, where: SourceLocation, policy: str, what: str) -> OutsideAnalysis:
        return cls(
            [
                Diagnostic(
                    where,
                    f"policy {policy!r} is outside what the schema-wide analysis covers: {what} "
                    "(see docs/policy-analysis.md, 'Schema-wide analysis and its limits'); "
                    "the inventory analysis (topolog policy check) still answers for the inventory's entities",
                )
            ]
        )
