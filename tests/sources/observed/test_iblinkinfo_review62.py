"""Review R-OB (round 16): two port lines infiniband-diags really prints, which the iblinkinfo reader of 55ff0b22
refused at their line (exit 2, so the whole observation run stopped).

Both shapes are in rdma-core's infiniband-diags/iblinkinfo.c, print_port():
- an FDR10 link (Mellanox's extension, no extended speed): the speed column is `sprintf(speed, "10.0 Gbps (FDR10)")`;
- a port that is not Down but has no far end in the fabric scan: `snprintf(remote_str, 256, "    \\"Port not
  available\\"\\n")` in place of the far end's LID, port and description.
"""

from __future__ import annotations

from verifier.sources.observed import iblinkinfo
from verifier.sources.observed.sniff import sniff

FDR10 = """\
Switch: 0x0002c90200482d08 MF0;switch-a:SX6036/U1:
           2    1[  ] ==( 4X  10.0 Gbps (FDR10) Active/  LinkUp)==>       5    1[  ] "dgx05 mlx5_3" ( )
"""

NOT_AVAILABLE = """\
CA: dgx05 mlx5_1:
      0xb8599f0300226271      9    1[  ] ==( 4X        106.25 Gbps Initialize/  LinkUp)==>    "Port not available"
Switch: 0xfc6a1c0300e3f0a0 MF0;leaf1:MQM9700/U1:
          12    1[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>       9    1[  ] "dgx05 mlx5_3" ( )
          12    2[  ] ==( 4X        106.25 Gbps Armed/  LinkUp)==>    "Port not available"
"""


def test_fdr10_link_is_read() -> None:
    # 4X at FDR10: 10 Gb/s of data per lane (64b/66b over 10.3125 Gb/s signalling), the kernel's and ibstat's
    # `Rate: 40` -> 4 x 10 = 40 Gb/s = 40,000 Mb/s, for dgx05 mlx5_3 port 1 (the switch port's far end, line 2).
    assert sniff(FDR10) == iblinkinfo.FORMAT
    (port,) = iblinkinfo.read(FDR10, "l.txt", "fabric").nic_ports
    assert (port.host, port.device, port.port, port.state, port.rate_mbps, port.source.line) == (
        "dgx05",
        "mlx5_3",
        1,
        "Active",
        40_000,
        2,
    )


def test_port_whose_far_end_was_not_reached() -> None:
    # Line 2: dgx05 mlx5_1's own port 1, Initialize/LinkUp (ibstat's word: Initializing) at 4X NDR = 400,000 Mb/s,
    # far end not reached: read for its own state. Line 4: dgx05 mlx5_3 as leaf1 port 1's far end (as before).
    # Line 5: leaf1's own port 2, Armed, far end not reached: no host adapter named, passed over.
    obs = iblinkinfo.read(NOT_AVAILABLE, "l.txt", "fabric")
    got = [(p.host, p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.source.line) for p in obs.nic_ports]
    assert got == [
        ("dgx05", "mlx5_1", 1, "Initializing", "LinkUp", 400_000, 2),
        ("dgx05", "mlx5_3", 1, "Active", "LinkUp", 400_000, 4),
    ]
