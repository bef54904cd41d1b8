"""RT2 (round 16): an nvidia-smi listing renumbered from 0 (device minor numbers past its count) fails closed.

nvidia-smi numbers the GPUs it sees 0..n-1 while the driver keeps each GPU's minor number (/dev/nvidiaN): a host
whose driver dropped a GPU (fallen off the bus, RmInitAdapter failed: microsoft/pai#4344) and a container given
some of the host's GPUs both print minor numbers at or above the count, and the file cannot tell which. On a node
that declares GPU indexes only, 83c359fc made every GPU of such a listing unmatched (OBS005 warnings) and review
R-RT added one OBS009 warning: a GPU fallen off the bus, and every fault reported on the others, passed. Now:
- fewer GPUs shown than declared, not all tied by uuid, serial or bus id: one OBS014 error for the node, naming the
  minor numbers, the gaps in their sequence and the faults reported on the untied GPUs; placement takes none of
  the node's GPUs;
- as many shown as declared: matched by position, as before minor numbers were read (the base).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from cli_helpers import run_cli

ROOT = Path(__file__).resolve().parents[3]
POD = ROOT / "inventories" / "dgx-h100-pod.yaml"
POD_OBS = ROOT / "inventories" / "observed" / "dgx-h100-pod"
NOW = ("--observed-now", "2026-12-06T09:00:00Z")


def _findings(inv: Path, obs: Path) -> tuple[int, list[dict[str, object]]]:
    code, out, err = run_cli("verify", str(inv), "--observed", str(obs), "--format", "json", *NOW)
    assert code in (0, 1), err
    return code, [f for f in json.loads(out)["findings"] if str(f["rule"]).startswith("OBS")]


def test_a_gpu_dropped_from_the_shipped_pod_is_an_error(tmp_path: Path) -> None:
    # The shipped dgx03 (indexes only declared) lists 7 <gpu> with minor numbers 0-6, Attached 7. GPU 2's block
    # (bus 3A, minor 2) removed and Attached set to 6, as after the driver dropped it: minors 0, 1, 3, 4, 5, 6,
    # 6 >= 6, so nvidia-smi's positions are not the host's; 6 shown < 8 declared, none tied by a key.
    obs = tmp_path / "obs"
    shutil.copytree(POD_OBS, obs)
    xml = obs / "dgx03" / "nvidia-smi.xml"
    text = xml.read_text()
    start = text.index('    <gpu id="00000000:3A:00.0">')
    end = text.index("    <gpu id=", start + 1)
    text = text[:start] + text[end:]
    xml.write_text(text.replace("<attached_gpus>7</attached_gpus>", "<attached_gpus>6</attached_gpus>"))
    code, found = _findings(POD, obs)
    on_dgx03 = [f for f in found if any(str(s).startswith("dgx03") for s in f["subjects"])]  # type: ignore[attr-defined]
    obs014 = [f for f in on_dgx03 if f["rule"] == "OBS014"]
    assert code == 1 and len(obs014) == 1 and obs014[0]["severity"] == "error" and obs014[0]["subjects"] == ["dgx03"]
    message = str(obs014[0]["message"])
    assert "shows 6 of the 8 GPUs dgx03 declares" in message
    assert "device minor numbers 0, 1, 3, 4, 5, 6 (missing from their sequence: 2)" in message
    # The faults the base reported by (wrong) position and 83c359fc dropped: the pending row remapping of the block
    # at minor 6 (bus BA, the shipped file's 7th block, <remapped_row_pending>Yes) and dcgm-exporter's XID 95 on
    # the GPU at minor 0 (bus 18, tied through its UUID label to the listing's first block).
    assert "/dev/nvidia6 (0000:ba:00.0): a row remapping is pending" in message
    assert "/dev/nvidia0 (0000:18:00.0): XID 95" in message
    # No per-GPU verdict on dgx03 by position (base: OBS004 gpu0 and gpu5, OBS001 x2, OBS006 gpu6 and gpu7).
    assert not [f for f in on_dgx03 if f["rule"] in ("OBS001", "OBS004", "OBS006", "OBS009")]


def _two_gpu_node(tmp_path: Path, minors: tuple[int, int], attached: int, state: str = "") -> tuple[Path, Path]:
    # n1 declares gpu0, gpu1 by index only. The listing (nvidia-smi -q) shows two GPUs with the given minor
    # numbers, the second with a row remapping pending.
    inv = tmp_path / "inv.yaml"
    inv.write_text(
        "apiVersion: topolog.dev/v1\nobjects:\n  - name: n1\n    kind: node\n" + state + "    children:\n"
        "      - {name: gpu0, kind: gpu, labels: {index: '0'}}\n      - {name: gpu1, kind: gpu, labels: {index: '1'}}\n"
    )
    lines = ["==============NVSMI LOG==============", "", "Driver Version                            : 535.129.03", "",
             f"Attached GPUs                             : {attached}"]  # fmt: skip
    for minor, pending in zip(minors, ("No", "Yes"), strict=True):
        lines += [
            f"GPU 00000000:{0x18 + minor:02X}:00.0",
            f"    Minor Number                          : {minor}",
            "    Remapped Rows",
            f"        Pending                           : {pending}",
        ]
    folder = tmp_path / "obs" / "n1"
    folder.mkdir(parents=True)
    (folder / "nvidia-smi-q.txt").write_text("\n".join(lines) + "\n")
    return inv, tmp_path / "obs"


def test_a_renumbered_listing_of_all_declared_gpus_is_matched_by_position(tmp_path: Path) -> None:
    # Minors 5, 6 with Attached 2 (6 >= 2: renumbered), 2 shown of 2 declared: a host that excludes its other GPUs
    # for good and declares the two it uses. By position the second block is gpu1: OBS004 there, nothing else
    # (83c359fc: two OBS005 warnings and the pending remapping judged nowhere).
    inv, obs = _two_gpu_node(tmp_path, (5, 6), 2)
    _, found = _findings(inv, obs)
    assert [(f["rule"], f["subjects"]) for f in found] == [("OBS004", ["n1/gpu1"])]


def test_one_gpu_of_two_shown_renumbered_is_obs014_and_drains_the_node(tmp_path: Path) -> None:
    # One block only (minor 1, Attached 1: 1 >= 1), of 2 declared by index: OBS014; a 1-GPU job finds no GPU on
    # n1 (fail closed: which declared GPU is gone is not known).
    inv, obs = _two_gpu_node(tmp_path, (1, 9), 1)
    text = (obs / "n1" / "nvidia-smi-q.txt").read_text()
    (obs / "n1" / "nvidia-smi-q.txt").write_text(text[: text.index("GPU 00000000:21:00.0")])
    _, found = _findings(inv, obs)
    assert [(f["rule"], f["subjects"]) for f in found] == [("OBS014", ["n1"])]
    assert "device minor numbers 1 (missing from their sequence: 0)" in str(found[0]["message"])
    assert "faults reported on them: none" in str(found[0]["message"])
    jobs = tmp_path / "jobs.yaml"
    jobs.write_text(
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        "  - {name: one, principal: research, gpus: 1, topology: {scope: node}}\n"
    )
    code, out, err = run_cli(
        "place", str(inv), str(jobs), "--observed", str(obs), *NOW, "--no-authorization", "--format", "json"
    )
    assert code in (0, 1), err
    assert {j["job"]: j["placements"] for j in json.loads(out)["jobs"]} == {"one": []}


def test_a_node_declared_down_is_left_to_its_declaration(tmp_path: Path) -> None:
    inv, obs = _two_gpu_node(tmp_path, (5, 6), 1, state="    state: down\n")
    text = (obs / "n1" / "nvidia-smi-q.txt").read_text()
    (obs / "n1" / "nvidia-smi-q.txt").write_text(re.sub(r"GPU 00000000:1E:00.0.*", "", text, flags=re.S))
    _, found = _findings(inv, obs)
    assert [f["rule"] for f in found if f["rule"] == "OBS014"] == []
