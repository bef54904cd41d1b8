"""Thresholds: defaults, per-inventory override file, --thresholds, and bad input (exit 2)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from verifier.cli.main import main
from verifier.core.errors import TopologError
from verifier.sources.thresholds import OVERRIDE_NAME, default_thresholds, load_thresholds

FIXTURE = Path(__file__).resolve().parents[1] / "rules" / "fixtures" / "BW005" / "fail.yaml"


def test_defaults_are_documented_integers() -> None:
    values = default_thresholds()
    assert values["leaf_oversubscription_permille"] == 1000
    assert values["pcie_switch_oversubscription_permille"] == 4000
    assert values["nic_pcie_ratio_permille"] == 1000
    docs = (Path(__file__).resolve().parents[2] / "docs" / "thresholds.md").read_text()
    mine = ("nic_pcie_ratio_permille", "pcie_switch_oversubscription_permille", "leaf_oversubscription_permille")
    assert all(f"`{key}`" in docs for key in mine)


def test_override_next_to_inventory(tmp_path: Path) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text("apiVersion: topolog.dev/v1\n")
    (tmp_path / OVERRIDE_NAME).write_text("# a 2:1 fabric is fine here\nleaf_oversubscription_permille: 2000\n")
    values = load_thresholds([inv])
    assert values["leaf_oversubscription_permille"] == 2000
    assert values["pcie_switch_oversubscription_permille"] == 4000


def test_unknown_key_has_line_and_did_you_mean(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("nic_pcie_ratio_permille: 1000\nleaf_oversubscription_permile: 2000\n")
    with pytest.raises(TopologError) as err:
        load_thresholds([], path)
    assert str(err.value) == (
        f"{path}:2:1: unknown threshold 'leaf_oversubscription_permile'; did you mean 'leaf_oversubscription_permille'?"
    )


def test_bad_value(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("leaf_oversubscription_permille: 1.5\n")
    with pytest.raises(TopologError, match=r"t.yaml:1:1: threshold 'leaf_oversubscription_permille' is '1.5'"):
        load_thresholds([], path)


def test_empty_override_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("# nothing\n")
    assert load_thresholds([], path) == default_thresholds()


def test_cli_thresholds_option_and_file(tmp_path: Path) -> None:
    runner = CliRunner()
    rules = (
        "--no-shipped-rules",
        "--rules",
        "rules/schema.dl",
        "--rules",
        "rules/topology",
        "--rules",
        "rules/bandwidth",
    )
    fail_on = ("--fail-on", "warning")
    assert runner.invoke(main, ["verify", str(FIXTURE), *rules, *fail_on]).exit_code == 1
    lenient = tmp_path / "lenient.yaml"
    lenient.write_text("leaf_oversubscription_permille: 2000\n")
    ok = runner.invoke(main, ["verify", str(FIXTURE), *rules, *fail_on, "--thresholds", str(lenient)])
    assert ok.exit_code == 0, ok.output
    typo = tmp_path / "typo.yaml"
    typo.write_text("leaf_oversubscription: 2000\n")
    bad = runner.invoke(main, ["verify", str(FIXTURE), *rules, "--thresholds", str(typo)])
    assert bad.exit_code == 2
    assert "typo.yaml:1:1: unknown threshold 'leaf_oversubscription'; did you mean" in bad.output
    missing = runner.invoke(main, ["verify", str(FIXTURE), *rules, "--thresholds", str(tmp_path / "nope.yaml")])
    assert missing.exit_code == 2
    # The per-inventory file next to the inventory is picked up without the option.
    shutil.copy(FIXTURE, tmp_path / "inv.yaml")
    (tmp_path / OVERRIDE_NAME).write_text("leaf_oversubscription_permille: 2000\n")
    assert runner.invoke(main, ["verify", str(tmp_path / "inv.yaml"), *rules, *fail_on]).exit_code == 0
