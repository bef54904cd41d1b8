"""Figures that Python would read but a person did not mean: each is refused at its line, never read.

`int("4_00")` is 400 and `Decimal("4_00")` is 400 too, so an inventory's `4_00 Gb/s` (a slip for
400 or 4.00?) used to be read as 400 Gb/s without a word. A `_` is taken only as a thousands
separator (`1_000`). A version of CUDA, NCCL, RCCL or ROCm written as a figure must have that
component's release shape: `cuda: "122"` (12.2 with its dot lost) was compared as CUDA 122.0 and
passed every minimum.
"""

from __future__ import annotations

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.core.limits import LimitError, parse_limit_value
from verifier.sources.inventory import load_inventory_text, units
from verifier.sources.jobs import load_jobs_text
from verifier.sources.jobs.loader import parse_count

INVENTORY = """\
apiVersion: topolog.dev/v1
objects:
  - name: n0
    kind: node
    software: {SOFTWARE}
    children:
      - {name: gpu0, kind: gpu}
      - {name: gpu1, kind: gpu}
links:
  - {a: n0/gpu0, b: n0/gpu1, kind: nvlink, bandwidth: BW}
"""


def _errors(text: str) -> list[str]:
    with pytest.raises(TopologError) as err:
        load_inventory_text(text, "inv.yaml")
    return [str(d) for d in err.value.diagnostics]


@pytest.mark.parametrize("text", ["4_00 Gb/s", "1_0000 GB/s", "100_ GB/s", "1__000 GB/s", "12_34_567 GB/s"])
def test_an_underscore_that_ends_no_group_of_three_is_refused(text: str) -> None:
    with pytest.raises(units.UnitError, match="'_' where no group of three digits ends"):
        units.bandwidth_mbps(text)


@pytest.mark.parametrize(
    ("text", "mbps"),
    [
        ("1_000 GB/s", 1_000_000),  # 1000 GB/s = 1000 * 1000 MB/s
        ("12_345_678", 12_345_678),  # a bare number is MB/s already
        ("1_000.5 GB/s", 1_000_500),  # 1000.5 GB/s = 1000.5 * 1000 MB/s
    ],
)
def test_thousands_groups_still_read(text: str, mbps: int) -> None:
    assert units.bandwidth_mbps(text) == mbps


def test_the_inventory_names_the_line_of_a_misplaced_underscore() -> None:
    text = INVENTORY.replace("    software: {SOFTWARE}\n", "").replace("BW", "4_00 Gb/s")
    # The link is the 9th line once the software line is gone. Its key `bandwidth` follows
    # "  - {" (5), "a: n0/gpu0, " (12), "b: n0/gpu1, " (12) and "kind: nvlink, " (14): column 44.
    assert text.splitlines()[8].index("bandwidth") == 43
    (error,) = _errors(text)
    assert error.startswith("inv.yaml:9:44: 'bandwidth' in link n0/gpu0 - n0/gpu1: '4_00' has '_'")


def test_parameter_counts_and_limits_take_the_same_rule() -> None:
    with pytest.raises(units.UnitError, match="parameter count '4_00' has '_'"):
        parse_count("4_00B")
    assert parse_count("1_000B") == 1_000 * 10**9
    with pytest.raises(LimitError, match="'50_00000' has '_'"):
        parse_limit_value("nesting_depth", "50_00000")
    assert parse_limit_value("nesting_depth", "5_000") == 5000


@pytest.mark.parametrize(
    ("software", "shown"),
    [
        ('{cuda: "122"}', "'122' cannot be a release of cuda"),  # no dot: CUDA is major.minor
        ('{cuda: "12.100"}', "'12.100' cannot be a release of cuda"),  # CUDA_VERSION keeps two minor digits
        ('{cuda: "1e3"}', "'1e3' cannot be a release of cuda"),
        ('{cuda: "\uff11\uff12.\uff14"}', "cannot be a release of cuda"),  # fullwidth 12.4
        ('{nccl: "2.165"}', "'2.165' cannot be a release of nccl"),  # NCCL_VERSION_CODE: two minor digits
        ('{rccl: "2.18.600"}', "'2.18.600' cannot be a release of rccl"),
        ('{rocm: "6"}', "'6' cannot be a release of rocm"),
    ],
)
def test_a_version_that_cannot_be_a_release_is_refused(software: str, shown: str) -> None:
    (error,) = _errors(INVENTORY.replace("{SOFTWARE}", software).replace("BW", "450 GB/s"))
    # `software:` is line 5; the flow mapping's one key starts at column 16.
    assert error.startswith("inv.yaml:5:16: ")
    assert shown in error


@pytest.mark.parametrize(
    "software",
    [
        '{cuda: "12.4", nccl: "2.21.5", rocm: "6.1.2", rccl: "2.18"}',
        '{cuda: "12.10", driver: "535.129.03"}',  # CUDA's minor has two digits
        '{cuda: "12.4.131"}',  # as nvcc --version prints it
        '{cuda: "latest", driver: "R535", rocm: "latest"}',  # words: not versions, not compared
        '{driver: "550", os: "22.04.1_x"}',  # components with no release shape here
    ],
)
def test_release_shapes_and_words_still_load(software: str) -> None:
    inv = load_inventory_text(INVENTORY.replace("{SOFTWARE}", software).replace("BW", "450 GB/s"), "inv.yaml")
    assert "n0" in inv.found


def test_a_job_minimum_that_cannot_be_a_release_is_refused() -> None:
    jobs = (
        "apiVersion: topolog.dev/v1\nkind: Jobs\njobs:\n"
        '  - {name: j, principal: Team::"r", gpus: 8, software: [{cuda: ">=122"}]}\n'
    )
    with pytest.raises(TopologError) as err:
        load_jobs_text(jobs, "jobs.yaml")
    (error,) = [str(d) for d in err.value.diagnostics]
    assert error.startswith("jobs.yaml:4:")
    assert "'122' cannot be a release of cuda" in error


@pytest.mark.parametrize("text", ["4_00", "\u0664", "\uff11", " 3"])
def test_a_count_flag_takes_ascii_digits_only(text: str) -> None:
    # click's IntRange reads with int(): '4_00' was 400, Arabic-Indic four was 4.
    code, _out, err = run_cli(
        "place", "inventories/edge-soc.yaml", "inventories/jobs/portable.yaml", "--no-authorization", "--limit", text
    )
    assert code == 2
    assert f"Invalid value for '--limit': {text!r} is not a whole number; expected ASCII digits such as 8" in err
