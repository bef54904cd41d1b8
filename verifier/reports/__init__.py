"""The output layer: every command's report is rendered here, through one small interface.

`render(report, fmt)` turns any report into text; `formats_for(type)` names the formats a
report type offers, the first being the one a terminal gets by default. Verification has
one module per format (text, json, sarif, junit, github, markdown); every other report type
has one module holding its formats. Report modules are imported only when a report of
their type is rendered.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any

Renderer = Callable[[Any], str]

VERIFY_FORMATS: tuple[str, ...] = ("text", "json", "sarif", "junit", "github", "markdown")
VERIFY_FILE_FORMATS: tuple[str, ...] = (*VERIFY_FORMATS, "html")
"""What `verify --output FORMAT=PATH` writes: every format, and html, which is a page, not terminal text."""

_MODULES: dict[str, str] = {
    "verifier.checks.verify.VerifyReport": "",  # one module per format: verifier.reports.<format>_report
    "verifier.placement.place.PlaceReport": "verifier.reports.place_report",
    "verifier.placement.whatif.WhatIfReport": "verifier.reports.whatif_report",
    "verifier.checks.diff.DiffReport": "verifier.reports.diff_report",
    "verifier.session.diff_run.JobsDiffReport": "verifier.reports.diff_report:JOBS_FORMATS",
    "verifier.checks.explain.ExplainReport": "verifier.reports.explain_report",
    "verifier.authorization.audit.AuditResult": "verifier.reports.audit_report",
    "verifier.authorization.audit.DiffResult": "verifier.reports.audit_report:DIFF_FORMATS",
    "verifier.authorization.requests.AuthorizeReport": "verifier.reports.authorize_report",
    "verifier.authorization.analysis.questions.WhoResult": "verifier.reports.policy_questions_report:WHO_FORMATS",
    "verifier.authorization.analysis.questions.WhatResult": "verifier.reports.policy_questions_report:WHAT_FORMATS",
    "verifier.authorization.analysis.equivalence.CompareResult": (
        "verifier.reports.policy_questions_report:COMPARE_FORMATS"
    ),
    "verifier.engine.answers.QueryResult": "verifier.reports.query_report",
    "verifier.checks.check.CheckCatalog": "verifier.reports.rules_report",
    "verifier.session.rule_tests.RuleTestReport": "verifier.reports.rule_tests_report",
    "verifier.sources.importers.reconcile.ReconcileReport": "verifier.reports.reconcile_report",
    "verifier.session.draw_run.DrawReport": "verifier.reports.drawing.report",
}
"""Report type (module.name, so that naming one imports nothing) -> the module of its formats, and
the mapping there when it is not FORMATS."""


def _name(report_type: type) -> str:
    return f"{report_type.__module__}.{report_type.__qualname__}"


class _VerifyRenderers(Mapping[str, Renderer]):
    """The verification formats, each module imported when its renderer is looked up.

    A run prints one or two formats; importing all six (the junit module alone compiles a
    regex over most of Unicode and pulls in xml.etree) would cost every `verify` for nothing.
    """

    def __getitem__(self, fmt: str) -> Renderer:
        if fmt not in VERIFY_FORMATS:
            raise KeyError(fmt)
        render_fn: Renderer = importlib.import_module(f"verifier.reports.{fmt}_report").render
        return render_fn

    def __contains__(self, fmt: object) -> bool:
        return fmt in VERIFY_FORMATS

    def __iter__(self) -> Iterator[str]:
        return iter(VERIFY_FORMATS)

    def __len__(self) -> int:
        return len(VERIFY_FORMATS)


def renderers(report_type: type) -> Mapping[str, Renderer]:
    """Format name -> renderer, for reports of `report_type` (KeyError for a type with no formats)."""
    where = _MODULES[_name(report_type)]
    if not where:
        return _VerifyRenderers()
    module, _, attr = where.partition(":")
    formats: Mapping[str, Renderer] = getattr(importlib.import_module(module), attr or "FORMATS")
    return formats


def formats_for(report_type: type) -> tuple[str, ...]:
    """The formats `report_type` offers."""
    if _MODULES[_name(report_type)] == "":
        return VERIFY_FORMATS
    return tuple(renderers(report_type))


def render(report: object, fmt: str) -> str:
    """`report` in format `fmt` (ValueError when its type does not offer `fmt`).

    A VerifyReport also renders as "html" (verifier.reports.html_report), a page for a file,
    which is why VERIFY_FORMATS (what --format prints) does not list it.
    """
    if fmt == "html" and _MODULES.get(_name(type(report))) == "":
        return importlib.import_module("verifier.reports.html_report").render(report)  # type: ignore[no-any-return]
    formats = renderers(type(report))
    if fmt not in formats:
        raise ValueError(f"{type(report).__name__} has no {fmt!r} format; formats: {', '.join(formats)}")
    return formats[fmt](report)
