"""The ibstat reader on a real listing (samples/ibstat/README.md) and variants of it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import ibstat
from verifier.sources.observed.model import Observations
from verifier.sources.observed.sniff import sniff

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


IBSTATUS = Path(__file__).parent / "samples" / "ibstat" / "ibstatus-nccl-issue-1866-roce.txt"


def test_real_ibstatus_reads_in_ibstat_words() -> None:
    obs = ibstat.read(IBSTATUS.read_text(), str(IBSTATUS), "node1")
    got = [
        (p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer, p.source.line) for p in obs.nic_ports
    ]
    # By hand from the sample: two blocks "Infiniband device 'mlx5_N' port 1 status:" at lines 1 and 10,
    # "state: 4: ACTIVE" (the kernel's 4 is ibstat's "Active"), "phys state: 5: LinkUp", "rate: 100 Gb/sec
    # (4X EDR)" (100 Gb/s = 100,000 Mb/s), "link_layer: Ethernet" (RoCE).
    assert got == [
        ("mlx5_0", 1, "Active", "LinkUp", 100_000, "Ethernet", 1),
        ("mlx5_1", 1, "Active", "LinkUp", 100_000, "Ethernet", 10),
    ]
    assert [(f.format, f.host) for f in obs.files] == [("ibstat", "node1")]
    assert sniff(IBSTATUS.read_text()) == "ibstat"


def _ucx_sample_as_ibstatus() -> str:
    """The ucx sample's ports as ibstatus prints them (the same sysfs files): written by hand per port."""
    block = (
        "Infiniband device '{dev}' port 1 status:\n"
        "\tdefault gid:\t fe80:0000:0000:0000:0000:0000:0000:0000\n"
        "\tbase lid:\t 0x0\n\tsm lid:\t\t 0x0\n"
        "\tstate:\t\t {state}\n\tphys state:\t {phys}\n\trate:\t\t {rate}\n\tlink_layer:\t InfiniBand\n\n"
    )
    # ibstat's "Active"/"LinkUp"/"Rate: 100" is the kernel's "4: ACTIVE"/"5: LinkUp"/"100 Gb/sec (4X EDR)";
    # "Down"/"Disabled"/"Rate: 10" is "1: DOWN"/"3: Disabled"/"10 Gb/sec (4X SDR)".
    up = {"state": "4: ACTIVE", "phys": "5: LinkUp", "rate": "100 Gb/sec (4X EDR)"}
    down = {"state": "1: DOWN", "phys": "3: Disabled", "rate": "10 Gb/sec (4X SDR)"}
    return "".join(
        block.format(dev=d, **kw) for d, kw in (("mlx5_0", up), ("mlx5_1", up), ("mlx5_2", down), ("mlx5_3", down))
    )


def test_one_machine_through_ibstat_and_ibstatus_reads_the_same() -> None:
    def rows(obs: Observations) -> list[tuple[object, ...]]:
        return [(p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer) for p in obs.nic_ports]

    assert rows(_read(_ucx_sample_as_ibstatus())) == rows(_read(SAMPLE.read_text()))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # An Active port whose rate file could not be read: its rate is judged (OBS104), so it is refused.
        (("rate:            100 Gb/sec (4X EDR)", "rate:            "), "ibstat.txt:7: the rate of an Active port"),
        (("100 Gb/sec (4X EDR)", "100 Gb/s"), "ibstat.txt:7: rate '100 Gb/s' is not the kernel's"),
        (("4: ACTIVE", "ACTIVE"), "ibstat.txt:5: state 'ACTIVE' is not the kernel's '<number>: <name>'"),
        (("        link_layer:      Ethernet\n", ""), "ibstat.txt:1: port 1 of mlx5_0 has no link_layer"),
    ],
)
def test_ibstatus_that_cannot_be_read_exactly_is_refused(change: tuple[str, str], message: str) -> None:
    text = IBSTATUS.read_text().replace(*change, 1)
    with pytest.raises(TopologError) as err:
        _read(text)
    assert str(err.value).startswith(message)


def test_ibstatus_port_not_up_keeps_an_unread_rate_unknown_and_the_kernels_other_states() -> None:
    text = (
        "Infiniband device 'mlx5_2' port 1 status:\n\tstate:\t\t 1: DOWN\n\tphys state:\t 2: Polling\n"
        "\trate:\t\t \n\tlink_layer:\t IB\n\n"
        "Infiniband device 'mlx5_3' port 1 status:\n\tstate:\t\t 5: ACTIVE_DEFER\n\tphys state:\t 5: LinkUp\n"
        "\trate:\t\t 2.5 Gb/sec (1X)\n\tlink_layer:\t InfiniBand\n"
    )
    got = [(p.device, p.state, p.physical_state, p.rate_mbps, p.link_layer) for p in _read(text).nic_ports]
    # 1 is ibstat's "Down", 2 "Polling"; an empty rate on a port that is not up is unknown; "IB" is what the
    # script prints without a link_layer file (InfiniBand). 5 (ACTIVE_DEFER) has no ibstat word: kept as the
    # kernel names it, so no rule reads it as "Active"; 2.5 Gb/s is 2,500 Mb/s.
    assert got == [
        ("mlx5_2", "Down", "Polling", None, "InfiniBand"),
        ("mlx5_3", "ACTIVE_DEFER", "LinkUp", 2_500, "InfiniBand"),
    ]


DEVINFO = Path(__file__).parent / "samples" / "ibstat" / "ibv-devinfo-heioy-books-2hca.txt"


def test_real_ibv_devinfo_without_v_is_read_with_its_rates_unknown() -> None:
    # Plain ibv_devinfo prints each port's state and link layer but no rate and no phys_state. By hand from
    # the sample: mlx4_1 port 1 (line 12) PORT_ACTIVE (4) = ibstat's Active, which IB allows only on a
    # LinkUp physical link; port 2 (line 21) PORT_DOWN (1) = Down, physical state not printed; mlx4_0 the
    # same on lines 41 and 50. Every rate unknown (None), never 0: no rate is printed.
    assert sniff(DEVINFO.read_text()) == "ibstat"
    got = [
        (p.source.line, p.device, p.port, p.state, p.physical_state, p.rate_mbps)
        for p in _read(DEVINFO.read_text()).nic_ports
    ]
    assert got == [
        (12, "mlx4_1", 1, "Active", "LinkUp", None),
        (21, "mlx4_1", 2, "Down", "unknown", None),
        (41, "mlx4_0", 1, "Active", "LinkUp", None),
        (50, "mlx4_0", 2, "Down", "unknown", None),
    ]


def _devinfo_verbose() -> str:
    """The real sample as `ibv_devinfo -v` prints its ports (rdma-core libibverbs/examples/devinfo.c): after
    each port's state, phys_state, active_width and active_speed, written by hand. The ConnectX-3 (MT4099,
    FDR) Active ports: LINK_UP (5), 4X (2), 14.0 Gbps (16); the Down ones: DISABLED (3), 4X (2), 2.5 Gbps (1).
    """
    up = "\t\t\tphys_state:\t\tLINK_UP (5)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t14.0 Gbps (16)\n"
    down = "\t\t\tphys_state:\t\tDISABLED (3)\n\t\t\tactive_width:\t\t4X (2)\n\t\t\tactive_speed:\t\t2.5 Gbps (1)\n"
    text = DEVINFO.read_text()
    text = text.replace("PORT_ACTIVE (4)\n", "PORT_ACTIVE (4)\n" + up)
    return text.replace("PORT_DOWN (1)\n", "PORT_DOWN (1)\n" + down)


def test_ibv_devinfo_verbose_reads_as_ibstat_reads_the_same_ports() -> None:
    def rows(obs: Observations) -> list[tuple[object, ...]]:
        return [(p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer) for p in obs.nic_ports]

    verbose = _read(_devinfo_verbose())
    # By hand: 4 lanes x 14.0 Gb/s = 56 Gb/s (ibstat's "Rate: 56", FDR) = 56,000 Mb/s for the Active ports;
    # 4 x 2.5 = 10 Gb/s for the Down ones (ibstat prints "Rate: 10" for a port that is down, as in the ucx
    # sample). The same machine as ibstat would list it, written by hand from the same values:
    ibstat_text = "".join(
        f"CA '{dev}'\n\tNode GUID: {guid}\n"
        f"\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 56\n\t\tLink layer: InfiniBand\n"
        f"\tPort 2:\n\t\tState: Down\n\t\tPhysical state: Disabled\n\t\tRate: 10\n\t\tLink layer: InfiniBand\n"
        for dev, guid in (("mlx4_1", "0x7cfe900300a595c0"), ("mlx4_0", "0xe41d2d0300e0c740"))
    )
    assert rows(verbose) == rows(_read(ibstat_text))
    assert rows(verbose)[0] == ("mlx4_1", 1, "Active", "LinkUp", 56_000, "InfiniBand")
    # ibv_devinfo's node_guid "7cfe:9003:00a5:95c0" is ibstat's "0x7cfe900300a595c0".
    assert [p.node_guid for p in verbose.nic_ports] == [p.node_guid for p in _read(ibstat_text).nic_ports]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        # The first port: "port: 1" on line 12, state 13, then the inserted phys_state 14, width 15, speed 16.
        (("14.0 Gbps (16)", "invalid speed (0)"), "ibstat.txt:16: active_speed 'invalid speed (0)' is not"),
        (("4X (2)", "invalid width (0)"), "ibstat.txt:15: active_width 'invalid width (0)' is not"),
        (("PORT_ACTIVE (4)", "PORT_ACTIVE"), "ibstat.txt:13: state 'PORT_ACTIVE' is not '<NAME> (<number>)'"),
    ],
)
def test_ibv_devinfo_values_that_cannot_be_read_exactly_are_refused(change: tuple[str, str], message: str) -> None:
    with pytest.raises(TopologError) as err:
        _read(_devinfo_verbose().replace(*change, 1))
    assert str(err.value).startswith(message)


def test_ibv_devinfo_without_v_on_ports_that_are_not_up_is_read() -> None:
    text = DEVINFO.read_text().replace("PORT_ACTIVE (4)", "PORT_INIT (2)")
    got = [(p.device, p.port, p.state, p.physical_state, p.rate_mbps) for p in _read(text).nic_ports]
    # 2 is ibstat's "Initializing", 1 "Down"; without -v neither the physical state nor the rate is printed.
    assert got == [
        ("mlx4_1", 1, "Initializing", "unknown", None),
        ("mlx4_1", 2, "Down", "unknown", None),
        ("mlx4_0", 1, "Initializing", "unknown", None),
        ("mlx4_0", 2, "Down", "unknown", None),
    ]


FIXTURE = Path(__file__).resolve().parents[2] / "rules" / "fixtures" / "OBS104"


def _verify_obs(tmp_path: Path, name: str, text: str) -> list[tuple[str, list[str]]]:
    (tmp_path / "n1").mkdir()
    (tmp_path / "n1" / name).write_text(text)
    code, out, err = run_cli("verify", str(FIXTURE / "fail.yaml"), "--observed", str(tmp_path), "--format", "json")
    assert code in (0, 1), err
    return sorted((f["rule"], f["subjects"]) for f in json.loads(out)["findings"] if f["rule"].startswith("OBS"))


PLAIN_DEVINFO = (
    "hca_id:\tmlx5_0\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n"
    "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n\n"
    "hca_id:\tmlx5_4\n\ttransport:\t\t\tInfiniBand (0)\n\tphys_port_cnt:\t\t\t1\n"
    "\t\tport:\t1\n\t\t\tstate:\t\t\tPORT_DOWN (1)\n\t\t\tlink_layer:\t\tInfiniBand\n"
)


def test_plain_ibv_devinfo_judges_port_state_but_not_an_unstated_rate(tmp_path: Path) -> None:
    # OBS104's fail.yaml labels n1's NICs mlx5_{i} and cables nic0 and nic4 into InfiniBand at 400 Gb/s.
    # Plain ibv_devinfo: mlx5_0 Active with no rate -> nothing to judge of its speed (an unknown rate taken
    # as 0 would be a false OBS104 "0 Mb/s"); mlx5_4 PORT_DOWN on its declared cable -> OBS103 on n1/nic4.
    assert _verify_obs(tmp_path, "ibv_devinfo.txt", PLAIN_DEVINFO) == [("OBS103", ["n1/nic4"])]


def test_the_same_port_with_its_rate_stated_is_judged(tmp_path: Path) -> None:
    # The same mlx5_0 through ibstat at Rate 200 (Gb/s = 200,000 Mb/s < its cable's 400,000): OBS104.
    text = (
        "CA 'mlx5_0'\n\tPort 1:\n\t\tState: Active\n\t\tPhysical state: LinkUp\n\t\tRate: 200\n"
        "\t\tLink layer: InfiniBand\n"
    )
    assert _verify_obs(tmp_path, "ibstat.txt", text) == [("OBS104", ["n1/nic0"])]


def test_real_plain_ibv_devinfo_pasted_with_spaces_is_read() -> None:
    # One adapter of `ibv_devinfo` (no -v) as pasted in https://github.com/deepseek-ai/DeepEP/issues/55 (tabs
    # turned to spaces): ConnectX-7 (vendor_part_id 4126) mlx5_3, port 1 (line 11) PORT_ACTIVE (4) =
    # Active, so LinkUp; InfiniBand; no rate printed: unknown. node_guid 2dc3:190f:3d85:1cb6.
    text = (
        "hca_id: mlx5_3\n"
        "        transport:                      InfiniBand (0)\n"
        "        fw_ver:                         28.37.1700\n"
        "        node_guid:                      2dc3:190f:3d85:1cb6\n"
        "        sys_image_guid:                 946d:ae03:00f0:0b6a\n"
        "        vendor_id:                      0x02c9\n"
        "        vendor_part_id:                 4126\n"
        "        hw_ver:                         0x0\n"
        "        board_id:                       MT_0000000970\n"
        "        phys_port_cnt:                  1\n"
        "                port:   1\n"
        "                        state:                  PORT_ACTIVE (4)\n"
        "                        max_mtu:                4096 (5)\n"
        "                        active_mtu:             4096 (5)\n"
        "                        sm_lid:                 1\n"
        "                        port_lid:               1690\n"
        "                        port_lmc:               0x00\n"
        "                        link_layer:             InfiniBand\n"
    )
    assert sniff(text) == "ibstat"
    got = [
        (p.source.line, p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer, p.node_guid)
        for p in _read(text).nic_ports
    ]
    assert got == [(11, "mlx5_3", 1, "Active", "LinkUp", None, "InfiniBand", "0x2dc3190f3d851cb6")]
