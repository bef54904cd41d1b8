"""R-RT3 (round 16): iblinkinfo host adapters whose RDMA device name is not of the `mlx5_N` form.

rdma-core names devices by more than `<driver>_<N>`: a RoCE LAG is `mlx5_bond_0` (mlx5 driver), and rdma-core's
udev naming policy (kernel-boot/rdma_rename.c, NAME_PCI / NAME_ONBOARD) renames `mlx5_0` to `ibp12s0` (InfiniBand,
PCI bus 12 slot 0) or `rocep1s0f0`. rdma-ndd then writes `%h %d` with that name (`dgx05 ibp12s0`). The reader of
55ff0b22 took only `xxx_N` names, so such a port was passed over even where a NIC declares that exact name.
"""

from __future__ import annotations

from verifier.sources.observed import iblinkinfo

RENAMED = """\
CA: dgx05 ibp12s0:
      0xb8599f0300226270      7    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )
Switch: 0xfc6a1c0300e3f0a0 MF0;leaf1:MQM9700/U1:
          12    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       9    1[  ] "dgx05 mlx5_bond_0" ( )
          12    4[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      11    1[  ] "n01 HCA-1" ( )
"""


def test_renamed_and_bonded_devices_are_read() -> None:
    # Line 2: dgx05 ibp12s0's own port 1, Down/Polling, no rate. Line 4: dgx05 mlx5_bond_0 as leaf1 port 1's far
    # end, 4X HDR = 4 x 50 = 200,000 Mb/s. Line 5: `n01 HCA-1` names no RDMA device (upper case, a hyphen): skipped.
    obs = iblinkinfo.read(RENAMED, "fabric/iblinkinfo.txt", "fabric")
    got = [(p.host, p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.source.line) for p in obs.nic_ports]
    assert got == [
        ("dgx05", "ibp12s0", 1, "Down", "Polling", None, 2),
        ("dgx05", "mlx5_bond_0", 1, "Active", "LinkUp", 200_000, 4),
    ]
