"""``core.pickling``: the caches' dataclasses pickle by their field values, and are made fast."""

from __future__ import annotations

import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from vaultsync.core import model
from vaultsync.core.pickling import fast_init, fast_pickle
from vaultsync.core.settings import Caps
from vaultsync.extract import memo
from vaultsync.graph import cache, documents, resolve
from vaultsync.graph.build import patch_graph
from vaultsync.graph.load import read_records
from vaultsync.links import pathresolve

CACHED_MODULES = (model, documents, resolve, pathresolve, memo)
NEVER_PICKLED = {model.NoteSpec}  # holds its render callable


def test_every_frozen_slotted_dataclass_of_the_cached_modules_pickles_fast() -> None:
    """A new record type cannot fall back to the slow per-object ``fields()`` lookup."""
    slow = [
        f"{module.__name__}.{name}"
        for module in CACHED_MODULES
        for name, cls in vars(module).items()
        if isinstance(cls, type)
        and cls.__module__ == module.__name__
        and dataclasses.is_dataclass(cls)
        and "__slots__" in cls.__dict__
        and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]
        and cls not in NEVER_PICKLED
        and cls.__setstate__.__module__ != "vaultsync.core.pickling"  # type: ignore[attr-defined]
    ]
    assert slow == []


def test_the_demo_stores_records_come_back_equal(demo_state: Path) -> None:
    """Every record type of a real store survives a pickle round trip unchanged."""
    records = read_records(demo_state)
    data = pickle.dumps(records, protocol=pickle.HIGHEST_PROTOCOL)
    assert pickle.loads(data) == records  # noqa: S301 - our own bytes


def test_a_graph_patch_state_comes_back_with_equal_documents(demo_state: Path) -> None:
    """Documents, parsed texts and resolver indexes load back as the build made them."""
    _built, state = patch_graph(read_records(demo_state), Caps(), None)
    entries = list(state.contexts.values())
    assert entries
    for entry in entries:
        loaded = pickle.loads(cache.pickle_patch_state(entry))  # noqa: S301 - our own bytes
        assert loaded.documents == entry.documents


def test_a_one_field_class_round_trips() -> None:
    """The state of a class with a single field is a one-item tuple, like any other."""

    @fast_pickle
    @dataclass(frozen=True, slots=True)
    class One:
        value: str

    globals()["One"] = One  # pickle finds a class by its module's name
    One.__qualname__ = "One"
    try:
        assert pickle.loads(pickle.dumps(One("x"))) == One("x")  # noqa: S301 - our own bytes
    finally:
        del globals()["One"]


def test_a_class_without_slots_is_refused() -> None:
    """Without slots there are no descriptors to set the fields through."""

    with pytest.raises(TypeError, match="slotted dataclass"):

        @fast_pickle
        @dataclass(frozen=True)
        class Plain:
            value: str


def test_a_state_of_another_length_is_refused() -> None:
    """A state with fewer or more values than fields (a class changed since) is an error, never
    an object with fields unset or shifted."""
    from vaultsync.core.model import Link, Origin

    link = Link(source="a", target="b", rel="links_to", origin=Origin.USER, weight=1.0)
    state = tuple(getattr(link, field.name) for field in dataclasses.fields(Link))
    set_state = Link.__dict__["__setstate__"]  # fast_pickle's, set on the class
    for wrong in (state[:-1], (*state, "one more")):
        with pytest.raises(ValueError, match="Link"):
            set_state(object.__new__(Link), wrong)


def _pair(decorate: bool) -> type:
    """The same dataclass: positional fields, defaults and keyword-only ones mixed."""

    @dataclass(frozen=True, slots=True)
    class Mixed:
        first: str
        second: int = 2
        third: tuple[str, ...] = field(default=(), kw_only=True)
        fourth: str = field(kw_only=True)

    return fast_init(Mixed) if decorate else Mixed


def test_a_fast_init_has_the_dataclass_signature() -> None:
    """Same parameters, order, kinds and defaults as the ``__init__`` dataclass made."""
    fast, plain = _pair(True), _pair(False)
    assert str(inspect.signature(fast)) == str(inspect.signature(plain))


@given(st.text(), st.integers(), st.lists(st.text(), max_size=2).map(tuple), st.text())
def test_a_fast_init_sets_the_fields_it_is_given(
    first: str, second: int, third: tuple[str, ...], fourth: str
) -> None:
    """Given or defaulted, every field holds what the dataclass's own ``__init__`` sets."""
    fast, plain = _pair(True), _pair(False)
    for args, kwargs in (((first, second), {"third": third}), ((first,), {})):
        made: Any = fast(*args, fourth=fourth, **kwargs)
        expected: Any = plain(*args, fourth=fourth, **kwargs)
        assert dataclasses.astuple(made) == dataclasses.astuple(expected)


def test_a_fast_made_link_is_the_link_and_stays_frozen() -> None:
    """Equal and hashed alike to one pickled back, its missing fields an error, never set."""
    link = model.Link(source="a", target="b", rel="links_to", origin=model.Origin.USER, weight=1.0)
    again = pickle.loads(pickle.dumps(link))  # noqa: S301 - our own bytes
    assert (link, hash(link), link.note) == (again, hash(again), "")
    with pytest.raises(dataclasses.FrozenInstanceError):
        link.source = "c"  # type: ignore[misc]
    with pytest.raises(TypeError, match="target"):
        model.Link(source="a")  # type: ignore[call-arg]


def _unfrozen() -> type:
    @dataclass(slots=True)
    class Unfrozen:
        value: str

    return Unfrozen


def _factory() -> type:
    @dataclass(frozen=True, slots=True)
    class Factory:
        value: list[str] = field(default_factory=list)

    return Factory


def _post_init() -> type:
    @dataclass(frozen=True, slots=True)
    class PostInit:
        value: str

        def __post_init__(self) -> None:
            pass

    return PostInit


def _no_slots() -> type:
    @dataclass(frozen=True)
    class NoSlots:
        value: str

    return NoSlots


@pytest.mark.parametrize("make", [_unfrozen, _factory, _post_init, _no_slots])
def test_a_class_fast_init_cannot_make_is_refused(make: Any) -> None:
    """Only what a plain ``__init__`` of slots does: frozen, no factory, no ``__post_init__``."""
    with pytest.raises(TypeError, match="fast_init"):
        fast_init(make())
