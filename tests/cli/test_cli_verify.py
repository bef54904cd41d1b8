"""End-to-end `topolog verify`: exit codes, golden reports, determinism, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
STRAY = "tests/golden/stray-devices.yaml"


pytestmark = pytest.mark.usefixtures("in_repo_root")


_run = run_cli


# The shipped pod carries one deliberate error (inventories/README.md): dgx03/gpu2's degraded NVSwitch
# link, which the fabric manager's default answers by taking the GPU out of NVLink (TOPO005).
CARRIES_AN_ERROR = {"dgx-h100-pod.yaml"}


@pytest.mark.parametrize("inventory", sorted(p.name for p in (ROOT / "inventories").glob("*.yaml")))
def test_shipped_inventories_pass(inventory: str) -> None:
    code, out, _ = _run("verify", f"inventories/{inventory}")
    if inventory in CARRIES_AN_ERROR:
        assert code == 1 and " (1 error, " in out and out.endswith("FAILED (--fail-on error)\n"), out
        return
    assert code == 0, out
    assert out.endswith("passed (--fail-on error)\n")


# The topology rules only, so that adding a check elsewhere does not rewrite every golden report.
TOPOLOGY_RULES = ("--no-shipped-rules", "--rules", "rules/schema.dl", "--rules", "rules/topology")


@pytest.mark.parametrize(("fmt", "golden"), [("text", "verify.txt"), ("json", "verify.json")])
def test_golden_reports(fmt: str, golden: str) -> None:
    code, out, _ = _run("verify", STRAY, "--format", fmt, *TOPOLOGY_RULES)
    assert code == 1
    assert out == (GOLDEN / golden).read_text()


def test_json_report_shape() -> None:
    _, out, _ = _run("verify", STRAY, "--format", "json")
    doc = json.loads(out)
    assert doc["schemaVersion"] == 1 and doc["failed"] is True
    assert doc["summary"]["bySeverity"] == {"error": 4, "note": 0, "warning": 0}
    assert [(f["rule"], f["subjects"][0], f["location"]["line"]) for f in doc["findings"]] == [
        ("TOPO001", "loose-gpu", 10),
        ("TOPO001", "n1/gpu0", 15),
        ("TOPO003", "stray-nic", 6),
        ("TOPO003", "loose-gpu", 10),
    ]


def test_both_engines_give_identical_reports() -> None:
    duck = _run("verify", STRAY, "--engine", "duckdb")
    ref = _run("verify", STRAY, "--engine", "pydatalog")
    assert duck == ref


def test_output_is_byte_identical_across_runs() -> None:
    assert _run("verify", STRAY, "--format", "json") == _run("verify", STRAY, "--format", "json")


WARNING_RULES = """# @id: TEST001
# @severity: warning
# @summary: A NIC exists.
# @remediation: None needed; this is a test rule.
# @reports: some_nic
# @message: NIC {nic} exists.
.decl some_nic(nic: symbol)
some_nic(N) :- object(N, "nic").
"""


def test_fail_on_threshold(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "schema.dl").write_text((ROOT / "rules" / "schema.dl").read_text())
    (rules / "nic.dl").write_text(WARNING_RULES)
    inventory = "tests/rules/fixtures/TOPO003/pass.yaml"  # one NIC, n1/nic0
    only = ("--no-shipped-rules", "--rules", str(rules))  # this one check, not the shipped pack
    code, out, _ = _run("verify", inventory, *only)
    assert code == 0 and "1 finding (0 error, 1 warning, 0 note)" in out
    assert _run("verify", inventory, *only, "--fail-on", "warning")[0] == 1
    assert _run("verify", inventory, *only, "--fail-on", "note")[0] == 1


def test_bad_inventory_is_exit_2_with_location(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: nodee\n")
    code, out, err = _run("verify", str(bad))
    assert code == 2 and out == ""
    assert f"{bad}:4:" in err and "nodee" in err and "Traceback" not in err


def test_bad_rule_is_exit_2_and_lists_every_error(tmp_path: Path) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "schema.dl").write_text((ROOT / "rules" / "schema.dl").read_text())
    (rules / "broken.dl").write_text(".decl a(x: symbol)\na(X) :- objekt(X, _).\na(Y) :- object(X, _).\n")
    code, out, err = _run("verify", "inventories/edge-soc.yaml", "--rules", str(rules))
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"error: {rules / 'broken.dl'}:2:9:") and "did you mean 'object'" in lines[0]
    assert lines[1].startswith(f"error: {rules / 'broken.dl'}:3:3:") and "'Y'" in lines[1]


def test_missing_inventory_is_exit_2() -> None:
    code, _, err = _run("verify", "no/such/file.yaml")
    assert code == 2 and "no/such/file.yaml" in err


@pytest.mark.parametrize("engine", ["duckdb", "pydatalog"])
def test_rule_that_cannot_be_evaluated_fails_closed(tmp_path: Path, engine: str) -> None:
    rules = tmp_path / "rules"
    rules.mkdir()
    (rules / "schema.dl").write_text((ROOT / "rules" / "schema.dl").read_text())
    # 2^63 - 1 + 1 overflows the 64-bit numbers every engine uses.
    (rules / "big.dl").write_text(".decl big(x: number)\nbig(T) :- object(_, _), T = 9223372036854775807 + 1.\n")
    code, out, err = _run("verify", "inventories/edge-soc.yaml", "--rules", str(rules), "--engine", engine)
    assert code == 2 and out == ""
    assert "could not be evaluated" in err and "overflow" in err.lower()


def test_progress_goes_to_stderr_only() -> None:
    import io

    from verifier.core.progress import Progress

    stream = io.StringIO()
    with Progress(stream, delay=0.0) as progress:
        import time

        deadline = time.monotonic() + 10
        while not progress.visible and time.monotonic() < deadline:
            time.sleep(0.01)  # the zero-delay timer reveals progress from its own thread
        progress.step("loading inventory")
    lines = stream.getvalue().splitlines()
    assert any(line.endswith("loading inventory") for line in lines)
    assert lines[-1].startswith("topolog: [") and "done in" in lines[-1]
    quiet = io.StringIO()
    with Progress(quiet, delay=60.0) as progress:
        progress.step("loading inventory")
    assert quiet.getvalue() == ""
