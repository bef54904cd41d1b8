"""docs/deploy/: the example manifests are Kubernetes objects, and they agree with the service and the policies."""

from __future__ import annotations

from typing import Any

import yaml
from service.serve_helpers import ROOT

from verifier.cli.serve_command import serve_cmd
from verifier.sources.jobs.kubernetes import API_GROUPS

DEPLOY = ROOT / "docs" / "deploy"


def _objects() -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for f in sorted(DEPLOY.glob("*.yaml")):
        docs += [d for d in yaml.safe_load_all(f.read_text()) if d is not None]
    return docs


def test_every_document_is_a_kubernetes_object() -> None:
    objects = _objects()
    for o in objects:
        assert (isinstance(o.get("apiVersion"), str) and "/" in o["apiVersion"]) or o.get("apiVersion") == "v1", o
        assert isinstance(o.get("kind"), str) and o["kind"][0].isupper()
        assert isinstance(o.get("metadata"), dict) and o["metadata"].get("name")
    kinds = sorted((o["apiVersion"], o["kind"]) for o in objects)
    assert kinds == [
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
        ("apps/v1", "Deployment"),
        ("v1", "ConfigMap"),
        ("v1", "Service"),
    ]


def _one(kind: str) -> dict[str, Any]:
    (found,) = [o for o in _objects() if o["kind"] == kind]
    return found


def test_the_policies_configmap_is_the_shipped_policies() -> None:
    data = _one("ConfigMap")["data"]
    shipped = sorted(p.name for p in [*(ROOT / "policies").glob("*.cedar"), ROOT / "policies" / "schema.cedarschema"])
    assert sorted(data) == shipped
    for name, text in data.items():
        assert text == (ROOT / "policies" / name).read_text(), name


def test_the_deployment_runs_serve_with_options_it_has_and_tls_beyond_loopback() -> None:
    deployment = _one("Deployment")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    args = container["args"]
    assert args[0] == "serve"
    known = {opt for p in serve_cmd.params for opt in getattr(p, "opts", [])}
    flags = {a.split("=", 1)[0] for a in args[1:] if a.startswith("--")}
    assert flags <= known, flags - known
    assert {"--tls-cert", "--tls-key", "--token-file"} <= flags and "--host" in flags
    port = next(a.split("=")[1] for a in args if a.startswith("--port="))
    assert container["ports"][0]["containerPort"] == int(port)
    mounts = {m["mountPath"] for m in container["volumeMounts"]}
    for a in args[1:]:
        value = a.split("=", 1)[1] if "=" in a else ""
        if value.startswith("/etc/"):
            assert any(value == m or value.startswith(m + "/") for m in mounts), value


def test_the_webhook_and_the_service_point_at_the_admission_endpoint() -> None:
    service, webhook, deployment = _one("Service"), _one("ValidatingWebhookConfiguration"), _one("Deployment")
    for hook in webhook["webhooks"]:  # the job kinds, and Deployments and StatefulSets where opted in
        target = hook["clientConfig"]["service"]
        assert target["path"] == "/v1/admission" and hook["admissionReviewVersions"] == ["v1"]
        assert hook["failurePolicy"] == "Fail"  # closed when no replica answers
        assert (target["name"], target["namespace"]) == (service["metadata"]["name"], service["metadata"]["namespace"])
        assert target["port"] in [p["port"] for p in service["spec"]["ports"]]
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()


def test_the_webhook_asks_about_the_kinds_the_job_loading_reads() -> None:
    # resource (plural) -> kind, as the Kubernetes API names them.
    kinds = {
        "jobs": "Job",
        "cronjobs": "CronJob",
        "statefulsets": "StatefulSet",
        "deployments": "Deployment",
        "jobsets": "JobSet",
        "leaderworkersets": "LeaderWorkerSet",
        "workloads": "Workload",
        "pytorchjobs": "PyTorchJob",
        "tfjobs": "TFJob",
        "mpijobs": "MPIJob",
        "xgboostjobs": "XGBoostJob",
        "paddlejobs": "PaddleJob",
        "jaxjobs": "JAXJob",
        "mxjobs": "MXJob",
        "trainjobs": "TrainJob",
        "rayjobs": "RayJob",
        "rayclusters": "RayCluster",
        "rayservices": "RayService",
    }
    every = [rule for hook in _one("ValidatingWebhookConfiguration")["webhooks"] for rule in hook["rules"]]
    # The scale subresource rules (kubectl scale, HPAs) are checked in test_serve_admission_scale.py.
    rules = [rule for rule in every if "/" not in rule["resources"][0]]
    for rule in rules:
        (resource,) = rule["resources"]
        (group,) = rule["apiGroups"]
        expected = API_GROUPS[kinds[resource]]
        assert any(e.startswith(group + "/") for e in expected), (resource, group, expected)
        assert rule["operations"] == ["CREATE", "UPDATE"]
    # Every kind the job loading reads is asked about (Pod aside: a workload's pods are judged with it;
    # DisaggregatedSet aside: its controller makes a LeaderWorkerSet per role and slice, each asked
    # about as it is created, c6bde14).
    asked = {kinds[r] for rule in rules for r in rule["resources"]}
    assert asked == set(API_GROUPS) - {"Pod", "DisaggregatedSet"}
