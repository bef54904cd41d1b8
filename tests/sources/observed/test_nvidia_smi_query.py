"""`nvidia-smi --query-gpu=... --format=csv`: real samples (samples/nvidia-smi-query/README.md cites each), the
fields read, what is refused at its line, and one verify run end to end. Base topolog refuses every such file
("not a format topolog reads observations from"), so each test here fails on it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_query
from verifier.sources.observed.model import Observations
from verifier.sources.observed.sniff import sniff

SAMPLES = Path(__file__).parent / "samples"
QUERY = SAMPLES / "nvidia-smi-query"
ROOT = Path(__file__).resolve().parents[3]


def _read(text: str, host: str = "h") -> Observations:
    return nvidia_smi_query.read(text, "q.csv", host)


def test_mlperf_l40s_sample() -> None:
    # 8 rows `i, 1, 4, 16, 16` (index, gen current, gen max, width current, width max), lines 2-9.
    text = (QUERY / "mlperf-l40s-pcie.csv").read_text()
    assert sniff(text) == nvidia_smi_query.FORMAT
    obs = _read(text)
    got = [
        (g.index, g.pcie_gen_current, g.pcie_gen_max, g.pcie_width_current, g.pcie_width_max, g.source.line)
        for g in obs.gpus
    ]
    assert got == [(i, 1, 4, 16, 16, i + 2) for i in range(8)]
    (file,) = obs.files
    assert (file.format, file.host, file.partial, file.attached, file.driver) == (
        "nvidia-smi-query-gpu",
        "h",
        False,
        None,
        None,
    )


def test_duct_sample_units_and_driver() -> None:
    # `0, NVIDIA RTX A5500 Laptop GPU, 00000000:01:00.0, 535.183.01, 16384 MiB, Default`: memory.total and
    # compute_mode are not read; the bus id normalised to 4 hex digits of domain.
    obs = _read((QUERY / "duct-a5500.csv").read_text())
    (gpu,) = obs.gpus
    assert (gpu.index, gpu.pci_bus_id, gpu.model, gpu.uuid) == (0, "0000:01:00.0", "NVIDIA RTX A5500 Laptop GPU", None)
    assert obs.files[0].driver == "535.183.01"


def test_nuxhash_sample_uuid_and_index() -> None:
    # `name, pci.bus, index, uuid`: pci.bus (a bus number alone) is not read; index and UUID are.
    obs = _read((QUERY / "nuxhash-gtx1060.csv").read_text())
    assert [(g.index, g.uuid, g.model) for g in obs.gpus][1] == (
        1,
        "GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1",
        "GeForce GTX 1080 Ti",
    )
    assert [g.pci_bus_id for g in obs.gpus] == [None] * 5


def test_log_that_names_no_gpu_is_refused_at_its_header() -> None:
    with pytest.raises(TopologError, match=r"q.csv:1: the query names no GPU by index, uuid, serial or pci.bus_id"):
        _read((QUERY / "blog-a10-log-no-identity.csv").read_text())


HEADER = (
    "timestamp, index, uuid, pci.bus_id, count, driver_version, pcie.link.gen.current, pcie.link.gen.max, "
    "pcie.link.width.current, pcie.link.width.max, utilization.gpu [%], clocks_throttle_reasons.active, "
    "clocks_event_reasons.sw_thermal_slowdown, ecc.errors.uncorrected.volatile.total, "
    "ecc.errors.uncorrected.aggregate.total, retired_pages.sbe, retired_pages.dbe, retired_pages.pending, "
    "reset_status.reset_required, mig.mode.current, power.draw [W]"
)
UUID0 = "GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310"
ROW0 = (
    f"2024/01/04 14:41:13.250, 0, {UUID0}, 00000000:2F:00.0, 2, 535.129.03, 4, 4, 16, 16, 97 %, "
    "0x0000000000000044, Not Active, 0, 3, 1, 2, No, No, Disabled, 52.12 W"
)
ROW1 = (
    "2024/01/04 14:41:13.260, 1, GPU-20af7308-7522-d66f-fe01-fb6f0551a4b9, 00000000:35:00.0, 2, 535.129.03, "
    "[N/A], [N/A], [Not Supported], 16, 0, 0x0000000000000000, Active, [N/A], [Unknown Error], [N/A], [N/A], Yes, "
    "Yes, [N/A], [N/A]"
)


def test_every_field_read() -> None:
    # GPU 0: mask 0x44 = 0x40 (hw_thermal_slowdown) + 0x4 (sw_power_cap); retired 1 + 2 = 3; `97 %` under
    # `utilization.gpu [%]` is 97; power.draw is not read. GPU 1: [N/A], [Not Supported] and [Unknown Error] are
    # unknown (None, not 0); `clocks_event_reasons.sw_thermal_slowdown` Active; reset required Yes -> reset.
    obs = _read(f"{HEADER}\n{ROW0}\n{ROW1}\n")
    g0, g1 = obs.gpus
    assert (g0.index, g0.uuid, g0.pci_bus_id) == (0, UUID0, "0000:2f:00.0")
    assert (g0.pcie_gen_current, g0.pcie_gen_max, g0.pcie_width_current, g0.pcie_width_max) == (4, 4, 16, 16)
    assert g0.utilization_percent == 97
    assert g0.throttle_reasons == ("hw_thermal_slowdown", "sw_power_cap")
    assert (g0.ecc_uncorrectable_volatile, g0.ecc_uncorrectable_aggregate) == (0, 3)
    assert (g0.retired_pages, g0.retired_pages_pending, g0.recovery_action, g0.mig_mode) == (3, False, None, "Disabled")
    assert g0.observed_at == datetime(2024, 1, 4, 14, 41, 13, 250000, tzinfo=UTC)
    assert (g1.pcie_gen_current, g1.pcie_gen_max, g1.pcie_width_current, g1.pcie_width_max) == (None, None, None, 16)
    assert (g1.utilization_percent, g1.throttle_reasons) == (0, ("sw_thermal_slowdown",))
    assert (g1.ecc_uncorrectable_volatile, g1.ecc_uncorrectable_aggregate, g1.retired_pages) == (None, None, None)
    assert (g1.retired_pages_pending, g1.recovery_action, g1.mig_mode) == (True, "reset", None)
    (file,) = obs.files
    # count 2 = the 2 rows: the listing is whole; the file's time is its latest row's.
    assert (file.attached, file.partial, file.driver) == (2, False, "535.129.03")
    assert file.observed_at == datetime(2024, 1, 4, 14, 41, 13, 260000, tzinfo=UTC)


def test_nounits_and_count_short_of_rows() -> None:
    # nounits: `97` under `utilization.gpu [%]`; count 8 with one row -> a selection (partial).
    obs = _read("index, count, utilization.gpu [%]\n3, 8, 97\n")
    assert obs.gpus[0].utilization_percent == 97
    assert (obs.files[0].attached, obs.files[0].partial) == (8, True)


def test_loop_log_keeps_each_gpus_last_row() -> None:
    # `-l 5`: GPU 0 at x16 (line 2), GPU 0 at x8 (line 4): the last sample, x8 at line 4, is the state seen last;
    # the header repeated (appended runs of one query, line 5) is read past.
    text = "index, pcie.link.width.current\n0, 16\n1, 16\n0, 8\nindex, pcie.link.width.current\n1, 16\n"
    obs = _read(text)
    assert sorted((g.index, g.pcie_width_current, g.source.line) for g in obs.gpus) == [(0, 8, 4), (1, 16, 6)]


def test_lost_gpu_line_before_the_header() -> None:
    # nvidia-smi's line for a GPU it cannot open, captured with 2>&1 before the CSV (the shape of the
    # `NVSMI_OFF_BUS` capture in a public test: `Unable to determine the device handle for GPU0000:01:00.0: GPU has
    # fallen off the bus.`): that GPU, by bus id, lost; the row after the header is read as usual.
    text = (
        "Unable to determine the device handle for GPU0000:01:00.0: GPU has fallen off the bus.\n"
        "index, pci.bus_id\n1, 00000000:02:00.0\n"
    )
    assert sniff(text) == nvidia_smi_query.FORMAT
    obs = _read(text)
    assert [(g.index, g.pci_bus_id, g.lost, g.source.line) for g in obs.gpus] == [
        (1, "0000:02:00.0", None, 3),
        (None, "0000:01:00.0", "GPU has fallen off the bus.", 1),
    ]


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        ("0, NVIDIA H100 80GB HBM3, GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310\n", 1, "without its header line"),
        ("index, pcie.link.width.current\n0, 16, 4\n", 2, "the row has 3 values but the header at line 1 names 2"),
        ("index, pcie.link.width.current\n0, 16x\n", 2, "'pcie.link.width.current' is '16x'; expected a whole"),
        ("index, pcie.link.width.current\n0, 99999999999999999999999\n", 2, "at most 4294967295"),
        ("index, remapped_rows.uncorrectable\n0, 1e3\n", 2, "expected a whole number"),
        ("index, utilization.gpu [%]\n0, 97 W\n", 2, "'utilization.gpu' is '97 W'"),
        ("index, utilization.gpu [%]\n0, 101 %\n", 2, "at most 100"),
        ("index, clocks_event_reasons.active\n0, 0x1ffffffffffffffff\n", 2, "expected a bit mask"),
        ("index, clocks_event_reasons.hw_slowdown\n0, Yes\n", 2, "expected Active or Not Active"),
        ("index, retired_pages.pending\n0, Maybe\n", 2, "expected Yes or No"),
        ("index, pcie.link.width.current\n0, [GPU is lost]\n", 2, "the GPU is lost"),
        ("index, pci.bus_id\n0, 1B:00\n", 2, "expected a PCI bus id"),
        ("index, driver_version\n0, 535.129.03\n1, 550.54.15\n", 3, "a second driver version"),
        ("index, driver_version\n0, R535\n", 2, "is not a release as nvidia-smi prints it"),
        ("timestamp, index\n16/01/2024 14:44:16, 0\n", 2, "expected nvidia-smi's form"),
        ("index, uuid\n0, GPU-1\nindex, pci.bus_id\n", 3, "a second header, not the one at line 1"),
        ("index, reset_status.reset_required\n0, Maybe\n", 2, "expected Yes or No"),
        ("index, uuid\n[N/A], [N/A]\n", 2, "names its GPU by no index, uuid, serial or pci.bus_id"),
    ],
)
def test_refused_at_its_line(text: str, line: int, words: str) -> None:
    with pytest.raises(TopologError) as err:
        _read(text)
    (diag,) = err.value.diagnostics
    assert diag.location.line == line
    assert words in diag.message


@pytest.mark.parametrize(
    "folder",
    ["nvidia-smi-q", "nvidia-smi-q-xml", "nvidia-smi-nvlink", "dcgm-exporter", "dcgmi-diag", "ibstat", "nccl-tests"],
)
def test_other_tools_not_taken(folder: str) -> None:
    for path in sorted((SAMPLES / folder).rglob("*")):
        if path.is_file() and path.suffix != ".md":
            assert sniff(path.read_text(errors="replace")) != nvidia_smi_query.FORMAT, path


def test_verify_judges_a_query_file(tmp_path: Path) -> None:
    # dgx02 of the shipped pod (GPUs matched by index; declared links Gen5 x16; driver 535.129.03), observed at
    # 08:40, judged at 09:00 (1,200 s: trusted). GPU 3 trained x8 of x16 -> OBS001 at line 5 (row 4 + header);
    # GPU 5's mask 0x40 is HW Thermal Slowdown -> OBS012 at line 7; GPU 6 has a page retirement pending -> OBS004
    # at line 8. The same driver as declared: no OBS011.
    rows = []
    for i in range(8):
        width = 8 if i == 3 else 16
        mask = "0x0000000000000040" if i == 5 else "0x0000000000000000"
        pending = "Yes" if i == 6 else "No"
        rows.append(f"2026/12/06 08:40:00.{i:03d}, {i}, 535.129.03, 5, 5, {width}, 16, 97 %, {mask}, {pending}")
    header = (
        "timestamp, index, driver_version, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, "
        "pcie.link.width.max, utilization.gpu [%], clocks_event_reasons.active, retired_pages.pending"
    )
    (tmp_path / "dgx02").mkdir()
    csv = tmp_path / "dgx02" / "gpus.csv"
    csv.write_text("\n".join([header, *rows]) + "\n")
    code, out, err = run_cli(
        "verify",
        str(ROOT / "inventories/dgx-h100-pod.yaml"),
        "--observed",
        str(tmp_path),
        "--observed-now",
        "2026-12-06T09:00:00Z",
        "--format",
        "json",
    )
    assert code == 1, err
    found = sorted(
        (f["rule"], f["subjects"], f["message"].rsplit(":", 1)[-1])
        for f in json.loads(out)["findings"]
        if f["rule"].startswith("OBS")
    )
    assert found == [
        ("OBS001", ["dgx02/gpu3"], "5)."),
        ("OBS004", ["dgx02/gpu6"], "8)."),
        ("OBS012", ["dgx02/gpu5"], "7)."),
    ]


def test_remapped_rows_query_is_read_and_is_no_listing() -> None:
    # `--query-remapped-rows` (its fields as `nvidia-smi --help-query-remapped-rows` names them; no public capture
    # found: its flags read as -q prints them, Yes/No, or as NVML holds them, 0/1). GPU 2f: 4 uncorrectable, pending
    # (1); GPU 35: none, failure No. It shows the GPUs that remap rows, not the host's listing.
    text = (
        "gpu_bus_id, gpu_uuid, remapped_rows.correctable, remapped_rows.uncorrectable, remapped_rows.pending, "
        "remapped_rows.failure\n"
        f"00000000:2F:00.0, {UUID0}, 0, 4, 1, 0\n"
        "00000000:35:00.0, GPU-20af7308-7522-d66f-fe01-fb6f0551a4b9, 0, 0, No, No\n"
    )
    assert sniff(text) == nvidia_smi_query.FORMAT
    obs = _read(text)
    got = [
        (g.pci_bus_id, g.remapped_rows_uncorrectable, g.remapped_rows_pending, g.remapped_rows_failed) for g in obs.gpus
    ]
    assert got == [("0000:2f:00.0", 4, True, False), ("0000:35:00.0", 0, False, False)]
    assert obs.files[0].format == nvidia_smi_query.NOT_A_LISTING


def test_compute_apps_query_is_not_this_format() -> None:
    # `--query-compute-apps=pid,gpu_uuid,process_name,used_memory`: one row per process, not per GPU.
    text = f"pid, gpu_uuid, process_name, used_memory [MiB]\n4242, {UUID0}, python, 1024 MiB\n"
    assert sniff(text) is None


def test_rows_without_an_index_make_no_whole_listing() -> None:
    # `--query-gpu=uuid,...`: rows matched by UUID only, so the file shows no declared GPU missing (partial), while
    # the same query with index (mlperf sample above) is whole.
    obs = _read(f"uuid, pcie.link.width.current\n{UUID0}, 16\n")
    assert (obs.gpus[0].index, obs.files[0].partial) == (None, True)


def test_nvml_field_names_with_capitals() -> None:
    # `--help-query-gpu` names a few fields in NVML's own case (`encoder.stats.sessionCount`, `.averageFps`):
    # still a header; they are passed over, the width (16) is read.
    text = "index, encoder.stats.sessionCount, encoder.stats.averageFps, pcie.link.width.current\n0, 0, 0, 16\n"
    assert sniff(text) == nvidia_smi_query.FORMAT
    assert _read(text).gpus[0].pcie_width_current == 16


def test_verify_judges_the_driver_a_query_names(tmp_path: Path) -> None:
    # dgx02 declares driver 535.129.03; the query's driver_version 525.85.12 is older -> OBS011 for the node. All
    # eight GPUs are listed, so whether the query counts as a listing of them, none is missing or short.
    (tmp_path / "dgx02").mkdir()
    rows = "".join(f"{i}, 525.85.12\n" for i in range(8))
    (tmp_path / "dgx02" / "q.csv").write_text("index, driver_version\n" + rows)
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories/dgx-h100-pod.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code in (0, 1), err
    found = [(f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS")]
    assert found == [("OBS011", ["dgx02"])]
