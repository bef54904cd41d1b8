"""Frozen records whose methods come compiled with topolog instead of generated when imported.

`@dataclass(frozen=True)` writes each class's methods out as source text and compiles them when
its module is imported: __init__, __repr__, __eq__, __hash__, __setattr__ and __delattr__, and
four more with order=True. That is about 0.45 ms a class (0.65 ms ordered), compile() being most
of it: some sixty such classes were 30 ms of the 0.25 s a cold `verify` of a shipped example takes.

A record declared `@dataclass(frozen=True, init=False, repr=False, eq=False)` on `Frozen` takes
its fields and its __setattr__ and __delattr__ from the decorator (0.26 ms; frozen=True keeps mypy
refusing an assignment, and lets a subclass be a frozen dataclass), so `dataclasses.fields`,
`replace` and `asdict` work on it as before; the methods below are written once, here, and behave
as the frozen dataclass's did: equal (to an instance of the very same class only) and hashed by
the tuple of its compared fields, `repr` naming each field shown, every assignment or deletion
refused with FrozenInstanceError. Its `__init__` is written in the class and sets each field with
object.__setattr__, as a frozen dataclass's does; a field's `compare`, `hash` and `repr` flags
are read from the dataclass's own fields. A record whose generated __init__ is worth keeping
(many fields with defaults, a __post_init__) is declared `@dataclass(frozen=True, repr=False,
eq=False)` instead: three methods compiled rather than six. `Record` is the same for a dataclass
that is not frozen. verifier.engine.ast.FrozenNode does the same for the syntax tree, without
the decorator.
"""

from __future__ import annotations

from _thread import get_ident  # the documented low-level module: importing threading is 0.5 ms
from collections.abc import Callable
from dataclasses import Field, FrozenInstanceError, fields
from operator import attrgetter

Getter = Callable[[object], tuple[object, ...]]


class _Plan:
    """What one record class's methods read, worked out from its fields on first use."""

    __slots__ = ("compared", "hashed", "names", "shown")

    def __init__(self, cls: type) -> None:
        found: tuple[Field[object], ...] = fields(cls)
        self.names = frozenset(f.name for f in found)
        self.compared = _getter([f.name for f in found if f.compare])
        # As dataclasses hashes: a field's `hash` flag, or its `compare` flag where that is None.
        self.hashed = _getter([f.name for f in found if (f.compare if f.hash is None else f.hash)])
        self.shown = tuple(f.name for f in found if f.repr)


_PLANS: dict[type, _Plan] = {}
_IN_REPR: set[tuple[int, int]] = set()
"""The records whose repr is being written, with the thread writing it."""


def _plan(cls: type) -> _Plan:
    """The plan of `cls`, worked out the first time (the methods look in _PLANS first: one call less)."""
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


def _getter(names: list[str]) -> Getter:
    """The tuple of these fields' values (what a dataclass's generated methods spell out)."""
    if len(names) > 1:
        return attrgetter(*names)  # a tuple, made in C
    if names:
        one = attrgetter(names[0])
        return lambda record: (one(record),)
    return lambda record: ()


class Record:
    """Base of a record whose fields may change, as `@dataclass` (not frozen) makes one: equal by its
    compared fields, repr naming its shown fields, and unhashable (the class defines __eq__ only).
    Declared `@dataclass(repr=False, eq=False)`, its __init__ still generated, or with init=False too
    and an __init__ written in the class (see the module's docstring).
    """

    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = (_PLANS.get(self.__class__) or _plan(self.__class__)).compared
            return key(self) == key(other)
        return NotImplemented

    def __repr__(self) -> str:
        # A record met again inside its own repr (one that holds itself) is `...`, as dataclasses writes it.
        key = (id(self), get_ident())
        if key in _IN_REPR:
            return "..."
        _IN_REPR.add(key)
        try:
            shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in _plan(self.__class__).shown)
        finally:
            _IN_REPR.discard(key)
        return f"{self.__class__.__qualname__}({shown})"


class Frozen(Record):
    """Base of a frozen record (see the module's docstring): equality, hash, repr, immutability."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash((_PLANS.get(self.__class__) or _plan(self.__class__)).hashed(self))

    # As a frozen dataclass's own methods refuse: any name on the record class itself (the one the
    # decorator made: it holds __dataclass_fields__), only its fields on a plain subclass, whose other
    # attributes are set and deleted as usual.
    def __setattr__(self, name: str, value: object) -> None:
        if "__dataclass_fields__" in self.__class__.__dict__ or name in _plan(self.__class__).names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        if "__dataclass_fields__" in self.__class__.__dict__ or name in _plan(self.__class__).names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)


class OrderedFrozen(Frozen):
    """A frozen record ordered as `@dataclass(order=True)` orders: by the tuple of its compared fields."""

    __slots__ = ()

    def __lt__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = (_PLANS.get(self.__class__) or _plan(self.__class__)).compared
            return key(self) < key(other)
        return NotImplemented

    def __le__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = (_PLANS.get(self.__class__) or _plan(self.__class__)).compared
            return key(self) <= key(other)
        return NotImplemented

    def __gt__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = (_PLANS.get(self.__class__) or _plan(self.__class__)).compared
            return key(self) > key(other)
        return NotImplemented

    def __ge__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            key = (_PLANS.get(self.__class__) or _plan(self.__class__)).compared
            return key(self) >= key(other)
        return NotImplemented
