"""The pipeline's shape, checked: stages import downwards only, nothing imports in a circle.

The layering itself is declared in pyproject.toml ([tool.importlinter]) and checked by
import-linter; the cycle check covers what layers cannot see (a cycle inside one stage).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import grimp
import networkx as nx

ROOT = Path(__file__).resolve().parent.parent


def _graph(external: bool = False) -> grimp.ImportGraph:
    return grimp.build_graph("verifier", include_external_packages=external, exclude_type_checking_imports=True)


def test_import_contracts_are_kept() -> None:
    result = subprocess.run(
        [str(Path(sys.executable).parent / "lint-imports")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: 3 kept, 0 broken." in result.stdout


def test_no_module_imports_itself_through_others() -> None:
    graph = _graph()
    g = nx.DiGraph()
    for module in graph.modules:
        for imported in graph.find_modules_directly_imported_by(module):
            g.add_edge(module, imported)
    # A package's __init__ importing its own modules is not a cycle of the code, only of names.
    cycles = [c for c in nx.simple_cycles(g) if not any(m == "verifier" for m in c)]
    assert cycles == []


def test_every_stage_is_a_package_and_nothing_sits_flat() -> None:
    flat = sorted(p.name for p in (ROOT / "verifier").glob("*.py") if p.name != "__init__.py")
    assert flat == []
    stages = {
        *("core", "sources", "facts", "engine", "checks", "placement", "authorization", "reports", "session"),
        *("cli", "service"),
    }
    packages = {p.parent.name for p in (ROOT / "verifier").glob("*/__init__.py")}
    assert packages == stages


def test_only_the_command_line_imports_click() -> None:
    graph = _graph(external=True)
    importers = {m for m in graph.modules if "click" in graph.find_modules_directly_imported_by(m)}
    assert importers and all(m.startswith("verifier.cli.") for m in importers)


def test_rendering_a_report_needs_no_engine() -> None:
    # The output layer renders what the stages below produced; loading it must not pull in the
    # parser, the engines or the graph library (each costs a tenth of a second per run).
    modules = [
        "verifier.reports.text_report",
        "verifier.reports.json_report",
        "verifier.reports.sarif_report",
        "verifier.reports.junit_report",
        "verifier.reports.github_report",
        "verifier.reports.markdown_report",
        "verifier.reports.place_report",
        "verifier.reports.diff_report",
        "verifier.reports.query_report",
    ]
    code = (
        f"import sys; import {', '.join(modules)}; "
        "print(sorted(m for m in ('lark', 'networkx', 'duckdb', 'pyDatalog') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"
