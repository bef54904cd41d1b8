"""Review 61 (R-IM) of b0952c6: the line past which an NCCL `speed` is taken for another unit.

NCCL's NIC fusion makes one network device of up to 8 ports (NCCL_NET_MAX_DEVS_PER_NIC_V12 = 8 in
src/include/plugin/net/net_v12.h; 4 before), named "mlx5_0+mlx5_1+..." and given the SUM of their
speeds (ncclIbMakeVDeviceInternal: mDev->speed += dev->speed), in Mb/s (topo.cc: bw = mbps / 8000).
A fused device of eight 800 Gb/s ports (NCCL_NET_FORCE_MERGE on an 8-NIC node) prints 6400000: a true
rate, which b0952c6 left unknown with a note blaming another unit (the base read it). The line is now
1.6 Tb/s per port the name joins, never below a merged pair's 3.2 Tb/s.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from verifier.core.errors import TopologError
from verifier.sources.importers import import_files


def _speeds(tmp_path: Path, nets: list[tuple[str, str]]) -> dict[str, int | None]:
    body = "".join(
        f'<nic><net name="{name}" dev="{k}" speed="{speed}" port="1" guid="0x{k + 1:x}" gdr="1"/></nic>'
        for k, (name, speed) in enumerate(nets)
    )
    path = tmp_path / "topo.xml"
    path.write_text(f'<system version="1"><cpu numaid="0">{body}</cpu></system>\n')
    inv = import_files("nccl-xml", [path], node="n").inventory
    return {o.labels["name"]: o.quantities.get("bandwidth_mbps") for o in inv.objects.values() if o.kind == "nic"}


EIGHT = "+".join(f"mlx5_{k}" for k in range(8))
FOUR = "+".join(f"mlx5_{k}" for k in range(4))


@pytest.mark.parametrize(
    ("name", "speed", "mbps"),
    [
        # 8 x 800,000 Mb/s = 6,400,000 Mb/s; / 8 = 800,000 MB/s (line: 8 x 1,600,000 = 12,800,000).
        (EIGHT, "6400000", 800_000),
        # 4 x 1.6 Tb/s = 6,400,000 Mb/s = 800,000 MB/s, exactly at its line of 4 x 1,600,000.
        (FOUR, "6400000", 800_000),
        # One Mb/s more than four 1.6 Tb/s ports: no rate, left unknown.
        (FOUR, "6400001", None),
        # Two ports: the line stays 3,200,000.
        ("mlx5_0+mlx5_1", "3200000", 400_000),
        ("mlx5_0+mlx5_1", "3200001", None),
        # Slingshot's 200000000 is past even eight ports' 12,800,000.
        (EIGHT, "200000000", None),
        ("cxi0", "200000000", None),
    ],
)
def test_a_fused_devices_speed_is_read_up_to_its_ports_line(
    tmp_path: Path, name: str, speed: str, mbps: int | None
) -> None:
    assert _speeds(tmp_path, [(name, speed)]) == {name: mbps}


@pytest.mark.parametrize("speed", ["0", "-1"])
def test_nccls_own_word_for_no_speed_is_left_unknown_not_refused(tmp_path: Path, speed: str) -> None:
    # NCCL reads speed <= 0 as "not stated" and assumes 10 Gb/s (topo.cc, ncclTopoAddNet: "Some NICs define
    # speed = -1"); a plugin whose libfabric provider reports no link speed (EFA: 0 bit/s, / 1e6 = 0 Mb/s)
    # writes speed="0". Base and b0952c6 refused the whole file at that line (exit 2); the port keeps no
    # speed, with a note, as NCCL's socket default of 10000 does.
    path = tmp_path / "topo.xml"
    path.write_text(
        f'<system version="1"><cpu numaid="0"><nic><net name="rdmap16s27" dev="0" speed="{speed}" port="1" '
        'guid="0x1" gdr="1"/></nic></cpu></system>\n'
    )
    result = import_files("nccl-xml", [path], node="n")
    (nic,) = [o for o in result.inventory.objects.values() if o.kind == "nic"]
    assert "bandwidth_mbps" not in nic.quantities
    assert any(f"speed={speed!r}" in str(n) and "left unknown" in str(n) for n in result.notes)


@pytest.mark.parametrize("speed", ["fast", "1.5", "+1", "00x", "-1.5", "-"])
def test_a_speed_that_is_no_whole_number_is_still_refused(tmp_path: Path, speed: str) -> None:
    path = tmp_path / "topo.xml"
    path.write_text(
        f'<system version="1"><cpu numaid="0"><nic><net name="mlx5_0" dev="0" speed="{speed}" port="1" '
        'guid="0x1" gdr="1"/></nic></cpu></system>\n'
    )
    with pytest.raises(TopologError) as err:
        import_files("nccl-xml", [path], node="n")
    assert any(f"speed={speed!r}" in d.message for d in err.value.diagnostics)
