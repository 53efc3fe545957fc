"""Frozen slotted dataclasses that pickle and are made without per-object overhead; pure.

``@dataclass(frozen=True, slots=True)`` gives a class a ``__getstate__`` and ``__setstate__``
that call ``dataclasses.fields()`` for every object pickled or loaded.  The caches of a sync
(``extract.memo``, ``graph.patch``, the last good records) hold hundreds of thousands of them
at 100,000 notes, and those calls were half the time of loading and saving them.
:func:`fast_pickle` gives a class the same state — its fields' values, in field order — from
names looked up once, set through the slots' own descriptors (which a frozen class's
``__setattr__`` does not guard).

Its ``__init__`` sets each field through ``object.__setattr__``, a call per field: making a
link took 1.5 µs, and a one-fact sync makes every structural link and note again (230,000
links at 100,000 notes).  :func:`fast_init` gives a class an ``__init__`` of the same
signature that sets the slots through their descriptors too (1.15 µs a link, 0.88 a note).
"""

from __future__ import annotations

import dataclasses
import keyword
import operator
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def fast_pickle(cls: type[T]) -> type[T]:
    """Decorate a frozen slotted dataclass (above ``@dataclass``) to pickle by its field values."""
    names = tuple(field.name for field in dataclasses.fields(cls))  # type: ignore[arg-type]
    if not names or "__slots__" not in cls.__dict__:
        raise TypeError(f"{cls.__name__}: fast_pickle needs a slotted dataclass with fields")
    setters: tuple[Callable[[Any, Any], None], ...] = tuple(
        cls.__dict__[name].__set__ for name in names
    )
    # attrgetter of two or more names gives the tuple itself; of one, the bare value
    values = operator.attrgetter(*names) if len(names) > 1 else _one(names[0])

    def __getstate__(self: Any) -> tuple[Any, ...]:
        return values(self)

    size = len(setters)

    def __setstate__(self: Any, state: tuple[Any, ...]) -> None:
        # one length check, then a plain zip: zip(strict=True) took a third of this loop's time
        # (343,000 objects in a one-fact sync's caches at 100,000 notes)
        if len(state) != size:
            raise ValueError(f"{cls.__name__}: a state of {len(state)} values, not {size}")
        for set_value, value in zip(setters, state):  # noqa: B905 - lengths checked above
            set_value(self, value)

    setattr(cls, "__getstate__", __getstate__)  # noqa: B010 - a method of every instance
    setattr(cls, "__setstate__", __setstate__)  # noqa: B010
    return cls


def _one(name: str) -> Callable[[Any], tuple[Any]]:
    def value(item: Any) -> tuple[Any]:
        return (getattr(item, name),)

    return value


def fast_init(cls: type[T]) -> type[T]:
    """Decorate a frozen slotted dataclass (above ``@dataclass``) with a faster ``__init__``.

    The same signature (the fields in order, keyword-only where the class says so, the same
    defaults) and the same values; only plain defaults, no ``__post_init__``.  The function is
    made from its source, as ``dataclasses`` makes the one it replaces: a generic
    ``**kwargs`` loop costs what it saves.
    """
    fields = dataclasses.fields(cls)  # type: ignore[arg-type]
    _check_plain(cls, fields)
    scope: dict[str, Any] = {}
    for field in fields:
        scope[f"_set_{field.name}"] = cls.__dict__[field.name].__set__
        if field.default is not dataclasses.MISSING:
            scope[f"_default_{field.name}"] = field.default
    # as dataclasses orders them: the positional fields, then the keyword-only ones
    positional = [_param(f) for f in fields if not f.kw_only]
    named = [_param(f) for f in fields if f.kw_only]
    params = ", ".join([*positional, *(["*", *named] if named else [])])
    body = "".join(f"\n    _set_{f.name}(self, {f.name})" for f in fields)
    source = f"def __init__(self, {params}):{body}\n"
    made: dict[str, Any] = {}
    exec(source, scope, made)  # noqa: S102 - our own source, from the class's field names
    init = made["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__annotations__ = dict(cls.__init__.__annotations__)  # what introspection shows
    setattr(cls, "__init__", init)  # noqa: B010 - replaces the one dataclass made
    return cls


def _param(field: dataclasses.Field[Any]) -> str:
    """The field as a parameter of :func:`fast_init`'s ``__init__``, with its default if any."""
    missing = field.default is dataclasses.MISSING
    return field.name if missing else f"{field.name}=_default_{field.name}"


def _check_plain(cls: type, fields: tuple[dataclasses.Field[Any], ...]) -> None:
    """A class :func:`fast_init` can make: slotted, frozen, plain fields and defaults only."""
    params = getattr(cls, "__dataclass_params__", None)
    plain = all(
        f.init and f.default_factory is dataclasses.MISSING and not keyword.iskeyword(f.name)
        for f in fields
    )
    if not (fields and plain and params is not None and params.frozen) or (
        "__slots__" not in cls.__dict__ or hasattr(cls, "__post_init__")
    ):
        raise TypeError(f"{cls.__name__}: fast_init needs a frozen slotted dataclass, plain fields")
