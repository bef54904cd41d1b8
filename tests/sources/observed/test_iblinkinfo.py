"""`iblinkinfo`: host adapter ports named `<host> <device>` in the fabric's link listing (the ArchWiki sample,
samples/iblinkinfo/README.md, and the shape infiniband-diags prints). Base topolog refuses every such file, so
each test here fails on it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import run_cli

from verifier.core.errors import TopologError
from verifier.sources.observed import iblinkinfo
from verifier.sources.observed.sniff import sniff

SAMPLE = Path(__file__).parent / "samples" / "iblinkinfo" / "archwiki-two-cas.txt"
ROOT = Path(__file__).resolve().parents[3]

FABRIC = """\
CA: dgx05 mlx5_2:
      0xb8599f0300226270      7    1[  ] ==(                Down/ Polling)==>             [  ] "" ( )
Switch: 0xfc6a1c0300e3f0a0 MF0;leaf1:MQM9700/U1:
          12    1[  ] ==( 4X        53.125 Gbps Active/  LinkUp)==>       9    1[  ] "dgx05 mlx5_3" ( )
          12    2[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      10    1[  ] "storage01 mlx5_0" ( )
          12    3[  ] ==(                Down/ Polling)==>             [  ] "" ( )
          12    4[  ] ==( 4X        106.25 Gbps Active/  LinkUp)==>      11    1[  ] "n01 HCA-1" ( )
"""


def test_archwiki_sample() -> None:
    # Line 2: the first CA's port cabled to "kvm mlx4_0" port 1; line 4: "hostname mlx4_0"'s own port 1. 4X 5.0 Gbps
    # (DDR) is 4 x 5 = 20 Gb/s = 20,000 Mb/s, as ibstat's `Rate: 20`.
    text = SAMPLE.read_text()
    assert sniff(text) == iblinkinfo.FORMAT
    obs = iblinkinfo.read(text, "l.txt", "fabric")
    got = [(p.host, p.device, p.port, p.state, p.physical_state, p.rate_mbps, p.source.line) for p in obs.nic_ports]
    assert got == [
        ("kvm", "mlx4_0", 1, "Active", "LinkUp", 20_000, 2),
        ("hostname", "mlx4_0", 1, "Active", "LinkUp", 20_000, 4),
    ]
    assert (obs.files[0].host, obs.hosts) == (None, ())


def test_fabric_ports_by_description() -> None:
    # dgx05 mlx5_2 Down/Polling on its own line (2, no rate); dgx05 mlx5_3 as the far end of leaf1 port 1 at
    # 4X HDR: 4 x 50 = 200 Gb/s (line 4); storage01 mlx5_0 at 4X NDR 400 Gb/s (line 5); "n01 HCA-1" names no RDMA
    # device (not read); leaf1's own Down port 3 names no far end.
    obs = iblinkinfo.read(FABRIC, "l.txt", "fabric")
    got = [(p.host, p.device, p.state, p.physical_state, p.rate_mbps, p.source.line) for p in obs.nic_ports]
    assert got == [
        ("dgx05", "mlx5_2", "Down", "Polling", None, 2),
        ("dgx05", "mlx5_3", "Active", "LinkUp", 200_000, 4),
        ("storage01", "mlx5_0", "Active", "LinkUp", 400_000, 5),
    ]


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ('  1    1[  ] ==( 4X 99.9 Gbps Active/  LinkUp)==>  2  1[  ] "h mlx5_0" ( )', "expected a width of 1, 2"),
        ('  1    1[  ] ==( 3X 25.78125 Gbps Active/  LinkUp)==>  2  1[  ] "h mlx5_0" ( )', "expected a width of 1, 2"),
        ('  1    1[  ] ==(                Active/  LinkUp)==>  2  1[  ] "h mlx5_0" ( )', "an Active port with no"),
        ('  1    1[  ] ==( 4X 25.78125 Gbps Happy/  LinkUp)==>  2  1[  ] "h mlx5_0" ( )', "port state Happy/LinkUp"),
        ("  1    1[  ] ==( 4X 25.78125 Gbps Active/  LinkUp)==>  2  1[  ] h mlx5_0", "far end"),
    ],
)
def test_refused_at_its_line(line: str, words: str) -> None:
    with pytest.raises(TopologError) as err:
        iblinkinfo.read(f"Switch: 0xfc6a1c0300e3f0a0 leaf1:\n{line}\n", "l.txt", "fabric")
    (diag,) = err.value.diagnostics
    assert (diag.location.line, words in diag.message) == (2, True), diag.message


def test_verify_judges_the_ports_it_names(tmp_path: Path) -> None:
    # The shipped pod matches NICs by index (mlx5_k is nick): dgx05/nic2 Down/Polling where its fabric link is
    # declared working -> OBS103 (line 2); dgx05/nic3 at 200,000 Mb/s of its 400 Gb/s link -> OBS104 (line 4);
    # storage01 is no node of the pod: passed over, and the folder's name (`fabric`) is no host.
    (tmp_path / "fabric").mkdir()
    (tmp_path / "fabric" / "iblinkinfo.txt").write_text(FABRIC)
    code, out, err = run_cli(
        "verify", str(ROOT / "inventories/dgx-h100-pod.yaml"), "--observed", str(tmp_path), "--format", "json"
    )
    assert code == 1, err
    found = sorted(
        (f["rule"], f["subjects"], f["message"].rsplit(":", 1)[-1])
        for f in json.loads(out)["findings"]
        if f["rule"].startswith("OBS")
    )
    assert found == [("OBS103", ["dgx05/nic2"], "2)."), ("OBS104", ["dgx05/nic3"], "4).")]


def test_line_mode() -> None:
    # `iblinkinfo -l`: the node's GUID and description before each port (padded inside the quotes, as
    # infiniband-diags prints them), the far end's GUID before its LID: host ib-test-7, mlx4_0 port 1, 4X FDR = 56 Gb/s.
    text = (
        '0xf452140300f55051 "              ib-test-7 mlx4_0"     37    1[  ] '
        "==( 4X       14.0625 Gbps Active/  LinkUp)==>"
        '  0xf45214030067c630      5   16[  ] "MF0;switch-e1be74:SX6036/U1" ( )\n'
    )
    assert sniff(text) == iblinkinfo.FORMAT
    (p,) = iblinkinfo.read(text, "l.txt", "fabric").nic_ports
    assert (p.host, p.device, p.port, p.rate_mbps) == ("ib-test-7", "mlx4_0", 1, 56_000)
