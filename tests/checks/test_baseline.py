"""Baselines: fingerprints that survive line moves, and `verify --baseline/--write-baseline`."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from verifier.checks.baseline import fingerprint
from verifier.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
STRAY_TEXT = (ROOT / "tests" / "golden" / "stray-devices.yaml").read_text()
TOPOLOGY = (
    "--no-shipped-rules",
    "--rules",
    str(ROOT / "rules" / "schema.dl"),
    "--rules",
    str(ROOT / "rules" / "topology"),
)
SPLIT = (ROOT / "tests" / "rules" / "fixtures" / "TOPO004" / "fail.yaml").read_text()


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)


def _verify(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["verify", *args, *TOPOLOGY])
    return result.exit_code, result.stdout, result.stderr


def _json(*args: str) -> dict[str, Any]:
    _, out, _ = _verify(*args, "--format", "json", "--no-proofs")
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_fingerprint_recipe() -> None:
    # The documented recipe (docs/report-json.md), computed independently here.
    expected = hashlib.sha256(b'["TOPO004",["n1"],[["domains","2"]]]').hexdigest()[:32]
    assert fingerprint("TOPO004", ["n1"], [("domains", "2")]) == expected
    assert fingerprint("TOPO003", ["stray-nic", "nic"]) == fingerprint("TOPO003", ["nic", "stray-nic"])
    assert fingerprint("TOPO004", ["n1"], [("domains", "2")]) != fingerprint("TOPO004", ["n1"], [("domains", "3")])
    assert fingerprint("TOPO001", ["a"]) != fingerprint("TOPO003", ["a"])


def test_fingerprints_ignore_line_moves_and_file_names(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text(STRAY_TEXT)
    moved = tmp_path / "elsewhere.yaml"
    moved.write_text("# a comment\n\n" + STRAY_TEXT.replace("objects:\n", "metadata: {name: pod}\nobjects:\n"))
    first, second = _json(str(a)), _json(str(moved))
    fps = [(f["rule"], f["fingerprint"]) for f in first["findings"]]
    assert fps == [(f["rule"], f["fingerprint"]) for f in second["findings"]]
    lines = [f["location"]["line"] for f in first["findings"]]
    assert [f["location"]["line"] for f in second["findings"]] == [n + 3 for n in lines]


def _split_findings(inv: str) -> list[dict[str, str]]:
    findings: list[dict[str, str]] = _json(inv)["findings"]
    return [f for f in findings if f["rule"] == "TOPO004"]


def test_quoted_values_are_part_of_the_fingerprint(tmp_path: Path) -> None:
    inv = tmp_path / "split.yaml"
    inv.write_text(SPLIT)
    (two,) = _split_findings(str(inv))
    # n1 cables gpu0 and gpu1 only (not gpu2 as well): its GPUs now form three domains.
    cabled = "foreach: {g: 0..2}}\n  # The same split"
    assert cabled in SPLIT
    inv.write_text(SPLIT.replace(cabled, "foreach: {g: 0..1}}\n  # The same split"))
    (three,) = _split_findings(str(inv))
    assert three["message"] == "n1 promises one NVLink domain but its GPUs form 3 domains."
    assert two["fingerprint"] == fingerprint("TOPO004", ["n1"], [("domains", "2")])
    assert three["fingerprint"] == fingerprint("TOPO004", ["n1"], [("domains", "3")])


def test_write_then_apply_baseline(tmp_path: Path) -> None:
    inv = tmp_path / "pod.yaml"
    inv.write_text(STRAY_TEXT)
    base = tmp_path / "baseline.json"
    code, _, err = _verify(str(inv), "--write-baseline", str(base))
    assert code == 1 and f"wrote 4 findings to baseline {base}" in err
    doc = json.loads(base.read_text())
    assert doc["schemaVersion"] == 1
    assert [(e["rule"], e["subjects"]) for e in doc["findings"]] == [
        ("TOPO001", ["loose-gpu"]),
        ("TOPO001", ["n1/gpu0"]),
        ("TOPO003", ["loose-gpu", "gpu"]),
        ("TOPO003", ["stray-nic", "nic"]),
    ]
    code, out, _ = _verify(str(inv), "--baseline", str(base))
    assert code == 0
    # stray-devices.yaml promises no NVLink domain and has no CPU: TOPO004, TOPO005 and TOPO006
    # have nothing to judge.
    assert out == (
        "0 findings (0 error, 0 warning, 0 note, 4 in the baseline) from 6 checks "
        "(3 not applicable: nothing to judge): passed (--fail-on error)\n"
    )

    # A new problem is reported; the known ones stay quiet even though every line moved.
    inv.write_text(
        "# moved\n"
        + STRAY_TEXT.replace(
            "      - {name: stray-nic, kind: nic}\n",
            "      - {name: stray-nic, kind: nic}\n      - {name: new-nic, kind: nic}\n",
        )
    )
    code, out, _ = _verify(str(inv), "--baseline", str(base))
    assert code == 1
    assert out.splitlines() == [
        f"{inv}:8:9: error TOPO003: nic new-nic is not inside any node. [new-nic, nic]",
        "1 finding (1 error, 0 warning, 0 note, 4 in the baseline) from 6 checks (3 not applicable: nothing to judge): "
        "FAILED (--fail-on error)",
    ]


def test_fixed_baseline_entries_are_counted(tmp_path: Path) -> None:
    inv = tmp_path / "pod.yaml"
    inv.write_text(STRAY_TEXT)
    base = tmp_path / "baseline.json"
    _verify(str(inv), "--write-baseline", str(base))
    inv.write_text(STRAY_TEXT.replace("      - {name: stray-nic, kind: nic}\n", ""))
    code, out, _ = _verify(str(inv), "--baseline", str(base))
    assert code == 0
    assert "1 baseline entries no longer occur" in out and "3 in the baseline" in out


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ('{"schemaVersion": 1,\n "findings": [}\n', ":2:15:", "not valid JSON"),
        ('{"schemaVersion": 1,\n "findings": [\n  {"rule": "TOPO001"}\n]}\n', ":3:3:", "without a 'fingerprint'"),
        ('{"schemaVersion": 7, "findings": []}\n', ":1:2:", "schemaVersion 7 is not 1"),
        # Valid JSON that is no object: named as a baseline, not as an inventory.
        ("[1]\n", ":1:1:", "top level is not a mapping; expected a baseline written by `topolog verify"),
    ],
)
def test_bad_baseline_is_exit_2_with_location(tmp_path: Path, text: str, where: str, expected: str) -> None:
    base = tmp_path / "b.json"
    base.write_text(text)
    code, out, err = _verify(str(ROOT / "tests" / "golden" / "stray-devices.yaml"), "--baseline", str(base))
    assert code == 2 and out == ""
    assert f"{base}{where}" in err and expected in err


def test_waived_findings_are_not_written_to_the_baseline(tmp_path: Path) -> None:
    inv = tmp_path / "pod.yaml"
    inv.write_text(STRAY_TEXT)
    waivers = tmp_path / "w.yaml"
    waivers.write_text('waivers:\n  - {rule: TOPO001, subject: "*", reason: re-cabling, expires: 2030-01-01}\n')
    base = tmp_path / "b.json"
    _verify(str(inv), "--waivers", str(waivers), "--today", "2025-01-01", "--write-baseline", str(base))
    assert [e["rule"] for e in json.loads(base.read_text())["findings"]] == ["TOPO003", "TOPO003"]
