"""A command imports what it runs: another command's code, or a report format not asked for, stays unloaded.

Each check starts a fresh interpreter (imports are per process) and names modules, never times:
a CI gate pays for every module a plain `topolog verify` imports, on every commit.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from cli_helpers import modules_after

ROOT = Path(__file__).resolve().parents[2]
POD = str(ROOT / "inventories" / "dgx-h100-pod.yaml")


def test_verify_loads_only_the_format_it_prints() -> None:
    loaded = modules_after(["verify", POD])
    assert "verifier.reports.text_report" in loaded
    unwanted = {
        "verifier.checks.diff",  # topolog diff's comparison and git code
        "verifier.session.diff_run",
        "verifier.cli.diff_command",
        "verifier.reports.json_report",
        "verifier.reports.sarif_report",
        "verifier.reports.junit_report",
        "verifier.reports.github_report",
        "verifier.reports.markdown_report",
        "verifier.reports.diff_report",
    }
    assert loaded & unwanted == set()


def test_query_loads_neither_the_explainer_nor_the_repl() -> None:
    loaded = modules_after(["query", POD, "within(G, R)"])
    unwanted = {
        "verifier.checks.explain",
        "verifier.cli.repl",
        "verifier.cli.explain_command",
        "verifier.cli.repl_command",
    }
    assert loaded & unwanted == set()


def test_listing_the_commands_imports_none_of_them() -> None:
    # verifier.cli.config asks the group for its command names whenever a configuration file is found.
    code = (
        "import sys, click\n"
        "from verifier.cli.main import main\n"
        "names = main.list_commands(click.Context(main))\n"
        "print(len(names), sorted(m for m in sys.modules if m.startswith('verifier.cli.') and 'command' in m))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split(" ", 1)[1].strip() == "[]"
    assert int(result.stdout.split(" ", 1)[0]) >= 15


def test_the_console_script_imports_topolog_with_the_collector_off_and_the_library_keeps_it() -> None:
    # pyproject's [project.scripts] points `topolog` at verifier.cli.entry; importing the CLI for
    # library use (verifier.cli.main) must leave the caller's collector as it was.
    code = (
        "import gc, sys\n"
        "import verifier.cli.main\n"
        "library = gc.isenabled()\n"
        "import verifier.cli.entry\n"
        "print(library, gc.isenabled())\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["True", "False"]
    # The console script imports the CLI only once no kept report (verifier/core/kept_report.py) answered.
    alone = "import sys, verifier.cli.entry\nprint('click' in sys.modules, 'verifier.cli.main' in sys.modules)\n"
    result = subprocess.run([sys.executable, "-c", alone], cwd=ROOT, capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "False"]
    scripts = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'topolog = "verifier.cli.entry:run"' in scripts
