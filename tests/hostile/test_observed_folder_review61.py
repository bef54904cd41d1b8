"""Review of 0234d36 (observation folders): a Kubernetes ConfigMap mounted as a host's folder.

kubelet writes a ConfigMap's (or Secret's) files into a hidden folder named for the time of the
write (`..2026_12_07_20_00_00.123456789`), points the link `..data` at it and makes each file a link
into `..data`; an update writes a second timed folder before it turns `..data` and removes the
first. The walk of a host's folder went into the hidden timed folders, so each file was read twice
(through its link and in its folder), and mid-update the old and new files both. dgx03's three
files read so lost its OBS002 (GPU 5's two inactive NVLinks), which the same files in a plain
folder give, and its stale nvidia-smi.xml was reported twice (OBS007).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from cli_helpers import run_cli

from verifier.sources.observed.load import observation_files

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "inventories" / "observed" / "dgx-h100-pod" / "dgx03"
INVENTORY = REPO / "inventories" / "dgx-h100-pod.yaml"
FILES = ("dcgm-exporter.prom", "nvidia-smi.xml", "nvlink-s.txt")


def _config_map(tmp_path: Path, updating: bool) -> Path:
    host = tmp_path / "observed" / "dgx03"
    now = host / "..2026_12_07_20_00_00.123456789"
    now.mkdir(parents=True)
    for name in FILES:
        shutil.copy(SHIPPED / name, now / name)
    if updating:  # the next write, not yet linked: kubelet turns ..data to it, then removes `now`
        shutil.copytree(now, host / "..2026_12_07_20_05_00.987654321")
    (host / "..data").symlink_to(now.name)
    for name in FILES:
        (host / name).symlink_to(Path("..data") / name)
    return tmp_path / "observed"


def _findings(observed: Path) -> list[tuple[str, str]]:
    code, out, err = run_cli("verify", str(INVENTORY), "--observed", str(observed), "--format", "json")
    assert code == 1, err  # dgx03's faults are errors
    return sorted((f["rule"], ",".join(f["subjects"])) for f in json.loads(out)["findings"])


def test_a_config_map_folder_lists_each_file_once(tmp_path: Path) -> None:
    root = _config_map(tmp_path, updating=True)
    # The three links in the host's folder; the two timed folders and ..data are hidden.
    assert observation_files(root) == [root / "dgx03" / name for name in FILES]


def test_a_config_map_folder_is_judged_as_a_plain_folder(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    (plain / "dgx03").mkdir(parents=True)
    for name in FILES:
        shutil.copy(SHIPPED / name, plain / "dgx03" / name)
    mounted = _config_map(tmp_path / "cm", updating=False)
    assert _findings(mounted) == _findings(plain)
    # The plain folder's findings include OBS002 of GPU 5 (nvlink-s.txt: two links inactive).
    assert any(rule == "OBS002" and "dgx03/gpu5" in subjects for rule, subjects in _findings(plain))
