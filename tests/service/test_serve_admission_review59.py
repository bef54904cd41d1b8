"""Review of c5c2f7c (R-JS, round 13): the admission webhook on a workload scaled to 0 replicas.

webhook.yaml now asks about Deployments and StatefulSets (CREATE and UPDATE). A GPU inference
Deployment scaled down to 0 by `kubectl apply` or a Helm upgrade (replicas: 0, an UPDATE of the
object, not of its scale subresource) runs no pod and asks the gate for no GPU, yet the job
loading refused it ("runs no pod ...: nothing to place") and the webhook denied it (403): the
gate stopped GPUs from being given back. It is allowed now, as a CPU-only object is.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from service.serve_helpers import Server, copy_inputs, serving
from service.test_serve_admission import UID, review

# A Deployment of 8-GPU pods (apps/v1 Deployment as `kubectl create deployment` writes it, with
# a GPU limit), scaled to 0: 0 pods x 8 GPUs = no GPU asked.
SCALED_DOWN = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "infer", "namespace": "team-a"},
    "spec": {
        "replicas": 0,
        "selector": {"matchLabels": {"app": "infer"}},
        "template": {
            "metadata": {"labels": {"app": "infer"}},
            "spec": {"containers": [{"name": "c", "image": "x", "resources": {"limits": {"nvidia.com/gpu": 8}}}]},
        },
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-admission-review59")
    copy_inputs(folder)
    with serving(folder) as s:
        yield s


def _answer(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    r = server.post("/v1/admission", body)
    assert r.status_code == 200, r.text
    response: dict[str, Any] = r.json()["response"]
    assert response["uid"] == UID
    return response


def test_a_gpu_deployment_scaled_to_zero_is_allowed(server: Server) -> None:
    response = _answer(server, review(SCALED_DOWN, "UPDATE"))
    assert response["allowed"] is True and response["status"]["code"] == 200
    assert "asks for no GPU, nothing to gate" in response["status"]["message"]
    assert "Deployment infer runs no pod" in response["status"]["message"]
