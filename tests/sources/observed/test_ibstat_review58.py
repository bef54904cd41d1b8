"""Review of the ibv_devinfo reader (round 58): what devinfo.c prints for a code it has no words for."""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import ibstat
from verifier.sources.observed.sniff import sniff

SAMPLE = Path(__file__).parent / "samples" / "ibstat" / "ibv-devinfo-vv-ucx-issue-9908-down-port.txt"


def _rows(text: str) -> list[tuple[object, ...]]:
    obs = ibstat.read(text, "devinfo.txt", "gpu1")
    return [(p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.link_layer) for p in obs.nic_ports]


def test_real_devinfo_with_a_down_port_of_invalid_speed_is_read() -> None:
    # The whole file was refused at mlx5_1's "active_speed: invalid speed (0)": a DISABLED port, whose
    # rate is not judged. By hand: mlx5_0 port 1 PORT_ACTIVE (4) = Active, LINK_UP (5) = LinkUp, 4X (2) x
    # 50.0 Gbps (64) = 200 Gb/s = 200,000 Mb/s; mlx5_1 port 1 PORT_DOWN (1) = Down, DISABLED (3) =
    # Disabled, speed code 0 = no speed: unknown.
    text = SAMPLE.read_text()
    assert sniff(text) == "ibstat"
    assert _rows(text) == [
        ("mlx5_0", 1, "Active", "LinkUp", 200_000, "InfiniBand"),
        ("mlx5_1", 1, "Down", "Disabled", None, "InfiniBand"),
    ]


def _active_port(width: str, speed: str) -> str:
    return (
        "hca_id:\tmlx5_0\n\tnode_guid:\t\t\t88e9:a4ff:ff25:a462\n\t\tport:\t1\n"
        "\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\t\tlink_layer:\t\tInfiniBand\n"
        f"\t\t\tactive_width:\t\t{width}\n\t\t\tactive_speed:\t\t{speed}\n\t\t\tphys_state:\t\tLINK_UP (5)\n"
    )


def test_a_code_an_older_release_has_no_words_for_is_read_by_its_code() -> None:
    # devinfo.c before NDR prints "invalid speed (128)" for an NDR port: code 128 is 100 Gb/s a lane
    # (verbs enum), so 4X (2) x 100 = 400 Gb/s = 400,000 Mb/s; width code 16 is 2 lanes: 2 x 100 = 200,000.
    assert _rows(_active_port("4X (2)", "invalid speed (128)"))[0][4] == 400_000
    assert _rows(_active_port("invalid widthX (16)", "100.0 Gbps (128)"))[0][4] == 200_000


@pytest.mark.parametrize(
    ("width", "speed", "message"),
    [
        ("4X (2)", "invalid speed (0)", "devinfo.txt:7: active_speed 'invalid speed (0)' is not"),
        ("invalidX (0)", "25.0 Gbps (32)", "devinfo.txt:6: active_width 'invalidX (0)' is not"),
        ("invalid widthX (3)", "25.0 Gbps (32)", "devinfo.txt:6: active_width 'invalid widthX (3)' is not"),
    ],
)
def test_an_active_port_of_unknown_rate_is_still_refused(width: str, speed: str, message: str) -> None:
    with pytest.raises(TopologError) as err:
        _rows(_active_port(width, speed))
    assert str(err.value).startswith(message)


def test_a_speed_beyond_any_port_is_refused_at_its_line() -> None:
    # 4 lanes x 1e20 Gb/s is beyond a 64-bit count of Mb/s: it reached the fact loader, which refused it
    # as "<facts for observed_nic_port>", naming no line of the file. Line 7 is active_speed.
    with pytest.raises(TopologError) as err:
        _rows(_active_port("4X (2)", "99999999999999999999.0 Gbps (64)"))
    assert str(err.value).startswith("devinfo.txt:7: active_speed '99999999999999999999.0 Gbps (64)' is beyond")
