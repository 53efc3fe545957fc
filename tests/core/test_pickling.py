"""``core.pickling.fast_pickle``: the caches' dataclasses pickle by their field values."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import dataclass
from pathlib import Path

import pytest
from vaultsync.core import model
from vaultsync.core.pickling import fast_pickle
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
