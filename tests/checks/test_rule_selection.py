"""--rules adds to the shipped pack (--no-shipped-rules replaces it); --check / --skip choose what reports.

tests/rule_selection/site/ holds one user check, SITE002, that reads `nvlink_domain`, a
relation derived by the shipped rules/topology/TOPO004_split_nvlink_node.dl, and declares nothing
of the schema. On two-domains.yaml its domains are {gpu0, gpu1, gpu2} and {gpu3, gpu4}
(named by their smallest GPU), so SITE002 (fewer than 4 GPUs) reports both; the shipped
TOPO001 reports the five GPUs, which reach no NIC: gpu0, gpu1 and gpu2 one by one (each is
wired by its own two lines of the triangle), gpu3 and gpu4 as one finding (written on one
`count:` line and wired by the one line of their bond: one root cause).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.checks.check import CheckSelection, select_checks
from verifier.core.errors import ProgramError, TopologError
from verifier.core.resources import shipped_rules_dir
from verifier.engine.rule_pack import shipped_first
from verifier.session.session import load_rules

ROOT = Path(__file__).resolve().parents[2]
HERE = "tests/rule_selection"
SITE = f"{HERE}/site"
INVENTORY = f"{HERE}/two-domains.yaml"
STRAY = "tests/golden/stray-devices.yaml"
SHIPPED_CHECKS = sum(
    1 for p in (ROOT / "rules").rglob("*.dl") for line in p.read_text().splitlines() if line.startswith("# @id:")
)
"""The checks rules/ defines, one `# @id:` line per check file; the tests below add SITE002 to them."""

SITE002 = [
    ("SITE002", ["n1/gpu0"], "NVLink domain n1/gpu0 holds 3 GPUs, fewer than 4."),
    ("SITE002", ["n1/gpu3"], "NVLink domain n1/gpu3 holds 2 GPUs, fewer than 4."),
]
_NO_NIC = "reaches no NIC over host links (PCIe, C2C, CPU interconnect)."
TOPO001 = [("TOPO001", [f"n1/gpu{i}"], f"GPU n1/gpu{i} {_NO_NIC}") for i in range(3)] + [
    ("TOPO001", ["n1/gpu3", "n1/gpu4"], f"GPU n1/gpu3, n1/gpu4 {_NO_NIC}")
]

pytestmark = pytest.mark.usefixtures("in_repo_root")


def _findings(*args: str) -> tuple[int, list[tuple[str, list[str], str]]]:
    """Exit code and the (rule, subjects, message) of each finding, sorted."""
    code, out, err = run_cli("verify", *args, "--format", "json")
    assert code in (0, 1), err
    return code, sorted((f["rule"], f["subjects"], f["message"]) for f in json.loads(out)["findings"])


def _summary(*args: str) -> tuple[int, str, str]:
    code, out, err = run_cli("verify", *args)
    return code, out.splitlines()[-1] if out else "", err


def test_user_rules_add_to_the_shipped_pack_and_read_its_derived_relations() -> None:
    code, out, err = run_cli("verify", INVENTORY, "--rules", SITE)
    assert code == 1, err
    lines = out.splitlines()
    assert sum(" TOPO001: " in ln for ln in lines) == 4
    assert sum(" SITE002: " in ln for ln in lines) == 2
    total = SHIPPED_CHECKS + 1
    assert re.fullmatch(
        rf"6 findings \(4 error, 2 warning, 0 note\) from {total} checks \(\d+ not applicable: nothing to judge\): "
        r"FAILED \(--fail-on error\)",
        lines[-1],
    )


def test_no_shipped_rules_loads_only_the_rules_named() -> None:
    code, out, err = run_cli(
        "verify",
        INVENTORY,
        "--no-shipped-rules",
        "--rules",
        "rules/schema.dl",
        "--rules",
        "rules/topology",
        "--rules",
        SITE,
    )
    assert code == 1, err
    # TOPO001..TOPO006 from rules/topology, and SITE002. The inventory promises nothing and has no
    # CPU, so TOPO004 and TOPO005 (GPUs split out of a promised domain) and TOPO006 (a device no CPU
    # reaches) have nothing to judge.
    assert out.splitlines()[-1] == (
        "6 findings (4 error, 2 warning, 0 note) from 7 checks (3 not applicable: nothing to judge): "
        "FAILED (--fail-on error)"
    )


def test_no_shipped_rules_without_the_schema_says_where_it_is() -> None:
    code, out, err = run_cli("verify", INVENTORY, "--no-shipped-rules", "--rules", SITE)
    assert code == 2 and out == ""
    assert "Traceback" not in err
    lines = [ln for ln in err.splitlines() if ln.startswith("error:")]
    # The one undeclared relation SITE002 reads is derived by a shipped file (not the schema).
    assert len(lines) == 1
    assert lines[0].startswith(f"error: {SITE}/small_domain.dl:11:") and "'nvlink_domain' is not declared" in lines[0]
    assert "rules/topology/TOPO004_split_nvlink_node.dl" in lines[0] and "rules/schema.dl" in lines[0]
    assert "drop --no-shipped-rules" in lines[0]


def test_an_undeclared_input_relation_points_at_the_shipped_schema(tmp_path: Path) -> None:
    (tmp_path / "gpus.dl").write_text('.decl gpu(g: symbol)\ngpu(G) :- object(G, "gpu").\n')
    with pytest.raises(ProgramError) as err:
        load_rules([tmp_path])
    (diag,) = err.value.diagnostics
    assert str(diag.location) == f"{tmp_path / 'gpus.dl'}:2:11"
    assert diag.message.startswith("relation 'object' is not declared")
    assert "topolog declares it in its shipped rules/schema.dl" in diag.message
    assert diag.message.endswith("or add that file with --rules rules/schema.dl")


def test_a_relation_the_shipped_pack_does_not_know_gets_no_hint(tmp_path: Path) -> None:
    (tmp_path / "x.dl").write_text(".decl a(x: symbol)\na(X) :- nothing_like_it(X).\n")
    with pytest.raises(ProgramError) as err:
        load_rules([tmp_path])
    (diag,) = err.value.diagnostics
    assert "shipped" not in diag.message


def test_a_typo_with_the_shipped_pack_loaded_gets_the_did_you_mean_only(tmp_path: Path) -> None:
    (tmp_path / "x.dl").write_text(".decl a(x: symbol)\na(X) :- objekt(X, _).\n")
    with pytest.raises(ProgramError) as err:
        load_rules(shipped_first([tmp_path]))
    (diag,) = err.value.diagnostics
    assert "did you mean 'object'" in diag.message and "shipped" not in diag.message


def test_a_copy_of_the_shipped_schema_is_loaded_once(tmp_path: Path) -> None:
    (tmp_path / "schema.dl").write_bytes((ROOT / "rules" / "schema.dl").read_bytes())
    (tmp_path / "small_domain.dl").write_bytes((ROOT / SITE / "small_domain.dl").read_bytes())
    program = load_rules(shipped_first([tmp_path]))
    files = {d.loc.file for d in program.declarations if d.name == "object"}
    assert files == {"rules/schema.dl"}  # not declared twice


def test_an_edited_copy_of_the_schema_clashes_with_the_shipped_one(tmp_path: Path) -> None:
    text = (ROOT / "rules" / "schema.dl").read_text()
    (tmp_path / "schema.dl").write_text("// my copy\n" + text)
    with pytest.raises(ProgramError) as err:
        load_rules(shipped_first([tmp_path]))
    assert any("'object' is declared twice (first at rules/schema.dl:" in d.message for d in err.value.diagnostics)


def test_a_user_check_reusing_a_shipped_id_names_both_files(tmp_path: Path) -> None:
    text = (ROOT / SITE / "small_domain.dl").read_text().replace("SITE002", "TOPO001")
    (tmp_path / "clash.dl").write_text(text)
    code, out, err = run_cli("verify", INVENTORY, "--rules", str(tmp_path))
    assert code == 2 and out == ""
    (line,) = [ln for ln in err.splitlines() if ln.startswith("error:")]
    # Reported at the user's file (loaded after the pack), naming the shipped check's file and line.
    assert line.startswith(f"error: {tmp_path / 'clash.dl'}:1:")
    assert line.endswith("check id TOPO001 is already used by rules/topology/TOPO001_gpu_without_nic.dl")


def test_naming_part_of_the_shipped_pack_notes_it_is_loaded_anyway() -> None:
    code, out, err = run_cli("verify", STRAY, "--rules", "rules/topology")
    assert code == 1
    assert "note: --rules rules/topology: part of topolog's shipped rules" in err
    assert re.search(rf"from {SHIPPED_CHECKS} checks( \(\d+ not applicable: nothing to judge\))?: FAILED", out)


def test_no_shipped_rules_needs_some_rules() -> None:
    code, _out, err = run_cli("verify", INVENTORY, "--no-shipped-rules")
    assert code == 2 and "--no-shipped-rules leaves no rules to load" in err


@pytest.mark.parametrize("command", ["verify", "diff", "query", "explain", "repl", "rules", "test"])
def test_every_command_with_rules_offers_no_shipped_rules(command: str) -> None:
    code, out, _ = run_cli(command, "--help")
    assert code == 0 and "--rules" in out and "--no-shipped-rules" in out


def test_query_sees_user_relations_next_to_shipped_ones() -> None:
    code, out, err = run_cli(
        "query", INVENTORY, "site_small_domain(D, N), nvlink_domain(D, D)", "--rules", SITE, "--format", "json"
    )
    assert code == 0, err
    doc = json.loads(out)
    assert doc["columns"] == ["D", "N"] and doc["rows"] == [["n1/gpu0", 3], ["n1/gpu3", 2]]


# ---------------------------------------------------------------- --check / --skip


def test_check_reports_only_the_checks_named() -> None:
    code, found = _findings(INVENTORY, "--rules", SITE, "--check", "SITE002")
    assert found == SITE002
    assert code == 0  # warnings only: the TOPO001 errors are not reported, so they do not fail the run


def test_a_check_reading_a_skipped_checks_relations_still_reports() -> None:
    # nvlink_domain is defined in TOPO004's file: skipping TOPO004 must not drop the relation.
    code, found = _findings(INVENTORY, "--rules", SITE, "--skip", "TOPO004", "--skip", "TOPO001")
    assert found == SITE002 and code == 0


def test_skip_leaves_out_the_checks_named() -> None:
    code, found = _findings(INVENTORY, "--rules", SITE, "--skip", "SITE002")
    assert found == TOPO001 and code == 1


def test_the_summary_counts_the_selected_checks_only() -> None:
    code, last, _ = _summary(STRAY, "--check", "TOPO003", "--check", "TOPO001")
    assert code == 1
    assert last == "4 findings (4 error, 0 warning, 0 note) from 2 checks: FAILED (--fail-on error)"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--check", "TOPO01"), "error: --check TOPO01: no check loaded has this id (did you mean TOPO001?)"),
        (("--skip", "site002"), "error: --skip site002: no check loaded has this id (did you mean SITE002?)"),
        (("--check", "SITE002", "--skip", "SITE002"), "error: --skip: these --check / --skip options leave no check"),
    ],
)
def test_an_unknown_or_empty_selection_is_exit_2(args: tuple[str, ...], message: str) -> None:
    code, out, err = run_cli("verify", INVENTORY, "--rules", SITE, *args)
    assert code == 2 and out == ""
    assert err.startswith(message) and "Traceback" not in err


def test_rules_listing_follows_the_selection() -> None:
    code, out, _ = run_cli("rules", "--rules", SITE, "--check", "SITE002", "--check", "MEM001")
    assert code == 0
    assert [ln.split("]")[0] for ln in out.splitlines() if ln.startswith("| [")] == ["| [MEM001", "| [SITE002"]
    assert "## TOPO001" not in out


def test_rules_path_prints_the_shipped_pack() -> None:
    code, out, _ = run_cli("rules", "--path")
    assert code == 0 and out == f"{shipped_rules_dir()}\n"
    assert (Path(out.strip()) / "schema.dl").is_file()


def test_select_checks() -> None:
    known = ["BW001", "TOPO001", "TOPO002"]
    assert select_checks(known) == CheckSelection()
    only = select_checks(known, only=["TOPO001"])
    assert [c for c in known if only.reports(c)] == ["TOPO001"]
    skip = select_checks(known, skip=["TOPO001"])
    assert [c for c in known if skip.reports(c)] == ["BW001", "TOPO002"]
    with pytest.raises(TopologError) as err:
        select_checks(known, only=["TOPO003", "BW001"], skip=["XYZ"])
    assert [str(d.location) for d in err.value.diagnostics] == ["--check TOPO003", "--skip XYZ"]


def test_a_rule_file_edited_between_loads_is_read_again(tmp_path: Path) -> None:
    rule = tmp_path / "site.dl"
    rule.write_text('.decl site_gpu(g: symbol)\nsite_gpu(G) :- object(G, "gpu").\n')
    first = load_rules(shipped_first([tmp_path]))
    assert load_rules(shipped_first([tmp_path])) is first  # unchanged files: the checked program is reused
    rule.write_text('.decl site_nic(n: symbol)\nsite_nic(N) :- object(N, "nic").\n')
    again = load_rules(shipped_first([tmp_path]))
    assert "site_nic" in again.relations and "site_gpu" not in again.relations
