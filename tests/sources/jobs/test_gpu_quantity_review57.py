"""Review of the GPU quantity bound (6a49c11): the bound is on the number, not on how many digits
it is written with.

Kubernetes reads a quantity "00000008" as 8 (leading zeros are digits of the same number), so a
Pod that limits nvidia.com/gpu: "00000008" asks 8 GPUs, which is within 0..1,000,000.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import read_jobs_text

BY_NAMESPACE = parse_rules(["namespace=Team"])


def _pod(quantity: str) -> str:
    return (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: research\nspec:\n"
        "  containers:\n  - name: c\n    resources:\n      limits:\n"
        f"        nvidia.com/gpu: {quantity}\n"
    )


@pytest.mark.parametrize(("quantity", "gpus"), [('"00000008"', 8), ('"000000000000000000001"', 1), ('"8"', 8)])
def test_leading_zeros_are_the_same_count(quantity: str, gpus: int) -> None:
    (job,) = read_jobs_text(_pod(quantity), "pod.yaml", BY_NAMESPACE)
    # One pod, one container: the job asks what the container limits.
    assert job.gpus == gpus


def test_a_long_count_is_still_refused_at_its_line() -> None:
    # 1,000,001 written with leading zeros is still refused; line 11 holds the quantity. (Unquoted, kubectl
    # would read it as octal 262,145: the refusal names the leading zero since round 61.)
    with pytest.raises(
        TopologError, match=r"pod\.yaml:11:.*(expected a whole number of devices from 0 to 1,000,000|leading zero)"
    ):
        read_jobs_text(_pod('"0001000001"'), "pod.yaml", BY_NAMESPACE)
