"""The nccl-tests reader on a real output (samples/nccl-tests/README.md) and variants of it."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nccl_tests
from verifier.sources.observed.model import GpuRef, Observations

SAMPLE = Path(__file__).parent / "samples" / "nccl-tests" / "a3mega-2x8-h100-all-reduce.txt"


def _read(text: str, name: str = "run.txt") -> Observations:
    return nccl_tests.read(text, name, "folder-host")


def test_real_output_rows_ranks_and_exact_bandwidths() -> None:
    obs = nccl_tests.read(SAMPLE.read_text(), "a3mega.txt", None)
    # 31 sizes (8 B .. 8 GiB, factor 2) x out-of-place and in-place.
    assert len(obs.bandwidth) == 62
    last_out, last_in = obs.bandwidth[-2:]
    # The last row (line 62): 8589934592 B, out-of-place algbw 180.71 busbw 338.82 GB/s, in-place
    # 179.92 / 337.35 GB/s: MB/s are GB/s x 1000, exactly.
    assert (last_out.size_bytes, last_out.algbw_mbps, last_out.busbw_mbps, last_out.in_place) == (
        8589934592,
        Fraction(180710),
        Fraction(338820),
        False,
    )
    assert (last_in.busbw_mbps, last_in.in_place, last_in.source.line) == (Fraction(337350), True, 62)
    # The command line above the output names all_reduce_perf; 16 ranks on two hosts, 8 each.
    assert (last_out.operation, last_out.tool, last_out.hosts, last_out.gpus_per_host) == (
        "all_reduce_perf",
        "nccl-tests",
        ("ztan-mig-235z", "ztan-mig-gq73"),
        8,
    )
    # Rank 8 is "on ztan-mig-gq73 device  0 [0000:04:00]": bus 04, device 00, function 0.
    assert last_out.gpus[8] == GpuRef("ztan-mig-gq73", pci_bus_id="0000:04:00.0", index=0)
    assert obs.hosts == () and obs.files[0].host is None  # a measurement does not make a host observed


def test_small_sizes_keep_their_zero_and_fraction() -> None:
    obs = nccl_tests.read(SAMPLE.read_text(), "a3mega.txt", None)
    # 512 B row: busbw 0.01 GB/s = 10 MB/s.
    row = next(m for m in obs.bandwidth if m.size_bytes == 512 and m.in_place is False)
    assert (row.algbw_mbps, row.busbw_mbps) == (Fraction(0), Fraction(10))


NEWER = """\
# nccl-tests version 2.18.3 nccl-headers=23003 nccl-library=23003
# Collective test starting: all_gather_perf
# nThread 1 nGpus 1 minBytes 1024 maxBytes 2048 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 \
graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  14010 on node-a device  0 [0000:06:00] NVIDIA Graphics Device
#  Rank  1 Group  0 Pid  16479 on node-b device  0 [0000:06:00] NVIDIA Graphics Device
NCCL version 2.30.3+cuda13.0
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)
        1024           128     float    none      -1    61.09    0.02    0.01       0    53.35    0.02    0.01       0
        2048           256     float    none      -1    57.54    0.04    0.02     N/A    57.20    0.04    0.02     N/A
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 0.015
#
# Collective test concluded: all_gather_perf
"""


def test_newer_header_names_the_collective_and_tag_output_prefixes_are_dropped() -> None:
    tagged = "".join(f"[1,0]<stdout>:{line}\n" for line in NEWER.splitlines())
    for text in (NEWER, tagged):
        obs = _read(text)
        assert {m.operation for m in obs.bandwidth} == {"all_gather_perf"}
        assert [(m.size_bytes, m.busbw_mbps) for m in obs.bandwidth] == [
            (1024, Fraction(10)),
            (1024, Fraction(10)),
            (2048, Fraction(20)),
            (2048, Fraction(20)),
        ]
        assert obs.bandwidth[0].hosts == ("node-a", "node-b")


def test_wrong_counts_as_printed() -> None:
    # NEWER's rows: 1024 B "0" and "0" (checked, none wrong); 2048 B "N/A" (not checked).
    assert [(m.size_bytes, m.wrong) for m in _read(NEWER).bandwidth] == [
        (1024, 0),
        (1024, 0),
        (2048, None),
        (2048, None),
    ]
    # The real sample's older header has "#wrong" too: every value 0.
    assert {m.wrong for m in nccl_tests.read(SAMPLE.read_text(), "a3mega.txt", None).bandwidth} == {0}


def test_the_older_bus_number_only_address_matches_by_device_number() -> None:
    text = NEWER.replace("[0000:06:00]", "[0x1b]")
    gpus = _read(text).bandwidth[0].gpus
    assert gpus == (GpuRef("node-a", index=0), GpuRef("node-b", index=0))


def test_an_eight_digit_domain_is_read_as_the_other_readers_read_it() -> None:
    # `[00000000:06:00]` is domain 0 written with 8 digits (as nvidia-smi prints it): the same bus id
    # 0000:06:00.0 as `[0000:06:00]`. A domain above 16 bits (`[00010000:06:00]`, an Intel VMD
    # domain) is a Linux PCI domain too: sysfs names it 10000:06:00.0, and so is it read.
    eight = _read(NEWER.replace("[0000:06:00]", "[00000000:06:00]")).bandwidth[0].gpus
    assert eight == _read(NEWER).bandwidth[0].gpus
    assert eight[0].pci_bus_id == "0000:06:00.0"
    wide = _read(NEWER.replace("[0000:06:00]", "[00010000:06:00]")).bandwidth[0].gpus
    assert wide[0].pci_bus_id == "10000:06:00.0"


def test_several_runs_in_one_file_keep_their_own_ranks() -> None:
    second = NEWER.replace("all_gather_perf", "reduce_scatter_perf").replace("node-b", "node-c")
    obs = _read(NEWER + second)
    assert {(m.operation, m.hosts) for m in obs.bandwidth} == {
        ("all_gather_perf", ("node-a", "node-b")),
        ("reduce_scatter_perf", ("node-a", "node-c")),
    }


def test_the_collective_may_come_from_the_file_name() -> None:
    text = NEWER.replace("# Collective test starting: all_gather_perf\n", "")
    assert {m.operation for m in nccl_tests.read(text, "logs/alltoall_perf.node-a.txt", None).bandwidth} == {
        "alltoall_perf"
    }
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith("run.txt:12: which collective ran is not said")


def test_a_row_cut_short_is_refused() -> None:
    lines = SAMPLE.read_text().splitlines()[:62]
    lines[61] = "  ".join(lines[61].split()[:9])  # the last row (line 62) loses its in-place columns
    text = "\n".join(lines)
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value) == "run.txt:62: a row of 9 columns under a header of 13; the file looks truncated"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "run.txt:1: no result rows"),
        ("# Using devices\nalgbw busbw\n", "run.txt:1: no result rows"),
        (
            NEWER.replace("    0.02    0.01       0    53", "    fast    0.01       0    53"),
            "run.txt:13: algbw 'fast' is not a bandwidth",
        ),
        (NEWER.replace("[0000:06:00]", "[GPU-1]", 1), "run.txt:6: device address [GPU-1]"),
    ],
)
def test_bad_input_is_refused(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith(message)


def test_looks_like() -> None:
    assert nccl_tests.looks_like(SAMPLE.read_text())
    assert not nccl_tests.looks_like("CA 'mlx5_0'\n")


SPARK = Path(__file__).parent / "samples" / "nccl-tests" / "dgx-spark-2x1-gb10-all-reduce-first-rows.txt"


def test_nccl_tests_2_20_on_two_gb10_reads_every_row() -> None:
    obs = nccl_tests.read(SPARK.read_text(), "spark.all_reduce.txt", None)
    # 4 rows x (out-of-place, in-place); the ranks on two hosts, domain 000f kept: 000f:01:00.0.
    assert len(obs.bandwidth) == 8
    last = [m for m in obs.bandwidth if m.size_bytes == 65536]
    # 0.96 GB/s = 960 MB/s out-of-place, 1.01 = 1010 in-place, on line 15; no wrong values.
    assert [(m.source.line, m.in_place, m.busbw_mbps, m.wrong) for m in last] == [
        (15, False, Fraction(960), 0),
        (15, True, Fraction(1010), 0),
    ]
    assert [(g.host, g.pci_bus_id, g.index) for g in last[0].gpus] == [
        ("spark-d708", "000f:01:00.0", 0),
        ("spark-dbf4", "000f:01:00.0", 0),
    ]
    assert {m.operation for m in obs.bandwidth} == {"all_reduce_perf"}
