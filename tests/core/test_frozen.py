"""verifier.core.frozen: records that behave as the frozen dataclasses they replace.

Each expectation below is what `@dataclass(frozen=True)` (and `order=True`) does by its
documentation: equal to an instance of the very same class with equal compared fields, hashed as
the tuple of its hashed fields, ordered as that tuple, repr naming each shown field, every
assignment refused; `fields()` and `replace()` still work because the class is still a dataclass.
"""

from __future__ import annotations

import copy
import pickle
from dataclasses import FrozenInstanceError, dataclass, field, fields, replace

import pytest

from verifier.core.errors import Diagnostic, SourceLocation
from verifier.core.frozen import Frozen, OrderedFrozen, Record
from verifier.core.limits import Limits

_set = object.__setattr__


@dataclass(init=False, repr=False, eq=False)
class _Point(OrderedFrozen):
    x: int
    y: int = 0
    label: str = field(default="", compare=False, repr=False)

    def __init__(self, x: int, y: int = 0, label: str = "") -> None:
        _set(self, "x", x)
        _set(self, "y", y)
        _set(self, "label", label)


@dataclass(init=False, repr=False, eq=False)
class _One(Frozen):
    name: str

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


@dataclass(init=False, repr=False, eq=False)
class _Other(Frozen):
    name: str

    def __init__(self, name: str) -> None:
        _set(self, "name", name)


@dataclass(repr=False, eq=False)
class _Mutable(Record):
    name: str
    items: list[int] = field(default_factory=list)


def test_a_record_that_is_not_frozen_is_equal_by_fields_unhashable_and_assignable() -> None:
    # As `@dataclass` without frozen: __eq__ by fields, __hash__ None, fields assignable.
    record = _Mutable("a")
    assert record == _Mutable("a", [])
    assert record != _Mutable("a", [1])
    assert repr(record) == "_Mutable(name='a', items=[])"
    record.name = "b"
    assert record == _Mutable("b")
    with pytest.raises(TypeError, match="unhashable"):
        hash(record)


@dataclass(repr=False, eq=False)
class _Node(Record):
    name: str
    near: list[_Node] = field(default_factory=list)


def test_a_record_that_holds_itself_shows_as_dots_inside_its_own_repr() -> None:
    # dataclasses writes `...` for an instance met again while its own repr is being written.
    node = _Node("a")
    node.near.append(node)
    assert repr(node) == "_Node(name='a', near=[...])"


def test_equality_and_hash_read_the_compared_fields_only() -> None:
    # label has compare=False: (1, 2) against (1, 2) whatever the labels.
    assert _Point(1, 2, "a") == _Point(1, 2, "b")
    assert _Point(1, 2) != _Point(1, 3)
    # hash of the tuple of hashed fields (compare=True, hash unset): hash((1, 2)).
    assert hash(_Point(1, 2, "a")) == hash((1, 2))
    # One field: still a 1-tuple, as dataclasses writes `hash((self.name,))`.
    assert hash(_One("n")) == hash(("n",))


def test_an_equal_looking_instance_of_another_class_is_not_equal() -> None:
    assert _One("n") != _Other("n")
    assert _One("n") != ("n",)
    assert SourceLocation("a.yaml", 3, 4) != ("a.yaml", 3, 4)


def test_order_is_the_tuple_order_of_compared_fields() -> None:
    # (1, 5) < (2, 0) < (2, 1): x first, then y; the label is not compared.
    points = [_Point(2, 1, "z"), _Point(1, 5), _Point(2, 0, "a")]
    assert [(p.x, p.y) for p in sorted(points)] == [(1, 5), (2, 0), (2, 1)]
    assert _Point(1) <= _Point(1, 0, "other label")
    assert _Point(2) > _Point(1, 9)
    assert _Point(2) >= _Point(2)
    with pytest.raises(TypeError):
        _ = _Point(1) < (1, 0)
    # A location: by file, then line, then column.
    locations = [SourceLocation("b.yaml"), SourceLocation("a.yaml", 3, 4), SourceLocation("a.yaml", 3)]
    assert [str(loc) for loc in sorted(locations)] == ["a.yaml:3", "a.yaml:3:4", "b.yaml"]


def test_repr_names_the_shown_fields() -> None:
    assert repr(_Point(1, 2, "hidden")) == "_Point(x=1, y=2)"
    assert repr(SourceLocation("a.yaml", 3)) == "SourceLocation(file='a.yaml', line=3, col=0)"
    assert (
        repr(Diagnostic(SourceLocation("f"), "m"))
        == "Diagnostic(location=SourceLocation(file='f', line=0, col=0), message='m')"
    )


def test_fields_cannot_be_assigned_or_deleted() -> None:
    point = _Point(1)
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
        point.x = 2
    with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
        point.other = 2
    with pytest.raises(FrozenInstanceError, match="cannot delete field 'x'"):
        del point.x
    with pytest.raises(FrozenInstanceError):
        Limits().file_size = 1  # type: ignore[misc]


def test_still_a_dataclass_for_fields_replace_copy_and_pickle() -> None:
    assert [f.name for f in fields(SourceLocation)] == ["file", "line", "col"]
    assert SourceLocation.__match_args__ == ("file", "line", "col")
    moved = replace(SourceLocation("a.yaml", 3, 4), line=9)
    assert (moved.file, moved.line, moved.col) == ("a.yaml", 9, 4)
    diagnostic = Diagnostic(SourceLocation("a.yaml", 1), "bad")
    for again in (pickle.loads(pickle.dumps(diagnostic)), copy.deepcopy(diagnostic)):
        assert again == diagnostic
        assert again is not diagnostic
    assert replace(Limits(), id_length=7).id_length == 7


def test_a_long_diagnostic_is_clipped_as_before() -> None:
    # 5,000 characters: over MAX_MESSAGE_CHARS (2,000), so 1,000 kept at each end around a note
    # of the 3,000 left out.
    message = "a" * 2500 + "b" * 2500
    clipped = Diagnostic(SourceLocation("f"), message).message
    assert clipped == "a" * 1000 + "…[3,000 characters left out]…" + "b" * 1000
    assert Diagnostic(SourceLocation("f"), "short").message == "short"


def test_limits_repr_spells_every_limit() -> None:
    # The evaluation cache's key holds repr(current_limits()): every field, in declaration order.
    shown = repr(Limits(id_length=5))
    assert shown.startswith("Limits(file_size=268435456, yaml_size=6291456, id_length=5, nesting_depth=100, ")
    assert shown.count("=") == len(fields(Limits))
    assert Limits() == Limits()
    assert Limits(id_length=5) != Limits()
    assert hash(Limits()) == hash(Limits())
