"""The ibstat reader on a real listing (samples/ibstat/README.md) and variants of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import ibstat
from verifier.sources.observed.model import Observations

SAMPLE = Path(__file__).parent / "samples" / "ibstat" / "ucx-issue-8772-4ca.txt"


def _read(text: str, host: str | None = "node1") -> Observations:
    return ibstat.read(text, "ibstat.txt", host)


def test_real_listing_every_port_as_printed() -> None:
    obs = ibstat.read(SAMPLE.read_text(), str(SAMPLE), "node1")
    got = [
        (p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer, p.source.line) for p in obs.nic_ports
    ]
    # By hand from the sample: mlx5_0/1 "State: Active", "Physical state: LinkUp", "Rate: 100" (Gb/s,
    # so 100,000 Mb/s); mlx5_2/3 "Down", "Disabled", "Rate: 10"; each "Port 1:" line at 8, 25, 42, 59.
    assert got == [
        ("mlx5_0", 1, "Active", "LinkUp", 100_000, "InfiniBand", 8),
        ("mlx5_1", 1, "Active", "LinkUp", 100_000, "InfiniBand", 25),
        ("mlx5_2", 1, "Down", "Disabled", 10_000, "InfiniBand", 42),
        ("mlx5_3", 1, "Down", "Disabled", 10_000, "InfiniBand", 59),
    ]
    assert obs.nic_ports[2].node_guid == "0xec0d9a030043170c"
    assert obs.nic_ports[2].ca_type == "MT4119"
    assert obs.hosts == ("node1",)
    assert [(f.format, f.host) for f in obs.files] == [("ibstat", "node1")]


def test_tabs_lost_in_a_web_copy_read_the_same() -> None:
    def rows(text: str) -> list[tuple[object, ...]]:
        return [(p.device, p.port, p.state, p.rate_mbps, p.source.line) for p in _read(text).nic_ports]

    flat = "\n".join(line.strip() for line in SAMPLE.read_text().splitlines())
    assert rows(flat) == rows(SAMPLE.read_text())


def test_a_fractional_rate_is_kept_exactly() -> None:
    # Soft-RoCE (rxe) reports "Rate: 2.5": 2.5 Gb/s is 2,500 Mb/s.
    text = (
        "CA 'rxe0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 2.5\n\t\tLink layer: Ethernet\n"
    )
    (port,) = _read(text).nic_ports
    assert (port.rate_mbps, port.link_layer) == (2_500, "Ethernet")


def test_a_port_cut_short_is_refused_at_its_line() -> None:
    text = SAMPLE.read_text().splitlines()
    cut = "\n".join(text[:60])  # mlx5_3's "Port 1:" (line 59) and its State only
    with pytest.raises(TopologError) as err:
        _read(cut)
    assert (
        str(err.value)
        == "ibstat.txt:59: port 1 of mlx5_3 has no Physical state, Rate, Link layer; the file looks truncated"
    )


def test_a_rate_that_is_not_a_number_is_refused() -> None:
    text = SAMPLE.read_text().replace("Rate: 100", "Rate: fast", 1)
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith("ibstat.txt:11: Rate 'fast' is not a number")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "ibstat.txt:1: no \"CA 'name'\" with a 'Port N:' block; expected ibstat output"),
        ("hello\n", "ibstat.txt:1: unexpected text 'hello' before the first \"CA 'name'\" line"),
        (
            "ibpanic: [2137592] main: stat of IB device 'mthca0' failed: No such file or directory\n",
            "ibstat.txt:1: ibstat failed on this host",
        ),
    ],
)
def test_foreign_or_failed_output_is_refused(text: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith(message)


def test_numbers_beyond_any_port_are_refused() -> None:
    text = "CA 'x'\nPort 1:\nState: Active\nPhysical state: LinkUp\nRate: 1e30\nLink layer: InfiniBand\n"
    with pytest.raises(TopologError, match=r"ibstat.txt:5: Rate '1e30' Gb/s is beyond any port's"):
        _read(text)


def test_no_host_is_refused() -> None:
    with pytest.raises(TopologError) as err:
        _read(SAMPLE.read_text(), host=None)
    assert "names no host" in str(err.value)


def test_looks_like() -> None:
    assert ibstat.looks_like(SAMPLE.read_text())
    assert not ibstat.looks_like("<?xml version='1.0'?><nvidia_smi_log/>")
