"""The service's Prometheus metrics, in a registry of its own (two servers in one test process never share counts)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# Decisions take well under a millisecond to tens of milliseconds (authorize) and up to
# seconds (admit at fleet scale): buckets from 0.25 ms to 30 s.
BUCKETS = (0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
CONTENT_TYPE = CONTENT_TYPE_LATEST


class Metrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.decisions = Counter(
            "topolog_decisions",
            "Decisions made, by endpoint and result (allow, deny).",
            ["endpoint", "result"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "topolog_decision_seconds",
            "Time to decide one request (a batch counts once), by endpoint.",
            ["endpoint"],
            buckets=BUCKETS,
            registry=self.registry,
        )
        self.rejected = Counter(
            "topolog_rejected_requests",
            "Requests refused before any decision (malformed, too large, unauthenticated), by HTTP status.",
            ["status"],
            registry=self.registry,
        )
        self.reloads = Counter(
            "topolog_reloads", "Reloads tried, by what started them.", ["trigger"], registry=self.registry
        )
        self.reload_failures = Counter(
            "topolog_reload_failures",
            "Reloads refused (the live revision kept), by what started them.",
            ["trigger"],
            registry=self.registry,
        )
        self.revision = Gauge(
            "topolog_revision_info", "The live revision (value 1).", ["revision"], registry=self.registry
        )
        self.reload_seconds = Gauge(
            "topolog_last_reload_seconds", "Time the last reload took to build its revision.", registry=self.registry
        )

    def live(self, revision: str) -> None:
        self.revision.clear()
        self.revision.labels(revision=revision).set(1)

    def exposition(self) -> bytes:
        return generate_latest(self.registry)
