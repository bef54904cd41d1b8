"""The NVIDIA readers (nvidia-smi -q -x, nvidia-smi nvlink -s/-e, dcgm-exporter) on real samples
(samples/*/README.md cites each) and on variants that must be refused with file:line."""

from __future__ import annotations

from datetime import UTC, datetime
from fractions import Fraction
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import dcgm, nvidia_smi_xml, nvlink_text
from verifier.sources.observed.model import exact_number, normalise_pci_bus_id
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples"
A100 = SAMPLES / "nvidia-smi-q-xml" / "a100-sxm4-v12.xml"
STATUS = SAMPLES / "nvidia-smi-nvlink" / "h100-status-published.txt"
ERRORS = SAMPLES / "nvidia-smi-nvlink" / "h100-errors-published.txt"
DCGM_README = SAMPLES / "dcgm-exporter" / "readme-quickstart.prom"
DGX03 = Path(__file__).resolve().parents[3] / "inventories" / "observed" / "dgx-h100-pod" / "dgx03"


def test_real_a100_dump_read_as_printed() -> None:
    obs = nvidia_smi_xml.read(A100.read_text(), "a100.xml", "node1")
    assert len(obs.gpus) == 1
    g = obs.gpus[0]
    # By hand from the sample: <gpu id="00000000:01:00.0"> on line 8, serial 1650522003820, uuid
    # GPU-513536b6-..., PCIe max/current gen 4/4 (device max 4), widths 16x/16x, MIG Enabled, every ECC
    # counter 0, retired pages and remapped rows N/A (unknown, not 0), gpu_util N/A, fabric N/A, no
    # clocks_event_reason Active; <timestamp>Fri Aug  4 11:44:30 2023</timestamp>, read as UTC.
    # <attached_gpus>4</attached_gpus> over the one <gpu> the sample keeps: a selection, so its position
    # is no index (None) and it proves no other GPU missing.
    assert (g.source.line, g.host, g.vendor, g.index) == (8, "node1", "nvidia", None)
    assert obs.files[0].partial
    assert (g.serial, g.uuid, g.pci_bus_id) == (
        "1650522003820",
        "GPU-513536b6-7d19-9063-b049-1e69664bb298",
        "0000:01:00.0",
    )
    assert (g.model, g.mig_mode) == ("NVIDIA A100-SXM4-80GB", "Enabled")
    assert (g.pcie_gen_current, g.pcie_gen_max, g.pcie_gen_device_max) == (4, 4, 4)
    assert (g.pcie_width_current, g.pcie_width_max) == (16, 16)
    assert (g.ecc_uncorrectable_volatile, g.ecc_uncorrectable_aggregate) == (0, 0)
    assert (g.retired_pages, g.retired_pages_pending, g.remapped_rows_pending, g.remapped_rows_failed) == (None,) * 4
    assert (g.utilization_percent, g.fabric_state, g.fabric_status, g.throttle_reasons) == (None, None, None, ())
    assert g.observed_at == datetime(2023, 8, 4, 11, 44, 30, tzinfo=UTC)
    assert [f.format for f in obs.files] == ["nvidia-smi-q-xml"] and obs.hosts == ("node1",)


def test_generated_h100_dump_fields_that_judge_health() -> None:
    obs = nvidia_smi_xml.read((DGX03 / "nvidia-smi.xml").read_text(), "x.xml", "dgx03")
    # Written for the example: 7 GPUs listed (gpu7 is the missing one); GPU 1 trained x8 of x16, GPU 6
    # has a row remapping pending, 1 aggregate uncorrectable DRAM error and gpu_idle Active (0 %).
    assert [g.index for g in obs.gpus] == list(range(7))
    assert (obs.gpus[1].pcie_width_current, obs.gpus[1].pcie_width_max) == (8, 16)
    g6 = obs.gpus[6]
    assert (g6.remapped_rows_pending, g6.remapped_rows_failed, g6.ecc_uncorrectable_aggregate) == (True, False, 1)
    assert (g6.ecc_uncorrectable_volatile, g6.utilization_percent, g6.throttle_reasons) == (0, 0, ("gpu_idle",))
    assert (g6.fabric_state, g6.fabric_status, g6.fabric_clique_id) == ("Completed", "Success", None)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        # cut after 10 lines: expat reports where the document ended
        ("\n".join(A100.read_text().splitlines()[:10]), 10, "not well-formed"),
        ('<?xml version="1.0"?>\n<gpus><gpu/></gpus>\n', 2, "expected <nvidia_smi_log>"),
        (A100.read_text().replace("<max_link_width>16x<", "<max_link_width>sixteen<"), 107, "expected a whole number"),
        (A100.read_text().replace("Fri Aug  4 11:44:30 2023", "yesterday"), 4, "expected nvidia-smi's form"),
        (
            A100.read_text().replace(
                "<remapped_rows>N/A</remapped_rows>",
                "<remapped_rows><remapped_row_pending>Maybe</remapped_row_pending></remapped_rows>",
            ),
            200,
            "expected Yes, No or N/A",
        ),
        (
            '<?xml version="1.0"?>\n<!DOCTYPE nvidia_smi_log [<!ENTITY a "x">]>\n'
            "<nvidia_smi_log>&a;</nvidia_smi_log>\n",
            2,
            "declares entity",
        ),
    ],
    ids=["truncated", "foreign-root", "bad-width", "bad-timestamp", "bad-yes-no", "entity"],
)
def test_bad_xml_refused_with_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(text, "bad.xml", "node1")
    d = err.value.diagnostics[0]
    assert (d.location.file, d.location.line) == ("bad.xml", line) and words in d.message


def test_nvlink_status_published_sample() -> None:
    obs = nvlink_text.read(STATUS.read_text(), "s.txt", "node1")
    # "Link 0: 26.562 GB/s" on line 2 and "Link 17: 26.562 GB/s" on line 3: 26,562 MB/s each, exactly.
    assert [(lk.link, lk.state, lk.speed_mbps, lk.source.line) for lk in obs.links] == [
        (0, "active", 26562, 2),
        (17, "active", 26562, 3),
    ]
    assert obs.links[0].gpu.uuid == "GPU-abcdefab-cdef-abdc-abcd-abababababab" and obs.links[0].gpu.index == 0


def test_nvlink_inactive_and_errors() -> None:
    obs = nvlink_text.read((DGX03 / "nvlink-s.txt").read_text(), "s.txt", "dgx03")
    inactive = [(lk.gpu.index, lk.link, lk.speed_mbps) for lk in obs.links if lk.state == "inactive"]
    assert inactive == [(2, 5, None), (5, 7, None), (5, 12, None)]  # as written for the example
    errors = nvlink_text.read(ERRORS.read_text(), "e.txt", "node1")
    # 3 counters for each of links 0, 1 and 17, every one 0; "Link 17: CRC Errors: 0" is line 12
    # (header, 3 lines per link, a blank line between links).
    assert len(errors.counters) == 9 and {c.value for c in errors.counters} == {0}
    last = errors.counters[-1]
    assert (last.metric, last.labels, last.source.line) == ("nvlink CRC Errors", (("link", "17"),), 12)
    assert errors.files[0].format == "nvidia-smi-nvlink-e"


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("GPU 0: NVIDIA H100 (UUID: GPU-1)\n  Link 0: 26.5625 GB/s\n", 2, "not a whole number of MB/s"),
        ("GPU 0: NVIDIA H100 (UUID: GPU-1)\n  Link 0: 26.562 GB/s\n  Link one: fast\n", 3, "expected"),
        ("hello\n", 1, "not `nvidia-smi nvlink -s`"),
    ],
)
def test_bad_nvlink_text_refused(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        nvlink_text.read(text, "n.txt", "node1")
    d = err.value.diagnostics[0]
    assert d.location.line == line and words in d.message


def test_dcgm_readme_sample_holds_nothing_judged() -> None:
    # Clocks and a memory temperature (at DCGM's blank value): no metric topolog judges.
    obs = dcgm.read(DCGM_README.read_text(), "m.prom", "node1")
    assert obs.counters == () and obs.files[0].format == "dcgm-exporter"


def test_dcgm_values_exact_and_labels_kept() -> None:
    obs = dcgm.read((DGX03 / "dcgm-exporter.prom").read_text(), "m.prom", "dgx03")
    xid = [(c.gpu.index, c.value, c.source.line) for c in obs.counters if c.metric == dcgm.XID]
    # The example's scrape: XID 95 on GPU 0 (line 3) and 13 on GPU 3 (line 6), 0 elsewhere; the memory
    # temperature at the blank sentinel is not a judged metric and is dropped.
    assert xid == [(0, 95, 3), (1, 0, 4), (2, 0, 5), (3, 13, 6), (4, 0, 7), (5, 0, 8), (6, 0, 9)]
    first = obs.counters[0]
    assert first.gpu.pci_bus_id == "0000:18:00.0" and dict(first.labels)["Hostname"] == "dgx03"
    assert not any(c.metric == "DCGM_FI_DEV_MEMORY_TEMP" for c in obs.counters)


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ('DCGM_FI_DEV_XID_ERRORS{gpu="0" 79\n', 1, "not a Prometheus sample line"),
        ('# TYPE DCGM_FI_DEV_XID_ERRORS gauge\nDCGM_FI_DEV_XID_ERRORS{gpu="0"} NaN\n', 2, "finite decimal"),
        ('DCGM_FI_DEV_XID_ERRORS{container="x"} 0\n', 1, "names no GPU"),
    ],
)
def test_bad_dcgm_refused(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        dcgm.read(text, "m.prom", "node1")
    d = err.value.diagnostics[0]
    assert d.location.line == line and words in d.message


def test_sniff_names_each_format() -> None:
    assert sniff(A100.read_text()) == "nvidia-smi-q-xml"
    assert sniff(STATUS.read_text()) == "nvidia-smi-nvlink-s"
    assert sniff(ERRORS.read_text()) == "nvidia-smi-nvlink-e"
    assert sniff(DCGM_README.read_text()) == "dcgm-exporter"
    assert sniff("hello world\n") is None


def test_exact_numbers_and_bus_ids() -> None:
    assert exact_number("26.562") == Fraction(26562, 1000) and exact_number("inf") is None
    assert normalise_pci_bus_id("00000000:1B:00.0") == "0000:1b:00.0" == normalise_pci_bus_id("1b:00.0")
    # Domains past 16 bits are Linux's too: Intel VMD's 10000:1b:00.0 as sysfs names it, and an Azure
    # VM's Hyper-V domain as nvidia-smi prints it (3E3F8E05:00:00.0, NVIDIA/nvidia-docker issue 816).
    assert normalise_pci_bus_id("00010000:1b:00.0") == "10000:1b:00.0"
    assert normalise_pci_bus_id("3E3F8E05:00:00.0") == "3e3f8e05:00:00.0"
    assert normalise_pci_bus_id("1b:00") is None and normalise_pci_bus_id("123456789:1b:00.0") is None


def _nvidia_smi_files() -> list[Path]:
    root = Path(__file__).resolve().parents[3]
    found = [*SAMPLES.rglob("*.xml"), *(root / "inventories" / "observed").rglob("*.xml")]
    found += (root / "tests" / "rules" / "fixtures").rglob("nvidia-smi.xml")
    return sorted(p for p in found if "<nvidia_smi_log" in p.read_text())


def test_fast_path_reads_as_the_located_reader() -> None:
    # The fast path (tags found in the text) and the located reader (a tree of elements) agree on
    # every sample and fixture: the shipped example, the real A100 dump, each OBS fixture.
    files = _nvidia_smi_files()
    assert len(files) >= 15
    for path in files:
        text = path.read_text()
        assert nvidia_smi_xml.read(text, str(path), "h") == nvidia_smi_xml.read_located(text, str(path), "h"), path


@pytest.mark.parametrize(
    ("tag", "value"),
    [("current_link_gen", "9" * 5000), ("current_link_gen", "9" * 20), ("remapped_row_unc", str(2**63))],
)
def test_a_number_past_64_bits_is_refused_at_its_line(tag: str, value: str) -> None:
    # dgx03's listing with one field past what a signed 64-bit count holds (2**63 - 1, 19 digits):
    # 5,000 digits was an internal error (Python will not read that many), 20 digits reached the
    # fact loader, which refused it naming no line. Both are refused at the element, the value cut.
    text = (DGX03 / "nvidia-smi.xml").read_text()
    first = text.index(f"<{tag}>")
    end = text.index(f"</{tag}>", first)
    bad = text[: first + len(tag) + 2] + value + text[end:]
    line = bad.count("\n", 0, first) + 1
    with pytest.raises(TopologError) as err:
        nvidia_smi_xml.read(bad, "dgx03.xml", "dgx03")
    shown = str(err.value)
    assert f"dgx03.xml:{line}:" in shown and f"<{tag}>" in shown and "below 2**63" in shown
    assert len(shown) < 300


def test_a_count_of_19_digits_is_read() -> None:
    text = (DGX03 / "nvidia-smi.xml").read_text()
    first = text.index("<remapped_row_unc>")
    end = text.index("</remapped_row_unc>", first)
    big = text[: first + len("<remapped_row_unc>")] + str(2**63 - 1) + text[end:]
    counts = [g.remapped_rows_uncorrectable for g in nvidia_smi_xml.read(big, "dgx03.xml", "dgx03").gpus]
    assert counts[0] == 2**63 - 1


def test_an_ecc_count_nvml_cannot_give_is_unknown_not_a_refusal() -> None:
    # nvidia-smi prints "Unknown Error" where NVML fails to give a count (a healthy RTX 4090 on R535,
    # leptonai/gpud's sample, prints it for ECC): unknown (None), as the text reader reads it, never 0
    # and never a refused file. dgx03's GPU 0 volatile section (lines 52-58) has three uncorrectable
    # counts, all 0: each written "Unknown Error", the section's count is unknown.
    text = (DGX03 / "nvidia-smi.xml").read_text()
    start = text.index("<volatile>")
    end = text.index("</volatile>", start)
    section = text[start:end]
    for tag in ("sram_uncorrectable_parity", "sram_uncorrectable_secded", "dram_uncorrectable"):
        section = section.replace(f"<{tag}>0</{tag}>", f"<{tag}>Unknown Error</{tag}>")
    odd = text[:start] + section + text[end:]
    for read in (nvidia_smi_xml.read, nvidia_smi_xml.read_located):
        gpus = read(odd, "dgx03.xml", "dgx03").gpus
        assert gpus[0].ecc_uncorrectable_volatile is None
        assert gpus[1].ecc_uncorrectable_volatile == read(text, "dgx03.xml", "dgx03").gpus[1].ecc_uncorrectable_volatile
