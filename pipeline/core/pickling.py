"""Frozen slotted dataclasses that pickle without ``dataclasses.fields()`` per object; pure.

``@dataclass(frozen=True, slots=True)`` gives a class a ``__getstate__`` and ``__setstate__``
that call ``dataclasses.fields()`` for every object pickled or loaded.  The caches of a sync
(``extract.memo``, ``graph.patch``, the last good records) hold hundreds of thousands of them
at 100,000 notes, and those calls were half the time of loading and saving them.
:func:`fast_pickle` gives a class the same state — its fields' values, in field order — from
names looked up once, set through the slots' own descriptors (which a frozen class's
``__setattr__`` does not guard).
"""

from __future__ import annotations

import dataclasses
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
