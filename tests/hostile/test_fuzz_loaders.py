"""Fuzzing the inventory and job loaders: any input loads, or fails with located TopologErrors.

Never another exception, and what loads fits the engines: every fact value is an
integer within 64 bits or printable text (no control character, no lone surrogate), so
nothing is refused later at fact loading with a piece of SQL in the message.

Bounded for the default run: a fixed number of examples, derandomized so CI sees the same
inputs every time, no deadline per example (the shared machines are slow and noisy).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from verifier.core.errors import TopologError
from verifier.core.limits import INT64_MAX, INT64_MIN, Limits, use_limits
from verifier.facts.inventory import inventory_facts
from verifier.sources.inventory import load_inventory_text
from verifier.sources.inventory.specs import LINK_KEYS, OBJECT_KEYS
from verifier.sources.inventory.validate import text_problem
from verifier.sources.jobs import load_jobs_text
from verifier.sources.jobs.loader import JOB_KEYS, MODEL_KEYS

FUZZ = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
# Small limits, so that the limits themselves are reached and their errors exercised.
SMALL_LIMITS = Limits(
    id_length=64, nesting_depth=12, template_count=50, expanded_objects=2000, list_length=40, hostlist_size=100
)

_HOSTILE_TEXT = st.sampled_from(
    [
        "",
        " ",
        "\x00",
        "a\x01b",
        "\ud800",
        "x\u202ey",
        "a\nb",
        "a\"b",
        "a\\b",
        "::",
        "{i}",
        "n{i:03d}",
        "{",
        "}",
        "{nope}",
        "1e99999999",
        "1e30 GB/s",
        "64 GB/s",
        "80 GB",
        "3,5 TB/s",
        "0..7",
        "0..99999999999",
        "yes",
        "true",
        "09",
        "-1",
        "gpu",
        "node",
        "nvlink",
        "pcie",
        "H100-SXM5-80GB",
        "n" * 100,
    ]
)
_INTS = st.one_of(
    st.integers(-3, 20),
    st.sampled_from([0, 1, 2**31, 2**63 - 1, 2**63, 2**64, 2**70, -(2**63) - 1, 10**7]),
)
_SCALARS = st.one_of(_HOSTILE_TEXT, st.text(max_size=12), _INTS, st.booleans(), st.none())


def _values(keys: st.SearchStrategy[str]) -> st.SearchStrategy[Any]:
    return st.recursive(
        _SCALARS,
        lambda inner: st.one_of(
            st.lists(inner, max_size=4),
            st.dictionaries(st.one_of(keys, _HOSTILE_TEXT), inner, max_size=4),
        ),
        max_leaves=12,
    )


_INV_KEYS = st.sampled_from(sorted({*OBJECT_KEYS, *LINK_KEYS, "quarantine", "tenant", "gpu0"}))
_OBJECT = st.dictionaries(_INV_KEYS, _values(_INV_KEYS), max_size=7)
_LINK = st.dictionaries(st.sampled_from(LINK_KEYS), _values(_INV_KEYS), max_size=6)
_INVENTORY = st.fixed_dictionaries(
    {
        "apiVersion": st.sampled_from(["topolog.dev/v1", "topolog.dev/v1", "v0"]),
        "objects": st.lists(_OBJECT, max_size=4),
    },
    optional={
        "links": st.lists(_LINK, max_size=3),
        "templates": st.dictionaries(st.one_of(st.sampled_from(["dgx", "t"]), _HOSTILE_TEXT), _OBJECT, max_size=2),
        "metadata": st.dictionaries(st.sampled_from(["name", "labels"]), _values(_INV_KEYS), max_size=2),
    },
)
_JOB_KEY = st.sampled_from(sorted({*JOB_KEYS, *MODEL_KEYS, "accepts", "scope", "quarantine"}))
_JOB = st.dictionaries(_JOB_KEY, _values(_JOB_KEY), max_size=7)
_JOBS = st.fixed_dictionaries(
    {"apiVersion": st.just("topolog.dev/v1"), "kind": st.just("Jobs"), "jobs": st.lists(_JOB, max_size=4)}
)


def _text(doc: object) -> str:
    """JSON is YAML; json.dumps writes control characters and lone surrogates as escapes."""
    return json.dumps(doc)


def _assert_located(err: TopologError, filename: str) -> None:
    assert err.diagnostics
    for d in err.diagnostics:
        assert d.location.file == filename, d
        assert d.location.line >= 1, d
        assert d.message


def _assert_fits_the_engine(value: object) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        assert INT64_MIN <= value <= INT64_MAX, value
    elif isinstance(value, str):
        # Templates stand a NUL in for the node id while planning; none may survive into a fact.
        assert text_problem(value, multiline=True) is None, repr(value)
        value.encode("utf-8")


def _check_inventory(text: str) -> None:
    try:
        inv = load_inventory_text(text, "fuzz.yaml")
    except TopologError as err:
        _assert_located(err, "fuzz.yaml")
        return
    for rows in inventory_facts(inv).values():
        for row in rows:
            for value in row:
                _assert_fits_the_engine(value)


def _check_jobs(text: str) -> None:
    try:
        jobs = load_jobs_text(text, "fuzz-jobs.yaml")
    except TopologError as err:
        _assert_located(err, "fuzz-jobs.yaml")
        return
    for job in jobs.jobs.values():
        for value in (job.name, job.principal, *job.accepts, *(v for pair in job.exclude for v in pair)):
            _assert_fits_the_engine(value)
        for number in (job.gpus, job.replicas, job.max_nodes, job.min_hbm_mb, job.min_pair_mbps):
            if number is not None:
                _assert_fits_the_engine(number)


@FUZZ
@given(_INVENTORY, st.booleans())
def test_inventory_loader_never_raises_anything_else(doc: dict[str, Any], small: bool) -> None:
    with use_limits(SMALL_LIMITS if small else Limits()):
        _check_inventory(_text(doc))


@FUZZ
@given(_JOBS)
def test_job_loader_never_raises_anything_else(doc: dict[str, Any]) -> None:
    _check_jobs(_text(doc))


VALID = """\
apiVersion: topolog.dev/v1
templates:
  dgx:
    kind: node
    labels: {tenant: hpc}
    children:
      - {name: gpu0, kind: gpu, model: H100-SXM5-80GB, memory: {size: 80 GB}}
      - {name: nic0, kind: nic, bandwidth: 400 Gb/s}
    links:
      - {a: gpu0, b: nic0, kind: pcie, generation: 5, lanes: 16}
objects:
  - {name: "n{i:02d}", template: dgx, count: 4, start: 1}
links:
  - {a: "n0{x}/nic0", b: "n0{y}/nic0", kind: infiniband, bandwidth: 50 GB/s, foreach: {x: 1..2, y: [3, 4]}}
"""


@FUZZ
@given(st.integers(0, len(VALID)), st.binary(min_size=1, max_size=6))
def test_bytes_spliced_into_a_valid_inventory(at: int, junk: bytes) -> None:
    data = VALID.encode()[:at] + junk + VALID.encode()[at:]
    try:
        from verifier.sources.inventory.yaml_source import decode_utf8

        text = decode_utf8(data, "fuzz.yaml")
    except TopologError as err:
        _assert_located(err, "fuzz.yaml")
        return
    _check_inventory(text)
