"""Report formats: one module per format, each a `render(report) -> str`.

Adding a format means adding a module and one line in FORMATS; the CLI offers
whatever is registered here.
"""

from __future__ import annotations

from collections.abc import Callable

from verifier.checks.verify import VerifyReport
from verifier.reports import (
    github_report,
    json_report,
    junit_report,
    markdown_report,
    sarif_report,
    text_report,
)

Renderer = Callable[[VerifyReport], str]

FORMATS: dict[str, Renderer] = {
    "github": github_report.render,
    "json": json_report.render,
    "junit": junit_report.render,
    "markdown": markdown_report.render,
    "sarif": sarif_report.render,
    "text": text_report.render,
}


def render(report: VerifyReport, fmt: str) -> str:
    return FORMATS[fmt](report)
