"""Hostile command-line and configuration inputs (round 16), in-process.

- `--reload-quiet 1e999`: written in digits, read as infinity; the refusal quoted it as "inf".
- `serve` whose import fails for a reason other than a missing package of the serve extra was told
  to install the extra (the wrong way to send a user with a broken install).
- A quoted whole number in .topolog.yaml (`port: "8181"`) was refused while a quoted fraction was
  read; a leading zero (`010`: 8 to YAML 1.1, kept as the text 010) stays refused.
- A `--config` that is a link loop or a dangling link was "File ... does not exist".
- A configuration with one 3 MB comment line took seconds to compose (pure parser); the reading is
  now libyaml's. Not timed here: the result (no settings, the comment ignored) is checked.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
INV = str(ROOT / "inventories" / "edge-soc.yaml")
MIXED = str(ROOT / "inventories" / "mixed-fleet.yaml")
INFERENCE = str(ROOT / "inventories" / "jobs" / "inference.yaml")


@pytest.mark.parametrize("option", ["--reload-quiet", "--authorize-timeout", "--request-head-timeout"])
def test_infinite_seconds_quoted_as_written(option: str) -> None:
    code, _out, err = run_cli("serve", INV, option, "1e999")
    assert code == 2
    # The refusal quotes what the user wrote, never the float's name for it.
    assert "'1e999' is not a finite number" in err
    assert "inf " not in err


def test_serve_import_error_of_our_own_module_is_not_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # A None in sys.modules makes `import verifier.service.server` fail with that module's name:
    # a broken install of topolog itself, not a missing package of the serve extra.
    monkeypatch.setitem(sys.modules, "verifier.service.server", None)
    code, _out, err = run_cli("serve", INV)
    assert code != 0
    assert "serve extra" not in err


def test_serve_missing_extra_package_is_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # uvicorn is one of pyproject.toml's serve extra: its absence is the message's case.
    monkeypatch.delitem(sys.modules, "verifier.service.server", raising=False)
    monkeypatch.setitem(sys.modules, "uvicorn", None)
    code, _out, err = run_cli("serve", INV)
    assert code == 2
    assert "needs the serve extra (uvicorn is not installed)" in err


def test_quoted_whole_number_in_config_is_read(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text('place:\n  limit: "1"\n', encoding="utf-8")
    code, _out, err = run_cli("--config", str(cfg), "place", MIXED, INFERENCE)
    assert code == 0, err
    # The note names the option the file set (line 2), so the quoted text was taken as its value.
    assert "--limit (line 2)" in err


def test_quoted_whole_number_in_config_goes_through_the_range(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text('serve:\n  port: "99999"\n', encoding="utf-8")
    code, _out, err = run_cli("--config", str(cfg), "serve", INV)
    assert code == 2
    # 99999 is past the port range 0..65535: refused at the file's line 2, column 3 (the key).
    assert f"{cfg}:2:3: 'port'" in err
    assert "99999 is not in the range" in err


@pytest.mark.parametrize("text", ['"010"', "010", '"1_0"', '"٤"', '" 2"'])
def test_ambiguous_whole_number_text_stays_refused(tmp_path: Path, text: str) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text(f"place:\n  limit: {text}\n", encoding="utf-8")
    code, _out, err = run_cli("--config", str(cfg), "place", MIXED, INFERENCE)
    assert code == 2
    assert "'limit' must be a whole number" in err


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_config_link_to_nothing_is_named_a_link(tmp_path: Path, kind: str) -> None:
    link = tmp_path / "ci.yaml"
    if kind == "loop":
        os.symlink(tmp_path / "other.yaml", link)
        os.symlink(link, tmp_path / "other.yaml")
    else:
        os.symlink(tmp_path / "absent.yaml", link)
    code, _out, err = run_cli("--config", str(link), "verify", INV)
    assert code == 2
    assert "is a symbolic link that leads to no file" in err
    assert "does not exist" not in err


def test_long_comment_line_in_config_sets_nothing(tmp_path: Path) -> None:
    cfg = tmp_path / "c.yaml"
    cfg.write_text("#" + "x" * 300_000 + "\nverify:\n  format: json\n", encoding="utf-8")
    code, out, err = run_cli("--config", str(cfg), "verify", INV)
    assert code in (0, 1), err
    # format json came from line 3, after the long comment: the output is a JSON document.
    assert out.lstrip().startswith("{")


def test_policies_that_are_a_pipe_are_named_so(tmp_path: Path) -> None:
    # A fifo where the policy directory should be: refused without opening it (nothing would ever
    # write to it), naming what it is; it was "no such policy directory", though `ls` shows it.
    fifo = tmp_path / "policies"
    os.mkfifo(fifo)
    code, _out, err = run_cli("verify", MIXED, "--policies", str(fifo))
    assert code == 2
    assert f"{fifo}: it is not a folder; expected the policy directory" in err


@pytest.mark.parametrize("nested", ["[" * 5000 + "]" * 5000, "{a=" * 3000 + "1" + "}" * 3000], ids=["arrays", "tables"])
def test_toml_nested_past_the_parser_is_refused(tmp_path: Path, nested: str) -> None:
    # tomllib reads arrays and inline tables by recursion: this deep, it was "internal error
    # (RecursionError)"; now refused at the file (line 1), exit 2.
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.topolog]\nx = " + nested + "\n", encoding="utf-8")
    code, _out, err = run_cli("--config", str(cfg), "verify", INV)
    assert code == 2
    assert f"{cfg}:1:1: TOML nested deeper than the parser can follow" in err, err


def test_look_alike_principal_is_named_with_its_odd_letter(tmp_path: Path) -> None:
    # 'ivan' with a Cyrillic a (U+0430): printed, it reads as the ivan of inventories/principals.yml.
    # authorize said only "is not in"; a job's principal said "did you mean 'ivan'?" beside what
    # reads as 'ivan'. Both now name the letter.
    look_alike = "iv\u0430n"
    code, _out, err = run_cli(
        "authorize", MIXED, "--principal", look_alike, "--action", "schedule", "--resource", "rtx-n3/gpu0"
    )
    assert code == 2
    assert "did you mean 'ivan'? (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)" in err, err
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        f"apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n  - {{name: j, principal: {look_alike}, gpus: 1}}\n",
        encoding="utf-8",
    )
    code, _out, err = run_cli("place", MIXED, str(jobs))
    assert code == 2
    assert "did you mean 'ivan'? (it looks the same but holds U+0430 CYRILLIC SMALL LETTER A)" in err, err


def test_did_you_mean_still_suggests_the_nearest() -> None:
    from verifier.core.suggest import did_you_mean
    from verifier.sources.inventory.validate import did_you_mean as inventory_did_you_mean

    # An ASCII slip is no look-alike: the nearest by difflib, as before.
    assert did_you_mean("ivam", ["ivan", "alice"]) == "; did you mean 'ivan'?"
    assert inventory_did_you_mean("ivam", ["ivan", "alice"]) == "; did you mean 'ivan'?"
    # An accented letter is a letter a reader tells apart (no look-alike): the nearest, without a note.
    assert did_you_mean("\u00e5lice", ["alice"]) == "; did you mean 'alice'?"
