"""verifier.facts.observed_network: NIC ports, xGMI peers, widths stated alone and measured runs as rows."""

from __future__ import annotations

from fractions import Fraction

from verifier.core.errors import SourceLocation
from verifier.facts.observed import ObservedSettings
from verifier.facts.observed_network import network_facts
from verifier.sources.inventory.loader import load_inventory_text
from verifier.sources.observed.identity import MatchSettings
from verifier.sources.observed.model import (
    BandwidthMeasurement,
    GpuObservation,
    GpuRef,
    NicPortObservation,
    Observations,
    ScaleupLinkObservation,
)

INVENTORY = load_inventory_text(
    """\
apiVersion: topolog.dev/v1
objects:
  - name: a
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2, labels: {name: "mlx5_{i}"}}
  - name: b
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: "nic{i}", kind: nic, count: 2}
""",
    "t.yaml",
)


def _at(line: int) -> SourceLocation:
    return SourceLocation("obs.txt", line)


def _port(host: str, device: str, line: int, rate: int | None = 400_000) -> NicPortObservation:
    return NicPortObservation(_at(line), None, host, device, 1, "Active", "LinkUp", rate, "InfiniBand")


def test_nic_ports_by_name_label_then_by_index() -> None:
    obs = Observations(
        nic_ports=(
            _port("a", "mlx5_1", 1),  # a's NICs carry name labels: mlx5_1 is a/nic1
            _port("a", "mlx5_7", 2),  # no NIC of a is named mlx5_7: unmatched, never by index
            _port("b", "mlx5_0", 3),  # b's NICs carry none: mlx5_0 is b/nic0 by index
            _port("b", "mlx5_5", 4),  # b has no NIC 5
            _port("nowhere", "mlx5_0", 5),  # an unknown host is verifier.facts.observed's to report
        )
    )
    rows = network_facts(INVENTORY, obs)
    assert rows["observed_nic_port"] == [
        ("a/nic1", 1, "Active", "LinkUp", "InfiniBand", "obs.txt:1"),
        ("b/nic0", 1, "Active", "LinkUp", "InfiniBand", "obs.txt:3"),
    ]
    assert rows["observed_nic_port_rate"] == [("a/nic1", 1, 400_000, "obs.txt:1"), ("b/nic0", 1, 400_000, "obs.txt:3")]
    assert rows["observed_unmatched"] == [
        ("a", "NIC mlx5_7 port 1", "no NIC of the node has the name label 'mlx5_7'", "obs.txt:2"),
        ("b", "NIC mlx5_5 port 1", "no NIC of the node has index 5", "obs.txt:4"),
    ]


def test_a_port_whose_rate_is_not_stated_has_its_state_but_no_rate_row() -> None:
    # Plain ibv_devinfo states no rate (None): the port's state row is made (OBS103/OBS106 judge it), but
    # no rate row, where a 0 would have made OBS104 call an Active port slow. a/nic0 stated 200,000 Mb/s.
    obs = Observations(nic_ports=(_port("a", "mlx5_1", 1, None), _port("a", "mlx5_0", 2, 200_000)))
    rows = network_facts(INVENTORY, obs)
    assert rows["observed_nic_port"] == [
        ("a/nic0", 1, "Active", "LinkUp", "InfiniBand", "obs.txt:2"),
        ("a/nic1", 1, "Active", "LinkUp", "InfiniBand", "obs.txt:1"),
    ]
    assert rows["observed_nic_port_rate"] == [("a/nic0", 1, 200_000, "obs.txt:2")]


def test_without_index_as_a_key_unlabelled_nics_match_nothing() -> None:
    settings = ObservedSettings(match=MatchSettings(("uuid", "pci_bus_id")))
    rows = network_facts(INVENTORY, Observations(nic_ports=(_port("b", "mlx5_0", 3),)), settings)
    assert rows["observed_nic_port"] == []
    assert rows["observed_unmatched"] == [
        (
            "b",
            "NIC mlx5_0 port 1",
            "the node's NICs declare no name label (name: mlx5_0) and index is not an identity key",
            "obs.txt:3",
        )
    ]


def test_width_now_only_where_the_maximum_is_not_stated() -> None:
    alone = GpuObservation(_at(1), None, "a", "amd", index=0, pcie_width_current=8)
    both = GpuObservation(_at(2), None, "a", "nvidia", index=1, pcie_width_current=8, pcie_width_max=16)
    rows = network_facts(INVENTORY, Observations(gpus=(alone, both)))
    assert rows["observed_pcie_lanes_now"] == [("a/gpu0", 8, "obs.txt:1")]  # gpu1: OBS001's (both stated)


def test_xgmi_peers_name_both_gpus() -> None:
    link = ScaleupLinkObservation(
        _at(9), None, GpuRef("a", index=0), 1, "inactive", None, "xgmi", peer=GpuRef("a", index=1)
    )
    assert network_facts(INVENTORY, Observations(links=(link,)))["observed_xgmi_peer"] == [
        ("a/gpu0", "a/gpu1", 0, "obs.txt:9")
    ]


def _row(
    line: int, gpus: tuple[GpuRef, ...], size: int, busbw: str, in_place: bool, wrong: int | None = 0
) -> BandwidthMeasurement:
    gbps = Fraction(busbw)
    return BandwidthMeasurement(
        _at(line), None, "nccl-tests", "all_reduce_perf", ("a", "b"), gpus, 2, size, gbps, gbps * 1000, in_place, wrong
    )


def test_a_run_peaks_at_its_largest_size_on_its_better_side() -> None:
    gpus = (GpuRef("a", index=0), GpuRef("a", index=1), GpuRef("b", index=0), GpuRef("b", index=1))
    rows = network_facts(
        INVENTORY,
        Observations(
            bandwidth=(
                _row(10, gpus, 1024, "999.99", False),  # small: not the peak, however fast
                _row(10, gpus, 1024, "999.99", True),
                _row(11, gpus, 2048, "40.50", False),
                _row(11, gpus, 2048, "41.25", True),  # the better side at the largest size: 41,250 MB/s
            )
        ),
    )
    assert rows["observed_run"] == [("obs.txt:10", "nccl-tests", "all_reduce_perf", 4, 2, "a/gpu0", "obs.txt:10")]
    assert rows["observed_run_gpu"] == [("obs.txt:10", g) for g in ("a/gpu0", "a/gpu1", "b/gpu0", "b/gpu1")]
    assert rows["observed_run_peak"] == [("obs.txt:10", 2048, 41_250, "obs.txt:11")]
    assert rows["observed_run_wrong"] == []


def test_wrong_values_at_the_smallest_size_and_how_many_sizes() -> None:
    gpus = (GpuRef("a", index=0), GpuRef("a", index=1))
    rows = network_facts(
        INVENTORY,
        Observations(
            bandwidth=(
                _row(10, gpus, 1024, "1", False, 0),
                _row(11, gpus, 2048, "2", True, 7),  # the smallest size with wrong values: 7 at 2048 B
                _row(12, gpus, 4096, "3", False, 2),
                _row(13, gpus, 8192, "4", False, None),  # not checked
            )
        ),
    )
    assert rows["observed_run_wrong"] == [("obs.txt:10", 2, 2048, 7, "obs.txt:11")]


def test_a_run_with_an_unknown_gpu_or_a_shared_gpu_is_not_judged() -> None:
    unknown = (GpuRef("a", index=0), GpuRef("a", index=7))
    shared = (GpuRef("b", index=1), GpuRef("b", index=1))
    rows = network_facts(
        INVENTORY, Observations(bandwidth=(_row(20, unknown, 8, "1", False), _row(30, shared, 8, "1", False)))
    )
    assert rows["observed_run"] == [] and rows["observed_run_peak"] == []
    assert [(n, d) for n, d, _, _ in rows["observed_unmatched"]] == [("a", "GPU a GPU 7")]


def test_a_rank_on_a_host_the_inventory_lacks_is_an_unknown_host() -> None:
    gpus = (GpuRef("a", index=0), GpuRef("elsewhere", index=0))
    rows = network_facts(INVENTORY, Observations(bandwidth=(_row(40, gpus, 8, "1", False),)))
    assert rows["observed_unknown_host"] == [("elsewhere", "obs.txt")]
    assert rows["observed_run"] == []
