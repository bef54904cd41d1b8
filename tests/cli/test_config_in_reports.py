"""A configuration file never changes a verdict silently: every report names it and what it set.

The project: a `.topolog.yaml` one folder above the working directory, and in the working
directory the stray-devices inventory with its waivers (tests/golden/waivers.yaml, copied as
the conventional topolog.waivers.yaml). The rules are the six topology checks TOPO001-TOPO006
(rules/topology holds one file each), so with a waivers file a run loads 6 + 2 = 8 checks
(WAIVER001, WAIVER002).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import jsonschema
import pytest
import xmlschema
from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[2]
REPORTS = ROOT / "tests" / "reports"
RULES = (
    "--no-shipped-rules",
    *("--rules", str(ROOT / "rules" / "schema.dl")),
    *("--rules", str(ROOT / "rules" / "topology")),
)
TOPOLOGY_IDS = ["TOPO001", "TOPO002", "TOPO003", "TOPO004", "TOPO005", "TOPO006"]

# Line 2 keeps two checks, line 3 moves the waivers' date back before the TOPO001 waiver's expiry
# (2025-05-31), which revives it.
KEEPS_TWO = 'verify:\n  check: [TOPO001, TOPO003]\n  today: "2025-05-01"\n'

ABOVE = "../.topolog.yaml (found in a folder above the working directory)"
CONFIG_LINE = f"configuration {ABOVE} sets --check TOPO001, TOPO003 (line 2), --today 2025-05-01 (line 3)"
KEPT_LINE = "configuration ../.topolog.yaml keeps 2 of 8 checks: TOPO001, TOPO003; the others are not reported"
DATE_LINE = "waivers judged on 2025-05-01 (from 'today:' in ../.topolog.yaml:3:3)"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    work = tmp_path / "work"
    work.mkdir()
    shutil.copy(ROOT / "tests" / "golden" / "stray-devices.yaml", work / "stray.yaml")
    shutil.copy(ROOT / "tests" / "golden" / "waivers.yaml", work / "topolog.waivers.yaml")
    monkeypatch.chdir(work)
    monkeypatch.delenv("TOPOLOG_TODAY", raising=False)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    return tmp_path


def _verify(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    return run_cli("verify", "stray.yaml", *RULES, *args, env=env)


def test_a_parent_configuration_that_skips_every_check_is_refused(project: Path) -> None:
    (project / ".topolog.yaml").write_text(f"verify:\n  skip: [{', '.join(TOPOLOGY_IDS)}]\n", encoding="utf-8")
    code, out, err = _verify()
    # Only WAIVER001/WAIVER002 would be left: they judge waivers, not the inventory, so every
    # inventory would pass. Refused at the file's `skip` key (line 2, column 3), saying what to do.
    assert code == 2 and out == ""
    assert err.startswith("error: ../.topolog.yaml:2:3: this check / skip leaves no check of the inventory")
    assert "--no-config" in err
    # The same selection on the command line is refused as well, named by its flag.
    code, _, err = run_cli("--no-config", "verify", "stray.yaml", *RULES, *(f"--skip={i}" for i in TOPOLOGY_IDS))
    assert code == 2 and err.startswith("error: --skip: these --check / --skip options leave no check")


def test_a_parent_configuration_that_skips_one_check_names_that_check(project: Path) -> None:
    # 8 checks are loaded: TOPO001-TOPO006 and the two waiver checks. Skipping TOPO004 keeps 7, and
    # the one left out is the shorter list to read.
    (project / ".topolog.yaml").write_text("verify:\n  skip: [TOPO004]\n", encoding="utf-8")
    _code, out, _ = _verify()
    assert "configuration ../.topolog.yaml keeps 7 of 8 checks; it leaves out TOPO004 (not reported)" in out


def test_an_unknown_id_in_the_file_is_refused_at_its_line(project: Path) -> None:
    # Line 2 of the file names TOPO010, which no rule file of rules/topology defines (TOPO001-TOPO006).
    (project / ".topolog.yaml").write_text("verify:\n  skip: [TOPO010]\n", encoding="utf-8")
    code, out, err = _verify()
    assert code == 2 and out == ""
    assert err.startswith("error: ../.topolog.yaml:2:3: skip names TOPO010: no check loaded has this id")


def test_text_names_the_file_what_it_kept_and_the_waivers_date(project: Path) -> None:
    (project / ".topolog.yaml").write_text(KEEPS_TWO, encoding="utf-8")
    code, out, _ = _verify()
    lines = out.splitlines()
    # By hand, from stray.yaml and the waivers on 2025-05-01, TOPO001 and TOPO003 only:
    # TOPO001 loose-gpu (active), TOPO001 n1/gpu0 (waived until 2025-05-31: not yet expired),
    # TOPO003 stray-nic (waived until 2030-01-01), TOPO003 loose-gpu (active): 2 errors, 2 waived.
    assert code == 1
    assert lines[-4] == "2 findings (2 error, 0 warning, 0 note, 2 waived) from 2 checks: FAILED (--fail-on error)"
    assert lines[-3:] == [CONFIG_LINE, f"warning: {KEPT_LINE}", DATE_LINE]


def test_the_date_names_where_it_came_from(project: Path) -> None:
    (project / ".topolog.yaml").write_text(KEEPS_TWO, encoding="utf-8")
    # TOPOLOG_TODAY wins over the file: on 2025-06-01 the n1/gpu0 waiver has expired (2025-05-31),
    # so TOPO001 on n1/gpu0 counts: 3 errors, 1 waived.
    code, out, _ = _verify(env={"TOPOLOG_TODAY": "2025-06-01"})
    lines = out.splitlines()
    assert code == 1 and lines[-4].startswith("3 findings (3 error, 0 warning, 0 note, 1 waived)")
    assert lines[-1] == "waivers judged on 2025-06-01 (from TOPOLOG_TODAY)"
    # Only the check selection is the file's now.
    assert lines[-3] == f"configuration {ABOVE} sets --check TOPO001, TOPO003 (line 2)"
    (project / ".topolog.yaml").write_text("verify:\n  check: [TOPO001, TOPO003]\n", encoding="utf-8")
    _, out, _ = _verify()
    assert re.fullmatch(r"waivers judged on \d{4}-\d\d-\d\d \(from the clock\)", out.splitlines()[-1])


def test_every_format_names_the_configuration(project: Path) -> None:
    (project / ".topolog.yaml").write_text(KEEPS_TWO, encoding="utf-8")
    _, out, _ = _verify("--format", "json")
    doc = json.loads(out)
    schema = json.loads(re.findall(r"```json\n(.*?)```", (ROOT / "docs" / "report-json.md").read_text(), re.S)[0])
    assert list(jsonschema.Draft7Validator(schema).iter_errors(doc)) == []
    assert doc["configuration"] == {
        "file": "../.topolog.yaml",
        "foundAbove": True,
        "settings": [
            {"option": "--check", "value": "TOPO001, TOPO003", "location": {"file": "../.topolog.yaml", "line": 2}},
            {"option": "--today", "value": "2025-05-01", "location": {"file": "../.topolog.yaml", "line": 3}},
        ],
        "checksKept": {"kept": ["TOPO001", "TOPO003"], "loaded": 8},
        "waiverDate": "2025-05-01",
        "waiverDateFrom": "'today:' in ../.topolog.yaml:3:3",
    }

    _, out, _ = _verify("--format", "sarif")
    sarif = json.loads(out)
    validator = jsonschema.Draft4Validator(json.loads((REPORTS / "sarif-schema-2.1.0.json").read_text()))
    assert list(validator.iter_errors(sarif)) == []
    notes = sarif["runs"][0]["invocations"][0]["toolConfigurationNotifications"]
    assert [(n["level"], n["message"]["text"]) for n in notes] == [
        ("note", CONFIG_LINE),
        ("warning", KEPT_LINE),
        ("note", DATE_LINE),
    ]

    _, out, _ = _verify("--format", "junit")
    assert list(xmlschema.XMLSchema10(str(REPORTS / "jenkins-junit-10.xsd")).iter_errors(out)) == []
    assert f'<property name="configuration.checksKept" value="{KEPT_LINE}" />' in out

    _, out, _ = _verify("--format", "github")
    assert out.splitlines()[0] == f"::warning title=topolog configuration::{KEPT_LINE}"

    _, out, _ = _verify("--format", "markdown")
    # Markdown escapes '_' and the like; this line has none of them.
    assert f"**Warning:** {KEPT_LINE}" in out.splitlines()

    code, _, _ = _verify("--output", "html=r.html")
    page = Path("r.html").read_text(encoding="utf-8")
    assert code == 1 and f'<p class="settings">warning: {KEPT_LINE}</p>' in page


def test_other_commands_say_which_defaults_the_file_gives(project: Path) -> None:
    (project / ".topolog.yaml").write_text("fail-on: warning\n", encoding="utf-8")
    _, _, err = run_cli("diff", "stray.yaml", "stray.yaml", *RULES)
    assert err.splitlines()[0] == (
        f"topolog: configuration {ABOVE} sets defaults for `topolog diff`: --fail-on (line 1); "
        "a flag on the command line wins"
    )
