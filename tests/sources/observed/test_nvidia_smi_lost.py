"""nvidia-smi's line for a GPU its driver cannot open, read as an observation of that GPU (lost), not refused.

The lines are nvidia-smi's own, as pasted in public issues:
- `Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error`: `nvidia-smi -a -i 0` (= -q) on a
  failed GPU, the whole output (https://github.com/NVIDIA/nvidia-docker/issues/1553);
- `... for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU` (https://github.com/JosephKJ/OWOD/issues/81);
- `... for GPU0000:20:00.0: Unknown Error`, no space (https://github.com/cihlab/fics-cluster-guide/issues/53);
- `... for gpu 0000:01:00.0: Not Found`, R515 open modules (https://github.com/NVIDIA/open-gpu-kernel-modules/issues/246);
- R525 prints the line and goes on with the other GPUs' reports
  (https://github.com/NVIDIA/nvidia-container-toolkit/issues/69); recent drivers print the index first
  (`GPU1: 0000:34:00.0: Unknown Error`, in 2026 pastes of a plain nvidia-smi table).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.model import GpuObservation, Observations
from verifier.sources.observed.sniff import sniff

DGX03 = Path(__file__).parent / "samples" / "nvidia-smi-q" / "dgx03-text-of-shipped-xml.txt"
ROOT = Path(__file__).resolve().parents[3]


def _read(text: str) -> Observations:
    return nvidia_smi_text.read(text, "q.txt", "node1")


def _key(g: GpuObservation) -> tuple[object, ...]:
    return (g.source.line, g.index, g.pci_bus_id, g.lost)


@pytest.mark.parametrize(
    ("line", "bus", "said"),
    [
        ("Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error", "0000:09:00.0", "Unknown Error"),
        (
            "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover "
            "this GPU",
            "0000:02:00.0",
            "GPU is lost. Reboot the system to recover this GPU",
        ),
        ("Unable to determine the device handle for GPU0000:20:00.0: Unknown Error", "0000:20:00.0", "Unknown Error"),
        ("Unable to determine the device handle for gpu 0000:01:00.0: Not Found", "0000:01:00.0", "Not Found"),
    ],
)
def test_the_line_alone_is_a_lost_gpu_of_a_file_that_proves_nothing_missing(line: str, bus: str, said: str) -> None:
    # The whole file is the line: the GPU at that bus id, index unknown (not printed), lost with NVML's
    # words; no Attached GPUs, so the file lists only some GPUs (partial) and proves no other missing.
    assert sniff(line + "\n") == "nvidia-smi-q"
    obs = _read(line + "\n")
    assert [_key(g) for g in obs.gpus] == [(1, None, bus, said)]
    assert obs.files[0].partial and obs.files[0].attached is None


def _dgx03_without(lost_line: str, drop: tuple[int, int]) -> str:
    """The dgx03 text (7 GPUs, bus ids 18, 2A, 3A, 5D, 9A, AB, BA; blocks at lines 9, 73, 137, 201, 265, 329,
    393, 64 lines each) with the block of lines drop[0]..drop[1] removed and `lost_line` first."""
    lines = DGX03.read_text().splitlines(keepends=True)
    return lost_line + "\n" + "".join(lines[: drop[0] - 1] + lines[drop[1] :])


def test_a_gpu_lost_by_bus_id_takes_its_place_in_bus_order_and_the_others_keep_theirs() -> None:
    # GPU 0000:3A:00.0 (index 2: the third in bus id order) said lost on line 1, its block (lines 137-200)
    # gone; Attached GPUs 7 = 6 blocks + 1 lost, so the file is whole. The blocks, now at lines 10, 74 and
    # (after the 64 lines removed, +1 for the line added) 138, 202, 266, 330, take indexes 0, 1, 3, 4, 5, 6.
    obs = _read(_dgx03_without("Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error", (137, 200)))
    assert [(g.source.line, g.index, g.pci_bus_id) for g in obs.gpus if g.lost is None] == [
        (10, 0, "0000:18:00.0"),
        (74, 1, "0000:2a:00.0"),
        (138, 3, "0000:5d:00.0"),
        (202, 4, "0000:9a:00.0"),
        (266, 5, "0000:ab:00.0"),
        (330, 6, "0000:ba:00.0"),
    ]
    assert [_key(g) for g in obs.gpus if g.lost] == [(1, 2, "0000:3a:00.0", "Unknown Error")]
    assert not obs.files[0].partial


def test_a_printed_index_is_the_lost_gpus_and_the_blocks_take_the_rest() -> None:
    # `GPU5: 0000:AB:00.0`: index 5 printed; the block of AB (lines 329-392) gone. Blocks: 0-4 then BA = 6.
    obs = _read(
        _dgx03_without("Unable to determine the device handle for GPU5: 0000:AB:00.0: Unknown Error", (329, 392))
    )
    assert [g.index for g in obs.gpus] == [0, 1, 2, 3, 4, 6, 5]
    assert _key(obs.gpus[-1]) == (1, 5, "0000:ab:00.0", "Unknown Error")


def test_a_lost_gpu_out_of_bus_order_leaves_every_gpu_without_an_index() -> None:
    # The blocks' own order made not bus id order (the first two swapped): the place of a GPU named only by
    # bus id is then no index, and no block's position is one either (matched by UUID or bus id only).
    text = _dgx03_without("Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error", (137, 200))
    lines = text.splitlines(keepends=True)
    # Lines 1-9: the lost line and the header; 10-73 the block of 18, 74-137 that of 2A: swapped.
    swapped = "".join(lines[:9] + lines[73:137] + lines[9:73] + lines[137:])
    obs = _read(swapped)
    assert [g.index for g in obs.gpus] == [None] * 7
    assert obs.files[0].partial


@pytest.mark.parametrize(
    ("line", "message"),
    [
        # The same GPU reported (its block at line 10 once the line is added) and said lost.
        ("Unable to determine the device handle for GPU 0000:18:00.0: Unknown Error", "q.txt:1: GPU 0000:18:00.0 is"),
        ("Unable to determine the device handle for GPU 0000:ZZ:00.0: Unknown Error", "q.txt:1: nvidia-smi could not"),
        ("Unable to determine the device handle for GPU9: 0000:3A:00.0: Unknown Error", "q.txt:1: GPU 9 is past the 7"),
    ],
)
def test_lost_lines_that_contradict_the_file_are_refused(line: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        _read(_dgx03_without(line, (137, 200)))
    assert str(err.value).startswith(message)


def test_more_gpus_than_attached_is_refused() -> None:
    # All 7 blocks kept and an eighth GPU said lost: 8 > Attached GPUs 7 (the sample's line 8, 9 once the
    # line is added: a blank line, the banner, a blank, Timestamp, Driver, CUDA, a blank, Attached GPUs).
    text = "Unable to determine the device handle for GPU 0000:CB:00.0: Unknown Error\n" + DGX03.read_text()
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith("q.txt:9: Attached GPUs says 7 but the file reports 7 GPUs and 1")


def _verify(tmp_path: Path, text: str) -> list[tuple[str, list[str]]]:
    obs = tmp_path / "obs" / "dgx03"
    obs.mkdir(parents=True)
    (obs / "nvidia-smi-q.txt").write_text(text)
    code, out, err = run_cli(
        "verify",
        str(ROOT / "inventories" / "dgx-h100-pod.yaml"),
        "--observed",
        str(tmp_path / "obs"),
        "--observed-now",
        "2026-12-06T09:00:00Z",
        "--format",
        "json",
    )
    assert code in (0, 1), err
    return sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))


def test_verify_names_the_lost_gpu_and_keeps_the_others_findings(tmp_path: Path) -> None:
    # The shipped dgx-h100-pod declares dgx03's GPUs by index only. Its text (DGX03: gpu1 at x8 of 16 ->
    # OBS001; gpu4 at Gen4 of 5 under load -> OBS001; gpu6 a pending row remapping -> OBS004; 7 of 8 GPUs,
    # gpu7 missing -> OBS006) with gpu2 (bus 3A) lost instead of reported: gpu2 is OBS004, every other
    # finding is on the same GPU as before (a position taken for an index would have moved them).
    base = _verify(tmp_path / "a", DGX03.read_text())
    lost = _verify(
        tmp_path / "b",
        _dgx03_without(
            "Unable to determine the device handle for GPU 0000:3A:00.0: GPU is lost. Reboot the system to recover "
            "this GPU",
            (137, 200),
        ),
    )
    assert base == [
        ("OBS001", ["dgx03/gpu1"]),
        ("OBS001", ["dgx03/gpu4"]),
        ("OBS004", ["dgx03/gpu6"]),
        ("OBS006", ["dgx03/gpu7"]),
    ]
    assert lost == sorted([*base, ("OBS004", ["dgx03/gpu2"])])


def test_verify_a_lost_gpu_it_cannot_name_is_an_error_of_its_node(tmp_path: Path) -> None:
    # The line alone: no index, and dgx03 declares no pci_bus_id -> OBS010 on dgx03; nothing missing.
    found = _verify(tmp_path, "Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error\n")
    assert found == [("OBS010", ["dgx03"])]


def test_reconcile_lists_the_lost_gpu(tmp_path: Path) -> None:
    # dgx03 (index-only) with gpu2 (bus 3A, index 2 in bus order) lost: reconcile says so, quoting
    # nvidia-smi's words and the file's line 1; gpu7 is still not in the listing (7 of 8 declared).
    obs = tmp_path / "obs" / "dgx03"
    obs.mkdir(parents=True)
    (obs / "nvidia-smi-q.txt").write_text(
        _dgx03_without("Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error", (137, 200))
    )
    code, out, err = run_cli(
        "reconcile", str(ROOT / "inventories" / "dgx-h100-pod.yaml"), "--observed", str(obs.parent)
    )
    assert code == 1, err
    lines = [ln for ln in out.splitlines() if ln.startswith("dgx03/")]
    assert [ln.split(":", 1)[0] for ln in lines] == ["dgx03/gpu2", "dgx03/gpu7"]
    assert lines[0].endswith(f"B lost by its driver (Unknown Error) ({obs / 'nvidia-smi-q.txt'}:1:1)")


def test_an_index_alone_is_kept_where_the_file_counts_no_gpus() -> None:
    # `GPU3: Unknown Error` alone: nvidia-smi's index 3, no bus id, no Attached GPUs to hold it against:
    # read (a partial file), not refused as past a count the file does not give.
    obs = _read("Unable to determine the device handle for GPU3: Unknown Error\n")
    assert [_key(g) for g in obs.gpus] == [(1, 3, None, "Unknown Error")]
    assert obs.files[0].partial


def test_a_message_past_any_nvml_words_is_cut() -> None:
    obs = _read("Unable to determine the device handle for GPU 0000:09:00.0: " + "x" * 5000 + "\n")
    assert obs.gpus[0].lost == "x" * 200 + "..."


DGX03_XML = ROOT / "inventories" / "observed" / "dgx-h100-pod" / "dgx03" / "nvidia-smi.xml"


def _xml_with_lost(change: tuple[str, str] = ("", "")) -> str:
    """dgx03's -q -x (7 <gpu>: 18 at line 8, 2A 92, 3A 176-259, 5D 260, 9A 344, AB 428, BA 512) without the
    <gpu> of 3A, the lost line for it first (as `nvidia-smi -q -x 2>&1` captures it): every line after +1."""
    lines = DGX03_XML.read_text().splitlines(keepends=True)
    body = "".join(lines[:175] + lines[259:]).replace(*change) if change[0] else "".join(lines[:175] + lines[259:])
    return "Unable to determine the device handle for GPU 0000:3A:00.0: Unknown Error\n" + body


def test_xml_captured_with_the_lost_line_reads_both() -> None:
    # Attached 7 = 6 <gpu> + 1 lost: whole. In bus order 3A is index 2; the others keep 0, 1, 3-6 at their
    # lines + 1 (the line added): 9, 93, 177, 261, 345, 429.
    obs = nvidia_smi_xml.read(_xml_with_lost(), "x.xml", "dgx03")
    assert [(g.source.line, g.index, g.pci_bus_id, g.lost) for g in obs.gpus] == [
        (9, 0, "0000:18:00.0", None),
        (93, 1, "0000:2a:00.0", None),
        (177, 3, "0000:5d:00.0", None),
        (261, 4, "0000:9a:00.0", None),
        (345, 5, "0000:ab:00.0", None),
        (429, 6, "0000:ba:00.0", None),
        (1, 2, "0000:3a:00.0", "Unknown Error"),
    ]
    assert not obs.files[0].partial


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # <attached_gpus> is the file's line 7 (+1): an error in the report keeps the file's numbering.
        (("<attached_gpus>7<", "<attached_gpus>x7<"), "x.xml:8:5: <attached_gpus> is 'x7'"),
        (("<attached_gpus>7<", "<attached_gpus>6<"), "x.xml:1: <attached_gpus> says 6 but the file reports 6 GPUs"),
    ],
)
def test_xml_with_the_lost_line_refuses_at_the_files_lines(change: tuple[str, str], message: str) -> None:
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(_xml_with_lost(change), "x.xml", "dgx03")
    assert str(err.value).startswith(message)


def test_text_before_the_xml_is_read_past() -> None:
    # Any other line before the document (a container's banner, nvidia-smi's WARNING on stderr): the fast
    # reader skipped it, the located one refused it; now both read the report after it, at the file's lines
    # (review R-RT: 6a0f310 refused it in both, a real capture exited 2). dgx03's 7 <gpu> from line 8 + 1.
    obs = nvidia_smi_xml.read("hello\n" + DGX03_XML.read_text(), "x.xml", "dgx03")
    assert [(g.source.line, g.index) for g in obs.gpus][:2] == [(9, 0), (93, 1)] and len(obs.gpus) == 7


def test_verify_xml_with_a_lost_gpu(tmp_path: Path) -> None:
    # As with the text: dgx03's XML findings on the same GPUs (OBS001 gpu1, gpu4; OBS004 gpu6; OBS006 gpu7),
    # plus OBS004 on gpu2, the lost one.
    obs = tmp_path / "obs" / "dgx03"
    obs.mkdir(parents=True)
    (obs / "nvidia-smi.xml").write_text(_xml_with_lost())
    code, out, err = run_cli(
        "verify",
        str(ROOT / "inventories" / "dgx-h100-pod.yaml"),
        "--observed",
        str(obs.parent),
        "--observed-now",
        "2026-12-06T09:00:00Z",
        "--format",
        "json",
    )
    assert code == 1, err
    found = sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))
    assert found == [
        ("OBS001", ["dgx03/gpu1"]),
        ("OBS001", ["dgx03/gpu4"]),
        ("OBS004", ["dgx03/gpu2"]),
        ("OBS004", ["dgx03/gpu6"]),
        ("OBS006", ["dgx03/gpu7"]),
    ]
