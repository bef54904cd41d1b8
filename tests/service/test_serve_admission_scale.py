"""The scale subresource: `kubectl scale deployment x --replicas=100` (or an HorizontalPodAutoscaler)
changes a workload's replicas without the workload passing the webhook's rule for it.

The API server's review of it is the example request of the Kubernetes documentation
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request):
kind autoscaling/v1 Scale, resource apps/v1 deployments, subResource "scale", operation UPDATE, and
an object (and oldObject) that is a Scale: metadata, spec.replicas and status, no pod template. The
gate cannot tell from it what GPUs the new pods ask for, so a scale up is refused (fail closed) with
the way it can judge; a scale down (or to 0) starts no pod and is allowed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from service.serve_helpers import ROOT, Server, copy_inputs, serving

UID = "b6a2c1f0-5a4e-4d6e-9f8c-1c2d3e4f5a6b"
WEBHOOK = ROOT / "docs" / "deploy" / "webhook.yaml"

# The kinds the webhook gates that have a scale subresource, and where that is written:
# apps/v1 Deployment and StatefulSet (Kubernetes' own), LeaderWorkerSet
# (kubernetes-sigs/lws api/leaderworkerset/v1/leaderworkerset_types.go at 024af08, the marker
# +kubebuilder:subresource:scale:specpath=.spec.replicas) and PyTorchJob (kubeflow/training-operator
# pkg/apis/kubeflow.org/v1/pytorch_types.go at 2f18ab7, specpath .spec.pytorchReplicaSpecs.Worker.replicas).
SCALABLE = {"deployments", "statefulsets", "leaderworkersets", "pytorchjobs"}


def _scale(replicas: int | None) -> dict[str, Any]:
    spec = {} if replicas is None else {"replicas": replicas}
    return {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "vllm", "namespace": "team-students"},
        "spec": spec,
        "status": {"replicas": 2, "selector": "app=vllm"},
    }


def review(new: int | None, old: int | None, resource: str = "deployments") -> dict[str, Any]:
    scale = {"group": "autoscaling", "version": "v1", "kind": "Scale"}
    gvr = {"group": "apps", "version": "v1", "resource": resource}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": UID,
            "kind": scale,
            "resource": gvr,
            "subResource": "scale",
            "requestKind": scale,
            "requestResource": gvr,
            "requestSubResource": "scale",
            "name": "vllm",
            "namespace": "team-students",
            "operation": "UPDATE",
            "userInfo": {"username": "admin", "groups": ["system:authenticated"]},
            "object": _scale(new),
            "oldObject": _scale(old),
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "UpdateOptions"},
        },
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-admission-scale")
    copy_inputs(folder)
    with serving(folder) as s:
        yield s


def _answer(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    r = server.post("/v1/admission", body)
    assert r.status_code == 200, r.text
    response: dict[str, Any] = r.json()["response"]
    assert response["uid"] == UID
    return response


def test_a_scale_up_is_refused_with_the_way_the_gate_can_judge(server: Server) -> None:
    # 2 -> 100 replicas of a Deployment: the Scale names no GPU; allowing it as "asks for no GPU"
    # would let 98 pods of whatever the template asks past the gate.
    response = _answer(server, review(100, 2))
    assert response["allowed"] is False and response["status"]["code"] == 403
    message = response["status"]["message"]
    assert "a scale of deployments/vllm from 2 to 100 replicas carries no pod template" in message
    assert "change spec.replicas on the deployment itself" in message


@pytest.mark.parametrize(("new", "old"), [(1, 2), (2, 2), (None, 2), (0, None)])
def test_a_scale_down_or_to_zero_is_allowed(server: Server, new: int | None, old: int | None) -> None:
    # Fewer (or as many) replicas start no new pod. A Scale written without spec.replicas is 0 (the
    # API omits an int32 0); a scale to 0 runs nothing even with no oldObject to compare.
    body = review(new, old)
    if old is None:
        body["request"]["oldObject"] = None
    response = _answer(server, body)
    assert response["allowed"] is True and "nothing to gate" in response["status"]["message"]


def test_a_scale_up_with_no_old_object_is_refused(server: Server) -> None:
    body = review(3, None)
    body["request"]["oldObject"] = None
    response = _answer(server, body)
    assert response["allowed"] is False and "to 3 replicas carries no pod template" in response["status"]["message"]


def test_a_scale_of_a_leaderworkerset_is_judged_the_same(server: Server) -> None:
    response = _answer(server, review(4, 1, "leaderworkersets"))
    assert response["allowed"] is False and "leaderworkersets/vllm from 1 to 4" in response["status"]["message"]


def test_a_scale_with_no_readable_count_is_refused(server: Server) -> None:
    body = review(3, 2)
    body["request"]["object"]["spec"]["replicas"] = "3"
    response = _answer(server, body)
    assert response["allowed"] is False and "no readable spec.replicas" in response["status"]["message"]


def _rules() -> list[tuple[str, dict[str, Any]]]:
    (config,) = [d for d in yaml.safe_load_all(WEBHOOK.read_text()) if d is not None]
    return [(hook["name"], rule) for hook in config["webhooks"] for rule in hook["rules"]]


def test_the_webhook_asks_about_the_scale_of_every_scalable_kind_it_gates() -> None:
    rules = _rules()
    main = {rule["resources"][0]: (hook, rule) for hook, rule in rules if "/" not in rule["resources"][0]}
    scale = {rule["resources"][0]: (hook, rule) for hook, rule in rules if "/" in rule["resources"][0]}
    assert set(scale) == {f"{kind}/scale" for kind in SCALABLE}
    for resource, (hook, rule) in scale.items():
        kind = resource.removesuffix("/scale")
        # In the same webhook (so the same namespaces) and API group as the kind itself; a scale is
        # always an UPDATE.
        assert hook == main[kind][0] and rule["apiGroups"] == main[kind][1]["apiGroups"], resource
        assert rule["operations"] == ["UPDATE"], resource
