"""Configuration files (.topolog.yaml, [tool.topolog]): discovery, precedence, paths, refusals; shell completion."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import click
import pytest
from cli_helpers import run_cli
from click.testing import CliRunner

from verifier.cli.config import default_map, find_config, read_config
from verifier.cli.main import main
from verifier.core.errors import TopologError

STRAY = str(Path(__file__).resolve().parents[1] / "golden" / "stray-devices.yaml")


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def _defaults(start: Path, invoked: str = "verify") -> dict[str, dict[str, Any]]:
    config = find_config(start)
    assert config is not None
    assert isinstance(main, click.Group)
    return default_map(config, main, click.Context(main), invoked)


def _problems(start: Path) -> list[str]:
    with pytest.raises(TopologError) as caught:
        _defaults(start)
    return [str(d) for d in caught.value.diagnostics]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder; the tests run two folders below it."""
    (tmp_path / "a" / "b").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "a" / "b")
    return tmp_path


# -- discovery ----------------------------------------------------------------------------------


def test_pyproject_is_found_from_a_subfolder(project: Path) -> None:
    _write(
        project / "pyproject.toml",
        """
        [project]
        name = "fleet"

        [tool.topolog]
        fail-on = "warning"
    """,
    )
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "warning"
    # The CLI reads it too: the help shows the default that the file sets.
    code, out, _ = run_cli("verify", "--help")
    assert code == 0 and "[default: warning]" in out


def test_the_nearest_file_wins(project: Path) -> None:
    _write(project / ".topolog.yaml", "fail-on: note\n")
    _write(project / "a" / "pyproject.toml", '[tool.topolog]\nfail-on = "warning"\n')
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "warning"


def test_a_pyproject_without_the_table_is_passed_over(project: Path) -> None:
    _write(project / "a" / "pyproject.toml", '[project]\nname = "fleet"\n')
    _write(project / ".topolog.yaml", "fail-on: note\n")
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "note"


def test_a_found_pyproject_that_never_names_topolog_is_not_parsed(project: Path) -> None:
    # Broken TOML (an unterminated string) for some other tool: it cannot hold [tool.topolog],
    # so the search passes over it instead of failing every command run below it.
    _write(project / "a" / "pyproject.toml", '[tool.black]\nline-length = "88\n')
    _write(project / ".topolog.yaml", "fail-on: note\n")
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "note"
    # Named with --config, the same file is read as TOML and refused with its line.
    with pytest.raises(TopologError) as caught:
        read_config(project / "a" / "pyproject.toml")
    assert "TOML syntax error" in str(caught.value)


def test_a_found_pyproject_naming_topolog_only_as_its_project_and_script_is_not_parsed(project: Path) -> None:
    # topolog's own pyproject.toml: the name and the console script, other tools' tables, a
    # backslash in a comment (no \u escape, so no quoted key can spell `tool` or `topolog`).
    text = (
        '[project]\nname = "topolog"\n[project.scripts]\ntopolog = "verifier.cli.entry:run"\n'
        "# click reads `\\b` in help\n"
        '[tool.black]\nline-length = "88\n'  # broken: proof that it is not parsed
    )
    _write(project / "a" / "pyproject.toml", text)
    _write(project / ".topolog.yaml", "fail-on: note\n")
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "note"


@pytest.mark.parametrize(
    "text",
    [
        '[tool]\ntopolog = { fail-on = "warning" }\n',  # the table as a key of [tool]
        'tool = { topolog = { fail-on = "warning" } }\n',  # an inline table
        'tool.topolog.fail-on = "warning"\n',  # a dotted key
        '[ "tool" . \'topolog\' ]\nfail-on = "warning"\n',  # quoted parts and spaces
    ],
)
def test_every_way_toml_spells_the_table_is_found(project: Path, text: str) -> None:
    _write(project / "pyproject.toml", text)
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "warning"


def test_a_quoted_key_that_spells_topolog_with_an_escape_is_found(project: Path) -> None:
    # "\u0074opolog" is the key topolog (TOML basic strings, quoted keys included, take escapes).
    _write(project / "pyproject.toml", '[tool."\\u0074opolog"]\nfail-on = "note"\n')
    assert _defaults(Path.cwd())["verify"]["fail_on"] == "note"


def test_both_files_in_one_folder_are_refused(project: Path) -> None:
    _write(project / ".topolog.yaml", "fail-on: note\n")
    _write(project / "pyproject.toml", '[tool.topolog]\nfail-on = "warning"\n')
    with pytest.raises(TopologError) as caught:
        find_config(Path.cwd())
    message = str(caught.value)
    assert ".topolog.yaml" in message and "pyproject.toml:1" in message and "--config" in message


def test_an_empty_yaml_file_sets_nothing(project: Path) -> None:
    _write(project / ".topolog.yaml", "# nothing yet\n")
    assert _defaults(Path.cwd()) == {}


# -- what the file sets -----------------------------------------------------------------------


def test_relative_paths_are_taken_from_the_file_s_folder(project: Path) -> None:
    _write(
        project / "pyproject.toml",
        f"""
        [tool.topolog]
        rules = ["my-rules", "{project / "abs.dl"}"]
        waivers = "ops/waivers.yaml"

        [tool.topolog.verify]
        output = ["sarif=reports/topolog.sarif"]
    """,
    )
    verify = _defaults(Path.cwd())["verify"]
    assert verify["rules"] == ["../../my-rules", str(project / "abs.dl")]
    assert verify["waivers_path"] == "../../ops/waivers.yaml"
    assert verify["outputs"] == ["sarif=../../reports/topolog.sarif"]


def test_a_command_s_table_beats_the_top_level(project: Path) -> None:
    _write(
        project / ".topolog.yaml",
        """
        fail-on: warning
        engine: pydatalog
        verify:
          fail-on: note
    """,
    )
    defaults = _defaults(Path.cwd())
    assert defaults["verify"]["fail_on"] == "note" and defaults["verify"]["engine"] == "pydatalog"
    assert defaults["diff"]["fail_on"] == "warning" and defaults["query"]["engine"] == "pydatalog"


def test_a_key_of_a_lazily_loaded_command_is_known(project: Path) -> None:
    _write(project / ".topolog.yaml", "resource-type: Node\n")
    assert _defaults(Path.cwd())["audit"]["resource_type"] == "Node"


def test_config_sets_defaults_and_a_flag_overrides_them(project: Path) -> None:
    (project / "reports").mkdir()
    _write(
        project / "pyproject.toml",
        """
        [tool.topolog]
        fail-on = "note"

        [tool.topolog.verify]
        output = ["json=reports/topolog.json"]
    """,
    )
    code, out, _ = run_cli("verify", STRAY)
    lines = out.splitlines()
    assert code == 1 and lines[-2].endswith("FAILED (--fail-on note)")
    # The file two folders up is named with what it set: fail-on on line 2, output on line 5 (its
    # path taken from the file's folder).
    assert lines[-1] == (
        "configuration ../../pyproject.toml (found in a folder above the working directory) sets "
        "--fail-on note (line 2), --output json=../../reports/topolog.json (line 5)"
    )
    assert json.loads((project / "reports" / "topolog.json").read_text(encoding="utf-8"))["failed"] is True
    code, out, _ = run_cli("verify", STRAY, "--fail-on", "error", "--format", "text")
    lines = out.splitlines()
    assert code == 1 and lines[-2].endswith("FAILED (--fail-on error)")
    # --fail-on from the command line: the file still set --output, and only that is named.
    assert lines[-1].endswith("sets --output json=../../reports/topolog.json (line 5)")


def test_config_option_names_a_file_and_no_config_ignores_discovery(project: Path) -> None:
    _write(project / ".topolog.yaml", "fail-on: note\n")
    elsewhere = _write(project / "ci" / "strict.yaml", "fail-on: warning\n")
    assert "[default: note]" in run_cli("verify", "--help")[1]
    assert "[default: warning]" in run_cli("--config", str(elsewhere), "verify", "--help")[1]
    assert "[default: error]" in run_cli("--no-config", "verify", "--help")[1]


# -- refusals ---------------------------------------------------------------------------------


def test_unknown_key_in_toml_names_file_line_and_a_close_match(project: Path) -> None:
    _write(
        project / "pyproject.toml",
        """
        [project]
        name = "fleet"

        [tool.topolog]
        fail-on = "warning"
        waviers = "w.yaml"

        [tool.topolog.verify]
        base-line = "b.json"
    """,
    )
    assert _problems(Path.cwd()) == [
        "../../pyproject.toml:6: unknown option 'waviers' in [tool.topolog]: no command has --waviers; "
        "did you mean 'waivers'?",
        "../../pyproject.toml:9: unknown option 'base-line' in [tool.topolog.verify]: "
        "`topolog verify` has no --base-line; did you mean 'baseline'?",
    ]


def test_unknown_key_in_yaml_names_line_and_column(project: Path) -> None:
    _write(
        project / ".topolog.yaml",
        """
        rules: [rules/]
        verify:
          fail_on: warning
    """,
    )
    assert _problems(Path.cwd()) == [
        "../../.topolog.yaml:3:3: unknown option 'fail_on' in 'verify:': `topolog verify` has no --fail_on; "
        "did you mean 'fail-on'?",
    ]


def test_unknown_command_table_is_refused(project: Path) -> None:
    _write(project / "pyproject.toml", '[tool.topolog.verfy]\nfail-on = "note"\n')
    assert _problems(Path.cwd()) == [
        "../../pyproject.toml:1: unknown command 'verfy' in [tool.topolog]; did you mean 'verify'?"
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ('rules = "rules/"', "'rules' must be a list, each item a path; not the string 'rules/'"),
        ('proofs = "yes"', "'proofs' must be true or false, not the string 'yes'"),
        ('fail-on = "warnig"', "'fail-on' must be one of error, warning, note, not 'warnig'; did you mean 'warning'?"),
        ("jobs = [3]", "'jobs' must be a path, not the number 3"),
        ('output = ["topolog.sarif"]', "--output sarif=topolog.sarif"),
    ],
)
def test_a_value_of_the_wrong_type_is_refused(project: Path, line: str, expected: str) -> None:
    _write(project / "pyproject.toml", f"[tool.topolog.verify]\n{line}\n")
    (problem,) = _problems(Path.cwd())
    assert problem.startswith("../../pyproject.toml:2: ") and expected in problem


def test_a_top_level_value_that_fits_only_some_commands_points_at_a_table(project: Path) -> None:
    _write(project / "pyproject.toml", '[tool.topolog]\nformat = "sarif"\n')
    (problem,) = _problems(Path.cwd())
    assert "`topolog diff`" in problem and "[tool.topolog.verify]" in problem


def test_toml_syntax_error_has_its_line(project: Path) -> None:
    _write(project / "pyproject.toml", '[tool.topolog]\nfail-on = "note\n')
    with pytest.raises(TopologError) as caught:
        find_config(Path.cwd())
    assert str(caught.value).startswith("../../pyproject.toml:2:") and "TOML syntax error" in str(caught.value)


def test_yaml_that_is_not_a_mapping_is_refused(project: Path) -> None:
    _write(project / ".topolog.yaml", "- fail-on: note\n")
    with pytest.raises(TopologError, match="mapping of option names"):
        find_config(Path.cwd())


def test_explicit_toml_without_the_table_is_refused(tmp_path: Path) -> None:
    with pytest.raises(TopologError, match=r"no \[tool.topolog\] table"):
        read_config(_write(tmp_path / "other.toml", "[tool.black]\nline-length = 100\n"))


def test_bad_config_is_exit_2_on_the_cli_without_a_traceback(project: Path) -> None:
    _write(project / ".topolog.yaml", "fial-on: note\n")
    code, out, err = run_cli("verify", STRAY)
    assert code == 2 and out == "" and "Traceback" not in err
    assert (
        err == "error: ../../.topolog.yaml:1:1: unknown option 'fial-on' in the top level: no command has "
        "--fial-on; did you mean 'fail-on'?\n"
    )
    # --no-config is the way out while the file is being fixed.
    assert run_cli("--no-config", "verify", "--help")[0] == 0


@pytest.mark.parametrize("args", [("--config", "missing.yaml"), ("--config", "x.yaml", "--no-config")])
def test_config_flag_misuse_is_a_usage_error(project: Path, args: tuple[str, ...]) -> None:
    if "missing.yaml" not in args:
        _write(Path.cwd() / "x.yaml", "fail-on: note\n")
    code, _, err = run_cli(*args, "verify", STRAY)
    assert code == 2 and "Traceback" not in err and "--config" in err


# -- shell completion -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shell", "marker"),
    [
        ("bash", "complete -o nosort -F _topolog_completion topolog"),
        ("zsh", "#compdef topolog"),
        ("fish", "complete --no-files --command topolog"),
    ],
)
def test_completion_script_is_printed(shell: str, marker: str) -> None:
    result = CliRunner().invoke(main, [], env={"_TOPOLOG_COMPLETE": f"{shell}_source"}, prog_name="topolog")
    assert result.exit_code == 0
    assert marker in result.output


def test_completion_offers_commands_and_options() -> None:
    def complete(words: str) -> str:
        env = {"_TOPOLOG_COMPLETE": "bash_complete", "COMP_WORDS": words, "COMP_CWORD": str(len(words.split()) - 1)}
        return CliRunner().invoke(main, [], env=env, prog_name="topolog").output

    assert "plain,verify" in complete("topolog ver").splitlines()
    assert "plain,--output" in complete("topolog verify --outp").splitlines()
