"""POST /v1/admission: an AdmissionReview as the Kubernetes API server sends it, answered as it expects.

The request's shape follows the example request of the Kubernetes documentation
(https://kubernetes.io/docs/reference/access-authn-authz/extensible-admission-controllers/#request:
uid, kind, resource, requestKind, requestResource, name, namespace, operation, userInfo, object,
oldObject, dryRun, options) and the response its #response section (apiVersion, kind,
response.uid echoed, response.allowed, response.status.code and message).

The object under review is a topolog Jobs document (what the job loading reads today); the
hand-derived outcomes are those of test_serve_admit.py: inference.yaml fits rtx-n3 only
(admitted), impossible.yaml's 128 GPUs in one NVLink domain fit nowhere (refused, 403).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from cli_helpers import run_cli
from service.serve_helpers import ROOT, Server, copy_inputs, serving

UID = "705ab4f5-6393-11e8-b7cc-42010a800002"


def review(obj: dict[str, Any] | None, operation: str = "CREATE") -> dict[str, Any]:
    gvk = {"group": "topolog.dev", "version": "v1", "kind": "Jobs"}
    gvr = {"group": "topolog.dev", "version": "v1", "resource": "jobs"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": UID,
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": "my-job",
            "namespace": "team-students",
            "operation": operation,
            "userInfo": {"username": "admin", "uid": "014fbff9a07c", "groups": ["system:authenticated"]},
            "object": obj,
            "oldObject": None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def _job(name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((ROOT / "inventories" / "jobs" / name).read_text())
    return doc


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-admission")
    copy_inputs(folder)
    with serving(folder) as s:
        yield s


def _answer(server: Server, body: dict[str, Any]) -> dict[str, Any]:
    r = server.post("/v1/admission", body)
    assert r.status_code == 200, r.text
    doc: dict[str, Any] = r.json()
    assert doc["apiVersion"] == "admission.k8s.io/v1" and doc["kind"] == "AdmissionReview"
    assert doc["response"]["uid"] == UID
    return doc["response"]  # type: ignore[no-any-return]


def test_a_placeable_job_is_allowed(server: Server) -> None:
    response = _answer(server, review(_job("inference.yaml")))
    assert response["allowed"] is True and response["status"]["code"] == 200
    assert server.revision()["revision"] in response["status"]["message"]


def test_a_job_that_fits_nowhere_is_refused_with_why(server: Server) -> None:
    response = _answer(server, review(_job("impossible.yaml")))
    assert response["allowed"] is False and response["status"]["code"] == 403
    assert "job moe-train-128 fits nowhere" in response["status"]["message"]


def test_an_object_no_job_loader_reads_is_refused_not_allowed(server: Server) -> None:
    response = _answer(server, review({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}}))
    assert response["allowed"] is False and "cannot read this object as a job" in response["status"]["message"]


# Kueue's sample Job (https://github.com/kubernetes-sigs/kueue/blob/main/site/static/examples/jobs/sample-job.yaml):
# 3 pods of cpu 1 and 200Mi, no GPU. Written with a name (the sample has generateName).
CPU_JOB = {
    "apiVersion": "batch/v1",
    "kind": "Job",
    "metadata": {"name": "sample-job", "namespace": "default", "labels": {"kueue.x-k8s.io/queue-name": "user-queue"}},
    "spec": {
        "parallelism": 3,
        "completions": 3,
        "template": {
            "spec": {
                "containers": [{"name": "dummy-job", "resources": {"requests": {"cpu": 1, "memory": "200Mi"}}}],
                "restartPolicy": "Never",
            }
        },
    },
}


def test_a_job_that_asks_for_no_gpu_is_allowed(server: Server) -> None:
    # Nothing the gate judges: a namespace's CPU-only Jobs pass the webhook, the reason said.
    response = _answer(server, review(CPU_JOB))
    assert response["allowed"] is True and response["status"]["code"] == 200
    assert "asks for no GPU, nothing to gate" in response["status"]["message"]
    assert "Job sample-job requests no GPU" in response["status"]["message"]


def test_a_job_asking_for_a_gpu_it_cannot_say_is_still_denied(server: Server) -> None:
    # The same Job with a GPU count that is no number: bad input, denied (never "no GPU").
    spec = json.loads(json.dumps(CPU_JOB))
    spec["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": "eight"}}
    response = _answer(server, review(spec))
    assert response["allowed"] is False and "cannot read this object as a job" in response["status"]["message"]


def test_delete_carries_no_object_and_is_allowed(server: Server) -> None:
    response = _answer(server, review(None, "DELETE"))
    assert response["allowed"] is True


@pytest.mark.parametrize(
    "body",
    [
        {"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {"uid": UID}},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"},
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"object": {}}},
        # A CREATE, an UPDATE or no operation at all, with no object: had been allowed as "nothing to place".
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": UID, "operation": "CREATE"},
        },
        {
            "apiVersion": "admission.k8s.io/v1",
            "kind": "AdmissionReview",
            "request": {"uid": UID, "operation": "UPDATE"},
        },
        {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": UID}},
    ],
)
def test_what_is_no_admission_review_is_a_400(server: Server, body: dict[str, Any]) -> None:
    assert server.post("/v1/admission", body).status_code == 400


# A Kubernetes Job as Kueue users write it (inventories/jobs/schedulers/kueue-pretrain.yaml: namespace
# research, 2 pods x 8 H100, one rack), on the DGX H100 pod, acting as its namespace's team
# (--principal-from namespace=Team). Derived in inventories/jobs/schedulers/README.md: Team research
# is the pod's tenant; 16 GPUs in one rack fit rack0 (dgx00 + dgx01) and rack1 (dgx04 + dgx05).
KUEUE_JOB = ROOT / "inventories" / "jobs" / "schedulers" / "kueue-pretrain.yaml"


@pytest.fixture(scope="module")
def pod_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    folder = tmp_path_factory.mktemp("serve-admission-pod")
    copy_inputs(folder, "dgx-h100-pod.yaml")
    rules = ("--principal-from", "namespace=Team", "--principal-from", "account=Team")
    with serving(folder, *rules, inventory="dgx-h100-pod.yaml") as s:
        yield s


def test_a_kubernetes_job_is_admitted_as_place_places_it(pod_server: Server) -> None:
    response = _answer(pod_server, review(yaml.safe_load(KUEUE_JOB.read_text())))
    assert response["allowed"] is True, response
    r = pod_server.post("/v1/admit", KUEUE_JOB.read_bytes())
    assert r.status_code == 200, r.text
    doc = r.json()
    (job,) = doc["placement"]["jobs"]
    assert job["principal"] == "research"
    assert [(p["domain"], p["nodes"]) for p in job["placements"]] == [("rack0", 2), ("rack1", 2)]
    code, out, _err = run_cli(
        "place", str(pod_server.folder / "dgx-h100-pod.yaml"), str(KUEUE_JOB),
        "--principal-from", "namespace=Team", "--principal-from", "account=Team", "--why-not", "--format", "json",
    )  # fmt: skip
    # The CLI's notes name the job file; the service's name the request body it was sent as.
    assert code == 0 and doc["placement"] == json.loads(out.replace(str(KUEUE_JOB), "<request body>"))
    assert any(n.startswith("<request body>:") for n in job["notes"])


def test_a_slurm_batch_script_is_admitted_on_any_node(pod_server: Server) -> None:
    # inventories/jobs/schedulers/finetune.sbatch: one node of 8 H100 under account research
    # (--principal-from account=Team: Team research, the pod's tenant); its README derives that it
    # fits each of the pod's 8 nodes, best dgx00 (450 GB/s: 18 NVLink 4 links of 25 GB/s).
    doc = pod_server.post("/v1/admit", (KUEUE_JOB.parent / "finetune.sbatch").read_bytes()).json()
    assert doc["admitted"] is True, doc
    (job,) = doc["placement"]["jobs"]
    assert len(job["placements"]) == 8 and job["placements"][0]["domain"] == "dgx00"


def test_the_namespace_of_the_request_stands_in_for_one_the_object_leaves_out(pod_server: Server) -> None:
    # The same Job without metadata.namespace, sent (as `kubectl apply -n research` does) with
    # request.namespace research: it acts as Team research again -> allowed.
    job = yaml.safe_load(KUEUE_JOB.read_text())
    del job["metadata"]["namespace"]
    body = review(job)
    body["request"]["namespace"] = "research"
    assert _answer(pod_server, body)["allowed"] is True
    body["request"]["namespace"] = "nobody-here"  # Team nobody-here is in no principals file -> refused
    response = _answer(pod_server, body)
    assert response["allowed"] is False and "nobody-here" in response["status"]["message"]
