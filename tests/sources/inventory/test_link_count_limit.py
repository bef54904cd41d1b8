"""A link's `count` past the template_count limit is refused at its line.

The checks multiply a link's count (ports taken at a switch, bandwidth times count): the shipped
pod's leaf-spine line (`count: 2`, line 106) written as 900,000,000,000,000,000 made LINK001's
arithmetic overflow 64 bits, an error that named a rule file and no line of the inventory. The
default limit is 1,000,000 (docs/limits.md): 1,000,000 is read, one more refused.
"""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"


def _pod_with_spine_count(tmp_path: Path, count: int) -> Path:
    lines = POD.read_text().splitlines(keepends=True)
    assert lines[105].strip() == "count: 2" and lines[103].strip() == 'b: "spine{s}"'
    lines[105] = lines[105].replace("count: 2", f"count: {count}")
    path = tmp_path / "pod.yaml"
    path.write_text("".join(lines))
    return path


def test_a_link_count_past_the_limit_is_refused_at_its_line(tmp_path: Path) -> None:
    path = _pod_with_spine_count(tmp_path, 900_000_000_000_000_000)
    status, _out, err = run_cli("verify", str(path), env={"TOPOLOG_CACHE_DIR": ""})
    assert status == 2
    assert f"{path}:106:5: 'count' in link leaf{{l}} - spine{{s}} asks for 900,000,000,000,000,000 parallel" in err
    assert "template_count = 1,000,000" in err and "Traceback" not in err


def test_a_link_count_at_the_limit_is_read(tmp_path: Path) -> None:
    status, _out, err = run_cli(
        "verify", str(_pod_with_spine_count(tmp_path, 1_000_000)), env={"TOPOLOG_CACHE_DIR": ""}
    )
    assert status == 1 and "parallel links" not in err  # judged: the pod's own findings, no refusal
