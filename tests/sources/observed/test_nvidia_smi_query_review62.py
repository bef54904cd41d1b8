"""Review R-OB (round 16): two misreadings of the `--query-gpu` CSV reader of 9895ddd5.

1. `amd-smi list --csv` (ROCm's amd-smi documentation, "Working with Partitioned Devices": `gpu,gpu_bdf,gpu_uuid`
   then `0,0000:0c:00.0,c0ff74a1-0000-1000-80b1-06985c515c91`) was taken for nvidia-smi's CSV (its `gpu_uuid` is
   nvidia-smi's alias of `uuid`): AMD GPUs read as NVIDIA GPUs named by UUID alone, one OBS005 per GPU, exit 0. The
   base refused the file (not a format topolog reads). nvidia-smi separates its fields by `, `; amd-smi by `,`.
2. A log whose rows give one index to two GPUs (samples before and after a reboot that renumbered the GPUs, or two
   hosts' outputs joined) kept every (index, UUID) pair's last row: a GPU gone after the reboot stayed beside the
   GPU that took its index, and the host looked whole. Refused at the row, naming the earlier line.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.observed import nvidia_smi_query
from verifier.sources.observed.sniff import sniff

AMD_SMI_LIST = (
    "gpu,gpu_bdf,gpu_uuid\n"
    "0,0000:0c:00.0,c0ff74a1-0000-1000-80b1-06985c515c91\n"
    "1,0000:0c:00.0,c0ff74a1-0000-1000-80b1-06985c515c91\n"
)


def test_amd_smi_list_csv_is_not_nvidia_smi() -> None:
    assert sniff(AMD_SMI_LIST) != nvidia_smi_query.FORMAT


def test_nvidia_smi_header_still_taken() -> None:
    # The same fields as nvidia-smi prints them (`, ` between fields) stay this format's.
    text = "gpu_bus_id, gpu_uuid, index\n00000000:18:00.0, GPU-faae5314-b87e-87c0-400b-b7cfb9e7b310, 0\n"
    assert sniff(text) == nvidia_smi_query.FORMAT
    assert nvidia_smi_query.read(text, "q.csv", "h").gpus[0].index == 0


U = [f"GPU-aaaaaaaa-0000-0000-0000-00000000000{i}" for i in range(5)]


def test_index_given_to_another_gpu_after_a_reboot_is_refused() -> None:
    # Run 1 (lines 1-5): indexes 0-3 are U0-U3. Run 2 (lines 6-9) after GPU U1 was lost: U0, U2, U3 renumbered
    # 0, 1, 2. Line 8 gives index 1 to U2 where line 3 gave it to U1 (line 7, U0 at 0, agrees with line 2).
    header = "index, uuid, pcie.link.width.current"
    run1 = [f"{i}, {U[i]}, 16" for i in range(4)]
    run2 = [f"{i}, {u}, 16" for i, u in enumerate([U[0], U[2], U[3]])]
    text = "\n".join([header, *run1, header, *run2]) + "\n"
    with pytest.raises(TopologError) as err:
        nvidia_smi_query.read(text, "q.csv", "h")
    (diag,) = err.value.diagnostics
    assert diag.location.line == 8
    assert f"index 1 is the GPU of uuid {U[2]} here but of uuid {U[1]} at line 3" in diag.message


def test_same_gpus_sampled_twice_still_keep_the_last_row() -> None:
    # One boot: U0 and U1 keep indexes 0 and 1 in both runs; U0's last sample (line 5, x8) is the one kept.
    header = "index, uuid, pcie.link.width.current"
    text = f"{header}\n0, {U[0]}, 16\n1, {U[1]}, 16\n{header}\n0, {U[0]}, 8\n1, {U[1]}, 16\n"
    obs = nvidia_smi_query.read(text, "q.csv", "h")
    assert sorted((g.index, g.pcie_width_current, g.source.line) for g in obs.gpus) == [(0, 8, 5), (1, 16, 6)]


def test_gpu_that_requires_a_reset_in_any_field_needs_a_reset() -> None:
    # 3. A GPU NVML answers NVML_ERROR_RESET_REQUIRED for prints `[GPU requires reset]` in the fields it cannot
    # read. The reader took that as unknown values: a query without reset_status.* read such a GPU as healthy.
    # GPU 0 (line 2): both fields say it -> the reset verdict ("reset", as `reset_status.reset_required` Yes is
    # read); GPU 1 (line 3): values read, no recovery.
    text = (
        "index, pcie.link.width.current, utilization.gpu [%]\n"
        "0, [GPU requires reset], [GPU requires reset]\n"
        "1, 16, 0 %\n"
    )
    g0, g1 = nvidia_smi_query.read(text, "q.csv", "h").gpus
    assert (g0.recovery_action, g0.pcie_width_current, g0.utilization_percent) == ("reset", None, None)
    assert (g1.recovery_action, g1.pcie_width_current, g1.utilization_percent) == (None, 16, 0)
