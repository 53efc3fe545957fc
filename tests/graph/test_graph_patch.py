"""Incremental graph build: a build patched from the last one's state equals a full build."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from graphedits import CAPS, apply, edits, records_of, reloaded
from hypothesis import given, settings
from hypothesis import strategies as st
from vaultsync.core import cachefile
from vaultsync.core.model import (
    Context,
    Document,
    ExplicitLink,
    Fact,
    Link,
    Project,
    Records,
    Topic,
)
from vaultsync.core.settings import Caps
from vaultsync.graph import cache, load, patch
from vaultsync.graph.build import Build, build_graph, patch_graph
from vaultsync.graph.cache import graph_to_json
from vaultsync.graph.documents import DocumentNote, document_node_id
from vaultsync.graph.patch import PatchState, _records_by_node


def same(patched: Build, full: Build) -> None:
    assert graph_to_json(patched.graph) == graph_to_json(full.graph)
    assert patched.unresolved == full.unresolved
    assert patched.documents == full.documents
    assert patched.resolver.by_name == full.resolver.by_name


@settings(max_examples=300)
@given(st.lists(edits, min_size=1, max_size=12))
def test_patched_build_equals_full_build_after_every_edit(steps: list[Any]) -> None:
    """After each random edit, the build patched from the last state equals a full build."""
    items: dict[str, dict[Any, Any]] = {}
    state: PatchState | None = None
    for edit in steps:
        apply(items, edit)
        records = records_of(items)
        patched, state = patch_graph(records, CAPS, reloaded(state))
        same(patched, build_graph(records, CAPS))


@settings(max_examples=200)
@given(st.lists(edits, min_size=1, max_size=12))
def test_a_resident_patched_build_equals_full_build_after_every_edit(steps: list[Any]) -> None:
    """Patched from the state in memory (the same record objects reused), equal to a full build."""
    items: dict[str, dict[Any, Any]] = {}
    state: PatchState | None = None
    for edit in steps:
        apply(items, edit)
        records = records_of(items)
        patched, fresh = patch_graph(records, CAPS, state, remember=True)
        same(patched, build_graph(records, CAPS))
        full = patch_graph(records, CAPS, None)[1]
        assert (fresh.records, fresh.sources) == (full.records, full.sources)
        state = fresh


_GONE = object()


def _differ(old: Mapping[str, Any], new: Mapping[str, Any]) -> set[str]:
    return {key for key in old.keys() | new.keys() if old.get(key, _GONE) != new.get(key, _GONE)}


def _builds(steps: list[Any], last: Any) -> tuple[Records, Build, Records, Build]:
    """The records and build after ``steps``, then after ``last`` too, patched from the first."""
    items: dict[str, dict[Any, Any]] = {}
    for edit in steps:
        apply(items, edit)
    old_records = records_of(items)
    before, state = patch_graph(old_records, CAPS, None)
    apply(items, last)
    new_records = records_of(items)
    return old_records, before, new_records, patch_graph(new_records, CAPS, state)[0]


@settings(max_examples=150)
@given(st.lists(edits, min_size=1, max_size=8), edits)
def test_delta_names_what_changed(steps: list[Any], last: Any) -> None:
    """The delta holds every node, link source and name that differs between builds."""
    _, before, _, after = _builds(steps, last)
    delta = after.delta
    assert delta is not None
    old_nodes = {n.id: n for n in before.graph.nodes}
    new_nodes = {n.id: n for n in after.graph.nodes}
    assert _differ(old_nodes, new_nodes) == delta.nodes
    assert _differ(before.graph.outgoing, after.graph.outgoing) <= delta.sources
    assert _differ(before.resolver.by_name, after.resolver.by_name) == delta.names


@settings(max_examples=150)
@given(st.lists(edits, min_size=1, max_size=8), edits)
def test_delta_records_are_the_records_that_differ(steps: list[Any], last: Any) -> None:
    """The delta's records are exactly the notes whose store record differs (a document's text
    compared by its digest)."""
    old_records, before, new_records, after = _builds(steps, last)
    assert after.delta is not None
    old = _records_of_notes(old_records, before.documents)
    new = _records_of_notes(new_records, after.documents)
    assert _differ(old, new) == after.delta.records


def _records_of_notes(records: Records, documents: tuple[DocumentNote, ...]) -> dict[str, Any]:
    """Each note's store record: the documents kept are those of ``documents``."""
    kept = {doc.node_id for doc in documents}
    found = dict(_records_by_node(records))
    for context in records.contexts:
        for doc in context.documents:
            if (node_id := document_node_id(context.id, doc.source)) in kept:
                found[node_id] = doc
    return found


def test_full_build_has_no_delta() -> None:
    """A build without a previous state says nothing about what changed."""
    records = Records(facts=(Fact(id="f1", content="orbital", category="general"),))
    assert patch_graph(records, CAPS, None)[0].delta is None
    assert build_graph(records, CAPS).delta is None


def test_unchanged_records_give_an_empty_delta() -> None:
    """Patching the same records again reports no node, record, source or name as changed."""
    records = Records(
        facts=(Fact(id="f1", content="see [[orbital]]", category="general", tags=("go",)),),
        projects=(Project(name="orbital", path="/src/orbital"),),
        contexts=(Context(id="c1", name="handbook", mode="knowledge",
                          documents=(Document(source="a.md", content="# A [[orbital]]"),)),),
    )  # fmt: skip
    _, state = patch_graph(records, CAPS, None)
    delta = patch_graph(records, CAPS, state)[0].delta
    assert delta is not None
    assert (delta.nodes, delta.records, delta.sources, delta.names) == ((frozenset(),) * 4)


def test_edited_fact_is_a_changed_record() -> None:
    """A fact whose text changes is in the delta's records and, retitled, in its nodes."""
    fact = Fact(id="f1", content="old title", category="general")
    _, state = patch_graph(Records(facts=(fact,)), CAPS, None)
    edited = Records(facts=(replace(fact, content="new title"),))
    delta = patch_graph(edited, CAPS, state)[0].delta
    assert delta is not None
    assert delta.records == {"fact:f1"} and delta.nodes == {"fact:f1"}
    assert delta.names == {"old title", "new title"}


def test_build_ids_name_the_build_a_delta_was_patched_from() -> None:
    """Each delta's base is the id of the build it came from; no change keeps the id."""
    fact = Fact(id="f1", content="old title", category="general")
    first, state = patch_graph(Records(facts=(fact,)), CAPS, None)
    again, same_state = patch_graph(Records(facts=(fact,)), CAPS, state)
    edited_records = Records(facts=(replace(fact, content="new"),))
    edited, _ = patch_graph(edited_records, CAPS, same_state)
    assert first.build_id and again.build_id == first.build_id
    assert again.delta is not None and again.delta.base == first.build_id
    assert edited.delta is not None and edited.delta.base == first.build_id
    assert edited.build_id not in {"", first.build_id}


def test_full_builds_of_the_same_records_share_an_id() -> None:
    """A full build is named by what it holds: the same records, the same id; others differ."""
    records = Records(facts=(Fact(id="f1", content="orbital", category="general"),))
    other = Records(facts=(Fact(id="f1", content="ledger", category="general"),))
    assert (
        patch_graph(records, CAPS, None)[0].build_id == patch_graph(records, CAPS, None)[0].build_id
    )
    assert (
        patch_graph(records, CAPS, None)[0].build_id != patch_graph(other, CAPS, None)[0].build_id
    )


def test_new_title_captures_an_unresolved_wikilink() -> None:
    """A wikilink that named no note resolves once a note with that title appears."""
    linking = Fact(id="f1", content="see [[ledger]]", category="")
    before, state = patch_graph(Records(facts=(linking,)), CAPS, None)
    assert before.unresolved == (("fact:f1", "ledger"),)
    records = Records(facts=(linking,), topics=(Topic(name="ledger"),))
    after, _ = patch_graph(records, CAPS, state)
    assert after.unresolved == ()
    assert after.graph.links_from("fact:f1")[0].target == "topic:ledger"
    assert after.delta is not None and "fact:f1" in after.delta.sources


def test_new_name_is_mentioned_by_existing_text() -> None:
    """A project created after a fact that names it is mentioned by that fact."""
    fact = Fact(id="f1", content="the orbital rollout", category="")
    _, state = patch_graph(Records(facts=(fact,)), CAPS, None)
    records = Records(facts=(fact,), projects=(Project(name="orbital"),))
    after, _ = patch_graph(records, CAPS, state)
    assert graph_to_json(after.graph) == graph_to_json(build_graph(records, CAPS).graph)
    assert [(link.target, link.rel) for link in after.graph.links_from("fact:f1")] == [
        ("project:orbital", "mentions")
    ]


def test_a_build_remembers_the_objects_it_digested_only_when_asked() -> None:
    """Not asked (a one-shot command), the state keeps no records and no links besides."""
    state = patch_graph(HANDBOOK, CAPS, None)[1]
    assert (state.digested, state.described) == ({}, {})
    remembered = patch_graph(HANDBOOK, CAPS, None, remember=True)[1]
    assert (remembered.records, remembered.sources) == (state.records, state.sources)


def test_a_context_whose_mode_changes_links_its_documents_to_its_new_note() -> None:
    """The same documents, another mode: the kept part_of links follow the context's note."""
    knowledge = _linking_handbook()
    _, state = patch_graph(knowledge, CAPS, None)
    (context,) = knowledge.contexts
    full = replace(knowledge, contexts=(replace(context, mode="full"),))
    after, _ = patch_graph(full, CAPS, state)  # in memory, as a resident process keeps it
    same(after, build_graph(full, CAPS))
    assert ("doc:c1:a.md", "ctx:c1", "part_of") in {k.key for k in after.graph.links}


def test_documents_notes_and_part_of_links_are_kept_in_memory_only() -> None:
    """A resident build reuses them; the pickled entry holds neither."""
    _, state = patch_graph(_linking_handbook(), CAPS, None)
    (entry,) = state.contexts.values()
    assert entry.nodes is not None and entry.part_of is not None
    again = patch_graph(_linking_handbook(), CAPS, state)[1]
    assert next(iter(again.contexts.values())).nodes is entry.nodes
    (loaded,) = reloaded(state).contexts.values()  # type: ignore[union-attr]
    assert loaded.nodes is None and loaded.part_of is None and loaded.links == entry.links


def test_the_mention_finder_is_kept_while_the_names_are_the_same() -> None:
    """The automaton is built once for the same names, again when a name changes."""
    fact = Fact(id="f1", content="the orbital rollout", category="")
    records = Records(facts=(fact,), projects=(Project(name="orbital"),))
    _, state = patch_graph(records, CAPS, None)
    edited = replace(records, facts=(replace(fact, content="orbital again"),))
    after, fresh = patch_graph(edited, CAPS, reloaded(state))
    kept = patch_graph(edited, CAPS, fresh)[1]
    assert kept.finder is fresh.finder
    assert [link.target for link in after.graph.links_from("fact:f1")] == ["project:orbital"]
    renamed = replace(edited, projects=(Project(name="gateway"),))
    assert patch_graph(renamed, CAPS, kept)[1].finder is not kept.finder


def test_a_document_added_to_one_context_leaves_the_later_ones_derived() -> None:
    """Adding a document shrinks later contexts' room, not what they keep: they are reused."""

    def context(cid: str, *sources: str) -> Context:
        docs = tuple(Document(source=s, content=f"# {s}") for s in sources)
        return Context(id=cid, name=cid, mode="knowledge", documents=docs)

    _, state = patch_graph(Records(contexts=(context("c1", "a.md"), context("c2", "b.md"))),
                           CAPS, None)  # fmt: skip
    grown = Records(contexts=(context("c1", "a.md", "new.md"), context("c2", "b.md")))
    _, after = patch_graph(grown, CAPS, state)

    def entry(of: PatchState, cid: str) -> object:
        return next(e for e in of.contexts.values() if e.documents[0].context_id == cid)

    assert entry(after, "c2") is entry(state, "c2")
    assert entry(after, "c1") is not entry(state, "c1")


def _linking_handbook(*topics: str) -> Records:
    """A context whose document links ``[[ledger]]``, beside a fact and ``topics``."""
    document = Document(source="a.md", content="# A\n\nsee [[ledger]]")
    return Records(
        facts=(Fact(id="f1", content="plain", category=""),),
        topics=tuple(Topic(name=name) for name in topics),
        contexts=(Context(id="c1", name="handbook", mode="knowledge", documents=(document,)),),
    )


def _document_links_of(state: PatchState) -> Any:
    (entry,) = state.contexts.values()
    return entry.links


def test_a_documents_links_are_kept_while_the_graph_answers_alike() -> None:
    """An edit elsewhere keeps a context's links, the very objects, and its unresolved link."""
    before, state = patch_graph(_linking_handbook(), CAPS, None)
    assert before.unresolved == (("doc:c1:a.md", "ledger"),)
    edited = replace(_linking_handbook(), facts=(Fact(id="f1", content="edited", category=""),))
    after, fresh = patch_graph(edited, CAPS, reloaded(state))
    assert after.unresolved == before.unresolved
    assert _document_links_of(fresh) == _document_links_of(state)
    kept = patch_graph(edited, CAPS, fresh)[1]
    assert _document_links_of(kept) is _document_links_of(fresh)


def test_a_new_title_a_document_links_makes_its_links_again() -> None:
    """A note titled like a document's unresolved wikilink: the link resolves to it."""
    _, state = patch_graph(_linking_handbook(), CAPS, None)
    records = _linking_handbook("ledger")
    after, fresh = patch_graph(records, CAPS, reloaded(state))
    same(after, build_graph(records, CAPS))
    assert ("doc:c1:a.md", "topic:ledger") in {(k.source, k.target) for k in after.graph.links}
    assert _document_links_of(fresh).tag != _document_links_of(state).tag


def test_a_document_whose_type_alone_changes_is_a_changed_record() -> None:
    """Same sources and texts, another type: the context's key holds, its digests do not."""
    state = patch_graph(HANDBOOK, CAPS, None)[1]
    (context,) = HANDBOOK.contexts
    retyped = tuple(replace(doc, type="Markdown") for doc in context.documents)
    records = replace(HANDBOOK, contexts=(replace(context, documents=retyped),))
    after = patch_graph(records, CAPS, reloaded(state))[0]
    assert after.delta is not None
    assert after.delta.records == {"doc:c1:a.md", "doc:c1:b.md"}


def _first_arguments(monkeypatch: pytest.MonkeyPatch, name: str) -> list[Any]:
    """The first argument of every call to ``graph.patch.<name>`` from now on."""
    calls: list[Any] = []
    original = getattr(patch, name)

    def counted(first: Any, *rest: Any) -> Any:
        calls.append(first)
        return original(first, *rest)

    monkeypatch.setattr(patch, name, counted)
    return calls


def test_a_reloaded_state_digests_no_document_of_an_unchanged_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A one-shot build (the state read back) takes the documents' digests from their entry."""
    state = patch_graph(HANDBOOK, CAPS, None)[1]
    digested = _first_arguments(monkeypatch, "_record_digest")
    fact = Fact(id="f1", content="new", category="")
    after = patch_graph(replace(HANDBOOK, facts=(fact,)), CAPS, reloaded(state))[0]
    assert digested == ["fact:f1", "kb:c1"]  # the fact and the context's own note
    assert after.delta is not None and after.delta.records == {"fact:f1"}


def test_a_reloaded_state_digests_the_links_of_no_document_of_an_unchanged_context(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A one-shot build takes the documents' outgoing links' digests from their entry."""
    state = patch_graph(HANDBOOK, CAPS, None)[1]
    digested = _first_arguments(monkeypatch, "_links_digest")
    fact = Fact(id="f1", content="new [[handbook]]", category="")
    after = patch_graph(replace(HANDBOOK, facts=(fact,)), CAPS, reloaded(state))[0]
    assert {link.source for links in digested for link in links} == {"fact:f1"}
    assert after.delta is not None and after.delta.sources == {"fact:f1"}


@pytest.mark.parametrize("drawn_before", [False, True])
def test_a_link_drawn_from_a_document_changes_its_links(drawn_before: bool) -> None:
    """Drawn or undrawn, a link from a document is in the delta: its entry's digests are not
    used for a document links are drawn from."""
    drawn = ExplicitLink(source="doc:c1:a.md", target="kb:c1", rel="related")
    with_link = replace(HANDBOOK, links=(drawn,))
    before, after = (with_link, HANDBOOK) if drawn_before else (HANDBOOK, with_link)
    state = patch_graph(before, CAPS, None)[1]
    built = patch_graph(after, CAPS, reloaded(state))[0]
    same(built, build_graph(after, CAPS))
    assert built.delta is not None and built.delta.sources == {"doc:c1:a.md"}


HANDBOOK = Records(
    contexts=(Context(id="c1", name="handbook", mode="knowledge",
                      documents=(Document(source="a.md", content="# A [[b]]"),
                                 Document(source="b.md", content="# B")),),),
)  # fmt: skip


class TestPersisted:
    @pytest.fixture(autouse=True)
    def _cache(self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))

    def test_state_round_trips_through_the_cache(self, tmp_path: Path) -> None:
        """A saved state loads back and patches to the same graph."""
        built, state = patch_graph(HANDBOOK, CAPS, None)
        assert cache.save_patch_state(tmp_path, CAPS, state)
        loaded = cache.load_patch_state(tmp_path, CAPS)
        assert loaded is not None
        patched, _ = patch_graph(HANDBOOK, CAPS, loaded)
        same(patched, built)

    def test_lost_context_entry_is_derived_again(self, tmp_path: Path) -> None:
        """A context whose saved entry is corrupt is derived again, the graph unchanged."""
        built, state = patch_graph(HANDBOOK, CAPS, None)
        cache.save_patch_state(tmp_path, CAPS, state)
        (entry,) = (cachefile.cache_dir(tmp_path) / "graph-patch").iterdir()
        entry.write_bytes(entry.read_bytes()[:-9])
        loaded = cache.load_patch_state(tmp_path, CAPS)
        assert loaded is not None and loaded.contexts == {}
        same(patch_graph(HANDBOOK, CAPS, loaded)[0], built)

    def test_unused_context_entries_are_deleted(self, tmp_path: Path) -> None:
        """Saving a state deletes the entries of contexts no longer built."""
        document = Document(source="a.md", content="# A")
        first = Records(contexts=(Context(id="c1", name="x", mode="full", documents=(document,)),))
        cache.save_patch_state(tmp_path, CAPS, patch_graph(first, CAPS, None)[1])
        edited = replace(document, content="# B")
        second = Records(contexts=(Context(id="c1", name="x", mode="full", documents=(edited,)),))
        cache.save_patch_state(tmp_path, CAPS, patch_graph(second, CAPS, None)[1])
        assert len(list((cachefile.cache_dir(tmp_path) / "graph-patch").iterdir())) == 1

    def test_an_entry_whose_links_are_made_again_is_another_file(self, tmp_path: Path) -> None:
        """Entry files never change: new links are a new file, the old one is deleted."""
        folder = cachefile.cache_dir(tmp_path) / "graph-patch"
        cache.save_patch_state(tmp_path, CAPS, patch_graph(_linking_handbook(), CAPS, None)[1])
        (first,) = folder.iterdir()
        loaded = cache.load_patch_state(tmp_path, CAPS)
        records = _linking_handbook("ledger")
        state = patch_graph(records, CAPS, loaded)[1]
        cache.save_patch_state(tmp_path, CAPS, state)
        (second,) = folder.iterdir()
        assert second.name != first.name
        assert second.name.partition("-")[0] == first.name.partition("-")[0]
        again = cache.load_patch_state(tmp_path, CAPS)
        same(patch_graph(records, CAPS, again)[0], build_graph(records, CAPS))

    def test_the_digested_records_are_never_written(self, tmp_path: Path) -> None:
        """The records a build digested stay in memory: the saved state holds none."""
        state = patch_graph(HANDBOOK, CAPS, None, remember=True)[1]
        assert state.digested and state.described
        cache.save_patch_state(tmp_path, CAPS, state)
        loaded = cache.load_patch_state(tmp_path, CAPS)
        assert loaded is not None and loaded.digested == {}

    def test_state_is_private(self, tmp_path: Path) -> None:
        """The state file is readable by its owner only."""
        cache.save_patch_state(tmp_path, CAPS, patch_graph(Records(), CAPS, None)[1])
        assert cache.patch_state_path(tmp_path).stat().st_mode & 0o777 == 0o600

    def test_other_caps_do_not_load_the_state(self, tmp_path: Path) -> None:
        """A state saved under other caps is not used."""
        cache.save_patch_state(tmp_path, CAPS, patch_graph(Records(), CAPS, None)[1])
        assert cache.load_patch_state(tmp_path, replace(CAPS, episodes=3)) is None

    @pytest.mark.parametrize("damage", [b"", b"garbage", b"vaultsync-graph-patch-1\nxx\n"])
    def test_corrupt_state_is_ignored(self, tmp_path: Path, damage: bytes) -> None:
        """An unreadable or foreign state file loads as none (a full build follows)."""
        cache.save_patch_state(tmp_path, CAPS, patch_graph(Records(), CAPS, None)[1])
        path = cache.patch_state_path(tmp_path)
        path.write_bytes(damage)
        assert cache.load_patch_state(tmp_path, CAPS) is None

    def test_a_states_tables_round_trip_by_value(self) -> None:
        """What the file keeps of a state (all but its contexts' entries) reads back equal."""
        state = patch_graph(_linking_handbook(), CAPS, None)[1]
        loaded = cache.state_from_bytes(b"".join(cache.state_bytes(state)))
        assert loaded is not None
        kept = ("nodes", "records", "sources", "names", "mentions", "wikilinks", "build_id")
        assert all(getattr(loaded, name) == getattr(state, name) for name in kept)

    def test_a_state_whose_table_has_another_type_is_ignored(self) -> None:
        """Bytes that decode to a table of the wrong type are no state (a full build follows)."""
        state = patch_graph(HANDBOOK, CAPS, None)[1]
        listed = replace(state, nodes=[])  # type: ignore[arg-type]
        assert cache.state_from_bytes(b"".join(cache.state_bytes(listed))) is None

    def test_truncated_state_is_ignored(self, tmp_path: Path) -> None:
        """A state cut short after its header loads as none."""
        cache.save_patch_state(tmp_path, CAPS, patch_graph(Records(), CAPS, None)[1])
        path = cache.patch_state_path(tmp_path)
        path.write_bytes(path.read_bytes()[:-5])
        assert cache.load_patch_state(tmp_path, CAPS) is None


class TestThroughLoad:
    def test_a_resident_process_remembers_what_its_build_digested(
        self, demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Inside ``cachefile.resident`` the held state keeps the objects digested."""
        monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
        with cachefile.resident():
            load.build(demo_state, Caps())
            held = cache.load_patch_state(demo_state, Caps())
            assert held is not None and held.digested and held.described

    def test_second_read_is_patched_and_equals_a_full_build(
        self, demo_state: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A sync's read of an edited store is patched (it has a delta) and equals a full build."""
        monkeypatch.setenv("VAULTSYNC_CACHE_DIR", str(tmp_path / "cache"))
        first = load.build(demo_state, Caps())[1]
        assert first.delta is None
        index = demo_state / "memory" / "memory_index.json"
        facts = json.loads(index.read_text())
        facts[0]["content"] += " [edited]"
        index.write_text(json.dumps(facts, indent=2))
        records, second = load.build(demo_state, Caps())
        assert second.delta is not None and second.delta.records == {f"fact:{facts[0]['id']}"}
        same(second, build_graph(records, Caps(), fingerprint=second.graph.fingerprint))


def test_a_document_sharing_its_source_is_a_changed_record_when_its_text_changes() -> None:
    """Two documents of one context with one source are one note: an edit of either shows,
    the one past the cap too."""
    caps = replace(CAPS, docs_per_context=1)
    first, second = Document(source="a.md", content="x"), Document(source="a.md", content="y")
    context = Context(id="c1", name="c", mode="knowledge", documents=(first, second))
    _, state = patch_graph(Records(contexts=(context,)), caps, None)
    edited = replace(context, documents=(first, replace(second, content="z")))
    delta = patch_graph(Records(contexts=(edited,)), caps, state)[0].delta
    assert delta is not None and delta.records == {"doc:c1:a.md"}


def test_a_sources_links_digest_is_by_value() -> None:
    """Equal links digest alike whatever objects hold them; any field changed digests apart."""
    from vaultsync.core.model import Link, Origin
    from vaultsync.graph.patch import _links_digest

    def link(**changed: Any) -> Link:
        fields: dict[str, Any] = {"source": "fact:a", "target": "topic:" + "b" * 3}
        fields |= {"rel": "tagged", "origin": Origin.STRUCTURAL, "weight": 1.0, "note": ""}
        return Link(**(fields | changed))

    base = _links_digest([link(), link(target="topic:c")])
    assert _links_digest([link(), link(target="".join(["topic:", "c"]))]) == base
    for changed in ({"target": "topic:x"}, {"rel": "about"}, {"origin": Origin.MENTION},
                    {"weight": 2.0}, {"note": "n"}):  # fmt: skip
        assert _links_digest([link(**changed), link(target="topic:c")]) != base
    assert _links_digest([link(target="topic:c"), link()]) != base
