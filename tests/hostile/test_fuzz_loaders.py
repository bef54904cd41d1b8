"""Fuzzing the inventory and job loaders: any input loads, or fails with located TopologErrors.

Never another exception, and what loads fits the engines: every fact value is an
integer within 64 bits or printable text (no control character, no lone surrogate), so
nothing is refused later at fact loading with a piece of SQL in the message.

Bounded for the default run: a fixed number of examples (50 by default, 200 in each test's
`_all` twin under -m slow), derandomized so CI sees the same inputs every time (a twin runs the
same function, so the same seed), no deadline per example (the shared machines are slow and noisy).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
import yaml
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

FUZZ_ALL = settings(
    max_examples=200,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FUZZ = settings(FUZZ_ALL, max_examples=50)


def _twins(
    body: Callable[..., None], *strategies: st.SearchStrategy[Any]
) -> tuple[Callable[..., None], Callable[..., None]]:
    """`body` under @given(*strategies): at FUZZ's examples for the default run, and at FUZZ_ALL's
    in a slow twin. Both wrap the one function, so derandomize gives them the same seed.
    """
    slow: Callable[..., None] = FUZZ_ALL(given(*strategies)(body))
    return FUZZ(given(*strategies)(body)), pytest.mark.slow(slow)


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
        'a"b',
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


def _mostly(good: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Plausible values nine times in ten, so that inputs get past the first check."""
    return st.one_of(good, good, good, good, good, good, good, good, good, _SCALARS)


# Random shapes: every key and value anywhere.
_SHAPELESS = st.dictionaries(_INV_KEYS, _values(_INV_KEYS), max_size=7)
# Near-valid objects: real keys with mostly plausible values, so expansion, links and the
# whole-inventory checks run, with a hostile value here and there.
_NAMES = st.sampled_from(["n1", "n2", "gpu0", "gpu1", "nic0", "n{i}", "r{i:02d}", "{seq}", "/n1/gpu0"])
_LABELS = st.dictionaries(
    _mostly(st.sampled_from(["tenant", "zone", "quarantine", "owner"])),
    _mostly(st.sampled_from(["hpc", "true", "false", "eu-1", "{i}"])),
    max_size=3,
)
_FIGURES = {
    "count": _mostly(st.integers(1, 5)),
    "start": _mostly(st.integers(0, 3)),
    "model": _mostly(st.sampled_from(["H100-SXM5-80GB", "MI300X", "nope"])),
    "labels": _LABELS,
    "state": _mostly(st.sampled_from(["ok", "down", "degraded", "drained"])),
    "bandwidth": _mostly(st.sampled_from(["64 GB/s", "400 Gb/s", 1000])),
    "size": _mostly(st.sampled_from(["80 GB", "64 KiB", 512])),
    "memory": st.fixed_dictionaries({}, optional={"size": _mostly(st.just("80 GB"))}),
    "attrs": st.dictionaries(_mostly(st.sampled_from(["cores", "x"])), _INTS, max_size=2),
    "template": _mostly(st.sampled_from(["dgx", "t"])),
    "parent": _mostly(_NAMES),
    "software": st.dictionaries(_mostly(st.just("cuda")), _mostly(st.sampled_from(["12.4", "99999999999999999999.1"]))),
}
_NEAR_LINK = st.fixed_dictionaries(
    {"a": _mostly(_NAMES), "b": _mostly(_NAMES), "kind": _mostly(st.sampled_from(["nvlink", "pcie", "infiniband"]))},
    optional={
        "bandwidth": _mostly(st.sampled_from(["50 GB/s", 25000])),
        "generation": _mostly(st.integers(1, 6)),
        "lanes": _mostly(st.just(16)),
        "count": _mostly(st.integers(1, 18)),
        "foreach": st.dictionaries(_mostly(st.sampled_from(["x", "i"])), _mostly(st.sampled_from(["0..3", 2, ["a"]]))),
        "labels": _LABELS,
    },
)
_NEAR_OBJECT: st.SearchStrategy[dict[str, Any]] = st.deferred(
    lambda: st.fixed_dictionaries(
        {"name": _mostly(_NAMES), "kind": _mostly(st.sampled_from(["node", "gpu", "nic", "rack", "cpu", "memory"]))},
        optional={
            **_FIGURES,
            "children": st.lists(_NEAR_OBJECT, max_size=3),
            "links": st.lists(_NEAR_LINK, max_size=2),
        },
    )
)
_OBJECT = st.one_of(_NEAR_OBJECT, _NEAR_OBJECT, _NEAR_OBJECT, _SHAPELESS)
_LINK = st.one_of(_NEAR_LINK, _NEAR_LINK, st.dictionaries(st.sampled_from(LINK_KEYS), _values(_INV_KEYS), max_size=6))
_INVENTORY = st.fixed_dictionaries(
    {
        "apiVersion": _mostly(st.just("topolog.dev/v1")),
        "objects": st.lists(_OBJECT, max_size=4),
    },
    optional={
        "links": st.lists(_LINK, max_size=3),
        "templates": st.dictionaries(
            _mostly(st.sampled_from(["dgx", "t"])), st.one_of(_NEAR_OBJECT, _SHAPELESS), max_size=2
        ),
        "metadata": st.dictionaries(st.sampled_from(["name", "labels"]), _values(_INV_KEYS), max_size=2),
    },
)
_JOB_KEY = st.sampled_from(sorted({*JOB_KEYS, *MODEL_KEYS, "accepts", "scope", "quarantine"}))
_NEAR_JOB = st.fixed_dictionaries(
    {
        "name": _mostly(st.sampled_from(["j1", "j2", "train-70b"])),
        "principal": _mostly(st.sampled_from(["alice", 'Team::"hpc"', 'User::"a\\"b"', "hpc"])),
        "gpus": _mostly(st.integers(1, 16)),
    },
    optional={
        "replicas": _mostly(st.integers(1, 4)),
        "gpu": st.fixed_dictionaries(
            {},
            optional={
                "accepts": _mostly(st.lists(st.sampled_from(["H100-SXM5-80GB", "nvidia"]), max_size=2)),
                "min_hbm": _mostly(st.sampled_from(["80 GB", "1e99999999 GB"])),
                "mig": _mostly(st.just("1g.10gb")),
            },
        ),
        "topology": st.fixed_dictionaries(
            {}, optional={"scope": _mostly(st.sampled_from(["node", "rack", "any"])), "max_nodes": _INTS}
        ),
        "model": st.fixed_dictionaries(
            {"parameters": _mostly(st.sampled_from(["70B", "1.5T", 7_000_000_000, "1e40", "1e99999999"]))},
            optional={"mode": _mostly(st.sampled_from(["inference", "training"])), "layers": _INTS},
        ),
        "software": st.lists(st.dictionaries(_mostly(st.just("cuda")), _mostly(st.just(">=12.4")), max_size=2)),
        "exclude": st.dictionaries(_mostly(st.just("quarantine")), _mostly(st.just("true")), max_size=2),
    },
)
_JOB = st.one_of(_NEAR_JOB, _NEAR_JOB, st.dictionaries(_JOB_KEY, _values(_JOB_KEY), max_size=7))
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


def _inventory_loader_never_raises_anything_else(doc: dict[str, Any], small: bool) -> None:
    with use_limits(SMALL_LIMITS if small else Limits()):
        _check_inventory(_text(doc))


def _job_loader_never_raises_anything_else(doc: dict[str, Any]) -> None:
    _check_jobs(_text(doc))


test_inventory_loader_never_raises_anything_else, test_inventory_loader_never_raises_anything_else_all = _twins(
    _inventory_loader_never_raises_anything_else, _INVENTORY, st.booleans()
)
test_job_loader_never_raises_anything_else, test_job_loader_never_raises_anything_else_all = _twins(
    _job_loader_never_raises_anything_else, _JOBS
)


FULL_JOBS = """\
apiVersion: topolog.dev/v1
kind: Jobs
metadata: {name: seed}
jobs:
  - name: big
    principal: Team::"hpc"
    description: everything written
    gpus: 16
    replicas: 2
    gpu: {accepts: [H100-SXM5-80GB, nvidia], min_hbm: 80 GB, min_hbm_bandwidth: 3 TB/s, fp64: true}
    topology: {scope: rack, max_nodes: 2, min_gpu_bandwidth: 400 GB/s, rail_aligned: true}
    software: [{cuda: ">=12.4", nccl: ">=2.18"}, {rocm: "6.1"}]
    exclude: {quarantine: "true", tenant: [students]}
    model: {parameters: 70B, layers: 80, kv_heads: 8, head_dim: 128, context: 32768, batch: 16}
  - {name: small, principal: alice, gpus: 1, gpu: {mig: 1g.10gb}}
  - {name: train, principal: bob, gpus: 8, model: {parameters: 7B, mode: training, activations: 20 GB}}
"""

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


def _bytes_spliced_into_a_valid_inventory(at: int, junk: bytes) -> None:
    data = VALID.encode()[:at] + junk + VALID.encode()[at:]
    try:
        from verifier.sources.inventory.yaml_source import decode_utf8

        text = decode_utf8(data, "fuzz.yaml")
    except TopologError as err:
        _assert_located(err, "fuzz.yaml")
        return
    _check_inventory(text)


test_bytes_spliced_into_a_valid_inventory, test_bytes_spliced_into_a_valid_inventory_all = _twins(
    _bytes_spliced_into_a_valid_inventory, st.integers(0, len(VALID)), st.binary(min_size=1, max_size=6)
)


SEED_INVENTORIES = [
    VALID,
    """\
apiVersion: topolog.dev/v1
kind: Inventory
metadata: {name: flat, labels: {site: eu}}
objects:
  - name: pod0
    kind: pod
    children:
      - name: rack0
        kind: rack
        labels: {tenant: hpc, quarantine: "false"}
        children:
          - name: n1
            kind: node
            software: {cuda: "12.4"}
            children:
              - {name: cpu0, kind: cpu, attrs: {cores: 64}}
              - {name: gpu0, kind: gpu, model: H100-SXM5-80GB, state: degraded}
              - {name: nic0, kind: nic, bandwidth: 400 Gb/s}
            links:
              - {a: gpu0, b: cpu0, kind: pcie, generation: 5, lanes: 16}
              - {a: nic0, b: cpu0, kind: pcie, bandwidth: 64 GB/s, labels: {cable: c1}}
links:
  - {id: up0, a: n1/nic0, b: n1/gpu0, kind: infiniband, bandwidth: 50 GB/s, latency: 1 us}
""",
    """\
apiVersion: topolog.dev/v1
templates:
  dgx:
    kind: node
    children:
      - {name: "gpu{i}", kind: gpu, count: 2}
      - {name: nvsw, kind: nvswitch}
    links:
      - {a: "gpu{x}", b: nvsw, kind: nvlink, generation: 4, count: 9, foreach: {x: 0..1}}
objects:
  - name: "dgx{i}"
    template: dgx
    count: 3
    overrides:
      dgx1:
        labels: {quarantine: "true"}
        devices: {gpu1: {state: down}}
        links:
          - {a: gpu0, b: nvsw, count: 8}
""",
]
_SEED_DOCS = [yaml.safe_load(t) for t in SEED_INVENTORIES]
SEED_JOBS = yaml.safe_load(FULL_JOBS)


def _places(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every value's path in a plain document (keys of mappings, indexes of lists)."""
    out = [path]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.extend(_places(v, (*path, k)))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out.extend(_places(v, (*path, i)))
    return out


def _mutate(doc: Any, data: st.DataObject, keys: st.SearchStrategy[str]) -> Any:
    """`doc` with one or two values replaced by hostile ones (or a hostile key added)."""
    doc = copy.deepcopy(doc)
    for _ in range(data.draw(st.integers(1, 2))):
        path = data.draw(st.sampled_from(_places(doc)[1:]))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if isinstance(parent, dict) and data.draw(st.booleans()):
            parent[data.draw(st.one_of(keys, _HOSTILE_TEXT))] = data.draw(_values(keys))
        else:
            parent[path[-1]] = data.draw(_values(keys))
    return doc


def _inventories_one_hostile_value_away_from_valid(seed: int, data: st.DataObject, small: bool) -> None:
    with use_limits(SMALL_LIMITS if small else Limits()):
        _check_inventory(_text(_mutate(_SEED_DOCS[seed], data, _INV_KEYS)))


def _jobs_one_hostile_value_away_from_valid(data: st.DataObject) -> None:
    _check_jobs(_text(_mutate(SEED_JOBS, data, _JOB_KEY)))


test_inventories_one_hostile_value_away_from_valid, test_inventories_one_hostile_value_away_from_valid_all = _twins(
    _inventories_one_hostile_value_away_from_valid,
    st.sampled_from(range(len(SEED_INVENTORIES))),
    st.data(),
    st.booleans(),
)
test_jobs_one_hostile_value_away_from_valid, test_jobs_one_hostile_value_away_from_valid_all = _twins(
    _jobs_one_hostile_value_away_from_valid, st.data()
)


def test_the_seeds_are_valid() -> None:
    """The mutation tests start from valid documents: otherwise they test only the first error."""
    for text in SEED_INVENTORIES:
        assert load_inventory_text(text, "seed.yaml").objects
    assert load_jobs_text(FULL_JOBS, "seed.yaml").jobs
