"""Review 57: every record on verifier.core.frozen behaves as the dataclass it stands for.

For each record class (found in the modules below), a twin is declared with the plain decorator,
`@dataclass(frozen=..., order=..., slots=...)` with the record's own fields (their compare, hash,
repr and init flags): the standard library is the reference. Instances of both are given the same
generated field values (set past __init__, so no check of an __init__ or __post_init__ is in the
way) and must agree on ==, !=, hash (or being unhashable), order, repr, assignment and deletion
(refused as frozen, or allowed), copy.deepcopy and pickle. A fixed seed: the same cases every run.
"""

from __future__ import annotations

import copy
import dataclasses
import importlib
import math
import pickle
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from verifier.core.frozen import Frozen, OrderedFrozen, Record

MODULES = (
    "verifier.authorization.classes",
    "verifier.authorization.entities",
    "verifier.authorization.evaluate",
    "verifier.authorization.observed",
    "verifier.authorization.policies",
    "verifier.authorization.setup",
    "verifier.checks.baseline",
    "verifier.checks.check",
    "verifier.checks.findings",
    "verifier.checks.settings",
    "verifier.checks.verify",
    "verifier.checks.waivers",
    "verifier.cli.config",
    "verifier.cli.provenance",
    "verifier.core.errors",
    "verifier.core.limits",
    "verifier.engine.backend",
    "verifier.facts.graph",
    "verifier.facts.whole_nodes",
    "verifier.session.inputs",
    "verifier.session.session",
    "verifier.session.side_files",
    "verifier.session.verify_run",
    "verifier.sources.inventory.clusters",
    "verifier.sources.inventory.model",
    "verifier.sources.inventory.patterns",
    "verifier.sources.inventory.software",
    "verifier.sources.inventory.specs",
    "verifier.sources.inventory.templates",
    "verifier.sources.principals",
    "verifier.sources.scenario",
)

_NAN = math.nan
# Few values, so that equal pairs are frequent; mixed types, so that order can fail as a tuple's does.
_VALUES: tuple[object, ...] = (0, 1, -1, 2**70, "", "a", "b", None, (1, "a"), frozenset({1}), 1.5, _NAN)


def _records() -> Iterator[type]:
    for name in MODULES:
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, Record)
                and value.__module__ == name
                and dataclasses.is_dataclass(value)
            ):
                yield value


RECORDS = sorted(_records(), key=lambda cls: f"{cls.__module__}.{cls.__qualname__}")


def _twin(cls: type) -> type:
    """The plain dataclass `cls` stands for: frozen if a Frozen, ordered if an OrderedFrozen."""
    space: dict[str, Any] = {"__annotations__": {}, "__module__": cls.__module__, "__qualname__": cls.__qualname__}
    for f in dataclasses.fields(cls):
        space["__annotations__"][f.name] = "object"
        extra: dict[str, Any] = {}
        if f.default is not dataclasses.MISSING:
            extra["default"] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            extra["default_factory"] = f.default_factory
        space[f.name] = dataclasses.field(
            init=f.init, repr=f.repr, hash=f.hash, compare=f.compare, kw_only=f.kw_only, **extra
        )
    made = type(cls.__name__, (), space)
    slots = cls.__dictoffset__ == 0  # declared with slots=True: no __dict__ either
    return dataclasses.dataclass(frozen=issubclass(cls, Frozen), order=issubclass(cls, OrderedFrozen), slots=slots)(
        made
    )


def _made(cls: type, values: dict[str, object]) -> Any:
    made: Any = object.__new__(cls)
    for name, value in values.items():
        object.__setattr__(made, name, value)
    return made


def _declared_subclass(cls: type) -> type:
    space = {"__annotations__": {"extra": "object"}, "extra": None, "__module__": cls.__module__}
    return dataclasses.dataclass(frozen=issubclass(cls, Frozen) or cls.__dataclass_params__.frozen)(  # type: ignore[attr-defined]
        type("Declared", (cls,), space)
    )


def _outcome(act: Callable[..., object], *args: object) -> tuple[str, object]:
    try:
        return ("value", act(*args))
    except Exception as problem:  # the kind of failure and its message must agree too
        return (type(problem).__name__, str(problem).replace("_Twin", ""))


@pytest.mark.parametrize("cls", RECORDS, ids=lambda cls: f"{cls.__module__}.{cls.__qualname__}")
def test_a_record_behaves_as_its_plain_dataclass_twin(cls: type) -> None:
    twin = _twin(cls)
    names = [f.name for f in dataclasses.fields(cls)]
    draw = random.Random(f"{cls.__module__}.{cls.__qualname__}")
    cases = [{name: draw.choice(_VALUES[:4] if len(names) > 3 else _VALUES) for name in names} for _ in range(40)]
    mine = [_made(cls, case) for case in cases]
    theirs = [_made(twin, case) for case in cases]
    assert cls.__hash__ is None if twin.__hash__ is None else cls.__hash__ is not None
    for case, a, ta in zip(cases, mine, theirs, strict=True):
        assert repr(a) == repr(ta)
        assert _outcome(hash, a) == _outcome(hash, ta)
        assert (a == 1) == (ta == 1) and (a != "x") == (ta != "x")
        assert a != ta and ta != a  # another class: never equal, as dataclasses compares classes
        for b, tb in zip(mine, theirs, strict=True):
            assert (a == b) == (ta == tb) and (a != b) == (ta != tb)
            for op in ("__lt__", "__le__", "__gt__", "__ge__"):
                assert _outcome(getattr(a, op), b) == _outcome(getattr(ta, op), tb)
        for name in [*names[:1], "not_a_field"]:  # on fresh instances: a record that is not frozen changes
            fresh, twin_fresh = _made(cls, case), _made(twin, case)
            assert _outcome(setattr, fresh, name, 7) == _outcome(setattr, twin_fresh, name, 7)
            assert _outcome(delattr, fresh, name) == _outcome(delattr, twin_fresh, name)
    # A plain subclass (no decorator) of each: its instances equal, hashed and guarded as the twin's.
    sub, twin_sub = type("Sub", (cls,), {}), type("Sub", (twin,), {})
    for case in cases[:5]:
        a, ta = _made(sub, case), _made(twin_sub, case)
        assert repr(a) == repr(ta) and (a == _made(sub, case)) == (ta == _made(twin_sub, case))
        assert (a == _made(cls, case)) == (ta == _made(twin, case))
        assert _outcome(hash, a) == _outcome(hash, ta)
        for name in [*names[:1], "not_a_field"]:
            fresh, twin_fresh = _made(sub, case), _made(twin_sub, case)
            assert _outcome(setattr, fresh, name, 7) == _outcome(setattr, twin_fresh, name, 7)
            assert _outcome(delattr, fresh, name) == _outcome(delattr, twin_fresh, name)
    # A subclass declared with the decorator (frozen as its base, one more field) is made as the twin's is.
    declared = _outcome(_declared_subclass, cls)
    twin_declared = _outcome(_declared_subclass, twin)
    assert declared[0] == twin_declared[0], (declared, twin_declared)
    if declared[0] == "value":
        made, twin_made = declared[1], twin_declared[1]
        assert isinstance(made, type) and isinstance(twin_made, type)
        for case in cases[:5]:
            a, ta = _made(made, {**case, "extra": 1}), _made(twin_made, {**case, "extra": 1})
            assert repr(a) == repr(ta) and _outcome(hash, a) == _outcome(hash, ta)
            assert (a == _made(made, {**case, "extra": 2})) == (ta == _made(twin_made, {**case, "extra": 2}))
            for name in [*names[:1], "extra", "not_a_field"]:
                fresh, twin_fresh = _made(made, case), _made(twin_made, case)
                assert _outcome(setattr, fresh, name, 7) == _outcome(setattr, twin_fresh, name, 7)
    for a in mine[:5]:
        again = copy.deepcopy(a)
        assert repr(again) == repr(a) and type(again) is cls
        back = pickle.loads(pickle.dumps(a))
        assert repr(back) == repr(a) and type(back) is cls
        assert _outcome(back.__eq__, a) == _outcome(dataclasses.astuple(a).__eq__, dataclasses.astuple(back))


def test_the_records_are_found() -> None:
    # core.errors alone holds two (SourceLocation, Diagnostic): the list is not empty by mistake.
    assert {"SourceLocation", "Diagnostic", "Limits"} <= {cls.__name__ for cls in RECORDS}
