"""`nvidia-smi -q` (plain text) on real samples (samples/nvidia-smi-q/README.md cites each), against the
`-q -x` reader on the same GPUs, end to end through `verify --observed`, and on variants that must be
refused with their file:line."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_text, nvidia_smi_xml
from verifier.sources.observed.model import GpuObservation
from verifier.sources.observed.sniff import sniff

ROOT = Path(__file__).resolve().parents[3]
SAMPLES = Path(__file__).parent / "samples"
H100 = SAMPLES / "nvidia-smi-q" / "h100-8gpu-565-first2.txt"
RTX4090 = SAMPLES / "nvidia-smi-q" / "rtx4090-8gpu-535-first1.txt"
DGX03_TEXT = SAMPLES / "nvidia-smi-q" / "dgx03-text-of-shipped-xml.txt"
OBS = ROOT / "inventories" / "observed" / "dgx-h100-pod"
DGX03_XML = OBS / "dgx03" / "nvidia-smi.xml"


def _read(text: str) -> tuple[GpuObservation, ...]:
    return nvidia_smi_text.read(text, "q.txt", "node1").gpus


def test_real_h100_565_read_as_printed() -> None:
    obs = nvidia_smi_text.read(H100.read_text(), "h100.txt", "node1")
    # By hand from the sample: the banner is line 2, "Timestamp : Thu Nov 14 07:00:14 2024" (read as
    # UTC), "Attached GPUs : 8" but the file (cut to the first two) lists 2: their positions are not
    # nvidia-smi's indexes of an 8-GPU listing (None) and the file is partial (not a full listing).
    # "GPU 00000000:18:00.0" on line 9, "GPU 00000000:2A:00.0" on line 233 (9 + 222 lines of block 0,
    # its blank line, then the header). Each: Product Name NVIDIA H100 80GB HBM3, PCIe Generation
    # Max/Current/Device Max 5/5/5, Link Width Max/Current 16x/16x, every SRAM/DRAM Uncorrectable count
    # 0 (volatile and aggregate: 0 + 0 + 0 = 0), Retired Pages all N/A (unknown), Remapped Rows 0
    # uncorrectable, Pending No, Failure No; Clocks Event Reasons: only Idle Active (the XML's
    # gpu_idle); MIG Current Disabled; Utilization Gpu 0 %; Fabric Completed / Success / CliqueId 0 /
    # ClusterUUID all zeros.
    assert [g.source.line for g in obs.gpus] == [9, 233]
    assert [g.index for g in obs.gpus] == [None, None]
    assert obs.files[0].partial and obs.files[0].format == "nvidia-smi-q"
    assert obs.files[0].observed_at == datetime(2024, 11, 14, 7, 0, 14, tzinfo=UTC)
    g0, g1 = obs.gpus
    assert (g0.pci_bus_id, g0.serial, g0.uuid) == (
        "0000:18:00.0",
        "1654423001593",
        "GPU-b42dd28e-ffdd-8720-1df0-98bd8cdc05b1",
    )
    assert (g1.pci_bus_id, g1.serial, g1.uuid) == (
        "0000:2a:00.0",
        "1654223054577",
        "GPU-7c3cadbd-17e5-0913-f69b-c618122ea0cd",
    )
    for g in obs.gpus:
        assert (g.model, g.vendor, g.host, g.mig_mode) == ("NVIDIA H100 80GB HBM3", "nvidia", "node1", "Disabled")
        assert (g.pcie_gen_current, g.pcie_gen_max, g.pcie_gen_device_max) == (5, 5, 5)
        assert (g.pcie_width_current, g.pcie_width_max) == (16, 16)
        assert (g.ecc_uncorrectable_volatile, g.ecc_uncorrectable_aggregate) == (0, 0)
        assert (g.retired_pages, g.retired_pages_pending) == (None, None)
        assert (g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.remapped_rows_failed) == (0, False, False)
        assert (g.throttle_reasons, g.utilization_percent) == (("gpu_idle",), 0)
        assert (g.fabric_state, g.fabric_status, g.fabric_clique_id) == ("Completed", "Success", "0")
        assert g.fabric_cluster_uuid == "00000000-0000-0000-0000-000000000000"


def test_real_rtx4090_535_unknowns_stay_unknown() -> None:
    (g,) = _read(RTX4090.read_text())
    # By hand: "GPU 00000000:01:00.0" on line 8 (banner 1, Timestamp 3, Attached GPUs 7); Serial
    # Number N/A -> None; "Addressing Mode : Unknown Error" is not read; PCIe Gen Max 4, Current 1
    # (idle downshift: Idle is Active, Gpu 0 %), Device Max 4; Link Width 16x/16x; ECC Disabled, so
    # every SRAM/DRAM Uncorrectable (the one-word R535 spelling) is N/A -> None, never 0; Remapped
    # Rows 0 / No / No; Fabric State and Status N/A -> None; the Processes section (a Process ID with
    # its Type, Name and memory under it) is not read.
    assert (g.source.line, g.index, g.serial, g.pci_bus_id) == (8, None, None, "0000:01:00.0")
    assert (g.uuid, g.model) == ("GPU-6b7298f4-721f-9e24-a277-9ec909ba76f0", "NVIDIA GeForce RTX 4090")
    assert (g.pcie_gen_current, g.pcie_gen_max, g.pcie_gen_device_max) == (1, 4, 4)
    assert (g.ecc_uncorrectable_volatile, g.ecc_uncorrectable_aggregate) == (None, None)
    assert (g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.remapped_rows_failed) == (0, False, False)
    assert (g.fabric_state, g.fabric_status, g.mig_mode, g.throttle_reasons) == (None, None, None, ("gpu_idle",))


def test_text_and_xml_of_one_machine_agree() -> None:
    # dgx03-text-of-shipped-xml.txt is the shipped dgx03 nvidia-smi.xml written in the -q layout of the
    # real 565.57.01 sample, value for value (README). Every GPU observation is the same but for where
    # it was read (file:line), and both files list all 7 attached GPUs (indexes 0-6).
    text = nvidia_smi_text.read(DGX03_TEXT.read_text(), "t", "dgx03")
    xml = nvidia_smi_xml.read(DGX03_XML.read_text(), "x", "dgx03")
    assert len(text.gpus) == len(xml.gpus) == 7
    for t, x in zip(text.gpus, xml.gpus, strict=True):
        assert dataclasses.replace(t, source=x.source) == x
    assert [g.index for g in text.gpus] == list(range(7))
    assert not text.files[0].partial and text.files[0].observed_at == xml.files[0].observed_at


def _findings(folder: Path, *extra: str) -> list[tuple[str, str, list[str], str]]:
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories" / "dgx-h100-pod.yaml"), "--observed", str(folder),
        "--observed-now", "2026-12-06T09:00:00Z", "--format", "json", *extra,
    )  # fmt: skip
    assert code == 1, err
    listing = re.compile(r"<obs>/dgx03/nvidia-smi(?:\.xml|-q\.txt)(?::\d+(?::\d+)?)?")
    return sorted(
        (f["rule"], f["severity"], f["subjects"], listing.sub("<listing>", f["message"].replace(str(folder), "<obs>")))
        for f in json.loads(out)["findings"]
    )


def test_verify_with_the_text_form_finds_what_the_xml_finds(tmp_path: Path) -> None:
    # The shipped observation set twice: as shipped, and with dgx03's XML replaced by its -q text.
    # tests/cli/test_cli_observed.py derives the findings by hand (gpu7 missing: OBS006, gpu6 row
    # remapping pending: OBS004, gpu1 x8 and gpu4 Gen4 under load: OBS001, ...); the text form must give
    # each of them, with the same subjects and messages but for the file named.
    as_xml, as_text = tmp_path / "xml", tmp_path / "text"
    shutil.copytree(OBS, as_xml)
    shutil.copytree(OBS, as_text)
    (as_text / "dgx03" / "nvidia-smi.xml").unlink()
    shutil.copy(DGX03_TEXT, as_text / "dgx03" / "nvidia-smi-q.txt")
    xml_found, text_found = _findings(as_xml), _findings(as_text)
    assert text_found == xml_found
    rules = [(rule, subjects) for rule, _, subjects, _ in text_found]
    assert ("OBS006", ["dgx03/gpu7"]) in rules and ("OBS004", ["dgx03/gpu6"]) in rules
    assert ("OBS001", ["dgx03/gpu1"]) in rules and ("OBS001", ["dgx03/gpu4"]) in rules


def test_a_selection_of_gpus_is_no_listing(tmp_path: Path) -> None:
    # `nvidia-smi -q -i ...`: "Attached GPUs : 8" over the 7 blocks the file holds. gpu7 is not in it,
    # but a selection says nothing of the GPUs it leaves out: no OBS006 (the full listing above has it).
    # Nor are the blocks' positions nvidia-smi's indexes, and the pod declares its GPUs by position only
    # (no UUID, serial or bus id): none of the 7 is matched, never one taken for the wrong GPU (no OBS004
    # for gpu6 from another GPU's pending remapping). The one cause is one warning, OBS009 for dgx03 (7
    # shown of 8 attached), not an OBS005 for each of the 7 unmatched GPUs.
    folder = tmp_path / "obs"
    shutil.copytree(OBS, folder)
    (folder / "dgx03" / "nvidia-smi.xml").unlink()
    text = DGX03_TEXT.read_text().replace("Attached GPUs                             : 7", "Attached GPUs  : 8")
    (folder / "dgx03" / "nvidia-smi-q.txt").write_text(text)
    rules = [(rule, subjects) for rule, _, subjects, _ in _findings(folder)]
    assert ("OBS006", ["dgx03/gpu7"]) not in rules and ("OBS004", ["dgx03/gpu6"]) not in rules
    assert rules.count(("OBS005", ["dgx03"])) == 0
    assert rules.count(("OBS009", ["dgx03"])) == 1


def test_older_spellings_read_as_the_xml_reader_reads_them() -> None:
    # Drivers before R535 print "Clocks Throttle Reasons" (as in NVIDIA/dcgm-exporter issue 16), before
    # R470 the ECC counts as "Single Bit"/"Double Bit" sections with a Total (as in arrayfire/arrayfire
    # issue 1459, and "Double Bit" followed by trailing spaces in dcgm-exporter issue 16), retired pages
    # pending as "Pending : No". Layouts from those published outputs; counts chosen to tell the
    # sections apart: volatile Double Bit Total 2 (Device Memory 2 + others 0), aggregate 5; Single Bit
    # ECC 3 + Double Bit ECC 1 retired pages = 4; SW Power Cap and HW Thermal Slowdown Active.
    old = """==============NVSMI LOG==============

Timestamp                           : Tue Aug 14 17:01:49 2018
Driver Version                      : 390.77

Attached GPUs                       : 1
GPU 00000000:00:1E.0
    Product Name                    : Tesla K80
    Clocks Throttle Reasons
        Idle                        : Not Active
        SW Power Cap                : Active
        HW Slowdown                 : Not Active
            HW Thermal Slowdown     : Active
        Unknown                     : Not Active
    Utilization
        Gpu                         : 100 %
    ECC Errors
        Volatile
            Single Bit<TRAIL>
                Device Memory       : 7
                Total               : 7
            Double Bit<TRAIL>
                Device Memory       : 2
                Register File       : 0
                Total               : 2
        Aggregate
            Single Bit<TRAIL>
                Total               : 9
            Double Bit<TRAIL>
                Total               : 5
    Retired Pages
        Single Bit ECC              : 3
        Double Bit ECC              : 1
        Pending                     : No
""".replace("<TRAIL>", " " * 12)
    (g,) = _read(old)
    assert (g.index, g.model, g.pci_bus_id, g.utilization_percent) == (0, "Tesla K80", "0000:00:1e.0", 100)
    assert g.throttle_reasons == ("hw_thermal_slowdown", "sw_power_cap")
    assert (g.ecc_uncorrectable_volatile, g.ecc_uncorrectable_aggregate) == (2, 5)
    assert (g.retired_pages, g.retired_pages_pending) == (4, False)
    assert (g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.fabric_state) == (None, None, None)


def test_unknown_values_are_none_never_zero() -> None:
    # `nvidia-smi -q -d ECC,ROW_REMAPPER` on a GPU whose ECC state the driver cannot read (values as a
    # published 550.90.07 runbook shows them): ECC counts N/A, mode "Unknown Error"; the remapper
    # still answers. Bracketed NVML messages ([Not Supported], [GPU requires reset]) are unknown too.
    text = H100.read_text()
    text = text.replace("DRAM Uncorrectable            : 0", "DRAM Uncorrectable            : Unknown Error")
    text = text.replace("SRAM Uncorrectable Parity     : 0", "SRAM Uncorrectable Parity     : [Not Supported]")
    text = text.replace("SRAM Uncorrectable SEC-DED    : 0", "SRAM Uncorrectable SEC-DED    : N/A")
    text = text.replace(
        "Gpu                               : 0 %", "Gpu                               : [GPU requires reset]"
    )
    g0, _ = _read(text)
    assert (g0.ecc_uncorrectable_volatile, g0.ecc_uncorrectable_aggregate, g0.utilization_percent) == (None, None, None)


def test_fabric_failure_kept_as_printed() -> None:
    # A GPU the fabric manager registered but did not take: "State : Completed" with a failure Status
    # (the shape Azure/azhpc-images pull request 506 quotes: "Status : Insufficient Resources"). An NVML
    # error as the Status ("Unknown Error") is that failure too, not an unknown: both kept, as the XML
    # reader keeps them (rules/observed/lib/out_of_service.dl takes the GPU out of service for either).
    for status in ("Insufficient Resources", "Unknown Error"):
        g0, g1 = _read(
            _swap("Status                            : Success", f"Status                            : {status}")
        )
        assert (g0.fabric_state, g0.fabric_status, g1.fabric_status) == ("Completed", status, "Success")
    g0, _ = _read(_swap("Status                            : Success", "Status                            : N/A"))
    assert g0.fabric_status is None


def test_filtered_query_reads_what_it_prints() -> None:
    # -q -d ECC,ROW_REMAPPER -i 52:00.0 (the layout of a published 550.90.07 runbook): one GPU of 8, no
    # product name or PCI section (None), the bus id from its header; 1 uncorrectable row, pending Yes.
    text = """
==============NVSMI LOG==============

Timestamp                                 : Fri Oct 24 11:07:12 2025
Driver Version                            : 550.90.07
CUDA Version                              : 12.4

Attached GPUs                             : 8
GPU 00000000:52:00.0
    ECC Mode
        Current                           : Unknown Error
        Pending                           : Unknown Error
    ECC Errors
        Volatile
            SRAM Correctable              : N/A
            SRAM Uncorrectable Parity     : N/A
            SRAM Uncorrectable SEC-DED    : N/A
            DRAM Correctable              : N/A
            DRAM Uncorrectable            : N/A
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 1
        Pending                           : Yes
        Remapping Failure Occurred        : No
"""
    obs = nvidia_smi_text.read(text, "q.txt", "node1")
    (g,) = obs.gpus
    assert (g.pci_bus_id, g.model, g.index, g.ecc_uncorrectable_volatile) == ("0000:52:00.0", None, None, None)
    assert (g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.remapped_rows_failed) == (1, True, False)
    assert obs.files[0].partial


def _swap(old: str, new: str) -> str:
    text = H100.read_text()
    assert old in text
    return text.replace(old, new, 1)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # lines counted in the sample: Timestamp 4, Attached GPUs 8, GPU 0's header 9, its Product Name
        # 10 and Brand 11, Link Width Max 81, Utilization Gpu 120, Remapped Rows Pending 164, GPU 1's
        # header 233; the file is 456 lines, so what is appended starts on line 457 (a blank line first)
        (_swap("Max                       : 16x", "Max                       : 16"), 81, "like 16x"),
        (
            _swap("Gpu                               : 0 %", "Gpu                               : 0 MHz"),
            120,
            "like 95 %",
        ),
        (
            _swap("Pending                           : No", "Pending                           : No    <==="),
            164,
            "expected Yes or No",
        ),
        (_swap("Thu Nov 14 07:00:14 2024", "yesterday"), 4, "expected nvidia-smi's time"),
        (_swap("Attached GPUs                             : 8", "Attached GPUs : 1"), 8, "says 1 but the file lists 2"),
        (_swap("    Product Name ", "   Product Name "), 10, "indented by 3 spaces"),
        (_swap("    Product Name ", "\tProduct Name "), 10, "a tab"),
        (_swap("    Product Brand ", "            Product Brand "), 11, "2 levels below"),
        (_swap("    Product Brand ", "    [...]\n    Product Brand "), 11, "not a line of nvidia-smi -q"),
        (H100.read_text() + "\n$ nvidia-smi\n", 458, "not a line of nvidia-smi -q"),
        (H100.read_text() + H100.read_text(), 458, "a second NVSMI LOG"),
        (_swap("GPU 00000000:2A:00.0", "GPU 00000000:2Z:00.0"), 233, "not a line of nvidia-smi -q"),
    ],
    ids=[
        "width-unit",
        "percent-unit",
        "annotated",
        "timestamp",
        "attached",
        "odd-indent",
        "tab",
        "too-deep",
        "elided",
        "prompt",
        "two-runs",
        "bad-bus-id",
    ],
)
def test_bad_text_refused_with_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        nvidia_smi_text.read(text, "bad.txt", "node1")
    d = err.value.diagnostics[0]
    assert (d.location.file, d.location.line) == ("bad.txt", line), d.message
    assert words in d.message


def test_sniffed_from_its_first_characters() -> None:
    text = H100.read_text()
    assert sniff(text) == "nvidia-smi-q"
    # pasted without the banner: it starts at the Timestamp line
    assert sniff(text[text.index("Timestamp") :]) == "nvidia-smi-q"
    assert sniff(DGX03_XML.read_text()) == "nvidia-smi-q-xml"
    assert sniff("Timestamps are in UTC\n") is None


def test_host_is_required() -> None:
    with pytest.raises(TopologError) as err:
        nvidia_smi_text.read(H100.read_text(), "q.txt", None)
    assert err.value.diagnostics[0].location.line == 1
