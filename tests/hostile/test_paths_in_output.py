"""A folder whose name holds control characters forges no output line, in any command (issue 45).

The shipped inventories, jobs, principals, policies, two machines' nvidia-smi matrices and the site rule
tests are copied into a folder named `a<LF>::error file=x::forged<ESC>[31m<CR>z`. Printed raw,
that name would start a GitHub workflow command on a line of its own and colour the terminal.
Each command must still work (exit 0 or 1, as on a plain folder) and its output must hold no
raw control character but the line feeds between lines, and no line starting with `::` other
than the github format's own annotations (`::error file=...` with the name escaped as `%0A`).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "sources" / "importers" / "fixtures"
NAME = "a\n::error file=x::forged\x1b[31m\rz"
SHOWN = "a\\x0a::error file=x::forged\\x1b[31m\\x0dz"
"""How the text format prints NAME: each control character as Python writes it in a string (\\xNN)."""

ANNOTATION = re.compile(r"^::(error|warning|notice) (file|title)=[^\n]*$")
"""A github-format annotation line topolog writes: its properties come first, never `file=x::`."""


@pytest.fixture(scope="module")
def evil(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / NAME
    folder.mkdir()
    for name in ("dgx-h100-pod.yaml", "edge-soc.yaml", "mixed-fleet.yaml", "principals.yml"):
        shutil.copy(ROOT / "inventories" / name, folder / name)
    shutil.copytree(ROOT / "inventories" / "jobs", folder / "jobs")
    shutil.copytree(ROOT / "policies", folder / "policies")
    shutil.copytree(ROOT / "tests" / "rule_tests" / "site", folder / "site")
    shutil.copy(FIXTURES / "dgx-a100-topo-tabs.txt", folder / "tabs.txt")
    # Another machine's matrix: reconcile has disagreements to print, each naming both files.
    shutil.copy(FIXTURES / "h100-8gpu-no-nic.txt", folder / "h100.txt")
    # A waiver that matches no finding: WAIVER002 is reported at this file's line 2.
    (folder / "waivers.yaml").write_text(
        "waivers:\n  - rule: NODE001\n    subject: 'nowhere/*'\n    reason: r\n    expires: 2100-01-01\n",
        encoding="utf-8",
    )
    return folder


def _cases(e: str) -> dict[str, list[str]]:
    inv, fleet, edge = f"{e}/dgx-h100-pod.yaml", f"{e}/mixed-fleet.yaml", f"{e}/edge-soc.yaml"
    principals = ("--principals", f"{e}/principals.yml", "--policies", f"{e}/policies")
    return {
        "verify": ["verify", edge, "--waivers", f"{e}/waivers.yaml"],
        "verify-github": ["verify", inv, "--format", "github", "--waivers", f"{e}/waivers.yaml"],
        "verify-markdown": ["verify", inv, "--format", "markdown"],
        "query": ["query", edge, 'within(G, "edge0")'],
        "audit": ["audit", fleet, *principals],
        "audit-against": ["audit", fleet, *principals, "--against", f"{e}/policies"],
        "diff": ["diff", inv, edge],
        "reconcile": ["reconcile", f"{e}/tabs.txt", f"{e}/h100.txt"],
        "import": ["import", "nvidia-smi", f"{e}/tabs.txt", "--node", "n1"],
        "place": ["place", fleet, f"{e}/jobs/", *principals],
        "explain": ["explain", inv, 'within("dgx00/gpu0", "pod0")'],
        # A finding of the folder's own rule, with its proof: the rule's place is in the folder.
        "verify-proofs": ["verify", f"{e}/site/fixtures/SITE001/fail.yaml", "--rules", f"{e}/site", "--proofs"],
        "draw": ["draw", edge, "-o", f"{e}/edge.svg"],
        "export": ["export", "slurm-topology", inv],
        "repl": ["repl", edge],  # stdin is empty: it loads the inventory and ends
        "rules": ["rules", "--rules", f"{e}/site"],
        "test": ["test", f"{e}/site"],
        "policy": ["policy", "who", "schedule", "mi300x-n0/gpu0", fleet, *principals],
        "policy-what": ["policy", "what", "alice", fleet, *principals],
        "policy-compare": ["policy", "compare", f"{e}/policies", fleet, *principals],
        "authorize": [
            "authorize",
            fleet,
            *principals,
            *("--principal", "ivan", "--action", "schedule"),
            *("--resource", "a100-n0/gpu0"),
        ],
    }


COMMANDS = sorted(_cases("E"))


@pytest.mark.parametrize("case", COMMANDS)
def test_a_folder_name_with_control_characters_forges_no_line(evil: Path, case: str) -> None:
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))[case]])
    out = result.stdout_bytes + result.stderr_bytes
    # It still works: 0 (nothing to report) or 1 (findings, a denial, disagreements), never 2.
    assert result.exit_code in (0, 1), out.decode("utf-8", "replace")
    text = out.decode("utf-8")
    assert re.findall("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]", text) == []
    for line in text.split("\n"):
        # The runner may take a command after leading blanks: an indented proof line counts too.
        assert not line.lstrip().startswith("::") or ANNOTATION.match(line), line


def test_every_command_that_reads_a_path_is_covered() -> None:
    # The commands of `topolog --help`, less `schema` (it prints the inventory schema and reads
    # no path) and `serve` (a server: its decisions are JSON).
    listed = set(main.list_commands(None))  # type: ignore[arg-type]
    covered = {case.split("-")[0] for case in COMMANDS}
    assert listed - covered <= {"schema", "serve"}


def test_text_prints_the_folder_escaped(evil: Path) -> None:
    # WAIVER002 (the waiver matches no finding) is located in the waivers file, line 2, column 5.
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))["verify"]])
    assert f"{SHOWN}/waivers.yaml:2:5: warning WAIVER002: " in result.stdout
    # Markdown: the path as the text format writes it, then escaped as a cell ('\' and '[' backslashed).
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))["verify-markdown"]])
    assert r"a\\x0a::error file=x::forged\\x1b\[31m\\x0dz/dgx-h100-pod.yaml:" in result.stdout
    assert "<br>::error" not in result.stdout
    # reconcile: NV12 on the DGX A100 against NV18 on the H100 between gpu0 and gpu1, line 2 of each
    # matrix; the node is named after the first file's stem (tabs). (Their GPU0s' NUMA nodes, 3 and 0,
    # differ too: that line sorts first, so the path-class line is looked up by its subject.)
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))["reconcile"]])
    first = next(ln for ln in result.stdout.splitlines() if ln.startswith("tabs/gpu0 - tabs/gpu1: "))
    assert first == f"tabs/gpu0 - tabs/gpu1: path class: A NV12 ({evil.parent}/{SHOWN}/tabs.txt:2), B NV18 (" + (
        f"{evil.parent}/{SHOWN}/h100.txt:2)"
    )
    # import: each object's source label is the file:line it came from, escaped (a label holds no control).
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))["import"]])
    assert f"source: {evil.parent}/{SHOWN}/tabs.txt:1" in result.stdout
    # The audit header names the inventory, the policies and the principals, escaped.
    result = CliRunner().invoke(main, ["--no-config", *_cases(str(evil))["audit"]])
    assert result.stdout.splitlines()[0].startswith(f"audit of {evil.parent}/{SHOWN}/mixed-fleet.yaml with ")


def test_one_escaping_function_per_format() -> None:
    from verifier.reports.safe_text import github_data, github_property, markdown_cell, one_line, xml_safe

    # By hand: LF is U+000A, ESC U+001B, CR U+000D, NEL U+0085, LINE SEPARATOR U+2028.
    assert one_line(NAME + "\x85\u2028") == SHOWN + "\\x85\\u2028"
    assert github_data("50%\n\x1b") == "50%25%0A\\x1b"
    assert github_property("a:b,c\r") == "a%3Ab%2Cc%0D"
    assert markdown_cell("a|b\n\x1b") == "a\\|b<br>\\\\x1b"
    assert xml_safe("a\x01b\tc") == "a\\x01b\tc"
