"""Review of docs/deploy/webhook.yaml (R-JS, round 13): which namespaces the fail-closed gate asks about.

c5c2f7c made the one webhook (failurePolicy: Fail) ask about every Deployment and StatefulSet
of every namespace but kube-system and topolog: the cluster's own CPU-only services (ingress,
cert-manager, monitoring, a distribution's system namespaces) could then not roll out while no
gate replica answers, the failure kubernetes-sigs/kueue issue 4074 reports for Kueue's
deployment webhook (a MicroShift restart blocked). Those two kinds are asked about only in
namespaces that opt in (label topolog.dev/gate=enabled); the job kinds stay gated everywhere
but the system namespaces.
"""

from __future__ import annotations

from typing import Any

import yaml
from service.serve_helpers import ROOT

WEBHOOK = ROOT / "docs" / "deploy" / "webhook.yaml"


def _hooks() -> list[dict[str, Any]]:
    (config,) = [d for d in yaml.safe_load_all(WEBHOOK.read_text()) if d is not None]
    hooks: list[dict[str, Any]] = config["webhooks"]
    return hooks


def _resources(hook: dict[str, Any]) -> set[str]:
    return {r for rule in hook["rules"] for r in rule["resources"]}


def test_deployments_and_statefulsets_are_gated_only_where_a_namespace_opts_in() -> None:
    (services,) = [h for h in _hooks() if _resources(h) & {"deployments", "statefulsets"}]
    # Only these two kinds in that webhook, and only in namespaces labelled for the gate.
    # (and their scale subresources: tests/service/test_serve_admission_scale.py)
    assert _resources(services) == {"deployments", "statefulsets", "deployments/scale", "statefulsets/scale"}
    assert services["namespaceSelector"] == {"matchLabels": {"topolog.dev/gate": "enabled"}}


def test_the_job_kinds_are_gated_in_every_namespace_but_the_system_ones() -> None:
    (jobs,) = [h for h in _hooks() if "pytorchjobs" in _resources(h)]
    assert "deployments" not in _resources(jobs) and "statefulsets" not in _resources(jobs)
    assert {"jobs", "cronjobs", "rayjobs", "jobsets"} <= _resources(jobs)
    (only,) = jobs["namespaceSelector"]["matchExpressions"]
    assert (only["key"], only["operator"]) == ("kubernetes.io/metadata.name", "NotIn")
    assert {"kube-system", "topolog"} <= set(only["values"])
