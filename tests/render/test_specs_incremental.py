"""Incremental note specs: reusing the last run's layout and keys gives what a full run gives."""

from __future__ import annotations

import marshal
import os
from collections.abc import Callable
from dataclasses import fields, replace
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from graphdelta import graph_delta
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from vaultsync.core.model import (
    Card,
    Context,
    Document,
    Episode,
    ExplicitLink,
    Fact,
    JournalNote,
    Project,
    Records,
    Topic,
)
from vaultsync.core.settings import Caps
from vaultsync.graph.build import Build, GraphDelta, build_graph
from vaultsync.render.keycache import (
    load_specs_memo,
    memo_bytes,
    memo_from_bytes,
    memo_path,
    reads_bytes,
    save_specs_memo,
)
from vaultsync.render.specs import NoteSpecs, make_environment, note_specs

ENV = make_environment()
T0 = datetime(2026, 10, 5, 23, 30, tzinfo=UTC)
FACT_IDS = tuple(f"{i:024x}" for i in range(1, 6))
NAMES = ("Auth", "auth", "Billing", "Orbital", "orbital", "Ops", "CON", "a/b", "Auth x", "")
LINKS = (
    "[[Auth]]",
    "[[billing]]",
    "[[Orbital]]",
    "[[topic:auth]]",
    "[[TOPIC:AUTH]]",
    "[[Auth%20x]]",
    "[[readme]]",
    f"[[fact:{FACT_IDS[0]}]]",
    "[[Ops|label]]",
    "Orbital",
    "plain",
)

names = st.sampled_from(NAMES)
texts = st.lists(st.sampled_from(LINKS), max_size=3).map(" ".join)
moments = st.sampled_from((None, T0, T0 + timedelta(hours=1), T0 - timedelta(days=400)))
fact_ids = st.sampled_from(FACT_IDS)

facts = st.builds(
    Fact,
    id=fact_ids,
    content=texts,
    category=st.sampled_from(("general", "Gotcha", "gotcha", "")),
    created_at=moments,
)
topics = st.builds(
    Topic,
    name=names.filter(bool),
    summary=texts,
    first_seen=moments,
    related_fact_ids=st.lists(fact_ids, max_size=2, unique=True).map(tuple),
)
projects = st.builds(Project, name=names.filter(bool), description=texts)
cards = st.builds(
    Card,
    id=st.sampled_from(("card-1", "card-2", "card-3")),
    title=names,
    column=st.sampled_from(("todo", "Todo", "done")),
    description=texts,
    created_at=moments,
)
episodes = st.builds(
    Episode,
    id=st.sampled_from(("ep_1", "ep_2", "ep_3")),
    date=st.sampled_from((T0, T0 + timedelta(hours=1), T0 - timedelta(days=1))),
    summary=texts,
    created_at=moments,
)
documents = st.builds(
    Document,
    source=st.sampled_from(("a/readme.md", "a/b/notes.md", "a/run.sh", "x.md", "A/README.md")),
    content=texts,
)
contexts = st.builds(
    Context,
    id=st.sampled_from(("c1", "c2", "c3")),
    name=names,
    mode=st.sampled_from(("knowledge", "chat")),
    description=texts,
    created_at=moments,
    documents=st.lists(documents, max_size=4, unique_by=lambda d: d.source).map(tuple),
)
journal = st.builds(
    JournalNote,
    period=st.just("daily"),
    label=st.sampled_from(("2026-10-05", "2026-10-06")),
    text=texts,
    source_path=st.just("journal/x.md"),
)
node_ids = st.sampled_from(
    (f"fact:{FACT_IDS[0]}", f"fact:{FACT_IDS[1]}", "topic:Auth", "project:Orbital", "card:card-1")
)
explicit = st.builds(ExplicitLink, source=node_ids, target=node_ids, rel=st.just("related"))

# Each store: its element strategy and the identity the extractor keeps unique.
STORES: dict[str, tuple[st.SearchStrategy[Any], Callable[[Any], object]]] = {
    "facts": (facts, lambda r: r.id),
    "topics": (topics, lambda r: r.name),
    "projects": (projects, lambda r: r.name),
    "cards": (cards, lambda r: r.id),
    "episodes": (episodes, lambda r: r.id),
    "contexts": (contexts, lambda r: r.id),
    "journal": (journal, lambda r: r.label),
    "links": (explicit, lambda r: (r.source, r.target)),
}


def _unique(field: str, items: list[Any]) -> tuple[Any, ...]:
    identity = STORES[field][1]
    return tuple({identity(item): item for item in items}.values())


@st.composite
def initial_records(draw: st.DrawFn) -> Records:
    """A small state directory whose names collide often."""
    chosen: dict[str, Any] = {
        field: _unique(field, draw(st.lists(strategy, max_size=4)))
        for field, (strategy, _identity) in STORES.items()
    }
    return Records(**chosen)


@st.composite
def edits(draw: st.DrawFn) -> tuple[str, int, Any, str]:
    """One edit of one store: (store, position, item or ``None`` to delete, field or ``""``).

    With a field, only that field of the item at the position takes the new item's value.
    """
    field = draw(st.sampled_from(sorted(STORES)))
    item = draw(st.none() | STORES[field][0])
    names = [] if item is None else [f.name for f in fields(item)]
    one = draw(st.sampled_from(["", *names]))
    return field, draw(st.integers(0, 4)), item, one


def apply(records: Records, edit: tuple[str, int, Any, str]) -> Records:
    """``records`` with one item (or one field of it) replaced, an item added or deleted."""
    field, position, item, one = edit
    items = list(getattr(records, field))
    if item is None:
        if items:
            del items[position % len(items)]
    elif one and items:
        at = position % len(items)
        items[at] = replace(items[at], **{one: getattr(item, one)})
    elif position < len(items):
        items[position] = item
    else:
        items.append(item)
    changes: dict[str, Any] = {field: _unique(field, items)}
    return replace(records, **changes)


def full(records: Records, built: Build) -> NoteSpecs:
    return note_specs(records, built.graph, built.resolver, ENV)


def table(made: NoteSpecs) -> list[tuple[str, str, str]]:
    return [(spec.path, spec.node_id, spec.key) for spec in made.specs]


@settings(
    max_examples=int(os.environ.get("KEYS_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(initial_records(), st.lists(edits(), min_size=1, max_size=6))
def test_incremental_specs_equal_full(
    start: Records, steps: list[tuple[str, int, Any, str]]
) -> None:
    """After every edit, the reused layout and keys equal a full computation's (memo too)."""
    records, built = start, build_graph(start, Caps())
    memo = full(records, built).memo
    for step in steps:
        after = apply(records, step)
        rebuilt = build_graph(after, Caps())
        delta = graph_delta(records, built.graph, after, rebuilt.graph)
        previous = memo_from_bytes(b"".join(memo_bytes(memo)))  # as the next run reads it back
        made = note_specs(
            after, rebuilt.graph, rebuilt.resolver, ENV, delta=delta, previous=previous
        )
        expected = full(after, rebuilt)
        assert table(made) == table(expected)
        assert made.memo == expected.memo
        if made.memo.reads:  # kept from the memo before: they must be this memo's own
            assert _decoded(made.memo.reads) == _decoded(reads_bytes(made.memo))
        records, built, memo = after, rebuilt, made.memo


def _decoded(data: bytes) -> object:
    return marshal.loads(data)  # noqa: S302 - bytes this test made


def sample_records() -> Records:
    return Records(
        facts=tuple(
            Fact(id=fid, content=f"fact {i} see [[Auth]]", category="general", created_at=T0)
            for i, fid in enumerate(FACT_IDS)
        ),
        topics=(Topic(name="Auth", summary="[[Orbital]]", related_fact_ids=FACT_IDS[:2]),),
        projects=(Project(name="Orbital", description="the [[auth]] service"),),
        contexts=(
            Context(
                id="c1",
                name="Docs",
                mode="knowledge",
                documents=(Document(source="a/readme.md", content="# Readme\n[[Auth]]"),),
            ),
        ),
    )


def step(records: Records, after: Records) -> tuple[NoteSpecs, NoteSpecs]:
    """The incremental and the full specs of ``after``, the memo made from ``records``."""
    built, rebuilt = build_graph(records, Caps()), build_graph(after, Caps())
    delta = graph_delta(records, built.graph, after, rebuilt.graph)
    made = note_specs(
        after, rebuilt.graph, rebuilt.resolver, ENV, delta=delta, previous=full(records, built).memo
    )
    return made, full(after, rebuilt)


class TestReuse:
    def test_one_changed_fact_keys_one_note(self) -> None:
        """A fact whose content changed (same links) is the only note keyed again."""
        records = sample_records()
        fact = replace(records.facts[2], content="fact 2 see [[Auth]], edited")
        made, expected = step(
            records, replace(records, facts=(*records.facts[:2], fact, *records.facts[3:]))
        )
        assert table(made) == table(expected)
        assert (made.keyed, expected.keyed) == (1, len(expected.specs) - 1)

    def test_no_delta_is_the_full_path(self) -> None:
        """Without a delta the memo is not used: every note is keyed."""
        records = sample_records()
        built = build_graph(records, Caps())
        memo = full(records, built).memo
        made = note_specs(records, built.graph, built.resolver, ENV, previous=memo)
        assert made.keyed == len(made.specs) - 1

    def test_other_zone_is_the_full_path(self) -> None:
        """A memo made in another time zone is not used."""
        records = sample_records()
        built = build_graph(records, Caps())
        memo = full(records, built).memo
        empty = GraphDelta(
            nodes=frozenset(), records=frozenset(), sources=frozenset(), names=frozenset()
        )
        plus2 = timezone(timedelta(hours=2))
        made = note_specs(
            records, built.graph, built.resolver, ENV, zone=plus2, delta=empty, previous=memo
        )
        assert made.keyed == len(made.specs) - 1

    def test_empty_delta_keys_nothing(self) -> None:
        """The same graph and records again: every key and path reused, none computed."""
        records = sample_records()
        built = build_graph(records, Caps())
        memo = full(records, built).memo
        empty = GraphDelta(
            nodes=frozenset(), records=frozenset(), sources=frozenset(), names=frozenset()
        )
        made = note_specs(records, built.graph, built.resolver, ENV, delta=empty, previous=memo)
        assert (made.keyed, table(made)) == (0, table(full(records, built)))


class TestMemoFile:
    @pytest.fixture(autouse=True)
    def _cache(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))

    def made(self) -> NoteSpecs:
        records = sample_records()
        return full(records, build_graph(records, Caps()))

    def test_round_trip(self, tmp_path: Path) -> None:
        """A saved memo loads back equal, from a 0600 file."""
        memo = self.made().memo
        assert save_specs_memo(tmp_path, Caps(), memo)
        assert memo_path(tmp_path).stat().st_mode & 0o777 == 0o600
        assert load_specs_memo(tmp_path, Caps()) == memo

    def test_load_removes_the_file(self, tmp_path: Path) -> None:
        """A memo is read once: a run that dies before saving its own leaves none behind."""
        assert save_specs_memo(tmp_path, Caps(), self.made().memo)
        load_specs_memo(tmp_path, Caps())
        assert not memo_path(tmp_path).exists()

    def test_memo_of_another_build_is_ignored(self, tmp_path: Path) -> None:
        """A memo made from one build is not used with a delta patched from another."""
        assert save_specs_memo(tmp_path, Caps(), self.made().memo, build="a" * 64)
        assert load_specs_memo(tmp_path, Caps(), base="b" * 64) is None
        assert save_specs_memo(tmp_path, Caps(), self.made().memo, build="a" * 64)
        assert load_specs_memo(tmp_path, Caps(), base="a" * 64) is not None

    def test_other_caps_are_ignored(self, tmp_path: Path) -> None:
        """A memo saved under other caps is not used."""
        assert save_specs_memo(tmp_path, Caps(), self.made().memo)
        assert load_specs_memo(tmp_path, Caps(episodes=3)) is None

    def test_corrupt_file_is_ignored(self, tmp_path: Path) -> None:
        """A damaged memo is no memo, not an error."""
        assert save_specs_memo(tmp_path, Caps(), self.made().memo)
        path = memo_path(tmp_path)
        path.write_bytes(path.read_bytes()[:-40])
        assert load_specs_memo(tmp_path, Caps()) is None


def test_context_description_rekeys_its_documents() -> None:
    """A context's own fields show in its documents' keys: they are keyed again."""
    records = sample_records()
    context = replace(records.contexts[0], description="now described")
    made, expected = step(records, replace(records, contexts=(context,)))
    assert table(made) == table(expected)
