"""Review R-RT (round 16): only NVML's RECOVER_IMEX_DOMAIN reads as the IMEX domain's recovery (OBS013).

RT62 read any GPU Recovery Action holding the word "imex" as the domain's recovery, under which the GPU stays in
service. An action naming IMEX beside another verb (`Reboot IMEX`, `Reset GPU and IMEX Domain`; no such value in
NVML 615's nvmlDeviceGpuRecoveryAction_t, whose only IMEX value is RECOVER_IMEX_DOMAIN) asks for more than that,
so it stays an action topolog does not know: that GPU out of service (OBS004), fail closed.
"""

from __future__ import annotations

import pytest

from verifier.sources.observed.model import IMEX_RECOVERY, UNKNOWN_RECOVERY, recovery_action


@pytest.mark.parametrize(
    "printed", ["Recover IMEX Domain", "RECOVER_IMEX_DOMAIN", "GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN"]
)
def test_nvmls_imex_value_is_the_domains_recovery(printed: str) -> None:
    # The enum value's own words (nvml.h NVML_GPU_RECOVERY_ACTION_RECOVER_IMEX_DOMAIN), in either spelling.
    assert recovery_action(printed, None, None) == IMEX_RECOVERY


@pytest.mark.parametrize("printed", ["Reboot IMEX", "Reset GPU and IMEX Domain", "IMEX Domain Node Reboot"])
def test_imex_beside_another_verb_is_not_the_domains_recovery(printed: str) -> None:
    # A reboot or reset is asked beside the domain: an unknown action under its printed words (OBS004).
    assert recovery_action(printed, None, None) == UNKNOWN_RECOVERY + printed
