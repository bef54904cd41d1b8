"""Review R-JS2 (round 61) of the Kubernetes quantity reader: forms a user writes that the API server
reads as a whole count, and one it reads otherwise than topolog. Each count is worked out by hand.
"""

from __future__ import annotations

import pytest

from verifier.core.errors import TopologError
from verifier.sources.jobs.principal_rules import parse_rules
from verifier.sources.jobs.read import NoGpuRequested, read_jobs_text

RULES = parse_rules(["namespace=Team"])


def _pod(limit: str, request: str | None = None) -> str:
    # One Pod in namespace research limiting nvidia.com/gpu (and requesting it when `request` is given).
    requests = f"\n        requests: {{nvidia.com/gpu: {request}}}" if request is not None else ""
    return f"""apiVersion: v1
kind: Pod
metadata: {{name: q, namespace: research}}
spec:
  containers:
    - name: c
      image: x
      resources:
        limits: {{nvidia.com/gpu: {limit}}}{requests}
"""


@pytest.mark.parametrize(
    ("limit", "gpus"),
    [
        ("1e3", 1000),  # plain, not quoted: YAML text "1e3" (a float to Kubernetes' YAML), 1 x 10**3
        ("2.", 2),  # plain "2.": <digits>. of the quantity grammar
        ('"0.001k"', 1),  # 0.001 x 1000
        ('"20e-1"', 2),  # 20 / 10
        ('"+.5e1"', 5),  # 0.5 x 10
    ],
)
def test_a_whole_quantity_in_another_form_is_read(limit: str, gpus: int) -> None:
    (job,) = read_jobs_text(_pod(limit), "q.yaml", RULES)
    assert job.gpus == gpus


@pytest.mark.parametrize("limit", ['"-0"', '"0e5"', '"0.0"'])  # minus zero, 0 x 10**5, 0.0: all zero
def test_a_zero_quantity_in_another_form_asks_for_no_gpu(limit: str) -> None:
    with pytest.raises(NoGpuRequested):
        read_jobs_text(_pod(limit), "q.yaml", RULES)


def test_a_request_equal_to_its_limit_in_another_form_is_one_count() -> None:
    # limits 2, requests "2000m" (2000 / 1000 = 2): equal quantities, as the API server compares them.
    (job,) = read_jobs_text(_pod("2", '"2000m"'), "q.yaml", RULES)
    assert job.gpus == 2


@pytest.mark.parametrize("written", ["010", '"010"', "0017"])
def test_a_leading_zero_count_is_refused_not_read_as_ten(written: str) -> None:
    # Kubernetes: `nvidia.com/gpu: 010` unquoted is 0o10 = 8 GPUs (kubectl's YAML keeps YAML 1.1 octals),
    # quoted "010" is the quantity 10. topolog's loader keeps both as the text '010', so it cannot tell
    # which the cluster will read: reading 10 would be a silently wrong count (0017: 15 or 17); it is
    # refused at the value. `08` or `0007` read alike either way and are read (test_gpu_quantity_review57)
    # (line 9 of _pod's text, column 18 after `nvidia.com/gpu: `).
    with pytest.raises(TopologError, match=r"q\.yaml:9:18: .*leading zero is octal to kubectl"):
        read_jobs_text(_pod(written), "q.yaml", RULES)
